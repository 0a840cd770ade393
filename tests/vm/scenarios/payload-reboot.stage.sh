#!/bin/sh
# Scenario "payload-reboot", guest side: scsitune payload install / verify /
# remove on the real Debian 12 image (tests/vm/rootfs: systemd, Debian's
# kernel, its initramfs made by initramfs-tools, root on a virtio-scsi disk,
# so scsi_mod loads from the initrd), across real reboots. vm-stage runs it at
# every boot as: payload-reboot.stage.sh BOOT OUT. The bundle, its signature
# and the trusted key come in /vm/in/files (tests/payload/make-bundle.sh).
#
# boot 1  stock: verify (not installed); the state of the tree (state-1.txt:
#         SHA-256 and mode of every file under /lib/modules/R, /boot,
#         /etc/depmod.d); kill tests: install aborted inside each journaled
#         step (SCSITUNE_TEST_PAYLOAD_ABORT=N: mkdir, file staged, file
#         renamed, depmod, initrd replaced; remove aborted
#         after that last one too, with the kept initrd half put back) and
#         install killed with kill -9 (its whole process group,
#         update-initramfs too) while update-initramfs runs, each followed
#         by payload remove and the tree's state again (state-kill-N.txt).
#         Every abort point of install and remove is also killed in the
#         payload/sysroot/kill-* tests (tests/payload/cases/kill-*.sh),
#         on a tree without update-initramfs. Then install (install.json),
#         verify (verify-1.json: reboot pending); reboot
# boot 2  the payload's initrd booted: verify (verify-2.json: loaded), the
#         module facts (facts-2.txt: version, srcversion, taint, iocounterbits
#         of every SCSI disk, the kernel log's taint line); modprobe
#         target_core_mod, verify again (verify-2b.json); remove (remove.json);
#         GRUB's cmdline gets lockdown=integrity; reboot
# boot 3  stock again, under lockdown integrity (sig_enforce N: the
#         refusal is lockdown's alone, which Secure Boot never gives, since
#         it sets both): verify (verify-3.json), facts (facts-3.txt), GRUB's
#         cmdline back as it was, the tree's state (state-3.txt, as in boot
#         1: the stock initrd, Debian-signed modules, loads under lockdown);
#         install refused (install-3.json), the tree's state after
#         (state-3b.txt). Until 2026-12-05 a boot under module.sig_enforce=1
#         came first: vm/secure-boot proves that refusal (Secure Boot turns
#         sig_enforce on) and the stock modules under enforcement, boot by
#         boot.
. "$VM_IN/lib.sh"
R=$VM_OUT
F=$VM_IN/files
B=$F/payload.tar.zst
K=$(uname -r)
GRUB=/boot/grub/grub.cfg
up start

state() { # FILE: what payload install may change, recorded
	# Every file, link and directory (type, mode, name, target); the kernel
	# package's modules (kernel/, ~4,000 files that install must never touch)
	# by inode, size, mtime and ctime: a write or a rename changes them, and
	# ctime cannot be set from user space; everything else (depmod's index,
	# updates/, /boot with the initrd, /etc/depmod.d) by SHA-256 (hashing
	# kernel/ too would read and hash all of it under TCG at every call).
	{
		find "/lib/modules/$K" /boot /etc/depmod.d -xdev \( -type f -o -type l -o -type d \) \
			-printf '%y %m %p %l\n' 2>/dev/null | sort
		find "/lib/modules/$K/kernel" -xdev -type f -printf '%i %s %T@ %C@ %p\n' 2>/dev/null | sort -k5
		find "/lib/modules/$K" /boot /etc/depmod.d -xdev -type f ! -path "/lib/modules/$K/kernel/*" \
			-exec sha256sum {} + 2>/dev/null | sort
	} >"$1"
}
facts() { # FILE
	{
		for m in scsi_mod target_core_mod; do
			echo "$m initstate $(cat /sys/module/$m/initstate 2>/dev/null || echo -)"
			echo "$m version $(cat /sys/module/$m/version 2>/dev/null || echo -)"
			echo "$m srcversion $(cat /sys/module/$m/srcversion 2>/dev/null || echo -)"
			echo "$m taint $(cat /sys/module/$m/taint 2>/dev/null || echo -)"
		done
		for d in /sys/bus/scsi/devices/*:*; do
			[ -f "$d/iocounterbits" ] && echo "iocounterbits ${d##*/} $(cat "$d/iocounterbits")"
		done
		echo "root $(findmnt -no SOURCE /)"
		echo "sig_enforce $(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)"
		echo "lockdown $(cat /sys/kernel/security/lockdown 2>/dev/null)"
		dmesg | grep -E 'scsi_mod: loading out-of-tree module|target_core_mod: loading out-of-tree module|module verification failed' |
			sed 's/^\[[^]]*\] /dmesg /'
	} >"$1"
}
running() { # REGEX: a process whose command line matches (one grep over /proc, no
	# fork per process: a shell loop with a tr per process, ten times a second,
	# took the guest's CPU from the very update-initramfs it waited for under TCG);
	# the pattern is written [x]yz so that grep's own command line does not match
	grep -qs -- "$1" /proc/[0-9]*/cmdline
}
cmdline() { # ARGS: GRUB's kernel line gets ARGS (the image's own line plus them)
	[ -f "$R/grub.cfg.orig" ] || cp "$GRUB" "$R/grub.cfg.orig"
	sed "s|^\(\s*linux /vmlinuz .*\) quiet panic=-1$|\1 quiet panic=-1 $*|" "$R/grub.cfg.orig" >"$GRUB"
	grep -q -- "$*" "$GRUB"
}

case $1 in
1)
	install_scsitune || exit 1
	mkdir -p /etc/scsitune/trusted-keys
	install -m 0644 "$F/fleet.pub" /etc/scsitune/trusted-keys/fleet.pub
	run verify-stock -o json payload verify "$B"
	facts "$R/facts-1.txt"
	state "$R/state-1.txt"
	# kill -9 (abort()) inside each journaled step of install on the real root,
	# then payload remove: the point numbers count the changes of this image's
	# install (3 directories, 4 files); the journal each kill left and what
	# was on disk are kept, so the check proves which step each point fell in:
	#    3  mkdir    updates/ made, not yet marked done
	#   13  file     files staged under their temporary names
	#   21  file     half of them renamed into place
	#   25  depmod   depmod -a ran, not yet marked done
	#   29  initrd   update-initramfs replaced the initrd, not yet marked done;
	#                then remove is killed too (point 10 of remove, after the
	#                journal marked as removing, 4 files, 3 directories and
	#                depmod: the kept initrd written to its temporary name in
	#                /boot, not yet renamed over ours) and run again
	# (the initrd step before update-initramfs replaced the initrd, point 28,
	# leaves the journal as the kill during update-initramfs below does)
	# (not "n": lib.sh's run() sets n)
	up kill
	for point in 3 13 21 25 29; do
		SCSITUNE_TEST_PAYLOAD_ABORT=$point scsitune payload install "$B" >"$R/kill-$point.out" 2>&1
		echo $? >"$R/kill-$point.rc"
		cp /var/lib/scsitune/payload/journal.json "$R/kill-$point.journal.json" 2>/dev/null
		{
			ls -A "/lib/modules/$K/updates/scsitune" /etc/depmod.d 2>/dev/null
			sha256sum "/boot/initrd.img-$K"
		} >"$R/kill-$point.disk" 2>&1
		if [ $point = 29 ]; then
			SCSITUNE_TEST_PAYLOAD_ABORT=10 scsitune payload remove >"$R/kill-remove.out" 2>&1
			echo $? >"$R/kill-remove.rc"
			ls -A /boot >"$R/kill-remove.disk" 2>&1
		fi
		run remove-after-kill-$point -o json payload remove
		state "$R/state-kill-$point.txt"
	done
	up kill-initramfs
	# kill -9 of scsitune and its children while update-initramfs runs, as
	# systemd stops a unit or a power cut does (its own process group: setsid
	# execs in the background child, so $! is scsitune and the group's id);
	# the image has no procps: the processes are found in /proc
	setsid scsitune payload install "$B" >"$R/kill-initramfs.out" 2>&1 &
	pid=$!
	i=0
	while ! running "[m]kinitramfs" && [ $i -lt 3000 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	running "[m]kinitramfs" && echo "mkinitramfs running after $i polls" >"$R/kill-initramfs.note"
	kill -9 "-$pid" # dash's kill takes no "--"
	wait "$pid"
	echo $? >"$R/kill-initramfs.rc"
	# nothing of the group may be left (a remove racing an orphaned update-initramfs would be undone by it)
	i=0
	while running "[u]pdate-initramfs\|[m]kinitramfs" && [ $i -lt 1200 ]; do
		i=$((i + 1))
		sleep 0.5
	done
	echo "$i" >"$R/kill-initramfs.waits"
	cp /var/lib/scsitune/payload/journal.json "$R/kill-initramfs.journal.json" 2>/dev/null
	up remove-after-kill-initramfs
	run remove-after-kill-initramfs -o json payload remove
	state "$R/state-kill-initramfs.txt"
	up install
	run install -o json payload install "$B"
	up installed
	run verify-1 -o json payload verify "$B"
	cat /etc/depmod.d/scsitune.conf >"$R/depmod.conf" 2>&1
	next_boot
	;;
2)
	run verify-2 -o json payload verify "$B"
	run verify-2-text payload verify "$B"
	facts "$R/facts-2.txt"
	modprobe target_core_mod 2>"$R/modprobe-target.err"
	echo $? >"$R/modprobe-target.rc"
	run verify-2b -o json payload verify "$B"
	run detect-2 -o json detect
	up remove
	run remove -o json payload remove
	up removed
	run verify-2c -o json payload verify "$B"
	cmdline lockdown=integrity || exit 1
	next_boot
	;;
3)
	run verify-3 -o json payload verify "$B"
	facts "$R/facts-3.txt"
	# GRUB's own line back (boot 2 added lockdown): the tree as in boot 1
	cp "$R/grub.cfg.orig" "$GRUB"
	state "$R/state-3.txt"
	run install-3 -o json payload install "$B"
	state "$R/state-3b.txt"
	;;
esac
up end
exit 0
