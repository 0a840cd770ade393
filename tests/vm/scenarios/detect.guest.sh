#!/bin/sh
# Scenario "detect", guest side (busybox ash inside the vm-tier guest).
#   detect.guest.sh RESULTS_DIR
# Loads scsi_debug next to the virtio-scsi and megasas HBAs QEMU provides,
# then writes to RESULTS_DIR:
#   live.json, live.txt      scsitune detect -o json / text, before anything else
#   capture.tar.xz, .log     capture-host.sh of this guest's /sys and /proc
#   live2.json               detect again, right after the capture
#   truth.txt                what the kernel itself says (hosts, PCI
#                            locality, MSI IRQs, mq cpu_lists, hctx flags)
#                            and the settability probe of every HBA IRQ
#   after-probe.json         detect once more, after the probes
#   timing.txt               guest uptime at each step
# detect.check.py asserts on them on the host side.
R=$1
. /vm/lib.sh
up() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$R/timing.txt"; }
up start

# Disks expected: virtio-scsi 1, megasas 1, scsi_debug 2 targets x 1 LUN.
insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=32 num_tgts=2 dev_size_mb=8 ||
	echo "detect.guest.sh: insmod scsi_debug failed"
want=4
wait_until 120 "$want sd disks" disks_at_least $want || {
	echo "detect.guest.sh: only $(ls -d /sys/block/sd* 2>/dev/null | wc -l) of $want disks"
	exit 1
}
up disks

scsitune detect -o json >"$R/live.json" 2>"$R/live.err"
echo $? >"$R/live.rc"
scsitune detect >"$R/live.txt" 2>"$R/live-txt.err"
echo $? >"$R/live-txt.rc"
up detect

rm -rf /tmp/cap
capture-host.sh guest /tmp/cap 2>"$R/capture.err"
echo $? >"$R/capture.rc"
cp /tmp/cap/guest.tar.xz "$R/capture.tar.xz" 2>/dev/null
cp /tmp/cap/guest.log "$R/capture.log" 2>/dev/null
up capture

scsitune detect -o json >"$R/live2.json" 2>"$R/live2.err"
up detect2

# --- what the kernel says ---------------------------------------------------
T=$R/truth.txt
: >"$T"
echo "release $(uname -r)" >>"$T"
for h in /sys/class/scsi_host/host*; do
	echo "host ${h##*/} $(cat "$h/proc_name") $(readlink -f "$h/device")" >>"$T"
done
# the PCI function above each host: the first ancestor on the pci bus
pcis=
for h in /sys/class/scsi_host/host*; do
	d=$(readlink -f "$h/device")
	while [ "$d" != /sys/devices ] && [ -n "$d" ]; do
		case $(readlink "$d/subsystem" 2>/dev/null) in
		*/bus/pci)
			echo "hostpci ${h##*/} ${d##*/}" >>"$T"
			case " $pcis " in *" $d "*) ;; *) pcis="$pcis $d" ;; esac
			break
			;;
		esac
		d=${d%/*}
	done
done
for d in $pcis; do
	echo "pci ${d##*/} numa_node=$(cat "$d/numa_node") local_cpulist=$(cat "$d/local_cpulist")" >>"$T"
	for m in "$d"/msi_irqs/*; do
		[ -f "$m" ] || continue
		echo "msi ${d##*/} ${m##*/} $(cat "$m")" >>"$T"
	done
done
for b in /sys/block/sd*; do
	[ -d "$b/mq" ] || continue
	hctl=$(basename "$(readlink -f "$b/device")")
	for q in "$b"/mq/*; do
		echo "mq ${b##*/} $hctl ${q##*/} $(cat "$q/cpu_list")" >>"$T"
	done
	f=/sys/kernel/debug/block/${b##*/}/hctx0/flags
	[ -r "$f" ] && echo "flags ${b##*/} $hctl $(cat "$f")" >>"$T"
done
# Settability probe: write each HBA IRQ's current smp_affinity_list back
# with one write(2); EIO means the kernel refuses (managed, or a chip that
# cannot move it). perl gives the errno itself, not a shell's message.
for d in $pcis; do
	for m in "$d"/msi_irqs/*; do
		[ -f "$m" ] || continue
		n=${m##*/}
		cur=$(cat "/proc/irq/$n/smp_affinity_list")
		res=$(perl -e 'open(my $f, ">", $ARGV[0]) or do { print "open-errno:", $! + 0; exit };
			my $w = syswrite($f, "$ARGV[1]\n");
			print defined $w ? "ok" : "errno:" . ($! + 0)' "/proc/irq/$n/smp_affinity_list" "$cur")
		now=$(cat "/proc/irq/$n/smp_affinity_list")
		echo "probe $n ${d##*/} $res before=$cur after=$now" >>"$T"
	done
done
cp /proc/interrupts "$R/interrupts.txt"
up truth

scsitune detect -o json >"$R/after-probe.json" 2>"$R/after-probe.err"
up end
