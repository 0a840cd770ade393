#!/bin/bash
# customize.sh -- build-image.sh's mmdebstrap hooks (run here, as root, on
# the tree; chroot for what must run inside it).
#   customize.sh essential TREE   after the essential packages, before the rest
#   customize.sh customize TREE   after everything is installed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
phase=$1
t=$2

if [ "$phase" = essential ]; then
	# Debian's initramfs-tools with MODULES=list: the modules of the root
	# disk's path (listed in /etc/initramfs-tools/modules below), not every
	# storage driver (MODULES=most: a 30 MB initrd whose udev loads every
	# driver it has a device for, each a signed module TCG checks). Set
	# before linux-image-amd64 is installed, so its postinst and the
	# triggers already build the small one.
	mkdir -p "$t/etc/initramfs-tools/conf.d"
	# COMPRESSLEVEL=1: initramfs-tools 0.142's default for zstd is -9, which
	# under TCG costs most of each update-initramfs, and vm/payload-reboot
	# runs it several times (payload install and the kill test). The
	# image's setting, not a recommendation: a fleet host keeps its own; what
	# the test proves is the mechanism (update-initramfs, then the new initrd
	# read back), which does not depend on the level.
	cat >"$t/etc/initramfs-tools/conf.d/scsitune-vm.conf" <<-'CONF'
		# scsitune vm image (tests/vm/rootfs): only the modules listed in
		# /etc/initramfs-tools/modules, with what they depend on; zstd -1
		# (update-initramfs under TCG: see customize.sh).
		MODULES=list
		COMPRESS=zstd
		COMPRESSLEVEL=1
	CONF
	exit 0
fi
[ "$phase" = customize ] || { echo "customize.sh: phase essential or customize" >&2; exit 64; }

uuid=$(cat /proc/sys/kernel/random/uuid)
mkdir -p "$t/etc/scsitune-vm"
echo "$uuid" >"$t/etc/scsitune-vm/root-uuid"
# passno 0: every run boots a fresh overlay; an fsck would only cost time
echo "UUID=$uuid / ext4 errors=remount-ro 0 0" >"$t/etc/fstab"
echo scsitune-vm >"$t/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tscsitune-vm\n' >"$t/etc/hosts"
# a set machine id: no first-boot handling (presets), the same journal id
echo 5c5173e5c5173e5c5173e5c5173e0001 >"$t/etc/machine-id"
chroot "$t" passwd -d root >/dev/null

# Drivers for what the pc machine has and no scenario uses (floppy, IDE,
# PC speaker, SMBus, input), KVM (-cpu max offers SVM), the CPU-feature
# crypto modules udev would load by modalias and powernow_k8 (run.sh's
# -cpu qemu64 is an AMD family 15 CPU: udev loaded it for each of the four
# CPUs at every boot, and each load failed, "Power state transitions not
# supported"): blacklisted, so udev and
# systemd do not load them (modprobe NAME still can); before the initramfs
# is made, which carries modprobe.d.
mkdir -p "$t/etc/modprobe.d"
{
	echo "# scsitune vm image (tests/vm/rootfs/customize.sh): hardware no scenario uses"
	for m in floppy pcspkr ata_piix ata_generic pata_acpi i2c_piix4 evdev serio_raw button joydev \
		kvm kvm_amd kvm_intel irqbypass qemu_fw_cfg crc32_pclmul ghash_clmulni_intel sha1_ssse3 \
		sha256_ssse3 sha512_ssse3 aesni_intel polyval_clmulni crct10dif_pclmul powernow_k8; do
		echo "blacklist $m"
	done
} >"$t/etc/modprobe.d/scsitune-vm-blacklist.conf"

# The root disk's path in the initramfs: virtio-pci, virtio-scsi, sd (with
# the crc64-rocksoft algorithm sd's T10 PI code asks the crypto API for),
# ext4 (crc32c by softdep). scsi_mod comes with them.
cat >>"$t/etc/initramfs-tools/modules" <<'MODS'
# scsitune vm image: the root disk is a virtio-scsi disk
virtio_pci
virtio_scsi
sd_mod
crc64_rocksoft_generic
ext4
crc32c_generic
MODS
chroot "$t" update-initramfs -u -k all

# GRUB reads this (build-image.sh puts core.img in the MBR gap): the kernel
# and initrd Debian's linux-base points /vmlinuz and /initrd.img at, so an
# installed kernel package or update-initramfs decides what boots, as on a
# host whose boot loader follows those links. norandmaps (no address space
# randomization): QEMU 7.2's TCG finds translated code by its virtual
# address too, so with randomized mappings every new process had its
# libraries translated again; with fixed ones the translations are reused
# (a Debian boot and update-initramfs are thousands of short processes:
# see tests/vm/README.md, "Timings"). Nothing a scenario proves depends on
# the layout of a process. no_timer_check: the kernel's early check that the
# IO-APIC timer ticks gives up when the emulated CPU is starved (a CI machine
# busy with other work: "IO-APIC + timer doesn't work!", a panic loop until
# the boot's timeout); QEMU's timer works, so the check is left out, as
# cloud images do.
mkdir -p "$t/boot/grub"
cat >"$t/boot/grub/grub.cfg" <<CFG
# scsitune vm image (tests/vm/rootfs/customize.sh)
set timeout=0
set default=0
menuentry 'Debian GNU/Linux (scsitune vm)' {
	linux /vmlinuz root=UUID=$uuid ro console=ttyS0 norandmaps no_timer_check quiet panic=-1
	initrd /initrd.img
}
CFG

# Only what the scenarios need runs (TCG makes every unit and module load
# cost seconds): no timers (apt, dpkg backup, e2scrub, fstrim, tmpfiles
# clean), no VT gettys (no display; the serial console's getty stays, logged
# in as root for run.sh --shell), no binfmt, hugepages, mqueue, tracefs or
# fuse mounts, no utmp records, no modprobe@ preloads (configfs, dm_mod,
# drm, efi_pstore, fuse, loop: a scenario loads what it uses), a volatile
# journal (each boot's journal is copied to the results). systemd-udevd,
# the coldplug, udev-settle, irqbalance and the rest of the boot stay.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer getty@tty1.service \
	getty-static.service systemd-pstore.service systemd-binfmt.service \
	proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount dev-hugepages.mount \
	dev-mqueue.mount sys-kernel-tracing.mount sys-fs-fuse-connections.mount \
	systemd-update-utmp.service systemd-update-utmp-runlevel.service \
	modprobe@configfs.service modprobe@dm_mod.service modprobe@drm.service \
	modprobe@efi_pstore.service modprobe@fuse.service modprobe@loop.service; do
	ln -sf /dev/null "$t/etc/systemd/system/$u"
done
mkdir -p "$t/etc/systemd/journald.conf.d" "$t/etc/systemd/system/serial-getty@ttyS0.service.d"
printf '[Journal]\nStorage=volatile\n' >"$t/etc/systemd/journald.conf.d/scsitune-vm.conf"
# The serial console's getty (root logged in) only for run.sh --shell, which
# puts /vm/in/shell in the share: agetty, login, PAM and a logind session
# cost every other boot about 3-5 s of guest CPU under TCG.
cat >"$t/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'UNIT'
[Unit]
After=vm.mount
ConditionPathExists=/vm/in/shell

[Service]
ExecStart=
ExecStart=-/sbin/agetty -o '-p -f -- \\u' --autologin root --keep-baud 115200,57600,38400,9600 - $TERM
UNIT

# The stage runner: at every boot, the scenario's stage script from the
# host's share, mounted on /vm (tests/vm/rootfs/guest/vm-stage says how).
install -m 0755 "$here/guest/vm-stage" "$t/usr/local/sbin/vm-stage"
mkdir -p "$t/vm"
for u in vm.mount vm-stage.service; do
	install -m 0644 "$here/guest/$u" "$t/etc/systemd/system/$u"
	ln -sf "/etc/systemd/system/$u" "$t/etc/systemd/system/multi-user.target.wants/$u"
done
install -m 0644 "$here/guest/vm-handover.service" "$t/etc/systemd/system/vm-handover.service"

# The fleet-host scenario's SSH host (tests/vm/scenarios/fleet-host.stage.sh
# starts both when run.sh --serve gave the guest a NIC): sshd not started
# at boot (openssh-server's postinst enabled it; every other scenario would
# pay for it under TCG), and systemd-networkd's address for QEMU's user
# network (10.0.2.15, the host's loopback seen as 10.0.2.2). Root logs in
# with the key the scenario brings (sshd's default: prohibit-password).
rm -f "$t/etc/systemd/system/multi-user.target.wants/ssh.service" "$t/etc/systemd/system/sshd.service"
mkdir -p "$t/etc/systemd/network"
cat >"$t/etc/systemd/network/20-scsitune-vm.network" <<'NET'
# scsitune vm image: QEMU's user network (run.sh --serve)
[Match]
Type=ether

[Network]
Address=10.0.2.15/24
Gateway=10.0.2.2
LinkLocalAddressing=no
IPv6AcceptRA=no
NET

# Last: /etc and /var are up to date with /usr (ConditionNeedsUpdate=: no
# hwdb, ldconfig or catalog rebuild at the first boot).
touch "$t/etc/.updated" "$t/var/.updated"
