#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-payload.sh --root LINK PAYLOAD_OUT [--runs N]
# `scsitune payload verify` on the large host (bench-tree.sh: 4 mpi3mr HBAs,
# 4,096 disks), with the payload of payload/build (PAYLOAD_OUT) in place as
# install leaves it and as the kernel shows it once booted: the modules and
# manifest in lib/modules/R/updates/scsitune/, the depmod.d override and
# depmod's index (depmod -b), the kernel package in dpkg's status file and
# proc/version, sys/module/{scsi_mod,target_core_mod} with our version,
# srcversion, build-id note and taint OE, and iocounterbits 64 on every one of
# the 4,096 SCSI devices (verify reads them all). Times (wall, median of N
# runs after 2 warm-up runs, and peak RSS):
#   verify         payload verify (the installed manifest; every link: files,
#                  depmod.d, modprobe through libkmod, sys/module, iocounterbits)
#   verify-bundle  payload verify BUNDLE (the signature checked with libsodium,
#                  the bundle read in memory with libarchive, then the same)
#   detect         detect -o json (with the payload's state, from the same code)
# Goal (issue 33): payload verify under 50 ms. Prints figures; fails only when a
# command fails or says something else than "loaded". Everything it changes
# in the tree is put back at the end (the tree is shared with the other
# benchmarks). Needs minisign, depmod, objcopy, modinfo. The figures also go
# to the results file, $BENCH_RESULTS (lib-results.sh).
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
scsitune=${SCSITUNE:-$here/../../build/scsitune}
runs=10 root='' pout=''
die() { echo "bench-payload.sh: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib-results.sh
. "$here/lib-results.sh"
bench_results_init payload "$here/../.."
while [ $# -gt 0 ]; do
	case $1 in
	--root) root=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	*) pout=$1; shift ;;
	esac
done
[ -n "$root" ] && [ -n "$pout" ] || { echo "usage: bench-payload.sh --root LINK PAYLOAD_OUT [--runs N]" >&2; exit 64; }
root=$(readlink -f "$root")
[ -d "$root/sys/block" ] || die "--root: $root is not a bench tree"
[ -f "$pout/manifest.json" ] || die "$pout: no payload/build output"
for p in minisign depmod objcopy modinfo python3; do command -v "$p" >/dev/null || die "$p not found"; done
[ -x "$scsitune" ] || die "$scsitune is not an executable (SCSITUNE=...)"
R=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["release"])' "$pout/manifest.json")
V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["debian_version"])' "$pout/manifest.json")
[ "$(cat "$root/proc/sys/kernel/osrelease")" = "$R" ] ||
	die "the bench tree runs $(cat "$root/proc/sys/kernel/osrelease"), the payload is for $R"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-payload.XXXXXX")

# --- what is changed in the tree, kept to be put back --------------------------------
save=$work/save
mkdir -p "$save"
for p in "lib/modules/$R" etc/depmod.d proc/version var/lib/dpkg sys/module/scsi_mod sys/module/target_core_mod; do
	if [ -e "$root/$p" ]; then
		mkdir -p "$save/$(dirname "$p")"
		cp -a "$root/$p" "$save/$p"
	else
		echo "$p" >>"$save/absent"
	fi
done
for d in etc var var/lib; do [ -e "$root/$d" ] || echo "$d" >>"$save/created"; done
# the device entries are relative links inside the tree (mkfixture.py checks it)
grep -H . "$root"/sys/bus/scsi/devices/*/iocounterbits >"$save/iocounterbits" 2>/dev/null || true
restore() {
	for p in "lib/modules/$R" etc/depmod.d proc/version var/lib/dpkg sys/module/scsi_mod sys/module/target_core_mod; do
		rm -rf "${root:?}/$p"
		[ -e "$save/$p" ] && cp -a "$save/$p" "$root/$p"
	done
	# directories this script created, deepest first, when empty again
	[ -f "$save/created" ] && tac "$save/created" | while read -r d; do rmdir "${root:?}/$d" 2>/dev/null || true; done
	python3 - "$save/iocounterbits" <<-'PY'
		import sys
		for line in open(sys.argv[1]):
		    path, _, value = line.rstrip("\n").rpartition(":")
		    with open(path, "w") as f:
		        f.write(value + "\n")
	PY
	rm -rf "$work"
}
trap restore EXIT

# --- the payload, as install and a boot leave it ---------------------------------------
minisign -G -W -p "$work/k.pub" -s "$work/k.key" >/dev/null 2>&1
SOURCE_DATE_EPOCH=1700000000 "$scsitune" payload pack "$pout" --output "$work/payload.tar.zst" >/dev/null || die "payload pack"
minisign -S -s "$work/k.key" -m "$work/payload.tar.zst" >/dev/null 2>&1 || die "minisign -S"
u=$root/lib/modules/$R/updates/scsitune
rm -rf "$u" && mkdir -p "$u" "$root/etc/depmod.d" "$root/var/lib/dpkg"
cp "$pout"/modules/*.ko "$u/"
zstd -q -d -c "$work/payload.tar.zst" | tar -xO manifest.json >"$u/manifest.json"
printf 'override scsi_mod %s updates/scsitune\noverride target_core_mod %s updates/scsitune\n' "$R" "$R" \
	>"$root/etc/depmod.d/scsitune.conf"
depmod -b "$root" -C "$root/etc/depmod.d" "$R"
printf 'Package: linux-image-%s\nStatus: install ok installed\nVersion: %s\n' "$R" "$V" >"$root/var/lib/dpkg/status"
echo "Linux version $R (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian $V (2025-01-01)" >"$root/proc/version"
for m in scsi_mod target_core_mod; do
	d=$root/sys/module/$m
	mkdir -p "$d/notes"
	echo live >"$d/initstate"
	modinfo -F version "$u/$m.ko" >"$d/version"
	modinfo -F srcversion "$u/$m.ko" >"$d/srcversion"
	echo OE >"$d/taint"
	objcopy -O binary --only-section=.note.gnu.build-id "$u/$m.ko" "$d/notes/.note.gnu.build-id"
done
n=0
for f in "$root"/sys/bus/scsi/devices/*/iocounterbits; do
	echo 64 >"$f"
	n=$((n + 1))
done
[ "$n" -ge 4096 ] || die "only $n SCSI devices with iocounterbits in the tree"

# --- timing ------------------------------------------------------------------------------
# NAME EXPECTED_RC CMD...: wall ms (to 0.1 ms) and peak RSS KiB appended to $work/NAME (lib-results.sh)
timed() {
	local name=$1 want=$2 rc=0
	shift 2
	bench_time "$work/out" "$work/err" "$work/time.1" "$@" || rc=$?
	[ "$rc" -eq "$want" ] || die "$name exited $rc, want $want: $(head -3 "$work/err") $(grep -E 'DRIFT|PENDING|ERROR' "$work/out" | head -3)"
	cut -d' ' -f1,2 "$work/time.1" >>"$work/$name"
}
st() { "$scsitune" --sysroot "$root" "$@"; }
for i in 1 2; do st payload verify >/dev/null 2>&1 || true; done
for ((i = 0; i < runs; i++)); do
	timed verify 0 "$scsitune" --sysroot "$root" payload verify
	grep -q ": loaded$" "$work/out" || die "payload verify does not say loaded: $(head -1 "$work/out")"
	timed verify-bundle 0 "$scsitune" --sysroot "$root" payload verify "$work/payload.tar.zst" --trusted-key "$work/k.pub"
	timed detect 0 "$scsitune" --sysroot "$root" detect -o json
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["payload"]["verdict"] == "loaded"' "$work/out" ||
		die "detect -o json: payload.verdict is not loaded"
done
st -o json payload verify >"$work/verify.json"
python3 - "$work/verify.json" "$n" <<'PY' || die "payload verify -o json: not every link ok"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "loaded", d["verdict"]
io = [l for l in d["links"] if l["link"] == "iocounterbits"]
assert io and io[0]["actual"] == "%s of %s devices say 64" % (sys.argv[2], sys.argv[2]), io
bad = [l for l in d["links"] if l["state"] not in ("ok", "not-checked")]
assert not bad, bad
PY
median() { sort -n "$work/$1" | awk '{ v[NR] = $1; m[NR] = $2 } END { i = int((NR + 1) / 2); printf "%.1f ms (min %.1f, max %.1f), peak RSS %d KiB", v[i], v[1], v[NR], m[i] }'; }
echo "bench-payload.sh: payload verify on a host with $n SCSI devices, $runs runs each:"
echo "  payload verify          $(median verify)   (goal: < 50 ms)"
echo "  payload verify BUNDLE   $(median verify-bundle)"
echo "  detect -o json          $(median detect)"
med=$(sort -n "$work/verify" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
if awk -v m="$med" 'BEGIN { exit !(m < 50) }'; then echo "  goal met: $med ms < 50 ms"; else echo "  goal NOT met on this machine: $med ms >= 50 ms"; fi
# The same figures to the results file: median, min and max wall, the median run's peak RSS.
bench_result devices "$n" devices
bench_result cpus "$(nproc)" cpus
for name in verify verify-bundle detect; do
	read -r m lo hi kb < <(sort -n "$work/$name" | awk '{ v[NR] = $1; m[NR] = $2 } END { i = int((NR + 1) / 2); print v[i], v[1], v[NR], m[i] }')
	goal=- verdict=-
	if [ "$name" = verify ]; then
		goal='<50' verdict=not-met
		! awk -v m="$m" 'BEGIN { exit !(m < 50) }' || verdict=met
	fi
	bench_result "$name.wall-median" "$m" ms "$goal" "$verdict"
	bench_result "$name.wall-min" "$lo" ms
	bench_result "$name.wall-max" "$hi" ms
	bench_result "$name.peak-rss" "$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')" MiB
done
