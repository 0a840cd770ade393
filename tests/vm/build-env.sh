#!/bin/bash
# build-env.sh -- build the bootable test environment of the vm tier from
# Debian packages only: the kernel and modules of the current
# linux-image-amd64 (downloaded with apt-get download and unpacked with
# dpkg-deb -x, never installed on this machine), and a busybox-static
# initramfs holding scsitune, the shared libraries it needs, the capture
# script with what it needs (bash, perl-base, GNU find/tar, xz, mawk), the
# guest init and the scenario scripts.
#
#   build-env.sh SCSITUNE_BINARY
#
# Prints, on its last line of stdout, the environment directory:
#   ENVDIR/vmlinuz  ENVDIR/initrd.cpio  ENVDIR/release
# ENVDIR is $SCSITUNE_VM_CACHE/env (default build/vm-cache/env of the repo).
# The .deb and the unpacked kernel are cached in $SCSITUNE_VM_CACHE and reused
# while the package version is unchanged (no network needed then); the
# initramfs is rebuilt on every call (about a second). SCSITUNE_VM_CAPTURE
# names another capture script to put in the guest (to try a change to
# tests/fixtures/capture-host.sh before committing it).
# SCSITUNE_VM_KERNEL_DEB names another kernel package to boot instead
# (a linux-image .deb from `payload/build --kernel`): its storage, virtio and
# 9p drivers must be built in (payload/kconfig/vm.config), scsi_debug a
# module; the LIO modules are not carried. SCSITUNE_VM_ENV names the
# environment directory under the cache (default env), so that two guests
# with different kernels can boot side by side.
#
# Needs: apt-get, apt-cache, dpkg-deb, depmod and modprobe (kmod), cpio,
# busybox-static, ldd, ldconfig, and on the build machine the programs copied
# into the guest: bash, perl, find, tar, xz, mawk, libnuma1, fio.
# Exit status: 0 done, 1 error, 64 usage.
set -euo pipefail
export LC_ALL=C
umask 022

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
[ $# -eq 1 ] || { echo "usage: build-env.sh SCSITUNE_BINARY" >&2; exit 64; }
scsitune=$(readlink -f -- "$1")
[ -x "$scsitune" ] || { echo "build-env.sh: $1 is not an executable" >&2; exit 1; }
cache=${SCSITUNE_VM_CACHE:-$repo/build/vm-cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
log() { echo "build-env.sh: $*" >&2; }
die() { log "$*"; exit 1; }

for p in apt-cache dpkg-deb depmod modprobe cpio busybox ldd ldconfig bash perl find tar xz mawk; do
	command -v "$p" >/dev/null || die "$p not found (apt-get install qemu-system-x86 busybox-static cpio kmod xz-utils)"
done
busybox=$(command -v busybox)
if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is not static (apt-get install busybox-static)"; fi

# --- the kernel package -----------------------------------------------------
custom=${SCSITUNE_VM_KERNEL_DEB:-}
if [ -n "$custom" ]; then
	[ -f "$custom" ] || die "SCSITUNE_VM_KERNEL_DEB=$custom: no such file"
	pkg=$(dpkg-deb -f "$custom" Package) || die "SCSITUNE_VM_KERNEL_DEB=$custom is not a Debian package"
	# named by its content: a rebuilt package is unpacked again
	kdir=$cache/kernel-$pkg-$(sha256sum "$custom" | cut -c1-12)
	if [ ! -e "$kdir/.done" ]; then
		log "unpacking $custom"
		rm -rf "$kdir"
		mkdir -p "$kdir"
		dpkg-deb -x "$custom" "$kdir"
		touch "$kdir/.done"
	fi
else
# linux-image-amd64 is a metapackage; its Depends names the real image.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }') || true
if [ -z "$pkg" ]; then
	# no apt metadata: fall back to whatever was unpacked before
	pkg=$(cd "$cache" && ls -d kernel-linux-image-* 2>/dev/null | sed 's/^kernel-//' | sort -V | tail -1)
	[ -n "$pkg" ] || die "cannot resolve linux-image-amd64 (apt-get update?) and nothing cached in $cache"
	log "apt-cache gave nothing; using cached $pkg"
fi
kdir=$cache/kernel-$pkg
if [ ! -e "$kdir/.done" ]; then
	deb=$(ls "$cache"/"${pkg}"_*.deb 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$deb" ]; then
		log "downloading $pkg"
		(cd "$cache" && apt-get download -q "$pkg" >&2) || die "apt-get download $pkg failed"
		deb=$(ls "$cache"/"${pkg}"_*.deb | sort -V | tail -1)
	fi
	log "unpacking $deb"
	rm -rf "$kdir"
	mkdir -p "$kdir"
	dpkg-deb -x "$deb" "$kdir"
	touch "$kdir/.done"
fi
fi
release=$(cd "$kdir/lib/modules" && ls | head -1)
[ -f "$kdir/boot/vmlinuz-$release" ] || die "$kdir has no boot/vmlinuz-$release"
[ -f "$kdir/lib/modules/$release/modules.dep" ] || depmod -b "$kdir" "$release"

# --- irqbalance (the apply scenario) ---------------------------------------
# Debian's package, downloaded and unpacked like the kernel, never installed
# here: its binary and /etc/default/irqbalance go into the image.
irqb=$(ls -d "$cache"/irqbalance-*/ 2>/dev/null | sort -V | tail -1 || true)
irqb=${irqb%/}
if [ -z "$irqb" ] || [ ! -e "$irqb/.done" ]; then
	deb=$(ls "$cache"/irqbalance_*.deb 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$deb" ]; then
		log "downloading irqbalance"
		(cd "$cache" && apt-get download -q irqbalance >&2) || die "apt-get download irqbalance failed"
		deb=$(ls "$cache"/irqbalance_*.deb | sort -V | tail -1)
	fi
	irqb=$cache/irqbalance-$(dpkg-deb -f "$deb" Version)
	rm -rf "$irqb"
	mkdir -p "$irqb"
	dpkg-deb -x "$deb" "$irqb"
	touch "$irqb/.done"
fi
[ -x "$irqb/usr/sbin/irqbalance" ] && [ -f "$irqb/etc/default/irqbalance" ] || die "$irqb: no usr/sbin/irqbalance or etc/default/irqbalance"

# --- the initramfs tree -----------------------------------------------------
env=$cache/${SCSITUNE_VM_ENV:-env}
stage=$env/root
rm -rf "$env"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib64,etc/vm,proc,sys,dev,tmp,run,results,root}
ln -s ../lib64 "$stage/usr/lib64"
cp "$kdir/boot/vmlinuz-$release" "$env/vmlinuz"
echo "$release" >"$env/release"
echo "$pkg" >"$env/package"

# Modules: resolved by modprobe against depmod's index, dependency order kept,
# each file once. crc64_rocksoft_generic comes first: sd_mod's t10-pi asks the
# crypto API for crc64-rocksoft and does not depend on it by symbol.
MODULES='crc64_rocksoft_generic virtio_pci virtio_scsi megaraid_sas sd_mod scsi_debug 9pnet_virtio 9p'
EXTRA_MODULES='configfs target_core_mod tcm_loop crc32c_generic iscsi_target_mod'
if [ -n "$custom" ]; then
	# built in, or this kernel cannot run the scenarios
	for m in virtio_pci virtio_scsi megaraid_sas sd_mod 9pnet_virtio 9p; do
		grep -q "/$m\.ko\$" "$kdir/lib/modules/$release/modules.builtin" ||
			die "$custom: $m is not built into $release (payload/kconfig/vm.config builds it in)"
	done
	MODULES=scsi_debug EXTRA_MODULES=''
fi
: >"$stage/etc/vm/modules"
for m in $MODULES; do
	modprobe -d "$kdir" -S "$release" --show-depends "$m" ||
		die "modprobe --show-depends $m failed"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
	rel=${ko#"$kdir"/}
	mkdir -p "$stage/$(dirname "$rel")"
	cp "$ko" "$stage/$rel"
	echo "/$rel" >>"$stage/etc/vm/modules"
done
# Modules the image carries but /init does not load: the LIO target stack
# for the payload scenario (it loads them itself, after swapping in the
# payload's modules), listed in dependency order in /etc/vm/extra-modules.
# iscsi_target_mod's login allocates a "crc32c" hash even without digests.
: >"$stage/etc/vm/extra-modules"
for m in $EXTRA_MODULES; do
	modprobe -d "$kdir" -S "$release" --show-depends "$m" ||
		die "modprobe --show-depends $m failed"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r ko; do
	rel=${ko#"$kdir"/}
	grep -qxF "/$rel" "$stage/etc/vm/modules" && continue
	mkdir -p "$stage/$(dirname "$rel")"
	cp "$ko" "$stage/$rel"
	echo "/$rel" >>"$stage/etc/vm/extra-modules"
done
# SCSITUNE_VM_PAYLOAD: a payload/build output directory; its modules/*.ko
# and manifest.json go to /payload/ in the guest.
if [ -n "${SCSITUNE_VM_PAYLOAD:-}" ]; then
	[ -f "$SCSITUNE_VM_PAYLOAD/manifest.json" ] || die "SCSITUNE_VM_PAYLOAD=$SCSITUNE_VM_PAYLOAD has no manifest.json (run payload/build)"
	mkdir -p "$stage/payload"
	cp "$SCSITUNE_VM_PAYLOAD"/modules/*.ko "$SCSITUNE_VM_PAYLOAD/manifest.json" "$stage/payload/"
fi
cp "$kdir/lib/modules/$release"/modules.{builtin,builtin.modinfo,order} "$stage/lib/modules/$release/"
depmod -b "$stage" "$release"

# Programs: busybox for everything, then real bash, perl-base, GNU find/tar,
# xz and mawk for capture-host.sh (bash arrays, find -printf, tar --sort,
# perl copier), and scsitune. Their libraries come from ldd; libnuma is
# dlopen()ed by scsitune on the live system, so it is named explicitly.
cp "$busybox" "$stage/bin/busybox"
for a in $("$busybox" --list-full); do
	[ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
copy_bin() { # SRC DEST(in stage)
	rm -f "$stage/$2"
	cp -L "$1" "$stage/$2"
	libs+=("$1")
}
libs=()
copy_bin "$(command -v bash)" bin/bash
copy_bin "$(command -v perl)" usr/bin/perl
copy_bin "$(command -v find)" usr/bin/find
copy_bin "$(command -v tar)" usr/bin/tar
copy_bin "$(command -v xz)" usr/bin/xz
copy_bin "$(command -v mawk)" usr/bin/awk
copy_bin "$scsitune" usr/bin/scsitune
# fio for the benchmark scenarios (Debian's build links its rbd/gluster/nbd
# engines in, so its library list is long).
copy_bin "$(command -v fio || die "fio not found (apt-get install fio)")" usr/bin/fio
# irqbalance and its defaults file; the profiles for apply.
copy_bin "$irqb/usr/sbin/irqbalance" usr/sbin/irqbalance
mkdir -p "$stage/etc/default" "$stage/vm/profiles"
cp "$irqb/etc/default/irqbalance" "$stage/etc/default/irqbalance"
cp "$repo"/profiles/* "$stage/vm/profiles/"
# numa on every HBA: the guest's HBAs are virtio-scsi, megasas and scsi_debug, none mpi3mr.
cp "$repo"/tests/profiles/numa-every-hba "$stage/vm/profiles/"
# SCSITUNE_VM_ISCSI: the payload scenario's iSCSI initiator
# (tests/vm/scenarios/payload-iscsi.c, built by CMake), as /usr/bin/payload-iscsi.
if [ -n "${SCSITUNE_VM_ISCSI:-}" ]; then
	[ -x "$SCSITUNE_VM_ISCSI" ] || die "SCSITUNE_VM_ISCSI=$SCSITUNE_VM_ISCSI is not an executable"
	copy_bin "$SCSITUNE_VM_ISCSI" usr/bin/payload-iscsi
fi
numa=$(ldconfig -p | awk '$1 == "libnuma.so.1" && /x86-64/ { print $NF; exit }')
[ -n "$numa" ] || die "libnuma.so.1 not found (apt-get install libnuma1)"
for f in "${libs[@]}" "$numa"; do
	case $f in */lib*.so*) echo "$f" ;; esac
	ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
done | sort -u | while read -r lib; do
	[ -e "$lib" ] || continue
	d=$stage$(dirname "$lib")
	mkdir -p "$d"
	cp -L "$lib" "$d/"
	# the dynamic loader also under its canonical /lib64 name
	case $lib in */ld-linux-x86-64.so.2) cp -L "$lib" "$stage/lib64/" ;; esac
done
# perl-base's own library (strict, warnings, File::Path, File::Basename), not
# the full perl-modules.
d=/usr/lib/x86_64-linux-gnu/perl-base
[ -f "$d/File/Path.pm" ] || die "$d/File/Path.pm not found (perl-base)"
mkdir -p "$stage$d" && cp -a "$d/." "$stage$d/"

# Scripts: init, scenarios and the capture script.
install -m 0755 "$here/guest/init" "$stage/init"
mkdir -p "$stage/vm/scenarios"
install -m 0755 "$here"/scenarios/*.guest.sh "$stage/vm/scenarios/"
install -m 0755 "${SCSITUNE_VM_CAPTURE:-$repo/tests/fixtures/capture-host.sh}" "$stage/usr/bin/capture-host.sh"
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
EOF
echo 'root:x:0:' >"$stage/etc/group"

# An uncompressed newc archive: TCG is slow at decompressing, fw_cfg fast at
# copying.
(cd "$stage" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) >"$env/initrd.cpio"
log "$pkg ($release): $(du -h "$env/initrd.cpio" | cut -f1) initramfs, $(wc -l <"$stage/etc/vm/modules") modules"
echo "$env"
