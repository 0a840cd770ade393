#!/bin/bash
# bench-report.sh -- time and memory of `scsitune report` ingesting 100 fio
# json+ files of 16 jobs each (made from a real fio 3.33 json+ output in
# tests/report/fio/, with varied values), next to jq computing the same
# per-run figures from the same files in the same run. See tests/bench/README.md.
#
#   tests/bench/bench-report.sh [--files N] [--jobs N] [--runs N] [--dir DIR] [--keep]
#
# SCSITUNE names the binary (default ./build/scsitune). Prints figures and the
# goals (at most a quarter of jq's time, issue 33; peak RSS < 64 MB) as met / not met, but never fails
# on speed: it exits 1 only when a command fails or an output is wrong (per-run
# IOPS, bandwidth and clat mean of scsitune, jq and the generator must agree),
# 64 on bad usage. The figures also go to the results file, $BENCH_RESULTS
# (lib-results.sh).
set -euo pipefail
export LC_ALL=C

files=100 jobs=16 runs=10 dir=${BENCH_DIR:-} keep=''
while [ $# -gt 0 ]; do
	case $1 in
	--files) files=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--dir) dir=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "bench-report.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
for n in "$files" "$jobs" "$runs"; do
	case $n in '' | *[!0-9]* | 0) echo "bench-report.sh: not a positive number: $n" >&2; exit 64 ;; esac
done

top=$(cd "$(dirname "$0")/../.." && pwd)
template=$top/tests/report/fio/fio-3.33-randread-2jobs-jsonplus.json
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-report.sh: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib-results.sh
. "$top/tests/bench/lib-results.sh"
bench_results_init report "$top"
[ -x "$scsitune" ] || die "no scsitune binary at $scsitune (build it or set SCSITUNE)"
for tool in python3 jq; do
	command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps --test)"
done
[ -r "$template" ] || die "no template $template"

work=$(mktemp -d "${dir:-${TMPDIR:-/tmp}}/bench-report.XXXXXX")
if [ -n "$keep" ]; then trap 'echo "kept $work" >&2' EXIT; else trap 'rm -rf "$work"' EXIT; fi
case $work in *[[:space:]]*) die "the work directory must not contain spaces: $work" ;; esac
export SCSITUNE_CONFIG=$work/no-such-scsitune.conf # never read /etc/scsitune

# --- the files: the real json+ output's jobs cloned to N jobs per file, every
# value varied (IOPS, bandwidth, bytes, clat mean/min/max, each bin's count),
# and the generator's own per-run figures written down to check both tools.
python3 "$top/tests/bench/make-fio-runs.py" "$template" "$work/runs" "$files" "$jobs" "$work/expected.tsv"
mapfile -t run_files < <(cut -f1 "$work/expected.tsv")
size=$(du -sk "$work/runs" | cut -f1)
echo "bench input: ${#run_files[@]} fio json+ files, $jobs jobs each (from $(basename "$template")), $((size / 1024)) MB"

# The same per-run figures with jq: IOPS and bandwidth summed over the jobs, the
# read clat mean weighted by each job's N (percentiles from merged bins: scsitune only).
cat >"$work/figures.jq" <<'JQ'
[input_filename,
 ([.jobs[] | .read.iops + .write.iops] | add),
 ([.jobs[] | .read.bw + .write.bw] | add),
 (([.jobs[] | .read.clat_ns.N * .read.clat_ns.mean] | add) / ([.jobs[] | .read.clat_ns.N] | add))]
| @tsv
JQ

# --- each command once, checked --------------------------------------------------
"$scsitune" report -o json "${run_files[@]}" >"$work/scsitune.json" 2>"$work/scsitune.err" ||
	die "scsitune report failed: $(head -3 "$work/scsitune.err")"
[ ! -s "$work/scsitune.err" ] || die "scsitune warned: $(head -3 "$work/scsitune.err")"
jq -r -f "$work/figures.jq" "${run_files[@]}" >"$work/jq.tsv" 2>"$work/jq.err" || die "jq failed: $(head -3 "$work/jq.err")"
python3 - "$work/expected.tsv" "$work/jq.tsv" "$work/scsitune.json" <<'PY' || die "outputs differ (see above)"
import json, math, sys
def rows(path):
    return {l.split("\t")[0]: [float(x) for x in l.split("\t")[1:]] for l in open(path) if l.strip()}
want, jq = rows(sys.argv[1]), rows(sys.argv[2])
doc = json.load(open(sys.argv[3]))
st = {r["file"]: [r["iops"], r["bw_kib_s"], r["read"]["clat_ns"]["mean"]] for r in doc["runs"]}
errors = []
if len(doc["runs"]) != len(want) or set(st) != set(want) or set(jq) != set(want):
    errors.append("runs: scsitune %d, jq %d, generated %d" % (len(st), len(jq), len(want)))
for f, w in want.items():
    for name, got in (("scsitune", st.get(f)), ("jq", jq.get(f))):
        if got is None:
            continue
        for what, a, b in zip(("iops", "bw_kib_s", "read clat mean"), got, w):
            # scsitune's JSON rounds to 3 decimals
            if not math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0011):
                errors.append("%s: %s %s = %r, generated %r" % (f, name, what, a, b))
if doc["runs"] and doc["runs"][0]["read"]["clat_ns"]["percentiles_from"] != "merged-bins":
    errors.append("scsitune did not merge the json+ bins")
for e in errors[:10]:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
echo "checked: scsitune and jq give the generated IOPS, bandwidth and clat mean for every run"

# --- timing ------------------------------------------------------------------------
cmd_scsitune="$scsitune report -o json ${run_files[*]}"
cmd_jq="jq -r -f $work/figures.jq ${run_files[*]}"
names=(scsitune jq)
cmds=("$cmd_scsitune" "$cmd_jq")
declare -A median mean sd peak
# hyperfine takes each command as one argument: over the kernel's 128 KiB for
# one argument (MAX_ARG_STRLEN; about 1,500 file names here) it cannot run it.
if command -v hyperfine >/dev/null && [ "${#cmd_jq}" -lt 120000 ]; then
	timer=hyperfine
	hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/times.json" --style none "${cmds[@]}" >/dev/null ||
		die "hyperfine failed"
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

# --- peak RSS (max resident set, KiB) --------------------------------------------
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
for i in "${!cmds[@]}"; do
	# shellcheck disable=SC2086 # the command lines are split on purpose
	peak[${names[$i]}]=$(rss ${cmds[$i]}) || die "${names[$i]} failed under the RSS probe"
done

# --- report ------------------------------------------------------------------------
echo "timer: $timer, $runs runs after 2 warm-ups; times in ms"
printf '%-10s %10s %10s %9s %12s  %s\n' tool median mean stddev "peak RSS" command
for i in "${!cmds[@]}"; do
	t=${names[$i]}
	printf '%-10s %10.1f %10.1f %9.1f %9.1f MB  %s\n' "$t" "${median[$t]}" "${mean[$t]}" "${sd[$t]}" \
		"$(echo "${peak[$t]}" | awk '{ print $1 / 1024 }')" "$(echo "${cmds[$i]}" | cut -c1-60)..."
done
# The goals' lines also go to $work/rec (figure, value, unit, goal, verdict,
# peer, peer's value) for the results file, with the verdict printed.
awk -v s="${median[scsitune]}" -v j="${median[jq]}" -v rss="${peak[scsitune]}" -v jrss="${peak[jq]}" \
	-v n="${#run_files[@]}" -v rec="$work/rec" 'BEGIN {
	r = s / j
	mb = rss / 1024
	g1 = (r <= 0.25 ? "met" : "NOT MET"); g2 = (mb < 64 ? "met" : "NOT MET")
	printf "scsitune/jq median ratio %.2f   goal <= 0.25 (issue 33: a quarter of jq): %s\n", r, g1
	printf "scsitune per file %.2f ms (parse, merge %s histograms, statistics, JSON out)\n", s / n, "json+"
	printf "scsitune peak RSS %.1f MB        goal < 64 MB: %s\n", mb, g2
	printf "ratio.vs-jq\t%.3f\tx\t<=0.25\t%s\tjq\t-\n", r, (g1 == "met" ? "met" : "not-met") >rec
	printf "wall-per-file\t%.3f\tms/file\t-\t-\tjq\t%.3f\n", s / n, j / n >rec
	printf "peak-rss\t%.1f\tMiB\t<64\t%s\tjq\t%.1f\n", mb, (g2 == "met" ? "met" : "not-met"), jrss / 1024 >rec
}'
bench_result files "${#run_files[@]}" files
bench_result jobs-per-file "$jobs" jobs
bench_result cpus "$(nproc)" cpus
bench_result wall-median "$(printf %.1f "${median[scsitune]}")" ms - - jq "$(printf %.1f "${median[jq]}")"
bench_result wall-mean "$(printf %.1f "${mean[scsitune]}")" ms - - jq "$(printf %.1f "${mean[jq]}")"
bench_result wall-stddev "$(printf %.1f "${sd[scsitune]}")" ms - - jq "$(printf %.1f "${sd[jq]}")"
bench_results_from "$work/rec"
