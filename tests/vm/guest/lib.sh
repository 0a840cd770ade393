# lib.sh -- what the guest scenarios of the initramfs share (busybox sh;
# sourced: . /vm/lib.sh). build-env.sh puts it in /vm/lib.sh.
#
# Every wait in a scenario is a poll for the condition it waits for, with a
# deadline, never a fixed sleep: a guest under TCG on a busy machine runs
# many times slower than on an idle one, and a wait that guesses a time
# fails there. The deadlines are generous (minutes where seconds do on an
# idle machine): they cost nothing unless the condition never comes, and then
# the scenario says which condition and how long it waited.

# uptime_cs: sets $now_cs to the guest's uptime in hundredths of a second
# (a builtin read, no process: cheap enough to call in a sampling loop).
uptime_cs() {
	read -r now_cs _ </proc/uptime
	now_cs=${now_cs%.*}${now_cs#*.}
	while :; do
		case $now_cs in
		0?*) now_cs=${now_cs#0} ;;
		*) break ;;
		esac
	done
}

# wait_until SECONDS WHAT CMD...: runs CMD until it succeeds, every
# $WAIT_EVERY seconds (default 0.1). 0 once it did (a line "wait: WHAT after
# N s" on stdout); 1 when SECONDS of the guest's clock passed first (a line
# "wait: timed out after SECONDS s waiting for WHAT" on stderr).
wait_until() {
	_wu_s=$1 _wu_what=$2
	shift 2
	uptime_cs
	_wu_t0=$now_cs
	_wu_end=$((now_cs + _wu_s * 100))
	while ! "$@"; do
		uptime_cs
		if [ "$now_cs" -ge "$_wu_end" ]; then
			echo "wait: timed out after $_wu_s s waiting for $_wu_what" >&2
			return 1
		fi
		sleep "${WAIT_EVERY:-0.1}"
	done
	uptime_cs
	_wu_d=$((now_cs - _wu_t0))
	echo "wait: $_wu_what after $((_wu_d / 100)).$((_wu_d / 10 % 10)) s"
	return 0
}

# disks_at_least N: at least N sd disks in /sys/block.
disks_at_least() {
	set -- "$1" /sys/block/sd*
	_n=$1
	shift
	[ -e "$1" ] || set --
	[ $# -ge "$_n" ]
}
