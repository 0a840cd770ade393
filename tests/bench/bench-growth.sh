#!/bin/bash
# bench-growth.sh -- how `scsitune detect` and `apply` grow with the host:
# the bench host (tests/fixtures/mkfixture.py bench: 4 mpi3mr HBAs, 64 CPUs
# on 2 nodes) made with 256, 1,024, 4,096 and 16,384 disks, one after the
# other, and on each: detect -o json, and apply + revert of the whole plan
# (tests/bench/bench-all-disks), medians of --runs runs; and lsscsi -k -y
# on the same tree, the peer's own growth: what the tree and the kernel's
# lookups cost as the host grows, beside what scsitune adds. See
# tests/bench/README.md.
#
#   tests/bench/bench-growth.sh [--sizes "256 1024 4096 16384"] [--runs N]
#                               [--root N=TREE]... [--dir DIR]
# --root N=TREE: a bench tree of N disks made before (bench-tree.sh make
# TREE --disks N) used for that size and left in place; when TREE is not
# there, the script makes its own for that size as for the others (said in
# its line). Any other size: made with bench-tree.sh and removed after.
#
# SCSITUNE names the binary (default ./build/scsitune). Prints, per size,
# wall time per disk (µs) and peak RSS (and RSS per disk) of detect and
# apply, and the goal of issue 33: from one size to the next, time per
# disk and peak RSS per disk at most 1.1 x the smaller size's (with
# detect's growth beside lsscsi's on the same trees: what the kernel's
# lookups in a larger tree cost both). Never fails
# on speed: exits 1 only when a command fails or an output is wrong (detect
# lists every disk; apply applies every change; revert leaves the queue
# attributes as before), 64 on bad usage. The figures also go to the
# results file, $BENCH_RESULTS (lib-results.sh).
set -euo pipefail
export LC_ALL=C
orig=("$@")

sizes="256 1024 4096 16384" runs=5 dir=${BENCH_DIR:-}
declare -A given=()
usage() { echo "usage: bench-growth.sh [--sizes \"N ...\"] [--runs N] [--root N=TREE] [--dir DIR]" >&2; exit 64; }
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) [ $# -ge 2 ] || usage; sizes=$2; shift 2 ;;
	--runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
	--root) [ $# -ge 2 ] && [[ $2 == *=* ]] || usage; given[${2%%=*}]=${2#*=}; shift 2 ;;
	--dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) usage ;;
	esac
done
for n in $sizes $runs "${!given[@]}"; do
	case $n in '' | *[!0-9]* | 0) echo "bench-growth.sh: not a positive number: $n" >&2; exit 64 ;; esac
done

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-growth.sh: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib-results.sh
. "$here/lib-results.sh"
bench_results_init growth "$top"
[ -x "$scsitune" ] || die "no scsitune binary at $scsitune (build it or set SCSITUNE)"
# The trees: 16,384 disks are about 14 GiB and 6.5M inodes on tmpfs, more
# inodes than /dev/shm has on a 24 GiB machine (3M). As root, each tree this
# script makes goes to a tmpfs of its own size mounted in a private mount
# namespace (unshare -m): nothing of it is seen outside this script, and it
# is gone with it (umount, instead of minutes of rm -rf). Otherwise
# bench-tree.sh's choice (/dev/shm when it fits, else $TMPDIR).
if [ -z "${BENCH_GROWTH_NS:-}" ] && [ -z "$dir" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	export BENCH_GROWTH_NS=1
	exec unshare --mount --propagation private -- "$0" "${orig[@]}"
fi
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (Debian package time)"
command -v python3 >/dev/null || die "python3 is not installed"
command -v lsscsi >/dev/null || die "lsscsi is not installed"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-growth.XXXXXX")
tree=$work/tree
root=''
cleanup() {
	if [ -n "$root" ] && [ -e "$work/state/journal.json" ]; then
		"$scsitune" --sysroot "$root" revert --force --state-dir "$work/state" >/dev/null 2>&1 || true
	fi
	[ -z "$root" ] || rm -f "$root/etc/default/irqbalance"
	# A tree on our own tmpfs goes with an umount (an rm -rf of 16,384 disks takes minutes).
	if [ -n "${BENCH_GROWTH_NS:-}" ] && mountpoint -q "$work/mnt" 2>/dev/null; then
		rm -f "$tree"
		umount "$work/mnt" 2>/dev/null || umount -l "$work/mnt" || true
	fi
	"$top/tests/bench/bench-tree.sh" remove "$tree" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
profile=(--profile-dir "$top/profiles" --profile "$here/bench-all-disks")

# The queue attributes of every disk, hashed: what apply changes and revert puts back.
snap() { python3 "$here/snap-tree.py" "$root"; }
# timed NAME CMD...: wall µs (date), peak RSS KiB (/usr/bin/time) appended to $work/NAME.
timed() {
	local name=$1 t0 t1 rc=0
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%M' -o "$work/rss" "$@" >"$work/out" 2>"$work/err" || rc=$?
	t1=$(date +%s%N)
	[ "$rc" -eq 0 ] || die "$name exited $rc: $(head -3 "$work/err")"
	echo "$(((t1 - t0) / 1000)) $(cat "$work/rss")" >>"$work/$name"
}
med() { # FILE: median wall µs, median peak RSS KiB
	python3 -c 'import statistics,sys
t = [[int(x) for x in l.split()] for l in open(sys.argv[1]) if l.strip()]
print(int(statistics.median(x[0] for x in t)), int(statistics.median(x[1] for x in t)))' "$1"
}

echo "bench host: 4 mpi3mr HBAs, 64 CPUs on 2 nodes; sizes: $sizes disks; $runs runs each (medians); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/table"
for n in $sizes; do
	ours=1
	if [ -n "${given[$n]:-}" ] && [ -e "${given[$n]}" ]; then
		g=${given[$n]}
		[ -d "$g/sys/block" ] || die "--root $n=$g: not a bench tree (no sys/block)"
		[ ! -e "$g/etc/default/irqbalance" ] || die "--root $n=$g: already has etc/default/irqbalance (a run left behind?)"
		made="tree made before"
		ours=''
		root=$(readlink -f "$g")
	else
		t0=$(date +%s)
		tdir=$dir
		if [ -n "${BENCH_GROWTH_NS:-}" ]; then
			# 0.9 MB and 370 inodes per disk, measured; the memory must be there.
			kb=$((n * 950 + 512 * 1024))
			avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
			[ "$avail" -gt $((kb + 2 * 1024 * 1024)) ] ||
				die "the $n-disk tree needs about $((kb / 1048576)) GiB of tmpfs and 2 GiB beside; $((avail / 1048576)) GiB available (--sizes to leave it out)"
			mkdir -p "$work/mnt"
			mount -t tmpfs -o "size=${kb}k,nr_inodes=$((n * 400 + 200000)),mode=0755" bench-growth "$work/mnt"
			tdir=$work/mnt
		fi
		BENCH_DIR=$tdir "$top/tests/bench/bench-tree.sh" make "$tree" --disks "$n" >/dev/null ||
			die "making the $n-disk tree failed"
		made="tree made in $(($(date +%s) - t0)) s${given[$n]:+, none at ${given[$n]}}"
		root=$(readlink -f "$tree")
	fi
	have=$(find "$root/sys/block" -mindepth 1 -maxdepth 1 -name 'sd*' | wc -l)
	[ "$have" -eq "$n" ] || die "the $n-disk tree has $have disks in sys/block"
	mkdir -p "$root/etc/default"
	cp "$top/tests/apply/irqbalance.default" "$root/etc/default/irqbalance"
	before=$(snap)
	rm -f "$work/detect" "$work/apply" "$work/lsscsi"
	# Checked once: every disk listed, every change applied, reverted to the same bytes.
	"$scsitune" --sysroot "$root" detect -o json >"$work/detect.json" 2>"$work/err" || die "detect on $n disks failed: $(head -3 "$work/err")"
	got=$(python3 -c 'import json,sys; print(len({d["name"] for h in json.load(open(sys.argv[1]))["hbas"] for s in h["scsi_hosts"] for d in s["disks"]}))' "$work/detect.json")
	[ "$got" -eq "$n" ] || die "detect listed $got disks of $n"
	for ((i = 0; i < runs; i++)); do
		timed detect "$scsitune" --sysroot "$root" detect -o json
		timed lsscsi lsscsi -k -y "$root/sys"
		[ "$(grep -c ' disk ' "$work/out")" -eq "$n" ] || die "lsscsi listed $(grep -c ' disk ' "$work/out") disks of $n"
		timed apply "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$work/state"
		read -r _ a _ b _ < <(grep -m1 '^Applied ' "$work/out" | tr -d ';') || true
		[ -n "${a:-}" ] && [ "$a" = "${b:-}" ] && grep -q '^Applied [0-9]* of [0-9]*; 0 failed' "$work/out" ||
			die "apply on $n disks: not every change applied: $(head -3 "$work/out")"
		"$scsitune" --sysroot "$root" revert --state-dir "$work/state" >/dev/null 2>"$work/err" || die "revert on $n disks failed: $(head -3 "$work/err")"
		[ "$(snap)" = "$before" ] || die "the $n-disk tree is not as before after revert (run $i)"
	done
	read -r dus dkb < <(med "$work/detect")
	read -r aus akb < <(med "$work/apply")
	read -r lus _ < <(med "$work/lsscsi")
	echo "$n $dus $dkb $aus $akb $lus" >>"$work/table"
	printf '%6d disks (%s): detect %d ms, %.1f MB; apply %d ms, %.1f MB; lsscsi %d ms\n' "$n" "$made" $((dus / 1000)) \
		"$(awk -v k="$dkb" 'BEGIN { print k / 1024 }')" $((aus / 1000)) "$(awk -v k="$akb" 'BEGIN { print k / 1024 }')" $((lus / 1000))
	rm -f "$root/etc/default/irqbalance"
	root=''
	if [ -n "$ours" ] && [ -n "${BENCH_GROWTH_NS:-}" ]; then
		rm -f "$tree"
		umount "$work/mnt"
	elif [ -n "$ours" ]; then
		"$top/tests/bench/bench-tree.sh" remove "$tree"
	fi
done

case " $sizes " in
*" 16384 "*) ;;
*) echo "16384 disks: not in --sizes this run (its tree needs ~15 GiB of memory and ~7 min to make; CTest leaves it out of the CI budget; by hand: tests/bench/bench-growth.sh)" ;;
esac
# Per disk, and each size against the one before it; the same figures also to
# $work/rec (figure, value, unit, goal, verdict, peer, peer's value) for the
# results file, each ratio with its own verdict (the printed one is the step's).
awk -v rec="$work/rec" 'BEGIN {
	printf "\nper disk  %11s %11s %11s %11s %11s\n", "detect us", "detect KB", "apply us", "apply KB", "lsscsi us"
}
{
	n[NR] = $1; dt[NR] = $2 / $1; dr[NR] = $3 / $1; at[NR] = $4 / $1; ar[NR] = $5 / $1; lt[NR] = $6 / $1
	printf "%6d    %11.1f %11.1f %11.1f %11.1f %11.1f\n", $1, dt[NR], dr[NR], at[NR], ar[NR], lt[NR]
	printf "detect.time-per-disk@%d\t%.1f\tus/disk\t-\t-\tlsscsi\t%.1f\n", $1, dt[NR], lt[NR] >rec
	printf "detect.peak-rss-per-disk@%d\t%.2f\tKiB/disk\t-\t-\t-\t-\n", $1, dr[NR] >rec
	printf "apply.time-per-disk@%d\t%.1f\tus/disk\t-\t-\t-\t-\n", $1, at[NR] >rec
	printf "apply.peak-rss-per-disk@%d\t%.2f\tKiB/disk\t-\t-\t-\t-\n", $1, ar[NR] >rec
}
END {
	printf "goal (issue 33): time and peak RSS per disk, each size vs the last, <= 1.1 x\n"
	for (i = 2; i <= NR; i++) {
		r[1] = dt[i] / dt[i - 1]; r[2] = dr[i] / dr[i - 1]; r[3] = at[i] / at[i - 1]; r[4] = ar[i] / ar[i - 1]
		ok = 1
		for (k = 1; k <= 4; k++) if (r[k] > 1.1) ok = 0
		printf "  %5d -> %5d: detect %.2f x, RSS %.2f x; apply %.2f x, RSS %.2f x: %s\n", n[i - 1], n[i], \
			r[1], r[2], r[3], r[4], (ok ? "met" : "NOT MET")
		printf "  %14s  lsscsi on the same trees: %.2f x (detect against it: %.2f x)\n", "", lt[i] / lt[i - 1], r[1] / (lt[i] / lt[i - 1])
		step = n[i - 1] "-" n[i]
		split("detect.time-growth detect.peak-rss-growth apply.time-growth apply.peak-rss-growth", fig, " ")
		for (k = 1; k <= 4; k++)
			printf "%s@%s\t%.3f\tx\t<=1.1\t%s\t%s\t%s\n", fig[k], step, r[k], (r[k] <= 1.1 ? "met" : "not-met"), \
				(k == 1 ? "lsscsi" : "-"), (k == 1 ? sprintf("%.3f", lt[i] / lt[i - 1]) : "-") >rec
	}
}' "$work/table"
bench_result cpus "$(nproc)" cpus
[ ! -s "$work/rec" ] || bench_results_from "$work/rec"
