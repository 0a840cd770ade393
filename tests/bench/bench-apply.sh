#!/bin/bash
# bench-apply.sh -- time and memory of `scsitune apply`, `verify` and
# `revert` of the whole plan on a large host (4 mpi3mr HBAs, 4,096 SAS disks,
# 64 CPUs on 2 nodes, built by tests/fixtures/mkfixture.py; Debian 12's
# /etc/default/irqbalance in it), next to the floor: the same writes done by
# a minimal C program (bench-writer: open, write, close per setting, paths
# and values from the dry-run's JSON; no reads, journal or checks) and
# `detect` on the same tree, in the same run.
#
#   tests/bench/bench-apply.sh [--hbas N] [--disks N] [--runs N] [--dir DIR] [--keep]
#                              [--root TREE]
# --root: an existing tree from bench-tree.sh (same --hbas and --disks); it is
# left as it was found (every run is reverted and checked byte-identical).
#
# SCSITUNE names the binary (default ./build/scsitune), BENCH_WRITER the
# floor (default ./build/tests/bench-writer). Prints median wall time (and CPU)
# of each step over --runs runs (default 5), syscalls per setting (strace -c
# -f), peak RSS (/usr/bin/time %M, -v's "Maximum resident set size"), and the
# goals of issue 33 as met / not met: apply's writing phase (apply minus its
# own --dry-run on the same tree) within 1.2 x the C writer's writes (its
# write phase, without its start and JSON parse), revert of the whole plan
# within 1.5 x them, apply peak RSS under 64 MB, verify no slower than
# detect (issue 12's); syscalls per setting beside, no goal. Never fails on speed: exits 1 only when a command fails or a result
# is wrong (apply not all applied, verify not 0 after apply, the writer not
# writing every change, the tree not byte-identical after a revert or after
# the floor is undone), 64 on bad usage. The figures also go to the results
# file, $BENCH_RESULTS (lib-results.sh).
set -euo pipefail
export LC_ALL=C

hbas=4 disks=4096 runs=5 dir=${BENCH_DIR:-} keep='' given_root=''
while [ $# -gt 0 ]; do
	case $1 in
	--hbas) hbas=${2:?}; shift 2 ;;
	--disks) disks=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--dir) dir=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--root) given_root=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,27p' "$0"; exit 0 ;;
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
# shellcheck source=tests/bench/lib-results.sh
. "$here/lib-results.sh"
bench_results_init apply "$top"
[ -x "$scsitune" ] || die "no scsitune binary at $scsitune (build it or set SCSITUNE)"
writer=${BENCH_WRITER:-$top/build/tests/bench-writer}
[ -x "$writer" ] || die "no bench-writer at $writer (cmake --build build, or set BENCH_WRITER)"
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
restore_tree() {
	[ ! -e "$state/journal.json" ] || "$scsitune" --sysroot "$root" revert --force --state-dir "$state" >/dev/null 2>&1 || true
	[ ! -e "$work/floored" ] || unfloor || true
}
if [ -n "$given_root" ]; then
	root=$(readlink -f "$given_root")
	[ -d "$root/sys/block" ] || die "--root $given_root: not a bench tree (no sys/block)"
	[ ! -e "$root/etc/default/irqbalance" ] || die "--root $given_root: already has etc/default/irqbalance (a run left behind?)"
	# A run cut short leaves the tree as it found it: what apply wrote is reverted
	# (its journal), what the floor wrote is put back (saved.json).
	trap 'restore_tree; rm -f "$root/etc/default/irqbalance"; cleanup' EXIT
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
# affinities, the irqbalance file (snap-tree.py --irqs).
snap() { python3 "$here/snap-tree.py" "$root" --irqs; }
before=$(snap)

st apply "${profile[@]}" --dry-run -o json >"$work/plan.json" || die "apply --dry-run failed"
read -r n_change n_rows < <(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); print(d["summary"]["change"], len(d["changes"]))' "$work/plan.json")
[ "$n_change" -ge "$disks" ] || die "the plan has $n_change changes for $disks disks"
# The floor: what the writer changes (the files' text: a scheduler list becomes one word), kept to put back.
python3 - "$work/plan.json" "$root" "$work/saved.json" <<'PY'
import json, sys
plan, root, saved = sys.argv[1:]
paths = [c["path"] for c in json.load(open(plan))["changes"]
         if c["state"] == "change" and c["path"].startswith(("/sys/", "/proc/"))]
json.dump({p: open(root + p).read() for p in paths}, open(saved, "w"))
PY
n_writes=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$work/saved.json")
unfloor() {
	python3 -c 'import json,sys
for p, v in json.load(open(sys.argv[2])).items(): open(sys.argv[1] + p, "w").write(v)' "$root" "$work/saved.json"
}

timed() { # NAME EXPECTED_RC CMD...: wall ms (to 0.1 ms), peak RSS KiB and CPU ms appended to $work/NAME (lib-results.sh)
	local name=$1 want=$2 rc=0
	shift 2
	bench_time "$work/out" "$work/err" "$work/time.1" "$@" || rc=$?
	[ "$rc" -eq "$want" ] || die "$name exited $rc, want $want: $(head -3 "$work/err")"
	cat "$work/time.1" >>"$work/$name"
}
# Warm-up: one of each, unrecorded.
"$scsitune" --sysroot "$root" detect -o json >/dev/null 2>&1 || die "detect failed"
touch "$work/floored"
"$writer" "$work/plan.json" "$root" >/dev/null || die "bench-writer failed"
unfloor
for ((i = 0; i < runs; i++)); do
	# the plan alone, on the same tree and state: what apply does before its first write
	timed dryrun 0 "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state" --dry-run
	timed apply 0 "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state"
	grep -q "^Applied $n_change of $n_change; 0 failed" <(head -3 "$work/out") || die "apply: not every change applied: $(head -3 "$work/out")"
	timed verify 0 "$scsitune" --sysroot "$root" verify --state-dir "$state"
	timed revert 0 "$scsitune" --sysroot "$root" revert --state-dir "$state"
	[ "$(snap)" = "$before" ] || die "the tree is not byte-identical after revert (run $i)"
	timed detect 0 "$scsitune" --sysroot "$root" detect -o json
	touch "$work/floored"
	timed floor 0 "$writer" "$work/plan.json" "$root"
	grep -q "^$n_writes writes" "$work/out" || die "bench-writer: not $n_writes writes: $(cat "$work/out")"
	awk '{ printf "%s 0 0\n", $5 }' "$work/out" >>"$work/floor-writes"
	unfloor
	rm -f "$work/floored"
	[ "$(snap)" = "$before" ] || die "the tree is not byte-identical after the floor was undone (run $i)"
done
# Syscalls per setting: one apply under strace, then revert; and the floor's.
rc=0
strace -f -c -o "$work/strace" "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state" \
	>"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 0 ] || die "apply under strace exited $rc: $(tail -3 "$work/err") $(grep -v '^applied\|^skipped\|^already\|^ ' "$work/out" | tail -5)"
calls=$(awk '$NF == "total" { print $(NF-2) }' "$work/strace")
st revert --state-dir "$state" >/dev/null || die "revert after the strace run failed"
[ "$(snap)" = "$before" ] || die "the tree is not byte-identical after revert (strace run)"
touch "$work/floored"
strace -f -c -o "$work/strace.floor" "$writer" "$work/plan.json" "$root" >/dev/null 2>&1 || die "bench-writer under strace failed"
unfloor
rm -f "$work/floored"
floor_calls=$(awk '$NF == "total" { print $(NF-2) }' "$work/strace.floor")

med() { # NAME: median wall ms, peak RSS KiB (the largest), median CPU ms
	python3 -c 'import statistics,sys
t = [[float(x) for x in l.split()] for l in open(sys.argv[1]) if l.strip()]
print("%.1f %d %.1f" % (statistics.median(x[0] for x in t), max(x[1] for x in t), statistics.median(x[2] for x in t)))' "$work/$1"
}
echo "bench host: $hbas mpi3mr HBAs, $disks disks; plan: $n_rows rows, $n_change changes ($n_writes kernel attributes); $runs runs each (median wall and CPU, peak RSS); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-26s %9s %9s %12s\n' step "wall ms" "CPU ms" "peak RSS"
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
read -r fms fkb fcpu < <(med floor)
bench_result disks "$disks" disks
bench_result cpus "$(nproc)" cpus
bench_result changes "$n_change" settings
for s in dryrun apply verify revert detect floor; do
	read -r ms kb cpu < <(med "$s")
	label="scsitune $s"
	[ "$s" != floor ] || label="floor (C writer, whole)"
	printf '%-26s %9.1f %9.1f %9.1f MB\n' "$label" "$ms" "$cpu" "$(echo "$kb" | awk '{ print $1 / 1024 }')"
	# each step of scsitune; apply's beside the floor's figure of the same kind (its peer)
	case $s in
	apply)
		bench_result apply.wall-median "$ms" ms - - c-writer "$fms"
		bench_result apply.cpu-median "$cpu" ms - - c-writer "$fcpu"
		;; # apply.peak-rss: with its goal, below
	dryrun | verify | revert | detect)
		bench_result "$s.wall-median" "$ms" ms
		bench_result "$s.cpu-median" "$cpu" ms
		bench_result "$s.peak-rss" "$(mib "$kb")" MiB
		;;
	esac
done
read -r fw _ < <(med floor-writes)
printf '%-26s %9.1f %9s %12s\n' "floor (its writes alone)" "$fw" - -
bench_result floor.writes-alone.wall-median "$fw" ms
read -r ams akb _ < <(med apply)
read -r vms _ < <(med verify)
read -r dms _ < <(med detect)
read -r pms _ < <(med dryrun)
read -r rms _ < <(med revert)
# The goals' lines also go to $work/rec (figure, value, unit, goal, verdict,
# peer, peer's value) for the results file, with the verdict printed.
awk -v c="$calls" -v fc="$floor_calls" -v n="$n_change" -v nw="$n_writes" -v ms="$ams" -v f="$fms" -v fw="$fw" \
	-v kb="$akb" -v fkb="$fkb" -v v="$vms" -v d="$dms" -v p="$pms" -v rv="$rms" -v rec="$work/rec" 'BEGIN {
	f = f > 0 ? f : 1; fw = fw > 0 ? fw : 1
	# the writer figure: its writes alone (not its start and its JSON parse, as
	# the planning of apply is not counted: its dry-run is subtracted)
	g1 = ((ms - p) / fw <= 1.2 ? "met" : "NOT MET"); g5 = (rv / fw <= 1.5 ? "met" : "NOT MET")
	g3 = (kb / 1024 < 64 ? "met" : "NOT MET"); g4 = (v <= d ? "met" : "NOT MET")
	printf "goals (issue 33; verify / detect: issue 12):\n"
	printf "  apply - its dry-run / the writer'"'"'s writes %5.2f x  goal <= 1.2 x: %s   (%.1f - %.1f ms vs %.1f ms)\n", (ms - p) / fw, g1, ms, p, fw
	printf "  revert / the writer'"'"'s writes  %5.2f x  goal <= 1.5 x: %s   (%.1f ms)\n", rv / fw, g5, rv
	printf "  apply peak RSS   %6.1f MB  goal < 64 MB: %s\n", kb / 1024, g3
	printf "  verify / detect     %5.2f x  goal <= 1.0 x: %s   (%.1f ms vs %.1f ms)\n", v / d, g4, v, d
	printf "  beside them, no goal: apply / the whole writer %.2f x (its JSON parse included), apply - its dry-run / the whole writer %.2f x; %.1f syscalls per setting (%d in all, strace -c -f; the writer %.1f per write)\n", ms / f, (ms - p) / f, c / n, c, fc / nw
	printf "ratio.apply-writing-vs-writes\t%.3f\tx\t<=1.2\t%s\tc-writer\t-\n", (ms - p) / fw, (g1 == "met" ? "met" : "not-met") >rec
	printf "ratio.revert-vs-writes\t%.3f\tx\t<=1.5\t%s\tc-writer\t-\n", rv / fw, (g5 == "met" ? "met" : "not-met") >rec
	printf "ratio.apply-writing-vs-c-writer\t%.3f\tx\t-\t-\tc-writer\t-\n", (ms - p) / f >rec
	printf "ratio.apply-vs-c-writer\t%.3f\tx\t-\t-\tc-writer\t-\n", ms / f >rec
	printf "ratio.apply-vs-writes-alone\t%.3f\tx\t-\t-\tc-writer\t-\n", ms / fw >rec
	printf "syscalls-per-setting\t%.2f\tcalls/setting\t-\t-\tc-writer\t%.2f\n", c / n, fc / nw >rec
	printf "apply.peak-rss\t%.1f\tMiB\t<64\t%s\tc-writer\t%.1f\n", kb / 1024, (g3 == "met" ? "met" : "not-met"), fkb / 1024 >rec
	printf "ratio.verify-vs-detect\t%.3f\tx\t<=1.0\t%s\t-\t-\n", v / d, (g4 == "met" ? "met" : "not-met") >rec
}'
bench_results_from "$work/rec"
