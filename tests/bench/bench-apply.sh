#!/bin/bash
# bench-apply.sh -- time and memory of `scsitune apply`, `verify` and
# `revert` of the whole plan on a large host (4 mpi3mr HBAs, 4,096 SAS disks,
# 64 CPUs on 2 nodes, built by tests/fixtures/mkfixture.py; Debian 12's
# /etc/default/irqbalance in it), next to the floor: the same writes done by
# a shell loop (no reads, no journal, no checks) in the same run.
#
#   tests/bench/bench-apply.sh [--hbas N] [--disks N] [--runs N] [--dir DIR] [--keep]
#                              [--root TREE]
# --root: an existing tree from bench-tree.sh (same --hbas and --disks); it is
# left as it was found (every run is reverted and checked byte-identical).
#
# SCSITUNE names the binary (default ./build/scsitune). Prints wall time per
# run (median), syscalls per setting (strace -c -f of one apply), peak RSS,
# and the goal (apply of the whole plan under one second) as met / not met.
# Never fails on speed: exits 1 only when a command fails or a result is
# wrong (apply not all applied, verify not 0 after apply, the tree not
# byte-identical after revert), 64 on bad usage.
set -euo pipefail
export LC_ALL=C

hbas=4 disks=4096 runs=3 dir=${BENCH_DIR:-} keep='' given_root=''
while [ $# -gt 0 ]; do
	case $1 in
	--hbas) hbas=${2:?}; shift 2 ;;
	--disks) disks=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--dir) dir=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--root) given_root=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "bench-apply.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
for n in "$hbas" "$disks" "$runs"; do
	case $n in '' | *[!0-9]* | 0) echo "bench-apply.sh: not a positive number: $n" >&2; exit 64 ;; esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/bench
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-apply.sh: FAIL: $*" >&2; exit 1; }
[ -x "$scsitune" ] || die "no scsitune binary at $scsitune (build it or set SCSITUNE)"
for tool in python3 strace; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (package time)"

# The tree: made by bench-tree.sh (in --dir / $BENCH_DIR, else /dev/shm when
# it has room) unless --root names one; removed at the end unless --keep.
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-apply.XXXXXX")
tree=$work/tree
cleanup() {
	if [ -z "$given_root" ]; then
		if [ -n "$keep" ]; then echo "kept $(readlink -f "$tree" 2>/dev/null)" >&2; else "$top/tests/bench/bench-tree.sh" remove "$tree"; fi
	fi
	rm -rf "$work"
}
trap cleanup EXIT
state=$work/state
if [ -n "$given_root" ]; then
	root=$(readlink -f "$given_root")
	[ -d "$root/sys/block" ] || die "--root $given_root: not a bench tree (no sys/block)"
	[ ! -e "$root/etc/default/irqbalance" ] || die "--root $given_root: already has etc/default/irqbalance (a run left behind?)"
	trap 'rm -f "$root/etc/default/irqbalance"; cleanup' EXIT
else
	BENCH_DIR=$dir "$top/tests/bench/bench-tree.sh" make "$tree" --hbas "$hbas" --disks "$disks" >/dev/null ||
		die "making the bench tree failed"
	root=$(readlink -f "$tree")
fi
mkdir -p "$root/etc/default"
cp "$top/tests/apply/irqbalance.default" "$root/etc/default/irqbalance"
st() { "$scsitune" --sysroot "$root" "$@"; }
profile=(--profile-dir "$top/profiles" --profile "$here/bench-all-disks")

# What apply and revert may touch: every disk's queue attributes, the IRQ
# affinities, the irqbalance file (python: a find over the 1.5M-inode tree
# takes 10 s, these 25k reads well under one).
snap() {
	python3 - "$root" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
h = hashlib.sha256()
for d in sorted(os.listdir(f"{root}/sys/block")):
    q = f"{root}/sys/block/{d}/queue"
    for a in ("scheduler", "nr_requests", "rq_affinity", "nomerges", "add_random", "read_ahead_kb"):
        with open(f"{q}/{a}", "rb") as f:
            h.update(f"{d}/{a}=".encode() + f.read())
for i in sorted(os.listdir(f"{root}/proc/irq")):
    p = f"{root}/proc/irq/{i}/smp_affinity_list"
    if os.path.exists(p):
        with open(p, "rb") as f:
            h.update(f"{i}=".encode() + f.read())
with open(f"{root}/etc/default/irqbalance", "rb") as f:
    h.update(f.read())
print(h.hexdigest())
PY
}
before=$(snap)

st apply "${profile[@]}" --dry-run -o json >"$work/plan.json" || die "apply --dry-run failed"
read -r n_change n_rows < <(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(d["summary"]["change"], len(d["changes"]))' "$work/plan.json")
[ "$n_change" -ge "$disks" ] || die "the plan has $n_change changes for $disks disks"
# The floor's input: path and value of every change.
python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["changes"]:
    if c["state"] == "change" and c["path"].startswith(("/sys/", "/proc/")): print(c["path"], c["desired"])' \
	"$work/plan.json" >"$work/writes.txt"

timed() { # NAME EXPECTED_RC CMD...: wall ms and peak RSS KiB appended to $work/NAME
	local name=$1 want=$2 rc=0
	shift 2
	/usr/bin/time -f '%e %M' -o "$work/time.1" "$@" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq "$want" ] || die "$name exited $rc, want $want: $(head -3 "$work/err")"
	awk '{ printf "%d %d\n", $1 * 1000, $2 }' "$work/time.1" >>"$work/$name"
}
for ((i = 0; i < runs; i++)); do
	timed apply 0 "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state"
	grep -q "^Applied $n_change of $n_change; 0 failed" <(head -3 "$work/out") || die "apply: not every change applied: $(head -3 "$work/out")"
	timed verify 0 "$scsitune" --sysroot "$root" verify --state-dir "$state"
	timed revert 0 "$scsitune" --sysroot "$root" revert --state-dir "$state"
	[ "$(snap)" = "$before" ] || die "the tree is not byte-identical after revert (run $i)"
done
# Syscalls per setting: one apply under strace, then revert.
rc=0
strace -f -c -o "$work/strace" "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state" \
	>"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 0 ] || die "apply under strace exited $rc: $(tail -3 "$work/err") $(grep -v '^applied\|^skipped\|^already\|^ ' "$work/out" | tail -5)"
calls=$(awk '$NF == "total" { print $(NF-2) }' "$work/strace")
st revert --state-dir "$state" >/dev/null || die "revert after the strace run failed"
[ "$(snap)" = "$before" ] || die "the tree is not byte-identical after revert (strace run)"
# The floor: the same writes from a shell loop.
floor() { while read -r p v; do printf '%s\n' "$v" >"$root$p"; done <"$work/writes.txt"; }
for ((i = 0; i < runs; i++)); do
	a=$(date +%s%N)
	floor
	b=$(date +%s%N)
	echo "$(((b - a) / 1000000)) 0" >>"$work/floor"
	st revert --state-dir "$state" >/dev/null 2>&1 || true # no journal: nothing to do
	python3 -c 'import json,sys
for c in json.load(open(sys.argv[1]))["changes"]:
    if c["state"] == "change" and c["path"].startswith(("/sys/", "/proc/")): print(c["path"], c["current"])' \
		"$work/plan.json" | while read -r p v; do printf '%s\n' "$v" >"$root$p"; done
done

med() { sort -n "$work/$1" | awk '{ a[NR] = $1; m = ($2 > m ? $2 : m) } END { printf "%d %d\n", a[int((NR + 1) / 2)], m }'; }
echo "bench host: $hbas mpi3mr HBAs, $disks disks; plan: $n_rows rows, $n_change changes; $runs runs each (median wall, peak RSS)"
printf '%-22s %10s %12s\n' step "wall ms" "peak RSS"
for s in apply verify revert; do
	read -r ms kb < <(med "$s")
	printf '%-22s %10d %9.1f MB\n' "scsitune $s" "$ms" "$(echo "$kb" | awk '{ print $1 / 1024 }')"
done
read -r fms _ < <(med floor)
printf '%-22s %10d %12s\n' "floor (shell writes)" "$fms" "-"
read -r ams akb < <(med apply)
awk -v c="$calls" -v n="$n_change" -v ms="$ams" -v f="$fms" -v kb="$akb" 'BEGIN {
	printf "apply: %.1f syscalls per setting (%d in all, strace -c -f)\n", c / n, c
	printf "apply/floor ratio %.2f (the floor writes only; apply also reads the host, journals, reads back)\n", ms / (f > 0 ? f : 1)
	printf "apply of the whole plan %d ms   goal < 1000 ms: %s\n", ms, (ms < 1000 ? "met" : "NOT MET")
	printf "apply peak RSS %.1f MB         (context: detect alone on this tree, tests/bench/bench-detect.sh)\n", kb / 1024
}'
