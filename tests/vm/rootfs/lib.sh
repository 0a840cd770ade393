# lib.sh -- helpers for stage scripts of the rootfs scenarios (sourced:
# . "$VM_IN/lib.sh"). run.sh puts it in /vm/in. The environment vm-stage
# gives a stage: VM_BOOT (1, 2, ...), VM_IN (/vm/in), VM_OUT (/vm/out).

# next_boot: ask vm-stage for another boot once this stage exits 0.
next_boot() { echo reboot >"$VM_OUT/next"; }

# next_boot_mokmanager: another boot, and before it one in which shim's
# MokManager runs (a key staged with mokutil --import) and run.sh enrols the
# key there with the password it was staged with (SCSITUNE_VM_FIRMWARE=
# secureboot; mokmanager.py, SCSITUNE_VM_MOK_PASSWORD_FILE).
next_boot_mokmanager() { echo mokmanager >"$VM_OUT/next-firmware" && next_boot; }

# up LABEL: the uptime at LABEL, appended to $VM_OUT/boot-$VM_BOOT.times.
up() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$VM_OUT/boot-$VM_BOOT.times"; }

# install_scsitune: /vm/in/scsitune to /usr/local/sbin/scsitune and
# /vm/in/profiles/* to /usr/local/share/scsitune/profiles (where a default
# build, CMAKE_INSTALL_PREFIX /usr/local, looks for them and where
# apply --persist's unit names the binary); fails when a library is missing.
install_scsitune() {
	install -D -m 0755 "$VM_IN/scsitune" /usr/local/sbin/scsitune &&
		mkdir -p /usr/local/share/scsitune/profiles &&
		cp "$VM_IN"/profiles/* /usr/local/share/scsitune/profiles/ || return 1
	if ldd /usr/local/sbin/scsitune | grep 'not found'; then
		echo "install_scsitune: a library scsitune needs is not in the image (tests/vm/rootfs/build-image.sh)"
		return 1
	fi
}

# Every wait in a stage is a poll for the condition it waits for, with a
# deadline, never a fixed sleep (tests/vm/guest/lib.sh says why; the same
# helpers as there, for dash).
# uptime_cs: sets $now_cs to the uptime in hundredths of a second.
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
# $WAIT_EVERY seconds (default 0.1). 0 once it did ("wait: WHAT after N s"
# on stdout); 1 when SECONDS passed first ("wait: timed out after SECONDS s
# waiting for WHAT" on stderr).
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

# wait_disks N: until at least N sd disks exist (120 s), then until udev
# has settled (udevadm settle: its own poll, 120 s; not settled is said on
# stderr, and left to the stage's own checks, as before).
wait_disks() {
	wait_until 120 "$1 sd disks" disks_at_least "$1" || return 1
	udevadm settle -t 120 || echo "wait_disks: udevadm settle: udev's event queue not empty after 120 s" >&2
	return 0
}

# run NAME ARGS...: scsitune ARGS with stdout in $VM_OUT/NAME.json (or
# whatever it prints), stderr in NAME.err, the exit code in NAME.rc, its
# wall time in NAME.ms (a figure to print, never a pass/fail).
run() {
	n=$1
	shift
	t0=$(date +%s%N)
	scsitune "$@" >"$VM_OUT/$n.json" 2>"$VM_OUT/$n.err"
	echo $? >"$VM_OUT/$n.rc"
	echo $((($(date +%s%N) - t0) / 1000000)) >"$VM_OUT/$n.ms"
}
