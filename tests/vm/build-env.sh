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
# ENVDIR is $SCSITUNE_VM_ENV, by default $SCSITUNE_VM_CACHE/env (the cache's
# default: build/vm-cache of the repo).
# The .deb and the unpacked kernel are cached in $SCSITUNE_VM_CACHE and reused
# while the package version is unchanged (no network needed then); the
# initramfs is rebuilt on every call (about a second). SCSITUNE_VM_CAPTURE
# names another capture script to put in the guest (to try a change to
# tests/fixtures/capture-host.sh before committing it).
# SCSITUNE_VM_KERNEL_DEB names another kernel package to boot instead
# (a linux-image .deb from `payload/build --kernel`): its storage, virtio and
# 9p drivers must be built in (payload/kconfig/vm.config), scsi_debug a
# module; the LIO modules are not carried. SCSITUNE_VM_ENV names the
# environment directory: an absolute path, or a name under the cache (default
# env). run-vm.sh gives every guest its own (OUTDIR/env), so that guests
# booted at the same time never share an initramfs.
#
# Several build-env.sh may run at once on one cache (vm/kernel-b starts two;
# the vm tests may run side by side): the downloads and unpacks into the
# cache are made under a lock ($SCSITUNE_VM_CACHE/lock, flock; waited for up
# to SCSITUNE_VM_LOCK_WAIT seconds, default 900), each into a temporary
# directory renamed into place, so a cached .deb or unpacked tree is always
# whole (an unpacked tree has its .done; a killed run leaves only temporary
# directories, removed by the next one).
#
# Needs: apt-get, apt-cache, dpkg-deb, depmod and modprobe (kmod), cpio,
# busybox-static, ldd, ldconfig, flock, and on the build machine the
# programs copied into the guest: bash, perl, find, tar, xz, mawk, libnuma1,
# fio.
# Exit status: 0 done, 1 error, 64 usage. Every error says why on stderr,
# on a line that starts "build-env.sh: error:" (the first such line is the
# cause: run-vm.sh repeats it): a message of its own, or, for a command
# that failed where none was foreseen, its line, exit status and command.
set -Eeuo pipefail
shopt -s inherit_errexit
export LC_ALL=C
umask 022

log() { echo "build-env.sh: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}
# A command that fails under set -e (-E: in functions and subshells too)
# names itself: nothing ends this script without a reason.
trap 'rc=$?; log "error: line $LINENO: exit status $rc of: $BASH_COMMAND"; exit 1' ERR
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
[ $# -eq 1 ] || { echo "usage: build-env.sh SCSITUNE_BINARY" >&2; exit 64; }
scsitune=$(readlink -f -- "$1") || die "$1: cannot resolve the path"
[ -f "$scsitune" ] && [ -x "$scsitune" ] || die "$1 is not an executable file"
cache=${SCSITUNE_VM_CACHE:-$repo/build/vm-cache}
mkdir -p "$cache" || die "cannot make the cache directory $cache"
cache=$(cd "$cache" && pwd -P)

for p in apt-cache dpkg-deb depmod modprobe cpio busybox ldd ldconfig bash perl find tar xz mawk flock sha256sum; do
	command -v "$p" >/dev/null || die "$p not found (apt-get install qemu-system-x86 busybox-static cpio kmod xz-utils util-linux)"
done
busybox=$(command -v busybox)
if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is not static (apt-get install busybox-static)"; fi

# --- the shared cache: downloads and unpacks under the lock -------------------
# newest PATTERN...: the last existing path by version order, or nothing
newest() { ls -d "$@" 2>/dev/null | sort -V | tail -1 || true; }
lock=$cache/lock
exec 9>>"$lock" || die "cannot open the lock file $lock"
if ! flock -n 9; then
	log "waiting for $lock (another build-env.sh is downloading or unpacking into $cache)"
	flock -w "${SCSITUNE_VM_LOCK_WAIT:-900}" 9 ||
		die "waited ${SCSITUNE_VM_LOCK_WAIT:-900} s for $lock: another build-env.sh still holds it (fuser -v $lock)"
fi
# what a killed run left (only the lock's holder makes these)
rm -rf "$cache"/.download.* "$cache"/.unpack.*
# fetch PKG: sets deb to the newest cached PKG_*.deb, downloaded first (into
# a temporary directory, then renamed into the cache) if there is none.
fetch() {
	local tmp
	deb=$(newest "$cache/${1}"_*.deb)
	[ -z "$deb" ] || return 0
	log "downloading $1"
	tmp=$(mktemp -d "$cache/.download.XXXXXX") || die "cannot make a temporary directory in $cache"
	(cd "$tmp" && apt-get download -q "$1" >&2) ||
		{ rm -rf "$tmp"; die "apt-get download $1 failed (no network, or no apt lists: apt-get update)"; }
	deb=$(newest "$tmp/${1}"_*.deb)
	[ -n "$deb" ] || { rm -rf "$tmp"; die "apt-get download $1 left no ${1}_*.deb"; }
	mv "$deb" "$cache/" || { rm -rf "$tmp"; die "cannot move $deb into $cache"; }
	rm -rf "$tmp"
	deb=$cache/${deb##*/}
}
# unpack DEB DIR [kernel]: DEB unpacked into DIR with DIR/.done (kernel: and
# its modules indexed by depmod), unless DIR/.done is there; made in a
# temporary directory and renamed, so DIR is either whole or absent.
unpack() {
	local tmp rel
	[ -e "$2/.done" ] && return 0
	log "unpacking $1"
	tmp=$(mktemp -d "$cache/.unpack.XXXXXX") || die "cannot make a temporary directory in $cache"
	chmod 0755 "$tmp"
	dpkg-deb -x "$1" "$tmp" ||
		{ rm -rf "$tmp"; die "dpkg-deb -x $1 failed (a damaged package: remove it; or no space left in $cache)"; }
	if [ "${3:-}" = kernel ]; then
		rel=$(newest "$tmp"/lib/modules/*/)
		rel=${rel%/}
		rel=${rel##*/}
		[ -n "$rel" ] || { rm -rf "$tmp"; die "$1 has no lib/modules/RELEASE: not a kernel image package"; }
		[ -f "$tmp/boot/vmlinuz-$rel" ] || { rm -rf "$tmp"; die "$1 has no boot/vmlinuz-$rel"; }
		[ -f "$tmp/lib/modules/$rel/modules.dep" ] || depmod -b "$tmp" "$rel" ||
			{ rm -rf "$tmp"; die "depmod -b $tmp $rel failed (the modules of $1)"; }
	fi
	touch "$tmp/.done" && rm -rf "$2" && mv -T "$tmp" "$2" ||
		{ rm -rf "$tmp"; die "cannot move the unpacked $1 to $2"; }
}

# --- the kernel package -----------------------------------------------------
custom=${SCSITUNE_VM_KERNEL_DEB:-}
if [ -n "$custom" ]; then
	[ -f "$custom" ] || die "SCSITUNE_VM_KERNEL_DEB=$custom: no such file"
	[ -r "$custom" ] || die "SCSITUNE_VM_KERNEL_DEB=$custom: not readable"
	pkg=$(dpkg-deb -f "$custom" Package 2>/dev/null) && [ -n "$pkg" ] ||
		die "SCSITUNE_VM_KERNEL_DEB=$custom is not a Debian package (dpkg-deb -f: $(dpkg-deb -f "$custom" Package 2>&1 | head -1))"
	# named by its content: a rebuilt package is unpacked again
	sum=$(sha256sum "$custom") || die "cannot read SCSITUNE_VM_KERNEL_DEB=$custom"
	kdir=$cache/kernel-$pkg-${sum:0:12}
	unpack "$custom" "$kdir" kernel
else
	# linux-image-amd64 is a metapackage; its Depends names the real image.
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }') || pkg=
	if [ -z "$pkg" ]; then
		# no apt metadata: fall back to whatever was unpacked before
		pkg=$(newest "$cache"/kernel-linux-image-*-amd64/.done)
		pkg=${pkg%/.done}
		pkg=${pkg##*/kernel-}
		[ -n "$pkg" ] || die "cannot resolve linux-image-amd64: apt-cache depends linux-image-amd64 names no linux-image-*-amd64 (no apt lists on this machine? apt-get update) and no unpacked kernel is cached in $cache"
		log "apt-cache gave nothing; using cached $pkg"
	fi
	kdir=$cache/kernel-$pkg
	if [ ! -e "$kdir/.done" ]; then
		fetch "$pkg"
		unpack "$deb" "$kdir" kernel
	fi
fi
release=$(newest "$kdir"/lib/modules/*/)
release=${release%/}
release=${release##*/}
[ -n "$release" ] || die "$kdir has no lib/modules/RELEASE"
[ -f "$kdir/boot/vmlinuz-$release" ] || die "$kdir has no boot/vmlinuz-$release"
# (a tree unpacked before the index was made at unpack time)
[ -f "$kdir/lib/modules/$release/modules.dep" ] || depmod -b "$kdir" "$release" ||
	die "depmod -b $kdir $release failed"

# --- irqbalance (the apply scenario) ---------------------------------------
# Debian's package, downloaded and unpacked like the kernel, never installed
# here: its binary and /etc/default/irqbalance go into the image.
irqb=$(newest "$cache"/irqbalance-*/.done)
irqb=${irqb%/.done}
if [ -z "$irqb" ]; then
	fetch irqbalance
	ver=$(dpkg-deb -f "$deb" Version 2>/dev/null) && [ -n "$ver" ] ||
		die "$deb: no Version (a damaged package: remove it)"
	irqb=$cache/irqbalance-$ver
	unpack "$deb" "$irqb"
fi
[ -x "$irqb/usr/sbin/irqbalance" ] && [ -f "$irqb/etc/default/irqbalance" ] || die "$irqb: no usr/sbin/irqbalance or etc/default/irqbalance"
# the shared part is done: the rest is this caller's own
flock -u 9
exec 9>&-

# --- the initramfs tree -----------------------------------------------------
case ${SCSITUNE_VM_ENV:-env} in
/*) env=$SCSITUNE_VM_ENV ;;
*) env=$cache/${SCSITUNE_VM_ENV:-env} ;;
esac
stage=$env/root
rm -rf "$env" || die "cannot remove the old environment $env"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib64,etc/vm,proc,sys,dev,tmp,run,results,root} ||
	die "cannot make the environment directory $env"
ln -s ../lib64 "$stage/usr/lib64"
cp "$kdir/boot/vmlinuz-$release" "$env/vmlinuz" || die "cannot copy $kdir/boot/vmlinuz-$release to $env"
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
# add_modules LIST LISTFILE OUT: every module of LIST and what it depends
# on, in modprobe's order, copied into the stage (each file once, none that
# LISTFILE already names); their guest paths appended to OUT.
add_modules() {
	local m ko rel
	: >"$env/kos"
	for m in $1; do
		modprobe -d "$kdir" -S "$release" --show-depends "$m" >"$env/deps" 2>"$env/deps.err" ||
			die "modprobe -d $kdir -S $release --show-depends $m failed: $(head -1 "$env/deps.err")"
		awk '$1 == "insmod" { print $2 }' "$env/deps" >>"$env/kos"
	done
	while read -r ko; do
		rel=${ko#"$kdir"/}
		grep -qxF "/$rel" "$2" "$3" && continue
		mkdir -p "$stage/$(dirname "$rel")" && cp "$ko" "$stage/$rel" || die "cannot copy $ko into $stage"
		echo "/$rel" >>"$3"
	done <"$env/kos"
	rm -f "$env/deps" "$env/deps.err" "$env/kos"
}
: >"$stage/etc/vm/modules"
add_modules "$MODULES" /dev/null "$stage/etc/vm/modules"
# Modules the image carries but /init does not load: the LIO target stack
# for the payload scenario (it loads them itself, after swapping in the
# payload's modules), listed in dependency order in /etc/vm/extra-modules.
# iscsi_target_mod's login allocates a "crc32c" hash even without digests.
: >"$stage/etc/vm/extra-modules"
add_modules "$EXTRA_MODULES" "$stage/etc/vm/modules" "$stage/etc/vm/extra-modules"
# SCSITUNE_VM_PAYLOAD: a payload/build output directory; its modules/*.ko
# and manifest.json go to /payload/ in the guest.
if [ -n "${SCSITUNE_VM_PAYLOAD:-}" ]; then
	[ -f "$SCSITUNE_VM_PAYLOAD/manifest.json" ] || die "SCSITUNE_VM_PAYLOAD=$SCSITUNE_VM_PAYLOAD has no manifest.json (run payload/build)"
	mkdir -p "$stage/payload"
	cp "$SCSITUNE_VM_PAYLOAD"/modules/*.ko "$SCSITUNE_VM_PAYLOAD/manifest.json" "$stage/payload/" ||
		die "cannot copy SCSITUNE_VM_PAYLOAD=$SCSITUNE_VM_PAYLOAD's modules/*.ko and manifest.json"
fi
mkdir -p "$stage/lib/modules/$release"
cp "$kdir/lib/modules/$release"/modules.{builtin,builtin.modinfo,order} "$stage/lib/modules/$release/" ||
	die "$kdir/lib/modules/$release lacks modules.builtin, modules.builtin.modinfo or modules.order"
depmod -b "$stage" "$release" || die "depmod -b $stage $release failed"

# Programs: busybox for everything, then real bash, perl-base, GNU find/tar,
# xz, mawk and keyctl for capture-host.sh (bash arrays, find -printf, tar --sort,
# perl copier), and scsitune. Their libraries come from ldd; libnuma is
# dlopen()ed by scsitune on the live system, so it is named explicitly.
cp "$busybox" "$stage/bin/busybox" || die "cannot copy $busybox"
applets=$("$busybox" --list-full) || die "$busybox --list-full failed"
for a in $applets; do
	[ -e "$stage/$a" ] || ln -s /bin/busybox "$stage/$a"
done
copy_bin() { # SRC DEST(in stage)
	rm -f "$stage/$2"
	cp -L "$1" "$stage/$2" || die "cannot copy $1 into the environment"
	libs+=("$1")
}
libs=()
copy_bin "$(command -v bash)" bin/bash
copy_bin "$(command -v perl)" usr/bin/perl
copy_bin "$(command -v find)" usr/bin/find
copy_bin "$(command -v tar)" usr/bin/tar
copy_bin "$(command -v xz)" usr/bin/xz
copy_bin "$(command -v mawk)" usr/bin/awk
# keyctl: capture-host.sh records each system keyring's members with it (keyctl rlist), as
# live detect reads them (KEYCTL_READ): without it the replayed capture lacks what live saw.
keyctl=$(command -v keyctl) || die "keyctl not found (apt-get install keyutils; scripts/install-deps --test does)"
copy_bin "$keyctl" usr/bin/keyctl
copy_bin "$scsitune" usr/bin/scsitune
# fio for the benchmark scenarios (Debian's build links its rbd/gluster/nbd
# engines in, so its library list is long).
fio=$(command -v fio) || die "fio not found (apt-get install fio)"
copy_bin "$fio" usr/bin/fio
# irqbalance and its defaults file; the profiles for apply.
copy_bin "$irqb/usr/sbin/irqbalance" usr/sbin/irqbalance
mkdir -p "$stage/etc/default" "$stage/vm/profiles"
cp "$irqb/etc/default/irqbalance" "$stage/etc/default/irqbalance" || die "cannot copy $irqb/etc/default/irqbalance"
cp "$repo"/profiles/* "$stage/vm/profiles/" || die "cannot copy $repo/profiles/*"
# numa on every HBA: the guest's HBAs are virtio-scsi, megasas and scsi_debug, none mpi3mr.
cp "$repo"/tests/profiles/numa-every-hba "$stage/vm/profiles/" || die "cannot copy $repo/tests/profiles/numa-every-hba"
# SCSITUNE_VM_ISCSI: the payload scenario's iSCSI initiator
# (tests/vm/scenarios/payload-iscsi.c, built by CMake), as /usr/bin/payload-iscsi.
if [ -n "${SCSITUNE_VM_ISCSI:-}" ]; then
	[ -f "$SCSITUNE_VM_ISCSI" ] && [ -x "$SCSITUNE_VM_ISCSI" ] || die "SCSITUNE_VM_ISCSI=$SCSITUNE_VM_ISCSI is not an executable file"
	copy_bin "$SCSITUNE_VM_ISCSI" usr/bin/payload-iscsi
fi
numa=$(ldconfig -p | awk '$1 == "libnuma.so.1" && /x86-64/ { print $NF; exit }') || numa=
# (ldconfig's cache can be missing it for a moment while dpkg runs ldconfig
# for another package: Debian's own place, where libnuma1 puts it, then.)
[ -n "$numa" ] || [ ! -f /usr/lib/x86_64-linux-gnu/libnuma.so.1 ] || numa=/usr/lib/x86_64-linux-gnu/libnuma.so.1
[ -n "$numa" ] || die "libnuma.so.1 not found (apt-get install libnuma1)"
# Their libraries (ldd fails on a static program: nothing to add then); a
# library ldd cannot find would be missing in the guest.
: >"$env/libs"
for f in "${libs[@]}" "$numa"; do
	case $f in */lib*.so*) echo "$f" >>"$env/libs" ;; esac
	ldd "$f" >"$env/ldd" 2>/dev/null || continue
	if grep -q '=> not found' "$env/ldd"; then
		die "$f needs $(awk '/=> not found/ { print $1 }' "$env/ldd" | tr '\n' ' ')which ldd does not find on this machine"
	fi
	awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' "$env/ldd" >>"$env/libs"
done
while read -r lib; do
	[ -e "$lib" ] || continue
	d=$stage$(dirname "$lib")
	mkdir -p "$d" && cp -L "$lib" "$d/" || die "cannot copy $lib into the environment"
	# the dynamic loader also under its canonical /lib64 name
	case $lib in */ld-linux-x86-64.so.2) cp -L "$lib" "$stage/lib64/" || die "cannot copy $lib to $stage/lib64" ;; esac
done < <(sort -u "$env/libs")
rm -f "$env/libs" "$env/ldd"
# perl-base's own library (strict, warnings, File::Path, File::Basename), not
# the full perl-modules.
d=/usr/lib/x86_64-linux-gnu/perl-base
[ -f "$d/File/Path.pm" ] || die "$d/File/Path.pm not found (perl-base)"
mkdir -p "$stage$d" && cp -a "$d/." "$stage$d/" || die "cannot copy $d into the environment"

# Scripts: init, scenarios, what they share (/vm/lib.sh: wait_until) and
# the capture script.
capture=${SCSITUNE_VM_CAPTURE:-$repo/tests/fixtures/capture-host.sh}
install -m 0755 "$here/guest/init" "$stage/init" || die "cannot install $here/guest/init"
mkdir -p "$stage/vm/scenarios"
install -m 0755 "$here"/scenarios/*.guest.sh "$stage/vm/scenarios/" || die "cannot install $here/scenarios/*.guest.sh"
install -m 0644 "$here/guest/lib.sh" "$stage/vm/lib.sh" || die "cannot install $here/guest/lib.sh"
install -m 0755 "$capture" "$stage/usr/bin/capture-host.sh" || die "cannot install the capture script $capture"
echo 'root:x:0:0:root:/root:/bin/sh' >"$stage/etc/passwd"
echo 'root:x:0:' >"$stage/etc/group"

# An uncompressed newc archive: TCG is slow at decompressing, fw_cfg fast at
# copying.
(cd "$stage" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) >"$env/initrd.cpio" ||
	die "cannot write the initramfs $env/initrd.cpio (cpio failed; no space left?)"
log "$pkg ($release): $(du -h "$env/initrd.cpio" | cut -f1) initramfs, $(wc -l <"$stage/etc/vm/modules") modules"
echo "$env"
