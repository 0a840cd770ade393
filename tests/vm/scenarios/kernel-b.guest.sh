#!/bin/sh
# Scenario "kernel-b", guest side: run on a kernel from `payload/build
# --kernel` (patch B, release *-scsitune) and on the control built from the
# same configuration without B (*-scsitune-nob); kernel-b.check.py knows
# which from uname -r. On a scsi_debug host with shared tags (host_max_queue=32
# over 4 submit queues, two LUNs, every command held 20 ms so that the queue
# fills) and on the virtio-scsi disk:
#   1. both LUNs read by fio at once: the block layer's counters against fio's;
#   2. "alone": LUN 0 read at queue depth 64 beside a light LUN 1 (one read
#      in flight at a time: it uses one tag, and stays an active user of the
#      tags; a LUN with nothing in flight is dropped from the users within
#      5 s, and a trickle of reads drops in and out): the depths sampled
#      from debugfs and sysfs while fio runs (run again, up to 3 times in all,
#      while fewer than 3 samples saw LUN 0 busy beside LUN 1);
#      then 4 more such runs of 5 s (fair1..fair4) for the host's per-LUN
#      report and gate;
#   3. LUN 1 left idle until the block layer drops it (debugfs active_queues
#      back to 1: its request timer, at most 5 s), then LUN 0 alone again:
#      the depth without a second user;
#   4. fio on the virtio-scsi disk, its counters against fio's.
# Writes to RESULTS_DIR: uname.txt, notes.bin (/sys/kernel/notes: the
# running kernel's build ID), luns.txt, PHASE.fio.json/.rc/.err,
# PHASE.stat (block layer stat per disk before/after), PHASE.samples (lines
# "t=UPTIME DISK busy=B active_queues=Q inflight=R W hctx_active=A|-" while
# fio runs), debugfs.txt (hctx files and the tags of each LUN).
# shellcheck disable=SC2086 # $luns and $disks are word lists, split on purpose
R=$1
. /vm/lib.sh
uname -r >"$R/uname.txt"
cp /sys/kernel/notes "$R/notes.bin"

insmod "$SCSI_DEBUG_KO" host_max_queue=32 submit_queues=4 max_luns=2 num_tgts=1 \
	dev_size_mb=64 ndelay=20000000 || echo "kernel-b.guest.sh: insmod scsi_debug failed"
luns=
two_luns() { # sets luns: "H:C:T:L:sdX" of every scsi_debug disk; true once there are 2
	luns=
	for d in /sys/block/sd*; do
		[ -e "$d/device/model" ] || continue
		case $(cat "$d/device/model") in scsi_debug*) luns="$luns $(basename "$(readlink -f "$d/device")"):${d##*/}" ;; esac
	done
	set -- $luns
	[ $# -ge 2 ]
}
wait_until 120 "2 scsi_debug LUNs" two_luns
# "H:C:T:L:sdX" sorted by LUN
luns=$(for l in $luns; do echo "$l"; done | sort -t: -k4n)
echo "luns" $luns >"$R/luns.txt"
set -- $luns
[ $# -eq 2 ] || { echo "expected 2 scsi_debug LUNs, got: $luns"; exit 1; }
lun0=${1##*:} lun1=${2##*:}
virt=
for d in /sys/block/sd*; do
	case $(readlink -f "$d/device") in */virtio*) virt=${d##*/} ;; esac
done
echo "virtio $virt" >>"$R/luns.txt"

for d in $lun0 $lun1; do
	echo none >"/sys/block/$d/queue/scheduler"
	echo 32 >"/sys/block/$d/device/queue_depth"
	echo "$d queue_depth $(cat "/sys/block/$d/device/queue_depth") scheduler $(cat "/sys/block/$d/queue/scheduler") nr_requests $(cat "/sys/block/$d/queue/nr_requests") can_queue $(cat "$(readlink -f "/sys/block/$d/device")"/../../scsi_host/*/can_queue)" >>"$R/luns.txt"
done

dbg=/sys/kernel/debug/block
{
	for d in $lun0 $lun1; do
		echo "== $d hctx: $(ls -d "$dbg/$d"/hctx* | wc -l)"
		echo "== $d hctx0 files: $(ls "$dbg/$d/hctx0" | tr '\n' ' ')"
		echo "== $d hctx0/tags"
		cat "$dbg/$d/hctx0/tags"
		[ -e "$dbg/$d/hctx0/active" ] && echo "== $d hctx0/active $(cat "$dbg/$d/hctx0/active")"
	done
} >"$R/debugfs.txt" 2>&1

# field of a debugfs tags file: "active_queues=2" / "busy=16" (one per line)
tagfield() { sed -n "s/^$2=//p" "$dbg/$1/hctx0/tags" | head -1; }
# busy= and active_queues= of DISK's hctx0 tags (the first of each: the
# bitmap tags, not the reserved ones), read by the shell itself
tagsof() { # DISK: sets busy, aq
	busy='' aq=''
	while IFS='=' read -r k v; do
		case $k in
		busy) [ -n "$busy" ] || busy=$v ;;
		active_queues) [ -n "$aq" ] || aq=$v ;;
		esac
	done <"$dbg/$1/hctx0/tags"
}
# sample DISKs until fio (PID) ends, every 0.1 s (the sleep is the sampling
# interval, not a wait: the loop ends with fio). Only shell builtins
# between the sleeps: under TCG on a loaded host every process started
# costs tens of ms, and a sampler of command substitutions managed one
# sample a second or less (2 in an 8 s phase).
sample() { # OUT PID DISK...
	o=$1 p=$2
	shift 2
	while kill -0 "$p" 2>/dev/null; do
		for d in "$@"; do
			a=-
			[ -e "$dbg/$d/hctx0/active" ] && read -r a <"$dbg/$d/hctx0/active"
			read -r up _ </proc/uptime
			read -r ir iw <"/sys/block/$d/inflight"
			tagsof "$d"
			echo "t=$up $d busy=$busy active_queues=$aq inflight=$ir,$iw hctx_active=$a"
		done
		sleep 0.1
	done >"$o"
}
stat_all() { for d in "$@"; do echo "$d $(cat "/sys/block/$d/stat")"; done; }
phase() { # NAME RUNTIME DISK:IODEPTH[:RATE_IOPS]...
	n=$1 rt=$2
	shift 2
	args='' disks=''
	for j in "$@"; do
		d=${j%%:*} q=${j#*:}
		case $q in
		*:*) args="$args --name=$d --filename=/dev/$d --iodepth=${q%%:*} --rate_iops=${q#*:}" ;;
		*) args="$args --name=$d --filename=/dev/$d --iodepth=$q" ;;
		esac
		disks="$disks $d"
	done
	stat_all $disks >"$R/$n.stat.before"
	# shellcheck disable=SC2086 # one fio job per disk
	fio --rw=randread --bs=4k --ioengine=libaio --direct=1 --runtime="$rt" --time_based \
		--output-format=json --output="$R/$n.fio.json" $args 2>"$R/$n.fio.err" &
	fp=$!
	sample "$R/$n.samples" "$fp" $disks
	wait "$fp"
	echo $? >"$R/$n.fio.rc"
	stat_all $disks >"$R/$n.stat.after"
}

echo "phase together at $(cut -d' ' -f1 /proc/uptime)"
phase together 5 "$lun0:32" "$lun1:32"
# enough SAMPLES DISK N: at least N samples with DISK's tags busy while two
# queues are the tag set's users (what the "alone" checks judge).
enough() { [ "$(grep -cE "^t=[0-9.]+ $2 busy=[1-9][0-9]* active_queues=2 " "$1")" -ge "$3" ]; }
echo "phase alone (LUN 1 light: one read in flight) at $(cut -d' ' -f1 /proc/uptime)"
phase alone 10 "$lun0:64" "$lun1:1"
# A starved guest (a CI machine busy with other work) can pass a 10 s phase
# with a sample or two: the phase is run again, at most twice more, until the
# sampler saw 3 such samples; the checks judge the last run.
try=1
while ! enough "$R/alone.samples" "$lun0" 3 && [ $try -lt 3 ]; do
	try=$((try + 1))
	echo "phase alone again (try $try: too few samples with LUN 0 busy beside LUN 1) at $(cut -d' ' -f1 /proc/uptime)"
	phase alone 10 "$lun0:64" "$lun1:1"
done
# The same two LUNs, 4 runs more of 5 s (the light LUN still a user of the tags): the runs report --run's
# per-device results judge on the host (kernel-b.sh: each LUN's IOPS and p99, their fairness, the gate on B
# against its control), 4 and 4 runs being enough for a rank test at 95 %.
for i in 1 2 3 4; do
	echo "phase fair$i at $(cut -d' ' -f1 /proc/uptime)"
	phase "fair$i" 5 "$lun0:64" "$lun1:1"
done
# The block layer marks a hctx idle from its request timeout timer, which
# fires at most 5 s (BLK_MAX_TIMEOUT) after it was armed and finds no request
# in flight; wait until LUN 1 is no longer counted.
dropped() { [ "$(tagfield "$lun0" active_queues)" = 1 ] || [ "$(tagfield "$lun0" active_queues)" = 0 ]; }
uptime_cs
t_idle=$now_cs
WAIT_EVERY=0.5 wait_until 120 "LUN 1 dropped from active_queues" dropped
uptime_cs
echo "active_queues $(tagfield "$lun0" active_queues) after $(((now_cs - t_idle) / 100)) s" >"$R/idle.txt"
echo "phase solo (LUN 1 dropped) at $(cut -d' ' -f1 /proc/uptime)"
phase solo 8 "$lun0:64"
if [ -n "$virt" ]; then
	echo "phase virtio at $(cut -d' ' -f1 /proc/uptime)"
	phase virtio 3 "$virt:16"
fi
dmesg | grep -E 'BUG|WARNING|Oops|Call Trace' >"$R/kernel-warnings.txt"
exit 0
