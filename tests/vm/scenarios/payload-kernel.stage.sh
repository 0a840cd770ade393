#!/bin/sh
# Scenario "payload-kernel", guest side: a bundle carrying the payload's own
# kernel (payload/build --kernel: patch B built in, packed by make bindeb-pkg)
# installed, booted, verified and removed on the real Debian 12 image
# (tests/vm/rootfs: systemd, udev, Debian's kernel and initramfs-tools, root
# on virtio-scsi). vm-stage runs it at every boot as:
# payload-kernel.stage.sh BOOT OUT. The bundle, its signature and the trusted
# key come in /vm/in/files (tests/payload/make-bundle.sh of the
# payload/build-kernel output).
#
# boot 1  Debian's kernel: install --no-initramfs (the modules' initrd is
#         vm/payload-reboot's subject; here the kernel package), the boot
#         links before and after (links-1a/1b.txt: install leaves them as
#         Debian's tools set them), dpkg's record of the package, verify
#         (verify-1a); remove (the package purged: apt-get), dpkg again;
#         install --set-default (links-1c.txt), verify (verify-1b: reboot
#         pending); reboot
# boot 2  the payload's kernel (what /vmlinuz points at): uname -r, verify
#         (verify-2: the running build-id is the bundle's), the disks and a
#         read through one of them; remove refused (the running kernel),
#         the package still there; remove --force (links back, purged);
#         reboot
# boot 3  Debian's kernel again: uname -r, verify (not installed), dpkg,
#         the links (links-3.txt), no var/cache/scsitune left
. "$VM_IN/lib.sh"
R=$VM_OUT
F=$VM_IN/files
B=$F/payload.tar.zst
up start

links() { # FILE
	for l in /vmlinuz /initrd.img; do
		echo "$l $(readlink "$l")"
	done >"$1"
}
pkgs() { # FILE: the payload's kernel packages dpkg lists as installed
	dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' 'linux-image-*-scsitune*' 2>/dev/null |
		awk '$3 == "ii"' >"$1"
}

case $VM_BOOT in
1)
	install_scsitune || exit 1
	mkdir -p /etc/scsitune/trusted-keys
	install -m 0644 "$F/fleet.pub" /etc/scsitune/trusted-keys/fleet.pub
	uname -r >"$R/uname-1.txt"
	links "$R/links-1a.txt"
	up install-a
	run install-a -o json payload install --no-initramfs "$B"
	up install-a-done
	links "$R/links-1b.txt"
	pkgs "$R/pkgs-1a.txt"
	ls /boot >"$R/boot-1a.txt"
	run verify-1a -o json payload verify
	run remove-1 -o json payload remove
	pkgs "$R/pkgs-1b.txt"
	ls /boot >"$R/boot-1b.txt"
	up install-b
	run install-b -o json payload install --no-initramfs --set-default "$B"
	up install-b-done
	links "$R/links-1c.txt"
	run verify-1b -o json payload verify
	next_boot
	;;
2)
	uname -r >"$R/uname-2.txt"
	wait_disks 2
	ls /sys/block >"$R/block-2.txt"
	dd if=/dev/sdb of=/dev/null bs=1M count=16 iflag=direct 2>"$R/dd-2.txt"
	echo $? >"$R/dd-2.rc"
	run verify-2 -o json payload verify
	run verify-2-text payload verify
	run verify-2-bundle -o json payload verify "$B"
	run remove-2a -o json payload remove
	pkgs "$R/pkgs-2a.txt"
	links "$R/links-2a.txt"
	run remove-2b -o json payload remove --force
	pkgs "$R/pkgs-2b.txt"
	links "$R/links-2b.txt"
	next_boot
	;;
3)
	uname -r >"$R/uname-3.txt"
	run verify-3 -o json payload verify
	pkgs "$R/pkgs-3.txt"
	links "$R/links-3.txt"
	ls -a /var/cache/scsitune >"$R/cache-3.txt" 2>&1
	ls /boot >"$R/boot-3.txt"
	;;
esac
up end
exit 0
