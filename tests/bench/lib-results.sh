# shellcheck shell=bash
# lib-results.sh -- sourced by tests/bench/bench-*.sh: every figure a bench
# prints is also appended, one line per figure, to one tab-separated results
# file, $BENCH_RESULTS (CTest sets it to build/tests/bench/results.tsv; run by
# hand the default is the same file under the source tree's build/). The file
# keeps every run's figures; its first line names the columns:
#   bench figure value unit goal verdict peer peer_value commit time
# goal: an operator and a number in the line's unit (<=1.0, <64), or -;
# verdict: met, not-met, or - (no goal); peer, peer_value: the tool the bench
# compares with and its figure of the same kind in the same unit, or -;
# commit: `git rev-parse --short HEAD` of the sources (with -dirty when
# tracked files differ from it), or unknown; time: when the bench started,
# UTC, ISO 8601 (every line of one run has the same). No field is empty.
#
#   bench_results_init BENCH SOURCE_DIR       once, before the figures
#   bench_result FIGURE VALUE UNIT [GOAL VERDICT [PEER PEER_VALUE]]
#   bench_results_from FILE                   lines of FIGURE ... PEER_VALUE
#                                             (7 tab-separated fields), e.g. from awk
# A file that cannot be written is said once on stderr; the bench goes on
# (it fails only on a failed command or a wrong output).

bench_results_init() {
	_br_bench=$1
	_br_file=${BENCH_RESULTS:-$2/build/tests/bench/results.tsv}
	_br_time=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	_br_commit=unknown _br_warned=''
	if command -v git >/dev/null && _br_commit=$(git -C "$2" rev-parse --short HEAD 2>/dev/null); then
		git -C "$2" diff --quiet HEAD -- 2>/dev/null || _br_commit=$_br_commit-dirty
	else
		_br_commit=unknown
	fi
}

# One field: tabs and newlines become spaces, nothing becomes -.
_br_field() {
	local f=${1//$'\t'/ }
	f=${f//$'\n'/ }
	printf '%s' "${f:--}"
}

bench_result() { # FIGURE VALUE UNIT [GOAL VERDICT [PEER PEER_VALUE]]
	local line='' f
	for f in "$_br_bench" "$1" "$2" "$3" "${4:--}" "${5:--}" "${6:--}" "${7:--}" "$_br_commit" "$_br_time"; do
		line+=${line:+$'\t'}$(_br_field "$f")
	done
	if ! {
		mkdir -p "$(dirname "$_br_file")" &&
			{ [ -s "$_br_file" ] || printf 'bench\tfigure\tvalue\tunit\tgoal\tverdict\tpeer\tpeer_value\tcommit\ttime\n' >>"$_br_file"; } &&
			printf '%s\n' "$line" >>"$_br_file"
	} 2>/dev/null; then
		[ -n "$_br_warned" ] || echo "$_br_bench: cannot write the results file $_br_file; figures only printed" >&2
		_br_warned=1
	fi
}

bench_results_from() { # FILE: FIGURE VALUE UNIT GOAL VERDICT PEER PEER_VALUE, tab-separated
	local fig val unit goal verdict peer pv
	while IFS=$'\t' read -r fig val unit goal verdict peer pv; do
		[ -z "$fig" ] || bench_result "$fig" "$val" "$unit" "$goal" "$verdict" "$peer" "$pv"
	done <"$1"
}

# bench_time OUT ERR REC CMD...: run CMD (a program, stdout to OUT, stderr to
# ERR) and write "WALL_MS PEAK_RSS_KIB CPU_MS" to REC: wall to 0.1 ms
# (/usr/bin/time's %e counts in 10 ms steps, a fifth of a 50 ms goal) and
# user + system CPU from getrusage() around /usr/bin/time, which gives the
# peak RSS (%M: a child forked by python would count python's pages too).
# Returns CMD's status.
bench_time() {
	python3 -c 'import os, resource, subprocess, sys, time
out, err, rec = sys.argv[1:4]
with open(out, "wb") as o, open(err, "wb") as e:
    t0 = time.perf_counter()
    rc = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", rec + ".rss"] + sys.argv[4:], stdout=o, stderr=e)
    wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rss = open(rec + ".rss").read().split()[-1]
os.unlink(rec + ".rss")
open(rec, "w").write("%.1f %s %.1f\n" % (wall * 1e3, rss, (ru.ru_utime + ru.ru_stime) * 1e3))
sys.exit(rc)' "$@"
}
