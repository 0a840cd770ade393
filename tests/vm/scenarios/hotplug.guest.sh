#!/bin/sh
# Scenario "hotplug", guest side: scsi_debug hosts are added and removed in a
# loop (/sys/bus/pseudo/drivers/scsi_debug/add_host) while scsitune detect
# runs again and again.
#   hotplug.guest.sh RESULTS_DIR
# Writes RESULTS_DIR/runs/N.{json,txt,err,rc} (odd N: -o json, even N: text),
# churn.count (add/remove rounds done), final.json (detect after the churn)
# and hosts.txt (the kernel's scsi_host list then). hotplug.check.py asserts.
R=$1
. /vm/lib.sh
up() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$R/timing.txt"; }
up start
insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=16 num_tgts=1 dev_size_mb=4 ||
	echo "hotplug.guest.sh: insmod scsi_debug failed"
AH=/sys/bus/pseudo/drivers/scsi_debug/add_host
mkdir -p "$R/runs"
rm -f /tmp/stop
(
	i=0
	while [ ! -e /tmp/stop ]; do
		echo 1 >"$AH"
		echo 1 >"$AH"
		echo -1 >"$AH"
		echo -1 >"$AH"
		i=$((i + 1))
	done
	echo "$i" >"$R/churn.count"
) &
churn=$!
up churn
for n in $(seq 1 40); do
	if [ $((n % 2)) = 1 ]; then
		scsitune detect -o json >"$R/runs/$n.json" 2>"$R/runs/$n.err"
	else
		scsitune detect >"$R/runs/$n.txt" 2>"$R/runs/$n.err"
	fi
	echo $? >"$R/runs/$n.rc"
done
touch /tmp/stop
wait "$churn"
up stopped
# The final look, once the kernel has settled: a host added last may still
# be scanned asynchronously (its disk not there yet). Settled: every
# scsi_debug host has its disk (num_tgts=1, one LUN each).
scanned() {
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = scsi_debug ] || continue
		set -- "$h"/device/target*/*/block/sd*
		[ -e "$1" ] || return 1
	done
	return 0
}
wait_until 120 "every scsi_debug host scanned (its disk there)" scanned || exit 1
scsitune detect -o json >"$R/final.json" 2>"$R/final.err"
echo $? >"$R/final.rc"
for h in /sys/class/scsi_host/host*; do
	echo "${h##*/} $(cat "$h/proc_name")"
done >"$R/hosts.txt"
ls -d /sys/block/sd* 2>/dev/null | wc -l >"$R/disks.txt"
up end
