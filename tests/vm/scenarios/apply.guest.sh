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
. /vm/lib.sh
up() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$R/timing.txt"; }
up start

insmod "$SCSI_DEBUG_KO" submit_queues=2 host_max_queue=32 num_tgts=2 dev_size_mb=8 ||
	echo "apply.guest.sh: insmod scsi_debug failed"
want=4
wait_until 120 "$want sd disks" disks_at_least $want || exit 1
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
# irqb_pass ARGS...: one whole balancing pass of irqbalance, waited for:
# --oneshot makes it place every IRQ it may move (its first pass moves them
# all: force_rebalance_irq), write what changed to /proc/irq and exit. A
# pass is counted by its end, not guessed from a time: a daemon left to run
# for a few seconds may not have finished a pass on a busy machine, and then
# the bans would pass unproven and the control fail.
irqb_pass() {
	mkdir -p /run/irqbalance
	echo "== irqbalance --oneshot $*" >>"$R/irqbalance.log"
	timeout 120 irqbalance --foreground --oneshot --interval=1 "$@" >>"$R/irqbalance.log" 2>&1
	_rc=$?
	echo "== exit $_rc" >>"$R/irqbalance.log"
	[ "$_rc" = 0 ] || echo "apply.guest.sh: irqbalance --oneshot $* exited with $_rc (124: not done in 120 s)" >&2
	return "$_rc"
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
# Two whole passes with the file's options (the pins must survive each).
# shellcheck disable=SC2086
irqb_pass $IRQBALANCE_ARGS && irqb_pass $IRQBALANCE_ARGS
snap "$R/balanced.txt"
run verify-balanced -o json verify
up irqbalance

run revert -o json revert
snap "$R/reverted.txt"
cp /etc/default/irqbalance "$R/irqbalance.reverted"
up revert

# Control: the same pins without the bans: irqbalance takes them back.
run control-apply -o json apply --profile numa-every-hba --profile-dir $P
# the pinned IRQs: those the apply banned, with the affinity it gave them
bans=$(sed -n 's/^IRQBALANCE_ARGS=//p' /etc/default/irqbalance | tr -s ' "' '\n\n' | sed -n 's/^--banirq=//p')
for n in $bans; do echo "$n $(cat "/proc/irq/$n/smp_affinity_list")"; done >/tmp/pins
cp "$R/irqbalance.before" /etc/default/irqbalance
pin_moved() { # true once a pinned IRQ has another affinity
	while read -r n a; do
		[ "$(cat "/proc/irq/$n/smp_affinity_list")" = "$a" ] || return 0
	done </tmp/pins
	return 1
}
pass_moved() { irqb_pass && pin_moved; }
# passes until one moves a pin (the first does, here; counted in irqbalance.log)
if [ -n "$bans" ]; then
	WAIT_EVERY=0 wait_until 120 "irqbalance without the bans to move a pinned IRQ ($(echo $bans))" pass_moved
else
	echo "apply.guest.sh: control: the apply banned no IRQ in /etc/default/irqbalance" >&2
fi
snap "$R/control.txt"
run control-verify -o json verify
run control-revert -o json revert --force
up control
exit 0
