#!/bin/sh
# Scenario "persist", guest side: scsitune apply --persist across real
# reboots of the systemd-booted image (tests/vm/rootfs). vm-stage runs this
# at every boot as: persist.stage.sh BOOT OUT.
#
# Hardware: the virtio-scsi HBA behind the node-1 expander with the root
# disk (rotational: the profile leaves it alone) and a non-rotational data
# disk; scsi_debug (submit_queues=2 host_max_queue=32 num_tgts=2
# dev_size_mb=8), loaded at every boot by systemd-modules-load from files
# boot 1 writes, as a real HBA's driver would be.
# Profile: tests/vm/profiles/vm-persist (numa on the guest's HBAs, plus
# scsi_debug dsense=1 for modprobe.d).
#
# boot 1  the kernel's values (before.txt); apply --persist --dry-run
#         (plan.json), apply --persist (apply.json), values (applied.txt),
#         verify; the files it wrote (persist.*); udevadm test of every disk
#         (udevadm-test-NAME.txt); systemd-analyze verify of the unit;
#         reboot
# boot 2  values (boot2.txt): from the udev rules and the boot unit; the
#         unit's state, its output and its journal (/run/scsitune); verify;
#         hot-add: remove the scsi_debug host and add it again (the same
#         H:C:T:L and WWN: the rules match) (hotadd.txt), then a second host
#         (new disks: no rule matches) (hotadd-new.txt, verify-new), removed
#         again; revert; revert --state-dir /run/scsitune (the boot
#         unit's IRQ pins); the files left (files-reverted.ls); values
#         (reverted.txt); reboot
# boot 3  values (boot3.txt): the kernel's own again; the unit gone; verify
#         without a journal (verify-none), verify --profile (verify-profile)
# Every values file: "disk HCTL NAME ATTR VALUE" per queue attribute,
# "wwn HCTL NAME WWN", "irq N NAME smp_affinity_list effective", "param
# dsense VALUE". persist.check.py asserts on all of it.
. "$VM_IN/lib.sh"
R=$VM_OUT
RULES=/etc/udev/rules.d/90-scsitune.rules
UNIT=/etc/systemd/system/scsitune-apply.service
WANTS=/etc/systemd/system/multi-user.target.wants/scsitune-apply.service
MODPROBE=/etc/modprobe.d/scsitune.conf
SDADD=/sys/bus/pseudo/drivers/scsi_debug/add_host
up start

snap() { # FILE
	# shell builtins only (read, not cat/sed: under TCG every fork and exec
	# costs the guest tens of ms, and a snapshot read about 130 files)
	for d in /sys/block/sd*; do
		n=${d##*/}
		h=$(readlink -f "$d/device")
		h=${h##*/}
		for a in scheduler nr_requests rq_affinity nomerges add_random read_ahead_kb rotational; do
			read -r v <"$d/queue/$a"
			echo "disk $h $n $a $v"
		done
		# udev's database entry for the disk (what udevadm info prints)
		read -r dev <"$d/dev"
		wwn= idpath=
		while IFS= read -r l; do
			case $l in
			E:ID_WWN_WITH_EXTENSION=*) wwn=${l#*=} ;;
			E:ID_PATH=*) idpath=${l#*=} ;;
			esac
		done 2>/dev/null <"/run/udev/data/b$dev"
		echo "wwn $h $n $wwn"
		echo "idpath $h $n $idpath"
	done >"$1"
	awk -F: '$1 ~ /^ *[0-9]+$/ { n = $1 + 0; sub(/.* /, "", $2); print n, $2 }' /proc/interrupts |
		while read -r i name; do
			[ -f "/proc/irq/$i/smp_affinity_list" ] || continue
			read -r aff <"/proc/irq/$i/smp_affinity_list"
			eff=
			{ read -r eff <"/proc/irq/$i/effective_affinity_list"; } 2>/dev/null
			echo "irq $i $name $aff $eff"
		done >>"$1"
	ds=none
	{ read -r ds </sys/module/scsi_debug/parameters/dsense; } 2>/dev/null
	echo "param dsense $ds" >>"$1"
}
files() { # FILE: the persist files as they are
	for f in $RULES $UNIT $WANTS $MODPROBE /run/scsitune/journal.json; do
		if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"
		elif [ -e "$f" ]; then echo "file $f"
		else echo "absent $f"
		fi
	done >"$1"
}
sdhost() { # the scsi_debug hosts, one "hostN" a line
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name")" = scsi_debug ] && echo "${h##*/}"
	done
}
gone() { [ ! -e "/sys/class/scsi_host/$1" ]; }
wait_gone() { # HOST: until its sysfs entry is gone (120 s), then udev settled
	wait_until 120 "$1 removed" gone "$1" || return 1
	udevadm settle -t 120 || echo "wait_gone: udevadm settle: udev's event queue not empty after 120 s" >&2
	return 0
}

case $VM_BOOT in
1)
	install_scsitune || exit 1
	# scsi_debug at every boot, as a real HBA's driver is loaded
	echo scsi_debug >/etc/modules-load.d/scsitune-vm.conf
	echo "options scsi_debug submit_queues=2 host_max_queue=32 num_tgts=2 dev_size_mb=8" \
		>/etc/modprobe.d/scsitune-vm-scsi_debug.conf
	modprobe scsi_debug || exit 1
	wait_disks 4 || { echo "persist: not 4 disks"; ls /sys/block; exit 1; }
	up disks
	snap "$R/before.txt"
	cp /etc/default/irqbalance "$R/irqbalance.before"
	files "$R/files-before.ls"
	run plan -o json apply --profile vm-persist --persist --dry-run
	up plan
	run apply -o json apply --profile vm-persist --persist
	up apply
	snap "$R/applied.txt"
	cp /etc/default/irqbalance "$R/irqbalance.applied"
	run verify1 -o json verify
	files "$R/files-applied.ls"
	for f in $RULES $UNIT $MODPROBE; do
		cp "$f" "$R/persist.${f##*/}" 2>/dev/null
	done
	ls -l /usr/local/sbin/scsitune >"$R/bin.ls" 2>&1
	# udev's own reading of the rules, per disk (the root disk has none)
	for d in /sys/block/sd*; do
		udevadm test --action=add "$d" >"$R/udevadm-test-${d##*/}.txt" 2>&1
		echo $? >"$R/udevadm-test-${d##*/}.rc"
	done
	# --man=no: the image has no man-db (nor scsitune's man pages) for Documentation=
	systemd-analyze verify --man=no "$UNIT" >"$R/analyze-verify.txt" 2>&1
	echo $? >"$R/analyze-verify.rc"
	systemctl daemon-reload
	systemctl is-enabled scsitune-apply.service >"$R/unit-enabled-1.txt" 2>&1
	up checks
	next_boot
	;;
2)
	wait_disks 4 || { echo "persist: not 4 disks"; ls /sys/block; exit 1; }
	up disks
	snap "$R/boot2.txt"
	systemctl show -p ActiveState,Result,ExecMainStatus,ActiveEnterTimestampMonotonic scsitune-apply.service >"$R/unit-show.txt" 2>&1
	systemctl show -p ActiveEnterTimestampMonotonic,ExecMainStartTimestampMonotonic irqbalance.service >"$R/irqbalance-show.txt" 2>&1
	systemctl show -p ActiveEnterTimestampMonotonic systemd-udev-settle.service >"$R/settle-show.txt" 2>&1
	journalctl -b -u scsitune-apply.service -o cat >"$R/unit-output.txt" 2>&1
	cp /run/scsitune/journal.json "$R/boot-journal.json" 2>/dev/null
	files "$R/files-boot2.ls"
	cp /etc/default/irqbalance "$R/irqbalance.boot2"
	run verify2 -o json verify
	up verify
	# Hot-add: the scsi_debug host goes and comes back (its number, so its
	# disks' H:C:T:L and WWN, are reused): udev's add events, the rules.
	h=$(sdhost | head -1)
	echo "$h" >"$R/hotadd-host-before.txt"
	echo -1 >$SDADD
	wait_gone "$h" || { echo "persist: $h still there"; exit 1; }
	snap "$R/hotadd-removed.txt"
	echo 1 >$SDADD
	wait_disks 4 || { echo "persist: the host did not come back"; exit 1; }
	sdhost >"$R/hotadd-host-after.txt"
	snap "$R/hotadd.txt"
	run verify-hotadd -o json verify
	up hotadd
	# A host with disks no rule names: what the rules leave alone.
	echo 1 >$SDADD
	wait_disks 6 || { echo "persist: the second host has no disks"; exit 1; }
	snap "$R/hotadd-new.txt"
	run verify-new -o json verify
	h2=$(sdhost | sort -V | tail -1)
	echo -1 >$SDADD
	wait_gone "$h2" || { echo "persist: $h2 still there"; exit 1; }
	up hotadd-new
	run revert -o json revert
	# The boot unit's apply of this boot (its IRQ pins): the hint revert gives.
	run revert-boot -o json revert --state-dir /run/scsitune
	files "$R/files-reverted.ls"
	snap "$R/reverted.txt"
	cp /etc/default/irqbalance "$R/irqbalance.reverted"
	up revert
	next_boot
	;;
3)
	wait_disks 4 || { echo "persist: not 4 disks"; ls /sys/block; exit 1; }
	snap "$R/boot3.txt"
	files "$R/files-boot3.ls"
	systemctl is-enabled scsitune-apply.service >"$R/unit-enabled-3.txt" 2>&1
	echo $? >"$R/unit-enabled-3.rc"
	ls /run/scsitune >"$R/run-scsitune-3.ls" 2>&1
	cp /etc/default/irqbalance "$R/irqbalance.boot3"
	run verify-none -o json verify
	run verify-profile -o json verify --profile vm-persist
	up finish
	;;
esac
exit 0
