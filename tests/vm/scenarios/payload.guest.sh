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
#   iscsi.txt            ORDERED part: rounds, rd1/port/ACL statistics before and after
#   iscsi-mixed1.log, iscsi-mixed2.log, iscsi-tail.log (+ .rc, .err)
#                        payload-iscsi's record of every command it sent
#   iscsi-trace.txt      the target tracepoints (tag, task attribute, status)
#   iscsi-kmsg.txt       the kernel log during the ORDERED part, with dynamic
#                        debug of target_handle_task_attr() and phase markers
#   dmesg-before-iscsi.txt  the kernel log before that
R=$1
P=/payload
. /vm/lib.sh
step() { # NAME CMD...: run, record the status
	n=$1
	shift
	"$@" >>"$R/steps.log" 2>&1
	rc=$?
	echo "$n $rc" >>"$R/steps.txt"
	return $rc
}
ko_of() { grep "/$1.ko\$" /etc/vm/modules /etc/vm/extra-modules | head -1 | cut -d: -f2; }
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
wait_until 120 "a disk on each of virtio_scsi, megaraid_sas and scsi_debug" have3 || echo "not every disk appeared"
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
	# Not a wait: the window observed. fio has reaped every completion when
	# it exits; nothing may move in the 2 s after (payload.check.py).
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
wait_until 120 "the tcm_loop disk" disk_of tcm_loopback >/dev/null || echo "no tcm_loop disk"
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
	# Not a wait: the window observed (nothing may move in the 2 s after).
	sleep 2
	lsnap later >>"$R/lio.txt"
fi

# --- ORDERED task attributes: LIO's iSCSI target on lo, payload-iscsi -----------------
# tcm_loop and the Linux initiators send every command SIMPLE; payload-iscsi
# (tests/vm/scenarios/payload-iscsi.c) logs in over lo and chooses the ATTR
# field. A fresh 4 MiB ramdisk (rd1, with memory, so reads return the data)
# is LUN 0 of an iSCSI TPG with three explicit ACLs (per-initiator stats).
IQN=iqn.2003-01.org.scsitune:payload
INI=iqn.2003-01.org.scsitune:init
ROUNDS=50
d1=$C/core/rd_mcp_0/rd1
T=$C/iscsi/$IQN/tpgt_1
TR=/sys/kernel/tracing
echo "rounds $ROUNDS" >"$R/iscsi.txt"
command -v payload-iscsi >/dev/null || echo "initiator missing: no payload-iscsi in the guest (SCSITUNE_VM_ISCSI unset?)" >>"$R/iscsi.txt"
step lo_up ip link set lo up
step insmod_crc32c_generic insmod "$(ko_of crc32c_generic)"
step insmod_iscsi_target_mod insmod "$(ko_of iscsi_target_mod)"
step iscsi_mkdir_dev mkdir $d1
step iscsi_dev_control sh -c "echo rd_pages=1024 >$d1/control"
step iscsi_dev_enable sh -c "echo 1 >$d1/enable"
step iscsi_mkdir_tpg mkdir -p $T
step iscsi_mkdir_lun mkdir $T/lun/lun_0
step iscsi_link_lun ln -s $d1 $T/lun/lun_0/rd1
for i in 1 2 3; do
	step iscsi_mkdir_acl$i mkdir -p $T/acls/$INI$i/lun_0
	step iscsi_link_acl$i ln -s $T/lun/lun_0 $T/acls/$INI$i/lun_0/lun0
done
step iscsi_authentication_0 sh -c "echo 0 >$T/attrib/authentication"
step iscsi_mkdir_np mkdir $T/np/127.0.0.1:3260
step iscsi_tpg_enable sh -c "echo 1 >$T/enable"
# what the target saw: its tracepoints (tag = ITT, task attribute, status)
# and, by dynamic debug, which commands target_handle_task_attr() delayed
step mount_tracefs mount -t tracefs tracefs $TR
step trace_buffer sh -c "echo 8192 >$TR/buffer_size_kb"
step trace_seq sh -c "echo 1 >$TR/events/target/target_sequencer_start/enable"
step trace_complete sh -c "echo 1 >$TR/events/target/target_cmd_complete/enable"
# the kernel log so far (dynamic debug may push it out of the ring buffer)
dmesg >"$R/dmesg-before-iscsi.txt"
step dyndbg_on sh -c "echo 'func target_handle_task_attr +p' >/sys/kernel/debug/dynamic_debug/control"
cat /proc/kmsg >/tmp/kmsg.txt &
kmsg_pid=$!
# no_session N...: no iSCSI session of initiator $INI<N> left on the target
# (a logout is answered before the target has torn the session down)
no_session() {
	for i in "$@"; do
		grep -q '^No active iSCSI Session' "$T/acls/$INI$i/info" || return 1
	done
}
isnap() { # TAG: device, port and per-initiator statistics
	for k in num_cmds read_mbytes write_mbytes; do echo "$1_lu_$k $(cat $d1/statistics/scsi_lu/$k)"; done
	for k in in_cmds read_mbytes write_mbytes; do
		echo "$1_port_$k $(cat $T/lun/lun_0/statistics/scsi_tgt_port/$k)"
	done
	for i in 1 2 3; do
		for k in num_cmds read_mbytes write_mbytes; do
			echo "$1_acl${i}_$k $(cat $T/acls/$INI$i/lun_0/statistics/scsi_auth_intr/$k)"
		done
	done
}
isnap before >>"$R/iscsi.txt"
echo "scsitune-iscsi: phase mixed" >/dev/kmsg
t0=$(cut -d' ' -f1 /proc/uptime)
# two sessions at once, each on its own eight 4 KiB slots (LBA 0-63, 64-127)
pids=
for i in 1 2; do
	(
		rc=0
		payload-iscsi -m mixed -t $IQN -i $INI$i -s $i -b $((8 * (i - 1))) -r "$ROUNDS" \
			-o "$R/iscsi-mixed$i.log" 2>"$R/iscsi-mixed$i.err" || rc=$?
		echo $rc >"$R/iscsi-mixed$i.rc"
	) &
	pids="$pids $!"
done
wait $pids
t1=$(cut -d' ' -f1 /proc/uptime)
wait_until 120 "the target to close the mixed sessions" no_session 1 2
# then one session alone: the 16 slots of both, lone ORDERED commands
rc=0
payload-iscsi -m tail -t $IQN -i ${INI}3 -s 3 -b 0 -n 16 -r "$ROUNDS" -k \
	-o "$R/iscsi-tail.log" 2>"$R/iscsi-tail.err" || rc=$?
echo $rc >"$R/iscsi-tail.rc"
echo "seconds_mixed $t0 $t1 tail_end $(cut -d' ' -f1 /proc/uptime)" >>"$R/iscsi.txt"
wait_until 120 "the target to close the tail session" no_session 3
isnap after >>"$R/iscsi.txt"
# the kernel log read up to payload-iscsi's last marker (its phase E is done)
wait_until 120 "the kernel log up to 'scsitune-iscsi: phase end'" grep -q 'scsitune-iscsi: phase end' /tmp/kmsg.txt
step dyndbg_off sh -c "echo 'func target_handle_task_attr -p' >/sys/kernel/debug/dynamic_debug/control"
kill $kmsg_pid
cp /tmp/kmsg.txt "$R/iscsi-kmsg.txt"
echo 0 >$TR/tracing_on
cat $TR/trace >"$R/iscsi-trace.txt"
echo "payload-iscsi sessions: $(cat /sys/kernel/config/target/iscsi/$IQN/tpgt_1/dynamic_sessions 2>/dev/null)" >>"$R/iscsi.txt"

# --- teardown: every LIO object removed, the fabrics and target_core_mod unloaded ---------
# rd1 goes with the ORDERED TEST UNIT READY of tail phase E as the last
# command: patch E's per-CPU count is still switched off (killed) then, and
# target_free_device() must bring it back before freeing it.
step iscsi_tpg_disable sh -c "echo 0 >$T/enable"
step iscsi_rmdir_np rmdir $T/np/127.0.0.1:3260
for i in 1 2 3; do
	step iscsi_unlink_acl$i rm $T/acls/$INI$i/lun_0/lun0
	step iscsi_rmdir_acl$i rmdir $T/acls/$INI$i/lun_0 $T/acls/$INI$i
done
step iscsi_unlink_lun rm $T/lun/lun_0/rd1
step iscsi_rmdir_lun rmdir $T/lun/lun_0
step iscsi_rmdir_tpg rmdir $T $C/iscsi/$IQN $C/iscsi
step iscsi_rmdir_dev rmdir $d1
step rmmod_iscsi_target_mod rmmod iscsi_target_mod
if [ -n "$ld" ]; then
	step lio_unlink rm $tpg/lun/lun_0/rd0
	step lio_rmdir_lun rmdir $tpg/lun/lun_0
	step lio_nexus_off sh -c "echo NULL >$tpg/nexus"
	step lio_rmdir_tpg rmdir $tpg ${tpg%/*} $C/loopback
	step lio_rmdir_dev rmdir $dev ${dev%/*}
	step rmmod_tcm_loop rmmod tcm_loop
	step rmmod_target_core_mod rmmod target_core_mod
fi
exit 0
