#!/bin/sh
# Scenario "report", guest side: scsitune report --run inside the 2-node guest.
#   report.guest.sh RESULTS_DIR
# On the virtio-scsi disk (its HBA sits behind the pxb on node 1) fio must be
# bound to node 1; a wrapper given as --fio records the CPUs fio may run on
# (Cpus_allowed_list) and its memory policy before exec'ing the real fio. On
# the megasas disk (numa_node -1) fio must run unbound. Writes to RESULTS_DIR:
#   node1.json, node1.err, node1.rc   report -v -o json --run on the virtio disk
#   nolocal.json, nolocal.err, nolocal.rc   the same on the megasas disk
#   fio-node1.log, fio-nolocal.log    the wrapper's records (one line per fio start)
# report.check.py asserts on them on the host side.
R=$1
. /vm/lib.sh
vdisk= mdisk=
both_disks() { # sets vdisk and mdisk; true once both are there
	for d in /sys/block/sd*; do
		[ -e "$d/device" ] || continue
		case $(readlink -f "$d/device") in
		*virtio*) vdisk=${d##*/} ;;
		esac
		# megasas: the driver of the SCSI host's parent PCI function.
		case $(readlink -f "$d/device/../../../driver" 2>/dev/null)$(readlink -f "$d/device/../../../../driver" 2>/dev/null) in
		*megaraid_sas*) mdisk=${d##*/} ;;
		esac
	done
	[ -n "$vdisk" ] && [ -n "$mdisk" ]
}
wait_until 120 "the virtio-scsi and the megasas disk" both_disks
echo "virtio $vdisk megasas $mdisk" >"$R/disks.txt"
fio=$(command -v fio)
mkwrap() { # LOG
	cat >"/tmp/fio-wrap-$1" <<WRAP
#!/bin/sh
if [ "\$1" != --version ]; then
	echo "\$(grep Cpus_allowed_list /proc/self/status | cut -f2) \$(grep Mems_allowed_list /proc/self/status | cut -f2)" >>"$R/fio-$1.log"
fi
exec "$fio" "\$@"
WRAP
	chmod +x "/tmp/fio-wrap-$1"
}
mkwrap node1
mkwrap nolocal
rc=0
scsitune -v -o json report --run --fio /tmp/fio-wrap-node1 --device "/dev/$vdisk" --runtime 2 --runs 2 \
	--numjobs 2 --iodepth 4 --phase vm --state-dir /tmp/st >"$R/node1.json" 2>"$R/node1.err" || rc=$?
echo "$rc" >"$R/node1.rc"
rc=0
scsitune -o json report --run --fio /tmp/fio-wrap-nolocal --device "/dev/$mdisk" --runtime 1 --runs 1 \
	--numjobs 1 --iodepth 1 --state-dir /tmp/st >"$R/nolocal.json" 2>"$R/nolocal.err" || rc=$?
echo "$rc" >"$R/nolocal.rc"
exit 0
