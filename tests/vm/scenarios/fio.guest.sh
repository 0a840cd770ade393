#!/bin/sh
# Scenario "fio", guest side: Debian's fio runs in the guest on a scsi_debug
# disk (direct, libaio, random 4 KiB reads, a few seconds), the job bound to
# NUMA node 0 with fio's own libnuma option. Writes to RESULTS_DIR:
#   fio.json, fio.err, fio.rc   fio --output-format=json output and status
#   disk.txt                    the disk used, its SCSI counters and block
#                               layer stat before/after
# fio.check.py asserts on them on the host side.
R=$1
. /vm/lib.sh
insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=32 dev_size_mb=16 ||
	echo "fio.guest.sh: insmod scsi_debug failed"
disk=
sd_disk() { # sets disk to a scsi_debug disk, if there is one
	for d in /sys/block/sd*; do
		[ -e "$d/device/model" ] || continue
		case $(cat "$d/device/model") in scsi_debug*) disk=${d##*/} ;; esac
	done
	[ -n "$disk" ]
}
wait_until 120 "a scsi_debug disk" sd_disk
if [ -z "$disk" ]; then
	echo "no scsi_debug disk" >"$R/disk.txt"
	exit 1
fi
sdev=/sys/block/$disk/device
{
	echo "disk $disk"
	echo "before_iorequest_cnt $(cat "$sdev/iorequest_cnt")"
	echo "before_iodone_cnt $(cat "$sdev/iodone_cnt")"
	echo "before_stat $(cat "/sys/block/$disk/stat")"
} >"$R/disk.txt"
rc=0
fio --name=seed --filename="/dev/$disk" --rw=randread --bs=4k --iodepth=8 --numjobs=2 \
	--ioengine=libaio --direct=1 --runtime=3 --time_based --group_reporting=0 \
	--numa_cpu_nodes=0 --numa_mem_policy=bind:0 \
	--output-format=json --output="$R/fio.json" 2>"$R/fio.err" || rc=$?
echo "$rc" >"$R/fio.rc"
{
	echo "after_iorequest_cnt $(cat "$sdev/iorequest_cnt")"
	echo "after_iodone_cnt $(cat "$sdev/iodone_cnt")"
	echo "after_stat $(cat "/sys/block/$disk/stat")"
} >>"$R/disk.txt"
exit 0
