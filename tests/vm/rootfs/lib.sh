# lib.sh -- helpers for stage scripts of the rootfs scenarios (sourced:
# . "$VM_IN/lib.sh"). run.sh puts it in /vm/in. The environment vm-stage
# gives a stage: VM_BOOT (1, 2, ...), VM_IN (/vm/in), VM_OUT (/vm/out).

# next_boot: ask vm-stage for another boot once this stage exits 0.
next_boot() { echo reboot >"$VM_OUT/next"; }

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

# wait_disks N: until at least N sd disks exist and udev has settled (30 s).
wait_disks() {
	i=0
	while [ "$(ls -d /sys/block/sd* 2>/dev/null | wc -l)" -lt "$1" ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	udevadm settle -t 30
	[ "$(ls -d /sys/block/sd* 2>/dev/null | wc -l)" -ge "$1" ]
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
