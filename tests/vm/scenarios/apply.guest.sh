#!/bin/sh
# Scenario "apply", guest side: scsitune apply --profile numa-every-hba (the
# shipped numa profile, on every HBA: the guest has no mpi3mr), verify and
# revert on the guest kernel's real sysfs and /proc/irq, with Debian's
# irqbalance (its binary and /etc/default/irqbalance are in the image).
#   apply.guest.sh RESULTS_DIR
# Writes to RESULTS_DIR (apply.check.py asserts on them on the host side):
#   before.txt, applied.txt, balanced.txt, reverted.txt, control.txt
#       the kernel's own values at each step: per disk the queue attributes,
#       per IRQ smp_affinity_list and effective_affinity_list
#   detect.json                    scsitune detect -o json (managed flags)
#   plan.json                      apply --dry-run -o json
#   apply.json/.rc/.err            apply -o json
#   verify.json/.rc                verify -o json right after apply
#   verify-balanced.json/.rc       verify after irqbalance ran with the file's bans
#   revert.json/.rc                revert -o json
#   irqbalance.before/.applied/.reverted   /etc/default/irqbalance at each step
#   irqbalance.log                 what irqbalance printed
#   control-*.json/.rc             apply again, irqbalance WITHOUT the bans,
#                                  verify (irqbalance moves pinned IRQs back:
#                                  drift), revert --force
R=$1
P=/vm/profiles
up() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$R/timing.txt"; }
up start

insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=32 num_tgts=2 dev_size_mb=8 ||
	echo "apply.guest.sh: insmod scsi_debug failed"
want=4
i=0
while [ "$(ls -d /sys/block/sd* 2>/dev/null | wc -l)" -lt $want ] && [ $i -lt 300 ]; do
	i=$((i + 1))
	sleep 0.1
done
up disks

snap() { # FILE: the kernel's values, one per line
	for d in /sys/block/sd*; do
		for a in scheduler nr_requests rq_affinity nomerges add_random read_ahead_kb rotational; do
			echo "disk ${d##*/} $a $(cat "$d/queue/$a")"
		done
	done >"$1"
	for i in /proc/irq/[0-9]*; do
		[ -f "$i/smp_affinity_list" ] || continue
		echo "irq ${i##*/} $(cat "$i/smp_affinity_list") $(cat "$i/effective_affinity_list" 2>/dev/null)"
	done >>"$1"
}
run() { # NAME ARGS...: scsitune ARGS > NAME.json, exit code in NAME.rc
	n=$1
	shift
	scsitune "$@" >"$R/$n.json" 2>"$R/$n.err"
	echo $? >"$R/$n.rc"
}
irqb() { # SECONDS ARGS...: irqbalance in the foreground, rebalancing every second
	s=$1
	shift
	mkdir -p /run/irqbalance
	echo "== irqbalance $*" >>"$R/irqbalance.log"
	irqbalance --foreground --interval=1 "$@" >>"$R/irqbalance.log" 2>&1 &
	pid=$!
	sleep "$s"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

snap "$R/before.txt"
cp /etc/default/irqbalance "$R/irqbalance.before"
scsitune -o json detect >"$R/detect.json" 2>"$R/detect.err"
run plan -o json apply --profile numa-every-hba --profile-dir $P --dry-run
up plan
run apply -o json apply --profile numa-every-hba --profile-dir $P
snap "$R/applied.txt"
cp /etc/default/irqbalance "$R/irqbalance.applied"
run verify -o json verify
up apply

# irqbalance as its unit starts it: ExecStart=irqbalance --foreground $IRQBALANCE_ARGS
# with the file as EnvironmentFile (the sysvinit script sources it the same way).
IRQBALANCE_ARGS=
. /etc/default/irqbalance
# shellcheck disable=SC2086
irqb 5 $IRQBALANCE_ARGS
snap "$R/balanced.txt"
run verify-balanced -o json verify
up irqbalance

run revert -o json revert
snap "$R/reverted.txt"
cp /etc/default/irqbalance "$R/irqbalance.reverted"
up revert

# Control: the same pins without the bans: irqbalance takes them back.
run control-apply -o json apply --profile numa-every-hba --profile-dir $P
cp "$R/irqbalance.before" /etc/default/irqbalance
irqb 5
snap "$R/control.txt"
run control-verify -o json verify
run control-revert -o json revert --force
up control
exit 0
