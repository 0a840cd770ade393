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
# goals of issue 33 (detect, its default text, in at most half the time of
# lsscsi -l -s with its pool of threads, peak RSS < 32 MB; one thread and
# -o json beside, with their ratios) as met / not met, with CPU time and
# syscalls per disk beside; never fails on speed: it exits 1 only when a
# command fails or an output is wrong (each tool's disks, names and H:C:T:L
# the same, HBA count, WWNs, the text's rows, warnings on a clean tree), 64
# on bad usage.
# The figures also go to the results file, $BENCH_RESULTS (lib-results.sh).
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
	-h | --help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "bench-detect.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
for n in "$hbas" "$disks" "$runs"; do
	case $n in '' | *[!0-9]*) echo "bench-detect.sh: not a number: $n" >&2; exit 64 ;; esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-detect.sh: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib-results.sh
. "$top/tests/bench/lib-results.sh"
bench_results_init detect "$top"
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
# lsscsi -k: kernel names, so it does not scan the real /dev for device nodes;
# -l -s: each device's state, queue depth, timeouts and its size, what
# detect's rows and -v show beside the names (the peer timed); without
# them, the content checked below.
cmd_lsscsi="lsscsi -k -y $root/sys -l -s"
cmd_lsblk="lsblk --sysroot $root -J"
cmd_scsitune="$scsitune --sysroot $root detect"
cmd_json="$scsitune --sysroot $root detect -o json"

lsscsi -k -y "$root/sys" >"$work/lsscsi.txt" || die "lsscsi failed"
$cmd_lsscsi >"$work/lsscsi-l.txt" || die "lsscsi -l -s failed"
$cmd_lsblk >"$work/lsblk.json" || die "lsblk failed"
# both_ways LABEL EXT CMD...: CMD with the pool and with one thread: it exits 0,
# says nothing on a clean tree, and prints the same either way ($work/detect.EXT).
both_ways() {
	local label=$1 ext=$2
	shift 2
	"$@" >"$work/detect.$ext" 2>"$work/detect.stderr" || die "scsitune $label failed: $(head -5 "$work/detect.stderr")"
	[ ! -s "$work/detect.stderr" ] || die "scsitune $label warned on a clean tree: $(head -5 "$work/detect.stderr")"
	SCSITUNE_THREADS=1 "$@" >"$work/detect1.$ext" 2>&1 || die "scsitune $label (1 thread) failed"
	cmp -s "$work/detect.$ext" "$work/detect1.$ext" || die "scsitune $label: 1 thread and the pool differ"
}
if [ -n "$with_scsitune" ]; then
	# (the command lines are split on purpose)
	# shellcheck disable=SC2086
	both_ways "detect -o json" json $cmd_json
	# shellcheck disable=SC2086
	both_ways detect txt $cmd_scsitune
else
	echo '{"hbas": []}' >"$work/detect.json"
fi
# The same facts from each tool: every disk, by name, with its H:C:T:L (and
# vendor and model from lsscsi); scsitune's HBAs and a WWN per disk.
python3 - "$work/lsscsi.txt" "$work/lsblk.json" "$work/detect.json" "$disks" "$hbas" "$with_scsitune" "$work/detect.txt" <<'EOF' || die "the tools disagree (see above)"
import json, sys
lsscsi_txt, lsblk_json, detect_json, want_disks, want_hbas, with_st, detect_txt = sys.argv[1:]
want_disks, want_hbas = int(want_disks), int(want_hbas)
errors = []
ls = {}
for line in open(lsscsi_txt):
    f = line.split()
    if len(f) >= 6 and f[1] == "disk":
        ls[f[-1].rsplit("/", 1)[-1]] = (f[0].strip("[]"), f[2], f[3])
blk = {d["name"]: d.get("hctl") for d in json.load(open(lsblk_json))["blockdevices"] if d["name"].startswith("sd")}
if len(ls) != want_disks:
    errors.append("lsscsi lists %d disks, want %d" % (len(ls), want_disks))
if set(blk) != set(ls):
    errors.append("lsblk lists %d sd disks, lsscsi %d: not the same names" % (len(blk), len(ls)))
if with_st:
    doc = json.load(open(detect_json))
    hbas = [h for h in doc["hbas"] if h.get("driver") == "mpi3mr"]
    disks = [d for h in doc["hbas"] for s in h["scsi_hosts"] for d in s["disks"]]
    st = {d["name"]: (d.get("hctl"), d.get("vendor"), d.get("model")) for d in disks}
    if len(hbas) != want_hbas:
        errors.append("scsitune: %d mpi3mr HBAs, want %d" % (len(hbas), want_hbas))
    if len(disks) != want_disks or len(st) != want_disks:
        errors.append("scsitune: %d disks (%d names), want %d" % (len(disks), len(st), want_disks))
    if any(not d.get("wwn") for d in disks):
        errors.append("scsitune: a disk without its WWN")
    diff = [n for n in ls if st.get(n) != ls[n]]
    if set(st) != set(ls) or diff:
        errors.append("scsitune and lsscsi differ (name, H:C:T:L, vendor, model), e.g. %s: %s vs %s"
                      % (diff[0], st.get(diff[0]), ls[diff[0]]) if diff else "scsitune and lsscsi list other names")
    bad = [n for n in blk if blk[n] is not None and blk[n] != st.get(n, (None,))[0]]
    if bad:
        errors.append("scsitune and lsblk differ on H:C:T:L, e.g. %s" % bad[0])
    # The default text: a row per disk (H:C:T:L, name, ..., key), the same disks.
    keys = {d["name"]: (d.get("hctl"), d.get("key")) for d in disks}
    rows = {}
    for line in open(detect_txt):
        f = line.split()
        if len(f) >= 3 and f[1] in keys:
            rows[f[1]] = (f[0], f[-1])
    if rows != keys:
        errors.append("scsitune detect's text has %d disk rows, JSON %d disks: not the same (H:C:T:L, key)"
                      % (len(rows), len(keys)))
for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
# --- timing ------------------------------------------------------------------
# scsitune's default text with its pool (one thread per usable CPU) and with
# one thread, and -o json (every disk attribute, read only there and with -v).
names=(lsscsi lsblk)
cmds=("$cmd_lsscsi" "$cmd_lsblk")
if [ -n "$with_scsitune" ]; then
	names=(scsitune scsitune-1 scsitune-json "${names[@]}")
	cmds=("$cmd_scsitune" "env SCSITUNE_THREADS=1 $cmd_scsitune" "$cmd_json" "${cmds[@]}")
fi
declare -A median mean sd cpu
if command -v hyperfine >/dev/null; then
	timer=hyperfine
	hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/times.json" \
		--style none "${cmds[@]}" >/dev/null
	while read -r i med avg dev c; do
		median[${names[$i]}]=$med mean[${names[$i]}]=$avg sd[${names[$i]}]=$dev cpu[${names[$i]}]=$c
	done < <(python3 -c 'import json,sys
for i, r in enumerate(json.load(open(sys.argv[1]))["results"]):
    print(i, r["median"] * 1e3, r["mean"] * 1e3, (r.get("stddev") or 0) * 1e3, (r["user"] + r["system"]) * 1e3)' "$work/times.json")
else
	timer="/usr/bin/time loop"
	[ -x /usr/bin/time ] || die "neither hyperfine nor /usr/bin/time (package time) is installed"
	for i in "${!cmds[@]}"; do
		for _ in 1 2; do ${cmds[$i]} >/dev/null 2>&1; done # warm-up
		: >"$work/t.$i"
		for ((r = 0; r < runs; r++)); do
			# shellcheck disable=SC2086 # the command lines are split on purpose
			/usr/bin/time -f '%e %U %S' -a -o "$work/t.$i" ${cmds[$i]} >/dev/null 2>&1 ||
				die "${names[$i]} failed while timing"
		done
		read -r med avg dev c < <(python3 -c 'import statistics,sys
t = [[float(x) for x in l.split()] for l in open(sys.argv[1]) if l[0].isdigit()]
w = [x[0] * 1e3 for x in t]
print(statistics.median(w), statistics.mean(w), statistics.stdev(w) if len(w) > 1 else 0,
      statistics.mean((x[1] + x[2]) * 1e3 for x in t))' "$work/t.$i")
		median[${names[$i]}]=$med mean[${names[$i]}]=$avg sd[${names[$i]}]=$dev cpu[${names[$i]}]=$c
	done
fi

# --- peak RSS (max resident set, KiB: /usr/bin/time's %M, what -v prints as
# "Maximum resident set size") and syscalls per disk (strace -c -f, one run) ---
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
declare -A peak calls
for i in "${!cmds[@]}"; do
	# shellcheck disable=SC2086 # the command lines are split on purpose
	peak[${names[$i]}]=$(rss ${cmds[$i]}) || die "${names[$i]} failed under the RSS probe"
	calls[${names[$i]}]=-
	if command -v strace >/dev/null; then
		# shellcheck disable=SC2086
		strace -f -c -o "$work/strace.$i" ${cmds[$i]} >/dev/null 2>&1 || die "${names[$i]} failed under strace"
		calls[${names[$i]}]=$(awk -v n="$disks" '$NF == "total" { printf "%.1f", $(NF-2) / n }' "$work/strace.$i")
	fi
done

# --- report --------------------------------------------------------------------
echo "timer: $timer, $runs runs after 2 warm-ups; times in ms (CPU: user + system, mean); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-11s %9s %9s %8s %9s %11s %9s  %s\n' tool median mean stddev "CPU" "peak RSS" "sysc/disk" command
for i in "${!cmds[@]}"; do
	t=${names[$i]}
	printf '%-11s %9.1f %9.1f %8.1f %9.1f %8.1f MB %9s  %s\n' "$t" "${median[$t]}" "${mean[$t]}" \
		"${sd[$t]}" "${cpu[$t]}" "$(echo "${peak[$t]}" | awk '{ print $1 / 1024 }')" "${calls[$t]}" "${cmds[$i]}"
done
if [ -n "$with_scsitune" ]; then
	# The goals' lines also go to $work/rec (figure, value, unit, goal, verdict,
	# peer, peer's value) for the results file, with the verdict printed.
	awk -v s="${median[scsitune]}" -v s1="${median[scsitune-1]}" -v sj="${median[scsitune-json]}" \
		-v l="${median[lsscsi]}" -v b="${median[lsblk]}" -v c="${cpu[scsitune]}" -v c1="${cpu[scsitune-1]}" \
		-v cj="${cpu[scsitune-json]}" -v cl="${cpu[lsscsi]}" -v rss="${peak[scsitune]}" \
		-v n="$disks" -v rec="$work/rec" 'BEGIN {
		v = (s / l <= 0.5 ? "met" : "NOT MET"); vr = (rss / 1024 < 32 ? "met" : "NOT MET")
		printf "goals (issue 33): detect (its default text) in at most half the time of lsscsi -l -s on the same tree\n"
		printf "  pool of threads: median ratio %.2f  goal <= 0.50: %s   (CPU ratio %.2f)\n", s / l, v, c / cl
		printf "  peak RSS %.1f MB  goal < 32 MB: %s\n", rss / 1024, vr
		printf "  beside it, no goal: one thread %.2f (CPU %.2f); -o json, every attribute, pool %.2f (CPU %.2f)\n", s1 / l, c1 / cl, sj / l, cj / cl
		printf "scsitune/lsblk median ratio %.2f (context, no goal); scsitune %.3f ms and %.1f KB peak RSS per disk\n", s / b, s / n, rss / n
		printf "ratio.pool-vs-lsscsi\t%.3f\tx\t<=0.50\t%s\tlsscsi\t-\n", s / l, (v == "met" ? "met" : "not-met") >rec
		printf "peak-rss.goal\t%.1f\tMiB\t<32\t%s\t-\t-\n", rss / 1024, (vr == "met" ? "met" : "not-met") >rec
		printf "ratio.one-thread-vs-lsscsi\t%.3f\tx\t-\t-\tlsscsi\t-\n", s1 / l >rec
		printf "ratio.json-pool-vs-lsscsi\t%.3f\tx\t-\t-\tlsscsi\t-\n", sj / l >rec
		printf "ratio.cpu.pool-vs-lsscsi\t%.3f\tx\t-\t-\tlsscsi\t-\n", c / cl >rec
		printf "ratio.cpu.one-thread-vs-lsscsi\t%.3f\tx\t-\t-\tlsscsi\t-\n", c1 / cl >rec
		printf "ratio.pool-vs-lsblk\t%.3f\tx\t-\t-\tlsblk\t-\n", s / b >rec
		printf "wall-per-disk.pool\t%.4f\tms/disk\t-\t-\tlsscsi\t%.4f\n", s / n, l / n >rec
		printf "peak-rss-per-disk.pool\t%.2f\tKiB/disk\t-\t-\t-\t-\n", rss / n >rec
	}'
	# What was measured on, each measured figure of scsitune beside lsscsi's of
	# the same kind; then the goals.
	bench_result disks "$disks" disks
	bench_result cpus "$(nproc)" cpus
	mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
	for t in scsitune scsitune-1 scsitune-json; do
		case $t in scsitune) mode=pool ;; scsitune-1) mode=one-thread ;; *) mode=json-pool ;; esac
		bench_result "wall-median.$mode" "$(printf %.1f "${median[$t]}")" ms - - lsscsi "$(printf %.1f "${median[lsscsi]}")"
		bench_result "wall-mean.$mode" "$(printf %.1f "${mean[$t]}")" ms - - lsscsi "$(printf %.1f "${mean[lsscsi]}")"
		bench_result "wall-stddev.$mode" "$(printf %.1f "${sd[$t]}")" ms - - lsscsi "$(printf %.1f "${sd[lsscsi]}")"
		bench_result "cpu-mean.$mode" "$(printf %.1f "${cpu[$t]}")" ms - - lsscsi "$(printf %.1f "${cpu[lsscsi]}")"
		bench_result "peak-rss.$mode" "$(mib "${peak[$t]}")" MiB - - lsscsi "$(mib "${peak[lsscsi]}")"
		[ "${calls[$t]}" = - ] || bench_result "syscalls-per-disk.$mode" "${calls[$t]}" calls/disk - - lsscsi "${calls[lsscsi]}"
	done
	bench_results_from "$work/rec"
fi
