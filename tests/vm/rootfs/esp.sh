#!/bin/bash
# esp.sh KDIR DISK -- the EFI system partition a Secure Boot boot of the vm
# image starts from (run.sh, SCSITUNE_VM_FIRMWARE=secureboot), made as files:
# no loop device, no mount. DISK becomes a GPT disk whose partition 1 (type
# EF00) is a FAT32 file system holding
#   EFI/BOOT/BOOTX64.EFI   Debian's shim, signed by Microsoft's UEFI CA
#                          (shim-signed: /usr/lib/shim/shimx64.efi.signed)
#   EFI/BOOT/mmx64.efi     shim's MokManager, signed by Debian (shim starts it
#                          when a key is staged: MokNew)
#   EFI/BOOT/grubx64.efi   Debian's GRUB, signed by Debian for shim
#                          (grub-efi-amd64-signed)
#   EFI/debian/grub.cfg    one entry: linux /vmlinuz CMDLINE, initrd
#                          /initrd.img, no menu (and a copy in EFI/BOOT/)
#   vmlinuz, initrd.img    KDIR/vmlinuz and KDIR/initrd.img: what the guest
#                          handed over for this boot (vm-stage: the files its
#                          /vmlinuz and /initrd.img point to), or the image's
# with KDIR/cmdline as the kernel command line. The kernel is Debian's, signed
# by Debian: GRUB has shim verify it. DISK.list is the ESP's listing.
# Needs dosfstools (mkfs.vfat -C), mtools (mmd, mcopy, mdir), gdisk (sgdisk),
# shim-signed and grub-efi-amd64-signed (scripts/install-deps --test).
# SCSITUNE_VM_SHIM, SCSITUNE_VM_MOKMANAGER, SCSITUNE_VM_GRUB_EFI name other files.
# Exit 0, or 1 with one line saying why.
set -euo pipefail
export LC_ALL=C MTOOLS_SKIP_CHECK=1
[ $# -eq 2 ] || { echo "usage: esp.sh KDIR DISK" >&2; exit 64; }
kdir=$1 disk=$2
die() { echo "esp.sh: $*" >&2; exit 1; }
shim=${SCSITUNE_VM_SHIM:-/usr/lib/shim/shimx64.efi.signed}
mm=${SCSITUNE_VM_MOKMANAGER:-/usr/lib/shim/mmx64.efi.signed}
grub=${SCSITUNE_VM_GRUB_EFI:-/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed}
for f in "$shim:shim-signed" "$mm:shim-signed" "$grub:grub-efi-amd64-signed"; do
	[ -s "${f%:*}" ] || die "${f%:*} not found (apt-get install ${f#*:}; scripts/install-deps --test does)"
done
for p in mkfs.vfat:dosfstools mcopy:mtools mmd:mtools sgdisk:gdisk; do
	command -v "${p%:*}" >/dev/null || die "${p%:*} not found (apt-get install ${p#*:}; scripts/install-deps --test does)"
done
for f in vmlinuz initrd.img cmdline; do
	[ -s "$kdir/$f" ] || die "$kdir/$f: missing or empty (the boot's kernel, initrd and command line)"
done
cmdline=$(cat "$kdir/cmdline")
case $cmdline in *[\'\"\;\{\}\$\`\\]*) die "$kdir/cmdline: a character GRUB would read as syntax: $cmdline" ;; esac

# The file system's size: what it holds and 32 MiB to spare, at least 96 MiB
# (FAT32 wants at least 65,525 clusters).
need=$(( ($(stat -c %s "$kdir/vmlinuz") + $(stat -c %s "$kdir/initrd.img") + $(stat -c %s "$shim") +
	$(stat -c %s "$mm") + $(stat -c %s "$grub")) / 1048576 + 32 ))
mib=$(( need > 96 ? need : 96 ))
fat=$disk.fat
rm -f "$fat" "$disk"
mkfs.vfat -C -F 32 -n ESP "$fat" $((mib * 1024)) >/dev/null || die "mkfs.vfat -C $fat failed"
mmd -i "$fat" ::/EFI ::/EFI/BOOT ::/EFI/debian
mcopy -i "$fat" "$shim" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$fat" "$mm" ::/EFI/BOOT/mmx64.efi
mcopy -i "$fat" "$grub" ::/EFI/BOOT/grubx64.efi
mcopy -i "$fat" "$kdir/vmlinuz" ::/vmlinuz
mcopy -i "$fat" "$kdir/initrd.img" ::/initrd.img
cat >"$disk.grub.cfg" <<EOF
set timeout=0
set default=0
menuentry 'Debian GNU/Linux (scsitune vm, Secure Boot)' {
	linux /vmlinuz $cmdline
	initrd /initrd.img
}
EOF
# Debian's signed GRUB reads \$prefix/grub.cfg, \$prefix being the directory
# it was started from on the ESP (EFI/BOOT here) or EFI/debian: both.
mcopy -i "$fat" "$disk.grub.cfg" ::/EFI/debian/grub.cfg
mcopy -i "$fat" "$disk.grub.cfg" ::/EFI/BOOT/grub.cfg
mdir -i "$fat" -/ ::/ >"$disk.list"

# The GPT disk: the file system at 1 MiB, written into the partition in place.
truncate -s $((mib + 2))M "$disk"
sgdisk -n 1:2048:+${mib}M -t 1:EF00 -c 1:ESP "$disk" >"$disk.sgdisk" 2>&1 || die "sgdisk failed: $(tail -1 "$disk.sgdisk")"
start=$(sgdisk -i 1 "$disk" | sed -n 's/^First sector: \([0-9]*\).*/\1/p')
[ "$start" = 2048 ] || die "sgdisk put partition 1 at sector '${start}', not 2048"
dd if="$fat" of="$disk" bs=1M seek=1 conv=notrunc,sparse status=none
rm -f "$fat"
