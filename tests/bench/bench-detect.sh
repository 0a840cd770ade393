#!/bin/bash
# bench-detect.sh -- time and memory of `scsitune detect` on a large host
# (4 mpi3mr HBAs, 4096 SAS disks, 64 CPUs on 2 nodes, built by
# tests/fixtures/mkfixture.py), next to lsscsi and lsblk reading the same
# tree in the same run. See tests/bench/README.md.
#
#   tests/bench/bench-detect.sh [--hbas N] [--disks N] [--runs N] [--dir DIR]
#                               [--keep] [--no-scsitune] [--root TREE]
# --root: an existing tree from bench-tree.sh (made with the same --hbas and
# --disks), read and left in place; otherwise one is made and removed.
#
# SCSITUNE names the binary (default ./build/scsitune). Prints figures and the
# goals (no slower than lsscsi; peak RSS < 64 MB) as met / not met, but never
# fails on speed: it exits 1 only when a command fails or an output is wrong
# (disk counts, HBA count, warnings on a clean tree), 64 on bad usage.
set -euo pipefail
export LC_ALL=C

hbas=4 disks=4096 runs=10 dir=${BENCH_DIR:-} keep='' with_scsitune=1 given_root=''
while [ $# -gt 0 ]; do
	case $1 in
	--hbas) hbas=${2:?}; shift 2 ;;
	--disks) disks=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--dir) dir=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--no-scsitune) with_scsitune=; shift ;;
	--root) given_root=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
	*) echo "bench-detect.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
for n in "$hbas" "$disks" "$runs"; do
	case $n in '' | *[!0-9]*) echo "bench-detect.sh: not a number: $n" >&2; exit 64 ;; esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-detect.sh: FAIL: $*" >&2; exit 1; }
if [ -n "$with_scsitune" ] && [ ! -x "$scsitune" ]; then
	die "no scsitune binary at $scsitune (build it, set SCSITUNE, or use --no-scsitune)"
fi
for tool in python3 lsscsi lsblk; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done

# The tree: made by bench-tree.sh (in --dir / $BENCH_DIR, else /dev/shm when
# it has room) unless --root names one; removed at the end unless --keep.
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-detect.XXXXXX")
tree=$work/tree
cleanup() {
	if [ -z "$given_root" ]; then
		if [ -n "$keep" ]; then echo "kept $(readlink -f "$tree" 2>/dev/null)" >&2; else "$top/tests/bench/bench-tree.sh" remove "$tree"; fi
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# --- the host --------------------------------------------------------------
t0=$(date +%s%N)
if [ -n "$given_root" ]; then
	root=$(readlink -f "$given_root")
	[ -d "$root/sys/block" ] || die "--root $given_root: not a bench tree (no sys/block)"
else
	BENCH_DIR=$dir "$top/tests/bench/bench-tree.sh" make "$tree" --hbas "$hbas" --disks "$disks" >/dev/null ||
		die "making the bench tree failed"
	root=$(readlink -f "$tree")
fi
t1=$(date +%s%N)
case $root in *[[:space:]]*) die "the tree's path must not contain spaces (the timed commands are split on them): $root" ;; esac
entries=$(find "$root" | wc -l)
size=$(du -sh "$root" | cut -f1)
echo "bench host: $hbas mpi3mr HBAs, $disks disks, CPUs $(cat "$root/sys/devices/system/cpu/online")," \
	"nodes $(cat "$root/sys/devices/system/node/online"); $entries entries, $size;" \
	"${given_root:+given (--root $given_root), }generated in $(((t1 - t0) / 1000000)) ms"

# --- the commands, each checked once for errors and content ----------------
# lsscsi -k: kernel names, so it does not scan the real /dev for device nodes
cmd_lsscsi="lsscsi -k -y $root/sys"
cmd_lsblk="lsblk --sysroot $root -J"
cmd_scsitune="$scsitune --sysroot $root detect -o json"

n=$($cmd_lsscsi | grep -c ' disk ') || die "lsscsi failed"
[ "$n" -eq "$disks" ] || die "lsscsi lists $n disks, want $disks"
$cmd_lsblk >"$work/lsblk.json" || die "lsblk failed"
n=$(python3 -c 'import json,sys
print(sum(1 for d in json.load(open(sys.argv[1]))["blockdevices"] if d["name"].startswith("sd")))' "$work/lsblk.json")
[ "$n" -eq "$disks" ] || die "lsblk lists $n sd disks, want $disks"
if [ -n "$with_scsitune" ]; then
	$cmd_scsitune >"$work/detect.json" 2>"$work/detect.stderr" ||
		die "scsitune detect -o json failed: $(head -5 "$work/detect.stderr")"
	[ ! -s "$work/detect.stderr" ] ||
		die "scsitune warned on a clean tree: $(head -5 "$work/detect.stderr")"
	python3 - "$work/detect.json" "$disks" "$hbas" <<'EOF' || die "scsitune JSON is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
want_disks, want_hbas = int(sys.argv[2]), int(sys.argv[3])
hbas = [h for h in doc["hbas"] if h.get("driver") == "mpi3mr"]
disks = [d for h in doc["hbas"] for s in h["scsi_hosts"] for d in s["disks"]]
names = {d["name"] for d in disks}
errors = []
if len(hbas) != want_hbas:
    errors.append("%d mpi3mr HBAs, want %d" % (len(hbas), want_hbas))
if len(disks) != want_disks or len(names) != want_disks:
    errors.append("%d disks (%d names), want %d" % (len(disks), len(names), want_disks))
if any(not d.get("wwn") for d in disks):
    errors.append("a disk without its WWN")
for e in errors:
    print("scsitune JSON: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
	$scsitune --sysroot "$root" detect >/dev/null 2>&1 || die "scsitune detect (text) failed"
fi

# --- timing ------------------------------------------------------------------
names=(lsscsi lsblk)
cmds=("$cmd_lsscsi" "$cmd_lsblk")
if [ -n "$with_scsitune" ]; then
	names=(scsitune "${names[@]}")
	cmds=("$cmd_scsitune" "${cmds[@]}")
fi
declare -A median mean sd
if command -v hyperfine >/dev/null; then
	timer=hyperfine
	hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/times.json" \
		--style none "${cmds[@]}" >/dev/null
	while read -r i med avg dev; do
		median[${names[$i]}]=$med mean[${names[$i]}]=$avg sd[${names[$i]}]=$dev
	done < <(python3 -c 'import json,sys
for i, r in enumerate(json.load(open(sys.argv[1]))["results"]):
    print(i, r["median"] * 1e3, r["mean"] * 1e3, (r.get("stddev") or 0) * 1e3)' "$work/times.json")
else
	timer="date +%s%N loop"
	for i in "${!cmds[@]}"; do
		for _ in 1 2; do ${cmds[$i]} >/dev/null 2>&1; done # warm-up
		: >"$work/t.$i"
		for ((r = 0; r < runs; r++)); do
			a=$(date +%s%N)
			${cmds[$i]} >/dev/null 2>&1 || die "${names[$i]} failed while timing"
			b=$(date +%s%N)
			echo $((b - a)) >>"$work/t.$i"
		done
		read -r med avg dev < <(python3 -c 'import statistics,sys
t = [int(l) / 1e6 for l in open(sys.argv[1])]
print(statistics.median(t), statistics.mean(t), statistics.stdev(t) if len(t) > 1 else 0)' "$work/t.$i")
		median[${names[$i]}]=$med mean[${names[$i]}]=$avg sd[${names[$i]}]=$dev
	done
fi

# --- peak RSS (max resident set, KiB) ----------------------------------------
rss() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1 || return 1
		cat "$work/rss"
	else # package `time` missing: the same figure from getrusage()
		python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
	fi
}
declare -A peak
for i in "${!cmds[@]}"; do
	# shellcheck disable=SC2086 # the command lines are split on purpose
	peak[${names[$i]}]=$(rss ${cmds[$i]}) || die "${names[$i]} failed under the RSS probe"
done

# --- report --------------------------------------------------------------------
echo "timer: $timer, $runs runs after 2 warm-ups; times in ms"
printf '%-10s %10s %10s %9s %12s  %s\n' tool median mean stddev "peak RSS" command
for i in "${!cmds[@]}"; do
	t=${names[$i]}
	printf '%-10s %10.1f %10.1f %9.1f %9.1f MB  %s\n' "$t" "${median[$t]}" "${mean[$t]}" \
		"${sd[$t]}" "$(echo "${peak[$t]}" | awk '{ print $1 / 1024 }')" "${cmds[$i]}"
done
if [ -n "$with_scsitune" ]; then
	awk -v s="${median[scsitune]}" -v l="${median[lsscsi]}" -v b="${median[lsblk]}" \
		-v rss="${peak[scsitune]}" 'BEGIN {
		r = s / l
		printf "scsitune/lsscsi median ratio %.2f   goal <= 1.00 (no slower than lsscsi): %s\n", r, (r <= 1 ? "met" : "NOT MET")
		printf "scsitune/lsblk  median ratio %.2f   (context, no goal)\n", s / b
		mb = rss / 1024
		printf "scsitune peak RSS %.1f MB        goal < 64 MB: %s\n", mb, (mb < 64 ? "met" : "NOT MET")
	}'
fi
