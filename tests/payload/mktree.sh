#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mktree.sh CACHE OUT [MANIFEST] -- a root tree of a Debian 12 host for `payload
# --sysroot` tests, made from Debian's own linux-image-RELEASE package (the
# release payload/build built for: MANIFEST, default
# CACHE/../payload-out/manifest.json, names it;
# the .deb is downloaded into CACHE with apt-get download once, unpacked with
# dpkg-deb -x, never installed here):
#   lib/modules/R/  every module that depends on scsi_mod or target_core_mod
#                   and their dependencies (real files, ~40 MB), modules.order,
#                   modules.builtin(.modinfo) as packaged, the index made by
#                   depmod -b
#   boot/initrd.img-R  an initramfs in Debian's layout: an uncompressed
#                   early cpio, then a zstd-compressed cpio (newc) with the
#                   SCSI modules and their modules.dep (made by depmod -b)
#   var/lib/dpkg/status  linux-image-R as dpkg records it (fields from the .deb)
#   proc/version, proc/sys/kernel/osrelease  the running kernel is R
#   sys/module/{scsi_mod,target_core_mod}/  loaded stock copies: initstate,
#                   refcnt, the build-id note of the packaged files, no
#                   version or srcversion file (the stock modules have no
#                   MODULE_VERSION),
#                   holders/sd_mod; sys/bus/scsi/devices/0:0:0:0/iocounterbits 32
#   sys/module/module/parameters/sig_enforce N, sys/kernel/security/lockdown
#                   [none]; no EFI
# OUT is made in a temporary directory and renamed into place.
set -euo pipefail
export LC_ALL=C
cache=${1:?usage: mktree.sh CACHE OUT [MANIFEST]}
out=${2:?usage: mktree.sh CACHE OUT [MANIFEST]}
manifest=${3:-$cache/../payload-out/manifest.json}
log() { echo "mktree.sh: $*" >&2; }
die() { log "$*"; exit 1; }
for p in dpkg-deb apt-get depmod cpio zstd objcopy modinfo python3; do
	command -v "$p" >/dev/null || die "$p not found (scripts/install-deps --test)"
done
[ -f "$manifest" ] || die "$manifest: no payload/build output (run the payload/build test first)"
R=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["release"])' "$manifest")
V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["debian_version"])' "$manifest")
exec {lock}>"$cache/.lock" # payload/build's: one download into the cache at a time
flock "$lock"
deb=$(ls "$cache/linux-image-${R}_${V}_"*.deb 2>/dev/null | head -1 || true)
# used only when it is the package apt's index describes (SHA-256)
if [ -n "$deb" ] && [ "$(sha256sum <"$deb" | cut -c1-64)" != \
	"$(apt-cache show "linux-image-$R=$V" 2>/dev/null | awk '$1 == "SHA256:" { print $2; exit }')" ]; then
	log "cached $(basename "$deb") is not apt's linux-image-$R=$V (SHA-256 differs): downloading it again"
	rm -f "$deb"
	deb=''
fi
if [ -z "$deb" ]; then
	log "downloading linux-image-$R=$V"
	(cd "$cache" && apt-get download -q "linux-image-$R=$V" >/dev/null 2>&1) || die "apt-get download linux-image-$R=$V failed"
	deb=$(ls "$cache/linux-image-${R}_${V}_"*.deb | head -1)
fi
flock -u "$lock"
parent=$(dirname -- "$out")
mkdir -p "$parent"
work=$(mktemp -d "$parent/.mktree.XXXXXX")
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/pkg"
M=lib/modules/$R
depmod -b "$work/pkg" -C /dev/null "$R"
t=$work/tree
mkdir -p "$t/$M" "$t/boot" "$t/var/lib/dpkg" "$t/proc/sys/kernel" "$t/etc" "$t/sys/module/module/parameters" \
	"$t/sys/kernel/security" "$t/sys/bus/scsi/devices/0:0:0:0" "$t/var/lib/scsitune"
# Modules: the closure of everything that needs scsi_mod or target_core_mod.
grep -E '(^|/)(scsi_mod|target_core_mod)\.ko' "$work/pkg/$M/modules.dep" | tr -d ':' | tr ' ' '\n' | sort -u |
	while read -r ko; do
		[ -n "$ko" ] || continue
		mkdir -p "$t/$M/$(dirname "$ko")"
		cp -p "$work/pkg/$M/$ko" "$t/$M/$ko"
	done
cp -p "$work/pkg/$M"/modules.{order,builtin,builtin.modinfo} "$t/$M/"
depmod -b "$t" -C /dev/null "$R"
# dpkg's record of the kernel package.
{
	printf 'Package: base-files\nStatus: install ok installed\nPriority: required\nVersion: 12.4+deb12u7\n\n'
	printf 'Package: linux-image-%s\nStatus: install ok installed\nPriority: optional\nSection: kernel\n' "$R"
	printf 'Installed-Size: %s\nMaintainer: %s\nArchitecture: amd64\nSource: %s\nVersion: %s\n' \
		"$(dpkg-deb -f "$deb" Installed-Size)" "$(dpkg-deb -f "$deb" Maintainer)" \
		"$(dpkg-deb -f "$deb" Source | cut -d' ' -f1)" "$V"
	printf 'Description: %s\n\n' "$(dpkg-deb -f "$deb" Description | head -1)"
	printf 'Package: zstd\nStatus: install ok installed\nVersion: 1.5.4+dfsg2-5\n'
} >"$t/var/lib/dpkg/status"
# The running kernel (the banner Debian's kernel prints in /proc/version).
echo "$R" >"$t/proc/sys/kernel/osrelease"
echo "Linux version $R (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian $V (2025-01-01)" \
	>"$t/proc/version"
echo N >"$t/sys/module/module/parameters/sig_enforce"
echo '[none] integrity confidentiality' >"$t/sys/kernel/security/lockdown"
# Loaded stock modules, as the kernel shows them.
for m in scsi_mod target_core_mod; do
	ko=$(grep -m1 -E "(^|/)$m\.ko:" "$t/$M/modules.dep" | cut -d: -f1)
	d=$t/sys/module/$m
	mkdir -p "$d/notes" "$d/holders" "$d/parameters"
	echo live >"$d/initstate"
	# srcversion exists only for modules with a MODULE_VERSION (Debian's have none)
	sv=$(modinfo -F srcversion "$t/$M/$ko")
	[ -z "$sv" ] || echo "$sv" >"$d/srcversion"
	: >"$d/taint"
	objcopy -O binary --only-section=.note.gnu.build-id "$t/$M/$ko" "$d/notes/.note.gnu.build-id"
	[ -s "$d/notes/.note.gnu.build-id" ] || die "$ko has no build-id note"
done
echo 3 >"$t/sys/module/scsi_mod/refcnt"
mkdir -p "$t/sys/module/scsi_mod/holders/sd_mod"
echo 0 >"$t/sys/module/target_core_mod/refcnt"
echo 32 >"$t/sys/bus/scsi/devices/0:0:0:0/iocounterbits"
# The initramfs: Debian's layout (early cpio, then the main one in zstd).
ird=$work/initrd
mkdir -p "$ird/early/kernel/x86/microcode" "$ird/main/usr/lib/modules/$R" "$ird/main/etc"
printf 'not microcode, a placeholder of the same layout\n' >"$ird/early/kernel/x86/microcode/AuthenticAMD.bin"
ln -s usr/lib "$ird/main/lib"
for m in scsi_mod sd_mod sg; do
	grep -E "(^|/)$m\.ko:" "$t/$M/modules.dep" | tr -d ':' | tr ' ' '\n'
done | sort -u | while read -r ko; do
	[ -n "$ko" ] || continue
	mkdir -p "$ird/main/usr/lib/modules/$R/$(dirname "$ko")"
	cp -p "$t/$M/$ko" "$ird/main/usr/lib/modules/$R/$ko"
done
cp -p "$t/$M"/modules.{order,builtin,builtin.modinfo} "$ird/main/usr/lib/modules/$R/"
depmod -b "$ird/main/usr" -C /dev/null "$R"
echo 'MODULES=most' >"$ird/main/etc/initramfs.conf"
(cd "$ird/early" && find . | sort | cpio -o -H newc --reproducible --quiet) >"$t/boot/initrd.img-$R"
(cd "$ird/main" && find . | sort | cpio -o -H newc --reproducible --quiet | zstd -q -19 -T0) >>"$t/boot/initrd.img-$R"
rm -rf "$out"
mv -T "$t" "$out"
log "wrote $out: $R ($V), $(find "$out/$M" -name '*.ko' | wc -l) modules, initrd $(stat -c %s "$out/boot/initrd.img-$R") bytes"
