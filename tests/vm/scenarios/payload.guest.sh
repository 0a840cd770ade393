#!/bin/sh
# Scenario "payload", guest side: the payload's modules (payload/build, in
# /payload) replace Debian's scsi_mod and target_core_mod in the running
# stock kernel, the stock modules load on top of them, and the per-CPU
# counters are compared with what the block layer and fio saw.
# Writes to RESULTS_DIR (payload.check.py asserts on the host side):
#   steps.txt            one line per step: NAME RC (insmod/rmmod/...)
#   modinfo.txt          /sys/module/{scsi_mod,target_core_mod}/{version,taint,srcversion}, tainted
#   stock.txt            iocounterbits of a disk under the stock scsi_mod
#   disks.txt            every sd disk after the swap: name, proc_name, PCI numa_node
#   io-NAME.txt          for the scsi_debug and virtio disks: counters and
#                        /sys/block/X/stat before fio, right after, 2 s later
#   fio-NAME.json/.err/.rc
#   lio.txt              tcm_loop disk: scsi_lu stats and block stat before/after
#   fio-lio-write.*, fio-lio-read.*   4.25 GiB written and read through LIO
R=$1
P=/payload
step() { # NAME CMD...: run, record the status
	n=$1
	shift
	"$@" >>"$R/steps.log" 2>&1
	rc=$?
	echo "$n $rc" >>"$R/steps.txt"
	return $rc
}
ko_of() { grep "/$1.ko\$" /etc/vm/modules /etc/vm/extra-modules | head -1 | cut -d: -f2; }
wait_for() { # TEST-COMMAND...: up to 30 s
	i=0
	while [ $i -lt 300 ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
: >"$R/steps.txt"
[ -f $P/scsi_mod.ko ] || { echo "no $P/scsi_mod.ko (SCSITUNE_VM_PAYLOAD unset?)"; exit 1; }
cp $P/manifest.json "$R/manifest.json"

# --- stock state ---------------------------------------------------------------
for d in /sys/block/sd*; do
	[ -e "$d/device/iocounterbits" ] && { echo "stock_iocounterbits $(cat "$d/device/iocounterbits")" >"$R/stock.txt"; break; }
done
[ -e /sys/module/scsi_mod/version ] && echo "stock_version $(cat /sys/module/scsi_mod/version)" >>"$R/stock.txt"

# --- swap scsi_mod ---------------------------------------------------------------
step rmmod_sd_mod rmmod sd_mod
step rmmod_virtio_scsi rmmod virtio_scsi
step rmmod_megaraid_sas rmmod megaraid_sas
step rmmod_scsi_mod rmmod scsi_mod
step insmod_payload_scsi_mod insmod $P/scsi_mod.ko
step insmod_virtio_scsi insmod "$(ko_of virtio_scsi)"
step insmod_megaraid_sas insmod "$(ko_of megaraid_sas)"
step insmod_sd_mod insmod "$(ko_of sd_mod)"
step insmod_scsi_debug insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=32 num_tgts=1 dev_size_mb=16

disk_of() { # PROC_NAME: the first sd disk of a host with that proc_name
	for d in /sys/block/sd*; do
		[ -e "$d/device" ] || continue
		h=$(readlink -f "$d/device")
		h=${h%/target*}
		[ "$(cat "$h/scsi_host/${h##*/}/proc_name" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}
have3() { disk_of virtio_scsi >/dev/null && disk_of megaraid_sas >/dev/null && disk_of scsi_debug >/dev/null; }
wait_for have3 || echo "not every disk appeared"
{
	for d in /sys/block/sd*; do
		h=$(readlink -f "$d/device")
		h=${h%/target*}
		pci=$h
		while [ -n "$pci" ] && [ ! -e "$pci/numa_node" ]; do pci=${pci%/*}; done
		node=- pname=-
		[ -n "$pci" ] && node=$(cat "$pci/numa_node") && pname=${pci##*/}
		echo "${d##*/} $(cat "$h/scsi_host/${h##*/}/proc_name") $pname $node $(cat "$d/device/iocounterbits")"
	done
} >"$R/disks.txt"
for m in scsi_mod; do
	for f in version srcversion taint; do
		echo "$m.$f $(cat /sys/module/$m/$f 2>/dev/null || echo -)"
	done
done >"$R/modinfo.txt"

# --- per-CPU counters under fio -------------------------------------------------------
snap() { # TAG DISK
	echo "$1_iorequest_cnt $(cat /sys/block/$2/device/iorequest_cnt)"
	echo "$1_iodone_cnt $(cat /sys/block/$2/device/iodone_cnt)"
	echo "$1_stat $(cat /sys/block/$2/stat)"
}
io_test() { # NAME PROC_NAME
	d=$(disk_of "$2") || { echo "no $2 disk" >"$R/io-$1.txt"; return; }
	{ echo "disk $d"; snap before "$d"; } >"$R/io-$1.txt"
	rc=0
	fio --name="$1" --filename="/dev/$d" --rw=randrw --bs=4k --iodepth=8 --numjobs=2 \
		--ioengine=libaio --direct=1 --runtime=3 --time_based --group_reporting=0 \
		--output-format=json --output="$R/fio-$1.json" 2>"$R/fio-$1.err" || rc=$?
	echo "$rc" >"$R/fio-$1.rc"
	snap after "$d" >>"$R/io-$1.txt"
	sleep 2
	snap later "$d" >>"$R/io-$1.txt"
}
io_test scsi_debug scsi_debug
io_test virtio virtio_scsi

# --- swap in target_core_mod, LIO loopback on a ramdisk (nullio) -----------------------
step insmod_configfs insmod "$(ko_of configfs)"
step mount_configfs mount -t configfs configfs /sys/kernel/config
step insmod_payload_target_core_mod insmod $P/target_core_mod.ko
step insmod_tcm_loop insmod "$(ko_of tcm_loop)"
for m in target_core_mod; do
	for f in version srcversion taint; do
		echo "$m.$f $(cat /sys/module/$m/$f 2>/dev/null || echo -)"
	done
done >>"$R/modinfo.txt"
echo "tainted $(cat /proc/sys/kernel/tainted)" >>"$R/modinfo.txt"
C=/sys/kernel/config/target
dev=$C/core/rd_mcp_0/rd0
tpg=$C/loopback/naa.5001405000000001/tpgt_1
# 8 GiB of 4 KiB pages, rd_nullio: no memory behind it, reads return zeroes
step lio_mkdir_dev mkdir -p $dev
step lio_control sh -c "echo rd_pages=2097152,rd_nullio=1 >$dev/control"
step lio_enable sh -c "echo 1 >$dev/enable"
# the I_T nexus first: linking the LUN is what makes tcm_loop scan it
step lio_mkdir_tpg mkdir -p $tpg
step lio_nexus sh -c "echo naa.5001405000000002 >$tpg/nexus"
step lio_mkdir_lun mkdir -p $tpg/lun/lun_0
step lio_link ln -s $dev $tpg/lun/lun_0/rd0
wait_for disk_of tcm_loopback >/dev/null || echo "no tcm_loop disk"
ld=$(disk_of tcm_loopback) || ld=
lsnap() { # TAG
	s=$dev/statistics/scsi_lu
	echo "$1_num_cmds $(cat $s/num_cmds)"
	echo "$1_read_mbytes $(cat $s/read_mbytes)"
	echo "$1_write_mbytes $(cat $s/write_mbytes)"
	echo "$1_stat $(cat /sys/block/$ld/stat)"
	echo "$1_iorequest_cnt $(cat /sys/block/$ld/device/iorequest_cnt)"
	echo "$1_iodone_cnt $(cat /sys/block/$ld/device/iodone_cnt)"
}
if [ -n "$ld" ]; then
	{ echo "disk $ld"; lsnap before; } >"$R/lio.txt"
	for rw in write read; do
		rc=0
		fio --name="lio-$rw" --filename="/dev/$ld" --rw=$rw --bs=1M --size=4352M --iodepth=4 \
			--ioengine=libaio --direct=1 --output-format=json --output="$R/fio-lio-$rw.json" \
			2>"$R/fio-lio-$rw.err" || rc=$?
		echo "$rc" >"$R/fio-lio-$rw.rc"
		lsnap "after_$rw" >>"$R/lio.txt"
	done
	sleep 2
	lsnap later >>"$R/lio.txt"
fi
exit 0
