#!/bin/sh
# Scenario "secure-boot", guest side: the payload's modules signed with a
# fleet key, the key enrolled as a Machine Owner Key through shim's
# MokManager, and the modules loaded by Debian's kernel under UEFI Secure
# Boot (tests/vm/secure-boot.sh makes the keys and bundles on the host;
# rootfs/run.sh boots OVMF -> shim -> GRUB -> Debian's signed kernel,
# SCSITUNE_VM_FIRMWARE=secureboot). vm-stage runs it at every boot as
# secure-boot.stage.sh BOOT OUT; /vm/in/files holds the bundles
# (unsigned, signed by the fleet key, signed by another key, and the
# payload's kernel signed by the fleet key), their minisign keys, the two
# certificates (fleet.der, other.der) and mok.pw (MokManager's one-time
# password).
#
# boot 1  Secure Boot on (facts-1.txt: lockdown, the SecureBoot variable,
#         sig_enforce, keyrings; detect-1.json); the tree's state
#         (state-1.txt, as payload-reboot's); install of the unsigned bundle
#         and of the bundle signed by the key never enrolled, each refused in
#         preflight with the tree unchanged (state-1b, -1c); the kernel
#         bundle refused too (its image's signer not enrolled: shim would not
#         boot it; state-1d); payload enroll:
#         the unsigned bundle refused, --status of the fleet's bundle 2
#         (neither), enroll --password-file /root/mok.pw stages the key,
#         again (already pending), --status 3 (pending); MokNew listed
#         (mok-new-1.txt); then a boot with MokManager (run.sh drives it:
#         Enroll MOK, the password) before boot 2
# boot 2  the key in .machine (facts-2.txt, keyctl), enroll --status 0, enroll
#         again says trusted and stages nothing; detect-2.json; install of
#         the fleet's bundle (depmod, update-initramfs); verify: reboot
#         pending; reboot
# boot 3  the signed modules loaded from the new initrd: verify 0 (loaded,
#         signer trusted in .machine, taint O without E), /proc/sys/kernel/
#         tainted without bit 13 (E), no "module verification failed";
#         modprobe target_core_mod loads ours (signed, verified); remove;
#         reboot
# boot 4  Debian's modules again: verify not installed (exit 2), scsi_mod's
#         srcversion and iocounterbits (facts-4.txt) as in boot 1, the tree
#         as in boot 1, the key still enrolled (--status 0); then the kernel
#         bundle installed (--no-initramfs --set-default: its package's own
#         initrd made by Debian's hooks); reboot
# boot 5  the payload's kernel, signed by the fleet key and built to trust
#         it, booted through shim and GRUB (facts-5.txt: lockdown, the key in
#         .builtin_trusted_keys and .machine); verify 0 (the running
#         build-id the bundle's); modprobe scsi_debug (the kernel's own
#         module, signed by payload/sign) with no E taint; remove refused
#         while it runs, remove --force: the boot links back to Debian's
. "$VM_IN/lib.sh"
R=$VM_OUT
F=$VM_IN/files
K=$(uname -r)
EV=/sys/firmware/efi/efivars
SBVAR=$EV/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
S=/root/signed.tar.zst
up start

state() { # FILE: what payload install may change (as payload-reboot.stage.sh's state())
	{
		find "/lib/modules/$K" /boot /etc/depmod.d -xdev \( -type f -o -type l -o -type d \) \
			-printf '%y %m %p %l\n' 2>/dev/null | sort
		find "/lib/modules/$K/kernel" -xdev -type f -printf '%i %s %T@ %C@ %p\n' 2>/dev/null | sort -k5
		find "/lib/modules/$K" /boot /etc/depmod.d -xdev -type f ! -path "/lib/modules/$K/kernel/*" \
			-exec sha256sum {} + 2>/dev/null | sort
	} >"$1"
}
facts() { # FILE: Secure Boot, lockdown, enforcement, taint, the keyrings, our modules
	{
		echo "lockdown $(cat /sys/kernel/security/lockdown 2>/dev/null)"
		echo "secureboot-var $(od -An -tx1 "$SBVAR" 2>/dev/null | tr -s ' \n' '  ')"
		echo "sb-state $(mokutil --sb-state 2>&1 | head -1)"
		echo "sig_enforce $(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)"
		echo "tainted $(cat /proc/sys/kernel/tainted)"
		for m in scsi_mod target_core_mod; do
			echo "$m version $(cat /sys/module/$m/version 2>/dev/null || echo -)"
			echo "$m srcversion $(cat /sys/module/$m/srcversion 2>/dev/null || echo -)"
			echo "$m taint $(cat /sys/module/$m/taint 2>/dev/null || echo -)"
		done
		for d in /sys/bus/scsi/devices/*:*; do
			[ -f "$d/iocounterbits" ] && echo "iocounterbits ${d##*/} $(cat "$d/iocounterbits")"
		done
		for k in .builtin_trusted_keys .secondary_trusted_keys .machine .platform; do
			keyctl show "%:$k" 2>&1 | sed "s/^/keyctl $k /"
		done
		dmesg | grep -E 'Secure boot|locked down|Loaded X.509 cert|loading out-of-tree module|module verification failed|Key was rejected|Lockdown:' |
			sed 's/^\[[^]]*\] /dmesg /'
	} >"$1"
}
enroll() { # NAME BUNDLE [--status]: scsitune payload enroll, its JSON in NAME.json
	if [ "${3:-}" = --status ]; then
		run "$1" -o json payload enroll "$2" --status
	else
		run "$1" -o json payload enroll "$2" --password-file /root/mok.pw
	fi
}

case $1 in
1)
	install_scsitune || exit 1
	mkdir -p /etc/scsitune/trusted-keys
	install -m 0644 "$F/unsigned.pub" "$F/sb.pub" /etc/scsitune/trusted-keys/
	for b in unsigned signed other kernel; do
		cp "$F/$b.tar.zst" "$F/$b.tar.zst.minisig" /root/
	done
	# the password file as an operator keeps it: root's, mode 0600, one line
	install -m 0600 "$F/mok.pw" /root/mok.pw
	facts "$R/facts-1.txt"
	run detect-1 -o json detect
	state "$R/state-1.txt"
	run install-unsigned -o json payload install /root/unsigned.tar.zst
	state "$R/state-1b.txt"
	run install-other -o json payload install /root/other.tar.zst
	state "$R/state-1c.txt"
	run install-kernel-1 -o json payload install --no-initramfs --set-default /root/kernel.tar.zst
	state "$R/state-1d.txt"
	enroll enroll-unsigned /root/unsigned.tar.zst
	enroll status-1a "$S" --status
	up enroll
	enroll enroll-1 "$S"
	enroll enroll-1b "$S"
	enroll status-1b "$S" --status
	mokutil --list-new >"$R/mok-new-1.txt" 2>&1
	(cd "$EV" && ls -d Mok*) >"$R/mok-vars-1.txt" 2>&1
	next_boot_mokmanager
	;;
2)
	facts "$R/facts-2.txt"
	enroll status-2 "$S" --status
	enroll enroll-2 "$S"
	mokutil --list-new >"$R/mok-new-2.txt" 2>&1
	run detect-2 -o json detect
	up install
	run install -o json payload install "$S"
	up installed
	run verify-2 -o json payload verify "$S"
	next_boot
	;;
3)
	facts "$R/facts-3.txt"
	run verify-3 -o json payload verify "$S"
	run verify-3-text payload verify "$S"
	modprobe target_core_mod 2>"$R/modprobe-target.err"
	echo $? >"$R/modprobe-target.rc"
	facts "$R/facts-3b.txt"
	run verify-3b -o json payload verify "$S"
	run remove -o json payload remove
	next_boot
	;;
4)
	facts "$R/facts-4.txt"
	run verify-4 -o json payload verify "$S"
	state "$R/state-4.txt"
	enroll status-4 "$S" --status
	up install-kernel
	run install-kernel -o json payload install --no-initramfs --set-default /root/kernel.tar.zst
	up install-kernel-done
	readlink /vmlinuz >"$R/vmlinuz-4.txt"
	next_boot
	;;
5)
	uname -r >"$R/uname-5.txt"
	facts "$R/facts-5.txt"
	run verify-5 -o json payload verify
	modprobe scsi_debug 2>"$R/modprobe-debug.err"
	echo $? >"$R/modprobe-debug.rc"
	facts "$R/facts-5b.txt"
	grep -E '^scsi_debug ' /proc/modules >"$R/modules-5.txt"
	run remove-5a -o json payload remove
	run remove-5b -o json payload remove --force
	readlink /vmlinuz >"$R/vmlinuz-5.txt"
	;;
esac
up end
exit 0
