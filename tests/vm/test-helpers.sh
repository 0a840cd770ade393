#!/bin/bash
# test-helpers.sh -- the vm tier's helpers fail with their reason, and share
# their cache safely; no guest is booted (CTest vm/helper-errors, label cli).
#
#   test-helpers.sh SCSITUNE_BINARY
#
# build-env.sh, with a temporary cache ($SCSITUNE_VM_CACHE) and a kernel
# package made here (SCSITUNE_VM_KERNEL_DEB: a .deb whose modules.builtin
# names the drivers the scenarios need, a text file as its vmlinuz; enough
# for build-env.sh, never booted), fails with exit 1 and its first
# "build-env.sh: error:" line naming the cause for: a scsitune that is not
# executable; a kernel package that is not one (garbage), is cut short
# (dpkg-deb -x fails: the "failed while unpacking" of vm/kernel-b), or holds
# no kernel; no apt metadata and nothing cached (the fresh machine: a stub
# apt-cache that knows nothing); a command that fails where no message was
# foreseen (a stub awk: the ERR trap names line, status and command); and
# the cache's lock held by another process past SCSITUNE_VM_LOCK_WAIT.
# run-vm.sh repeats that reason on its FAIL line (never only "failed");
# rootfs/run.sh repeats build-image.sh's (a missing SCSITUNE_VM_SOURCES
# file, or "needs root" when not root).
# Secure Boot's helpers: run.sh refuses a SCSITUNE_VM_FIRMWARE it does not
# know (64) and says which package a missing OVMF file comes from; esp.sh
# names a missing initrd and a missing shim; mokmanager.py names the screen
# it did not see, whether QEMU exited first or the deadline passed.
# Two build-env.sh at once on one fresh cache (what vm/kernel-b does) both
# succeed, each into its own environment, the package unpacked once (one
# "unpacking" line between them), no temporary directory left; a partial
# tree left by a killed run (no .done) and its temporary directory are
# replaced.
# Exit status: 0 passed, 1 failed.
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -eq 1 ] || { echo "usage: test-helpers.sh SCSITUNE" >&2; exit 64; }
scsitune=$(readlink -f -- "$1")
T=$(mktemp -d)
holder=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fails=0
ok() { echo "ok    $*"; }
bad() {
	echo "FAIL  $*"
	fails=$((fails + 1))
}
# expect NAME STATUS PATTERN FILE: the case exited STATUS and FILE has a
# line matching the extended regex PATTERN (shown either way).
expect() {
	local name=$1 want=$2 pat=$3 file=$4 got
	got=$(cat "$T/$name.rc")
	if [ "$got" = "$want" ] && grep -qE -- "$pat" "$file"; then
		ok "$name: exit $got: $(grep -m1 -E -- "$pat" "$file")"
	else
		bad "$name: exit $got (want $want), no line /$pat/ in ${file##*/}:"
		sed 's/^/      /' "$file"
	fi
}
# first_error NAME: the first "build-env.sh: error:" line is exactly one
# line (the cause), not only a line number
first_error() {
	grep -m1 '^build-env.sh: error:' "$T/$1.err" | sed 's/^build-env.sh: error: //'
}

# A kernel package: boot/vmlinuz-R and lib/modules/R with the scenarios'
# drivers listed as built in (scsi_debug too: no module to carry).
R=9.9.9-helpers
mkkernel() { # DIR
	local k=$1 m
	mkdir -p "$k/boot" "$k/lib/modules/$R" "$k/DEBIAN"
	echo "not a kernel" >"$k/boot/vmlinuz-$R"
	for m in drivers/virtio/virtio_pci drivers/scsi/virtio_scsi drivers/scsi/megaraid/megaraid_sas \
		drivers/scsi/sd_mod net/9p/9pnet_virtio fs/9p/9p drivers/scsi/scsi_debug; do
		echo "kernel/$m.ko"
	done >"$k/lib/modules/$R/modules.builtin"
	: >"$k/lib/modules/$R/modules.builtin.modinfo"
	: >"$k/lib/modules/$R/modules.order"
	# bulk, so that a cut copy is cut inside the data member
	head -c 2000000 /dev/urandom >"$k/boot/bulk"
}
mkdeb() { # DIR PACKAGE OUT
	mkdir -p "$1/DEBIAN"
	printf 'Package: %s\nVersion: 1\nArchitecture: amd64\nMaintainer: scsitune tests <tests@example.org>\nDescription: test\n' \
		"$2" >"$1/DEBIAN/control"
	dpkg-deb --root-owner-group -Zgzip -b "$1" "$3" >/dev/null || { echo "FAIL: dpkg-deb -b $3"; exit 1; }
}
mkkernel "$T/k"
mkdeb "$T/k" "linux-image-$R" "$T/kernel.deb"
mkdir -p "$T/nok/usr/share/doc/x"
echo x >"$T/nok/usr/share/doc/x/README"
mkdeb "$T/nok" linux-image-nokernel "$T/nokernel.deb"
head -c "$(($(stat -c %s "$T/kernel.deb") / 2))" "$T/kernel.deb" >"$T/cut.deb"
echo "this is not a Debian package" >"$T/garbage.deb"
mkdir -p "$T/irqb/usr/sbin" "$T/irqb/etc/default"
cp /bin/true "$T/irqb/usr/sbin/irqbalance"
echo 'IRQBALANCE_ARGS=' >"$T/irqb/etc/default/irqbalance"
mkdeb "$T/irqb" irqbalance "$T/irqbalance_1.0-helpers_amd64.deb"
# a cache that needs no network: irqbalance's package in it
newcache() { # DIR
	mkdir -p "$1"
	cp "$T/irqbalance_1.0-helpers_amd64.deb" "$1/"
}
# stubs: apt-cache and apt-get that know nothing (a machine without apt
# lists), an awk that fails
mkdir -p "$T/noapt" "$T/badawk"
printf '#!/bin/sh\necho "E: No packages found" >&2\nexit 100\n' >"$T/noapt/apt-cache"
printf '#!/bin/sh\necho "E: Unable to locate package $3" >&2\nexit 100\n' >"$T/noapt/apt-get"
printf '#!/bin/sh\necho "awk: stub failure" >&2\nexit 2\n' >"$T/badawk/awk"
chmod +x "$T"/noapt/* "$T"/badawk/*
cp "$scsitune" "$T/scsitune.noexec"
chmod 0644 "$T/scsitune.noexec"

# be NAME [VAR=VALUE...]: build-env.sh with a fresh cache $T/NAME.cache
be() {
	local name=$1
	shift
	newcache "$T/$name.cache"
	env SCSITUNE_VM_CACHE="$T/$name.cache" "$@" "$here/build-env.sh" "${be_bin:-$scsitune}" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}

echo "== build-env.sh fails with its reason"
be_bin=$T/scsitune.noexec be noexec SCSITUNE_VM_KERNEL_DEB="$T/kernel.deb"
expect noexec 1 '^build-env.sh: error: .*scsitune.noexec is not an executable file$' "$T/noexec.err"
be garbage SCSITUNE_VM_KERNEL_DEB="$T/garbage.deb"
expect garbage 1 "^build-env.sh: error: SCSITUNE_VM_KERNEL_DEB=.*garbage.deb is not a Debian package" "$T/garbage.err"
be cut SCSITUNE_VM_KERNEL_DEB="$T/cut.deb"
expect cut 1 "^build-env.sh: error: (dpkg-deb -x .*cut.deb failed|SCSITUNE_VM_KERNEL_DEB=.*cut.deb is not a Debian package)" "$T/cut.err"
if ls -d "$T/cut.cache"/kernel-* "$T/cut.cache"/.unpack.* >/dev/null 2>&1; then
	bad "cut: a kernel tree or temporary directory was left in the cache: $(ls -a "$T/cut.cache" | tr '\n' ' ')"
else
	ok "cut: nothing half unpacked left in the cache"
fi
be nokernel SCSITUNE_VM_KERNEL_DEB="$T/nokernel.deb"
expect nokernel 1 "^build-env.sh: error: .*nokernel.deb has no lib/modules/RELEASE: not a kernel image package" "$T/nokernel.err"
be noapt PATH="$T/noapt:$PATH"
expect noapt 1 "^build-env.sh: error: cannot resolve linux-image-amd64: .*apt-get update.*no unpacked kernel is cached" "$T/noapt.err"
be badawk PATH="$T/badawk:$PATH" SCSITUNE_VM_KERNEL_DEB="$T/kernel.deb"
expect badawk 1 "^build-env.sh: error: line [0-9]+: exit status 2 of: awk " "$T/badawk.err"
# the lock held by another process: a deadline, then the reason
newcache "$T/locked.cache"
# (the holder is the sleep itself, with the locked descriptor: killed below)
(
	exec 8>>"$T/locked.cache/lock"
	flock 8
	exec sleep 600
) &
holder=$!
# a poll, with a deadline, until the holder has it
i=0
until ! flock -n "$T/locked.cache/lock" true 2>/dev/null || [ $i -ge 600 ]; do
	i=$((i + 1))
	sleep 0.1
done
SCSITUNE_VM_CACHE=$T/locked.cache SCSITUNE_VM_LOCK_WAIT=1 SCSITUNE_VM_KERNEL_DEB=$T/kernel.deb \
	"$here/build-env.sh" "$scsitune" >"$T/locked.out" 2>"$T/locked.err"
echo $? >"$T/locked.rc"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=
expect locked 1 "^build-env.sh: error: waited 1 s for .*/lock: another build-env.sh still holds it" "$T/locked.err"
for n in noexec garbage cut nokernel noapt badawk locked; do
	[ -s "$T/$n.out" ] && bad "$n: printed on stdout (an environment?): $(cat "$T/$n.out")"
	[ "$(grep -c '^build-env.sh: error:' "$T/$n.err")" -ge 1 ] || bad "$n: no error line"
done

echo "== run-vm.sh says build-env.sh's reason"
# QEMU=true: the check for QEMU passes; build-env.sh fails before a boot
rv() { # NAME SCSITUNE [VAR=VALUE...]
	local name=$1 bin=$2
	shift 2
	newcache "$T/$name.cache"
	env QEMU=true SCSITUNE_VM_CACHE="$T/$name.cache" "$@" "$here/run-vm.sh" "$bin" detect "$T/$name.vm" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
rv rv-noexec "$T/scsitune.noexec" SCSITUNE_VM_KERNEL_DEB="$T/kernel.deb"
expect rv-noexec 1 '^run-vm.sh: detect: FAIL: build-env.sh exited with 1: .*scsitune.noexec is not an executable file$' "$T/rv-noexec.err"
rv rv-noapt "$scsitune" PATH="$T/noapt:$PATH"
expect rv-noapt 1 '^run-vm.sh: detect: FAIL: build-env.sh exited with 1: cannot resolve linux-image-amd64' "$T/rv-noapt.err"
rv rv-badawk "$scsitune" PATH="$T/badawk:$PATH" SCSITUNE_VM_KERNEL_DEB="$T/kernel.deb"
expect rv-badawk 1 '^run-vm.sh: detect: FAIL: build-env.sh exited with 1: line [0-9]+: exit status 2 of: awk ' "$T/rv-badawk.err"
[ -s "$T/rv-badawk.vm/build-env.log" ] && ok "rv-badawk: build-env.sh's messages kept in OUTDIR/build-env.log" ||
	bad "rv-badawk: no OUTDIR/build-env.log"

echo "== rootfs/run.sh says build-image.sh's reason"
# stubs for the programs run.sh looks for first; build-image.sh fails on the
# missing sources file (as root) or on not being root, before any download
mkdir -p "$T/qemuimg"
printf '#!/bin/sh\nexit 1\n' >"$T/qemuimg/qemu-img"
chmod +x "$T/qemuimg/qemu-img"
mkdir -p "$T/rootfs.cache"
PATH="$T/qemuimg:$PATH" QEMU=true SCSITUNE_VM_CACHE=$T/rootfs.cache SCSITUNE_VM_SOURCES=$T/no-such.sources \
	"$here/rootfs/run.sh" "$scsitune" persist "$T/rootfs.vm" >"$T/rootfs.out" 2>"$T/rootfs.err"
echo $? >"$T/rootfs.rc"
if [ "$(id -u)" = 0 ]; then
	expect rootfs 1 '^run.sh: persist: FAIL: build-image.sh exited with 1: SCSITUNE_VM_SOURCES=.*no-such.sources: no such file$' "$T/rootfs.err"
else
	expect rootfs 1 '^run.sh: persist: FAIL: build-image.sh exited with 1: needs root' "$T/rootfs.err"
fi

echo "== Secure Boot: run.sh's firmware checks, esp.sh and mokmanager.py say why"
# (before the image: no build-image.sh runs in these)
PATH="$T/qemuimg:$PATH" QEMU=true SCSITUNE_VM_FIRMWARE=uefi \
	"$here/rootfs/run.sh" "$scsitune" persist "$T/fw.vm" >"$T/fw-name.out" 2>"$T/fw-name.err"
echo $? >"$T/fw-name.rc"
expect fw-name 64 '^run.sh: SCSITUNE_VM_FIRMWARE=uefi: bios or secureboot$' "$T/fw-name.err"
PATH="$T/qemuimg:$PATH" QEMU=true SCSITUNE_VM_FIRMWARE=secureboot SCSITUNE_VM_OVMF_CODE=$T/no-such.fd \
	"$here/rootfs/run.sh" "$scsitune" persist "$T/fw.vm" >"$T/fw-ovmf.out" 2>"$T/fw-ovmf.err"
echo $? >"$T/fw-ovmf.rc"
expect fw-ovmf 1 "^run.sh: FAIL: $T/no-such.fd not found \(apt-get install ovmf" "$T/fw-ovmf.err"
mkdir -p "$T/kdir"
echo 'root=UUID=x ro' >"$T/kdir/cmdline" && echo k >"$T/kdir/vmlinuz"
"$here/rootfs/esp.sh" "$T/kdir" "$T/esp.img" >"$T/esp-noinitrd.out" 2>"$T/esp-noinitrd.err"
echo $? >"$T/esp-noinitrd.rc"
expect esp-noinitrd 1 "^esp.sh: $T/kdir/initrd.img: missing or empty" "$T/esp-noinitrd.err"
echo i >"$T/kdir/initrd.img"
SCSITUNE_VM_SHIM=$T/no-shim.efi "$here/rootfs/esp.sh" "$T/kdir" "$T/esp.img" >"$T/esp-noshim.out" 2>"$T/esp-noshim.err"
echo $? >"$T/esp-noshim.rc"
expect esp-noshim 1 "^esp.sh: $T/no-shim.efi not found \(apt-get install shim-signed" "$T/esp-noshim.err"
echo pw >"$T/mok.pw"
mm() { # NAME DEADLINE COMMAND...: mokmanager.py driving COMMAND (it appends -serial stdio)
	local name=$1 dl=$2
	shift 2
	python3 "$here/rootfs/mokmanager.py" --password-file "$T/mok.pw" --console "$T/$name.console" --log "$T/$name.log" \
		--qemu-log "$T/$name.qemu" --time "$T/$name.time" --deadline "$dl" -- "$@" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
mm mm-exit 60 sh -c 'echo BdsDxe: booting'
expect mm-exit 1 "^mokmanager.py: FAIL: QEMU exited \(status 0\) before MokManager's prompt screen" "$T/mm-exit.err"
mm mm-late 2 sh -c 'echo BdsDxe: booting; exec sleep 60'
expect mm-late 1 "^mokmanager.py: FAIL: MokManager's prompt screen .* not seen within 2 s" "$T/mm-late.err"
grep -q 'BdsDxe: booting' "$T/mm-late.log" && ok "mm-late: the console's last text in its log" || bad "mm-late: no console text in $T/mm-late.log"

echo "== two build-env.sh at once on one fresh cache"
c=$T/shared.cache
newcache "$c"
# what a run killed while unpacking leaves: a tree without .done, a temporary directory
sum=$(sha256sum "$T/kernel.deb" | cut -c1-12)
mkdir -p "$c/kernel-linux-image-$R-$sum/lib" "$c/.unpack.killed/boot"
declare -A pid
for v in a b; do
	SCSITUNE_VM_CACHE=$c SCSITUNE_VM_ENV=$T/env-$v SCSITUNE_VM_KERNEL_DEB=$T/kernel.deb \
		"$here/build-env.sh" "$scsitune" >"$T/par-$v.out" 2>"$T/par-$v.err" &
	pid[$v]=$!
done
for v in a b; do
	wait "${pid[$v]}"
	echo $? >"$T/par-$v.rc"
done
for v in a b; do
	if [ "$(cat "$T/par-$v.rc")" = 0 ] && [ "$(tail -1 "$T/par-$v.out")" = "$T/env-$v" ] &&
		[ -s "$T/env-$v/initrd.cpio" ] && [ "$(cat "$T/env-$v/release")" = "$R" ]; then
		ok "par-$v: exit 0, its own environment $T/env-$v (release $R)"
	else
		bad "par-$v: exit $(cat "$T/par-$v.rc"), stdout '$(tail -1 "$T/par-$v.out")':"
		sed 's/^/      /' "$T/par-$v.err"
	fi
done
n=$(cat "$T"/par-?.err | grep -c "unpacking $T/kernel.deb")
[ "$n" = 1 ] && ok "the kernel package unpacked once between the two" || bad "the kernel package unpacked $n times"
n=$(cat "$T"/par-?.err | grep -c "unpacking $c/irqbalance_")
[ "$n" = 1 ] && ok "irqbalance's package unpacked once between the two" || bad "irqbalance's package unpacked $n times"
k=$c/kernel-linux-image-$R-$sum
[ -f "$k/.done" ] && [ -f "$k/boot/vmlinuz-$R" ] && [ -f "$k/lib/modules/$R/modules.dep" ] &&
	ok "the partial tree was replaced by a whole one (.done, vmlinuz, modules.dep)" ||
	bad "the kernel tree: $(ls -a "$k" 2>&1 | tr '\n' ' ')"
left=$(cd "$c" && ls -d .unpack.* .download.* 2>/dev/null)
[ -z "$left" ] && ok "no temporary directory left in the cache" || bad "left in the cache: $left"
# (named by the package's Version: 1)
[ -f "$c/irqbalance-1/.done" ] && [ -x "$c/irqbalance-1/usr/sbin/irqbalance" ] && ok "irqbalance unpacked whole" ||
	bad "irqbalance: $(ls -a "$c" | tr '\n' ' ')"

if [ "$fails" -eq 0 ]; then
	echo "test-helpers.sh: all passed"
	exit 0
fi
echo "test-helpers.sh: $fails failed"
exit 1
