#!/bin/bash
# build-image.sh -- build the vm tier's real Debian 12 root file system
# image, once per build tree: mmdebstrap from Debian's archive (the apt
# sources this machine uses), systemd as init, udev, linux-image-amd64 with
# its own initramfs made by initramfs-tools inside the image, GRUB in the
# image's MBR, fio, irqbalance, python3, openssh-server (started only by
# the fleet-host scenario), mokutil and keyutils (the secure-boot scenario)
# and scsitune's runtime libraries.
# The root file system is the first partition of a raw disk that run.sh
# attaches through virtio-scsi: the root disk is a SCSI disk, so scsi_mod,
# virtio_scsi and sd_mod load from Debian's initramfs. Nothing is mounted
# on this machine: mke2fs -d fills the file system from the tree.
#
#   build-image.sh [--rebuild]
#
# Prints, on its last line of stdout, the image directory:
#   IMAGE/disk.raw      3 GiB sparse raw disk (MBR, GRUB, ext4 root, UUID
#                       in IMAGE/uuid); run.sh boots copy-on-write qcow2
#                       overlays of it, never the file itself
#   IMAGE/release       the kernel release (uname -r in the guest)
#   IMAGE/packages.txt  every package and version in the image
#   IMAGE/vmlinuz, IMAGE/initrd.img, IMAGE/cmdline
#                       what the image's GRUB boots: copies of the files
#                       /vmlinuz and /initrd.img point to, and the kernel
#                       command line of /boot/grub/grub.cfg (run.sh's first
#                       boot, unless SCSITUNE_VM_BOOT=grub)
#   IMAGE/key           what the image was built from (see below)
#   IMAGE/timing.txt    how long each step took
# IMAGE is $SCSITUNE_VM_CACHE/rootfs/image (default build/vm-cache under the
# repository). The image is reused while its key is unchanged: the SHA-256 of
# this script, customize.sh, guest/*, the Debian apt sources used and this
# machine's apt index of them (/var/lib/apt/lists/*_InRelease). So a
# CI run (a fresh build tree) builds it once and every scenario reuses it;
# a new build tree takes it from the tests' cache outside the clone
# (tests/lib/ci-cache.sh, entry vm-rootfs; not with SCSITUNE_NO_CACHE=1);
# --rebuild (or SCSITUNE_VM_REBUILD=1) builds it again. Concurrent callers
# wait on a lock.
# The downloaded .debs are kept in $SCSITUNE_VM_CACHE/rootfs/debs, so a
# rebuild in the same build tree downloads only what changed.
#
# Sources: SCSITUNE_VM_SOURCES names a deb822 .sources or one-line .list
# file; default: this machine's apt sources whose URIs are Debian's
# (deb.debian.org, security.debian.org, snapshot.debian.org, or a
# debian-archive-keyring Signed-By), else deb.debian.org's bookworm,
# bookworm-updates and bookworm-security.
#
# Needs (scripts/install-deps --test): mmdebstrap, e2fsprogs (mke2fs -d),
# fdisk (sfdisk), root (mmdebstrap --mode=root chroots into the tree).
# Exit status: 0 built or reused, 1 error, 64 usage. Every error says why
# on stderr, on a line that starts "build-image.sh: error:" (the first such
# line is the cause: run.sh repeats it): a message of its own, or, for a
# command that failed where none was foreseen, its line, exit status and
# command.
set -Eeuo pipefail
export LC_ALL=C
umask 022

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
rebuild=${SCSITUNE_VM_REBUILD:-}
case ${1:-} in
--rebuild) rebuild=1; shift ;;
esac
[ $# -eq 0 ] || { echo "usage: build-image.sh [--rebuild]" >&2; exit 64; }
log() { echo "build-image.sh: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}
# A command that fails under set -e (-E: in functions too) names itself:
# nothing ends this script without a reason. ($- has no e inside a command
# substitution, where a failure does not end the script: nothing said then.)
trap '_rc=$?; if [[ $- == *e* ]]; then log "error: line $LINENO: exit status $_rc of: $BASH_COMMAND"; exit 1; fi' ERR

cache=${SCSITUNE_VM_CACHE:-$repo/build/vm-cache}
mkdir -p "$cache/rootfs"
cache=$(cd "$cache" && pwd -P)/rootfs
img=$cache/image

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap --mode=root; CI runs as root)"
for p in mmdebstrap mke2fs sfdisk chroot sha256sum flock; do
	command -v "$p" >/dev/null || die "$p not found (apt-get install mmdebstrap e2fsprogs fdisk; scripts/install-deps --test does)"
done

# One build at a time per cache; run.sh takes the same lock (shared) while
# it links the image into its own directory.
exec 9>>"$cache/lock" || die "cannot open the lock file $cache/lock"
if ! flock -n 9; then
	log "waiting for $cache/lock (another build-image.sh is building, or a run.sh is linking the image)"
	flock -w "${SCSITUNE_VM_LOCK_WAIT:-1800}" 9 ||
		die "waited ${SCSITUNE_VM_LOCK_WAIT:-1800} s for $cache/lock: another build-image.sh still holds it (fuser -v $cache/lock)"
fi

# --- the apt sources ---------------------------------------------------------
# mmdebstrap takes a .sources (deb822) or .list file as its mirror argument.
rm -f "$cache"/debian.sources "$cache"/debian.list
if [ -n "${SCSITUNE_VM_SOURCES:-}" ]; then
	[ -f "$SCSITUNE_VM_SOURCES" ] || die "SCSITUNE_VM_SOURCES=$SCSITUNE_VM_SOURCES: no such file"
	case $SCSITUNE_VM_SOURCES in
	*.sources) sources=$cache/debian.sources ;;
	*) sources=$cache/debian.list ;;
	esac
	cp "$SCSITUNE_VM_SOURCES" "$sources"
else
	# This machine's Debian sources, deb822 or one-line; third-party ones left out.
	sources=$cache/debian.sources
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# a stanza is kept when it names a Debian archive and is not disabled
		awk -v RS= -v ORS='\n\n' 'tolower($0) ~ /(deb|security|snapshot)\.debian\.org|debian-archive-keyring/ &&
			tolower($0) !~ /(^|\n)enabled: *no/' "$f"
	done >"$sources"
	if [ ! -s "$sources" ]; then
		rm -f "$sources"
		sources=$cache/debian.list
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			grep -E '^deb[[:space:]].*(deb|security|snapshot)\.debian\.org/' "$f" || true
		done >"$sources"
	fi
	if [ ! -s "$sources" ]; then
		rm -f "$sources"
		sources=$cache/debian.sources
		cat >"$sources" <<-'SRC'
			Types: deb
			URIs: http://deb.debian.org/debian
			Suites: bookworm bookworm-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

			Types: deb
			URIs: http://deb.debian.org/debian-security
			Suites: bookworm-security
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
	fi
fi

# --- cached? -----------------------------------------------------------------
# The key also holds this machine's apt index of the Debian archive (its
# InRelease files name the SHA-256 of every Packages index: a new point
# release or security update, once apt-get update saw it, is a new key).
key=$( (cat "$0" "$here/customize.sh" "$here"/guest/* "$sources"
	cat /var/lib/apt/lists/*_InRelease 2>/dev/null || true) | sha256sum | cut -d' ' -f1)
if [ -z "$rebuild" ] && [ -f "$img/key" ] && [ "$(cat "$img/key")" = "$key" ] && [ -f "$img/disk.raw" ]; then
	log "reusing $img ($(cat "$img/release"), built $(date -r "$img/key" '+%F %T'))"
	echo "$img"
	exit 0
fi
# Else the tests' cache outside the clone (tests/lib/ci-cache.sh: checked by
# SHA-256, skipped with SCSITUNE_NO_CACHE=1), then a build stored there.
# shellcheck source=../../lib/ci-cache.sh
. "$repo/tests/lib/ci-cache.sh"
ci_cache_key vm-rootfs "=image key $key" "=mmdebstrap $(dpkg-query -W -f '${Version}' mmdebstrap 2>/dev/null)"
if [ -z "$rebuild" ] && ci_cache_fetch vm-rootfs "$CI_CACHE_KEY" "$img"; then
	if [ -f "$img/key" ] && [ "$(cat "$img/key")" = "$key" ] && [ -f "$img/disk.raw" ]; then
		log "reusing $img from the tests' cache ($(cat "$img/release"), built $(date -r "$img/key" '+%F %T'))"
		echo "$img"
		exit 0
	fi
	log "the tests' cache entry vm-rootfs ${CI_CACHE_KEY:0:16} is not this image: built again"
fi

# --- mmdebstrap ---------------------------------------------------------------
now() { date +%s.%N; }
t0=$(now)
work=$cache/work
rm -rf "$work" "$img.new"
mkdir -p "$work" "$img.new" "$cache/debs"
tree=$work/root
# What the image holds, beyond the minbase variant (Priority: required):
#   systemd-sysv udev kmod           systemd as init, udevd, modprobe
#   linux-image-amd64 initramfs-tools zstd
#                                    Debian's kernel and the initramfs it makes
#                                    (zstd: initramfs.conf's COMPRESS)
#   grub-pc-bin                      the boot loader's images (put in the MBR
#                                    below, grub-mkimage from grub-common)
#   e2fsprogs fio irqbalance python3 what the scenarios run
#   openssh-server dbus              the fleet scenario's SSH host (Ansible's
#                                    connection; python3 is its target side):
#                                    sshd not started unless a stage starts
#                                    it; dbus, as on a Debian host (systemd
#                                    Recommends it): shutdown -r, which
#                                    Ansible's reboot runs, asks logind over it
#   mokutil keyutils                 the secure-boot scenario: payload enroll
#                                    stages the key with mokutil; keyctl
#                                    shows the .machine keyring
#   libnuma1 libjson-c5 libudev1 libinih1 libssl3 libcurl4
#   libarchive13 libsodium23 libelf1 scsitune's libraries (ldd, plus libnuma
#                                    and libcurl, which it dlopen()s; libkmod2
#                                    comes with kmod)
# Recommends are not installed (mmdebstrap's default); man pages, docs and
# locales are not unpacked. eatmydata: dpkg does not fsync (a throwaway tree).
pkgs=systemd-sysv,udev,kmod,linux-image-amd64,initramfs-tools,zstd,grub-pc-bin,e2fsprogs,fio,irqbalance,python3,openssh-server,dbus
pkgs=$pkgs,mokutil,keyutils
pkgs=$pkgs,libnuma1,libjson-c5,libudev1,libinih1,libssl3,libcurl4,libarchive13,libsodium23,libelf1
log "mmdebstrap bookworm ($pkgs) from $sources"
# mmdebstrap's sync-in/sync-out hooks run under dash, which cannot name a
# descriptor above 9: descriptors a caller left open (a test runner's, a
# timing tool's output file) push its pipes up there ("Bad fd number").
# Every one but 0-2, the lock (9) and bash's own script (255) is closed.
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	case $fd in 0 | 1 | 2 | 9 | 255) ;; *) eval "exec $fd>&-" 2>/dev/null || true ;; esac
done
mmdebstrap --variant=minbase --mode=root --format=directory \
	--include="$pkgs" \
	--hook-dir=/usr/share/mmdebstrap/hooks/eatmydata \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--skip=download/empty --skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook="sync-in '$cache/debs' /var/cache/apt/archives/" \
	--essential-hook="'$here/customize.sh' essential \"\$1\"" \
	--customize-hook="'$here/customize.sh' customize \"\$1\"" \
	--customize-hook="rm -rf '$work/debs' && mkdir '$work/debs'" \
	--customize-hook="sync-out /var/cache/apt/archives '$work/debs'" \
	bookworm "$tree" "$sources" >"$img.new/build.log" 2>&1 ||
	{ tail -n 30 "$img.new/build.log" >&2; die "mmdebstrap failed (log: $img.new/build.log)"; }
# the .debs this image used replace the old cache (a rebuild downloads what changed)
rm -rf "$cache/debs" && mv "$work/debs" "$cache/debs" && rm -f "$cache/debs/lock"
rm -rf "$cache/debs/partial"
t1=$(now)

# --- the disk ---------------------------------------------------------------
release=$(cd "$tree/lib/modules" && ls | head -1)
uuid=$(cat "$tree/etc/scsitune-vm/root-uuid")
chroot "$tree" dpkg-query -W -f '${Package} ${Version}\n' >"$img.new/packages.txt"
# What GRUB boots (its menu entry), for run.sh's first boot.
cp -L "$tree/vmlinuz" "$img.new/vmlinuz"
cp -L "$tree/initrd.img" "$img.new/initrd.img"
sed -n 's|^[[:space:]]*linux[[:space:]][[:space:]]*/vmlinuz[[:space:]][[:space:]]*||p' "$tree/boot/grub/grub.cfg" |
	head -1 >"$img.new/cmdline"
[ -s "$img.new/cmdline" ] || die "no kernel command line in the image's /boot/grub/grub.cfg"
core=$work/core.img
# GRUB for a BIOS disk: core.img (ext2 driver, prefix on partition 1) in the
# gap before the partition, boot.img's code (not its partition table) in
# the MBR; grub-mkimage fills in diskboot's sector count, boot.img finds
# core.img at sector 1 by default: what grub-install does for this layout.
chroot "$tree" grub-mkimage -O i386-pc -o /tmp/core.img -p '(hd0,msdos1)/boot/grub' \
	biosdisk part_msdos ext2 normal linux configfile search search_fs_uuid echo test
mv "$tree/tmp/core.img" "$core"
[ "$(stat -c %s "$core")" -lt $((2047 * 512)) ] || die "core.img does not fit before the partition"
size_mib=3072
disk=$img.new/disk.raw
truncate -s ${size_mib}M "$disk"
echo 'start=2048, type=83, bootable' | sfdisk -q "$disk"
mke2fs -q -t ext4 -F -L vmroot -U "$uuid" -E offset=$((2048 * 512)),lazy_itable_init=0,lazy_journal_init=0 \
	-d "$tree" "$disk" $(((size_mib - 1) * 1024))k
dd if="$tree/usr/lib/grub/i386-pc/boot.img" of="$disk" bs=440 count=1 conv=notrunc status=none
dd if="$core" of="$disk" bs=512 seek=1 conv=notrunc status=none
t2=$(now)

echo "$release" >"$img.new/release"
echo "$uuid" >"$img.new/uuid"
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
	printf "mmdebstrap %.1f s\ndisk %.1f s\n", b - a, c - b }' >"$img.new/timing.txt"
echo "$key" >"$img.new/key"
rm -rf "$img" "$work"
mv "$img.new" "$img"
log "built $img: $release, $(wc -l <"$img/packages.txt") packages, $(du -h "$img/disk.raw" | cut -f1) used of ${size_mib} MiB; $(tr '\n' ' ' <"$img/timing.txt")"
ci_cache_store vm-rootfs "$CI_CACHE_KEY" "$img"
echo "$img"
