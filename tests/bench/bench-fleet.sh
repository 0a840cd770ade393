#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-fleet.sh -- the fleet gate at fleet size: a real VictoriaMetrics
# (Debian's package, started here on 127.0.0.1) filled with HOSTS hosts x (6
# baseline + 6 tuned) runs, made from one real upload (`report --host-facts
# --upload` of a captured tree, `apply --profile numa` between the phases)
# with the host renamed and the values varied (make-fleet.py); then, in the
# same run, the time and peak RSS of
#   curl   every scsitune series from the export API (/api/v1/export,
#          {__name__=~"scsitune_.*"}): the floor, the bytes any client takes in
#   gate   scsitune report --query URL --phase tuned --compare baseline
#          --gate 'kiops>=+5%' -o json over the whole fleet
# Goals (issue 33): the gate within 1.5 x curl's time, peak RSS < 512 MB, the
# verdict right (every host compared, the gate passed; 'kiops>=+50%' failed,
# exit 4). Never fails on speed: exits 1 when a command fails or a verdict is
# wrong, 64 on bad usage. The figures also go to $BENCH_RESULTS.
#
#   tests/bench/bench-fleet.sh [--hosts N] [--runs N]
#
# SCSITUNE names the binary (default ./build/scsitune). Needs victoria-metrics,
# curl, python3 (scripts/install-deps --test).
set -euo pipefail
export LC_ALL=C.UTF-8

hosts=10000 runs=3
while [ $# -gt 0 ]; do
	case $1 in
	--hosts) hosts=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	-h | --help) sed -n '3,21p' "$0"; exit 0 ;;
	*) echo "bench-fleet.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
for n in "$hosts" "$runs"; do
	case $n in '' | *[!0-9]* | 0) echo "bench-fleet.sh: not a positive number: $n" >&2; exit 64 ;; esac
done

src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(realpath "${SCSITUNE:-$src/build/scsitune}")
py=${PYTHON3:-python3}
die() { echo "bench-fleet.sh: FAIL: $*" >&2; exit 1; }
# shellcheck source=tests/bench/lib-results.sh
. "$src/tests/bench/lib-results.sh"
bench_results_init fleet "$src"
[ -x "$bin" ] || die "no scsitune binary at $bin (build it or set SCSITUNE)"
# start_vm, make_host, make_fio, vm_flush, query_shows (and take_port, poll)
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need victoria-metrics curl /usr/bin/time
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
trap 'fleet_cleanup; rm -rf "$T"' EXIT
trap "exit 143" TERM INT
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf

take_port vm_port || die "no free port"
# The export of every series (the floor) returns HOSTS x 180 series: over
# VictoriaMetrics' default limit of 10 million from 55,556 hosts on.
vm_search_flags="-search.latencyOffset=0s -search.maxExportSeries=$((hosts * 200 + 1000))"
start_vm vm "$vm_port" || die "VictoriaMetrics did not start: $(tail -3 "$T/vm.log")"
vm=http://127.0.0.1:$vm_port

# --- one real host, uploaded as a rollout does: baseline, apply, tuned -----------
now=$(now_ms)
b0=$((now - 3 * 3600000)) t0=$((now - 3600000))
d=$T/h0
make_host "$d" dual-socket-mpi3mr stor-template || die "make_host"
make_fio "$d/fio" baseline "$b0" 1.0 0.98 1.02 0.99 1.01 1.0 || die "make_fio baseline"
make_fio "$d/fio" tuned "$t0" 1.2 1.18 1.22 1.19 1.21 1.2 || die "make_fio tuned"
st() { "$bin" --sysroot "$d/root" "$@" >/dev/null 2>"$T/st.err" || die "scsitune $*: $(cat "$T/st.err")"; }
st report --host-facts --phase baseline --state-dir "$d/state" --upload "$vm/write" "$d"/fio/baseline-run*.json
st apply --profile numa --profile-dir "$src/profiles" --state-dir "$d/state"
st report --host-facts --phase tuned --state-dir "$d/state" --upload "$vm/write" "$d"/fio/tuned-run*.json
vm_flush "$vm"
query_shows "$vm" 12 || die "VictoriaMetrics does not show the template host's 12 runs"
curl -fsS "$vm/api/v1/export" -d 'match[]={host="stor-template"}' >"$T/template.jsonl" || die "export of the template"
per_host=$(wc -l <"$T/template.jsonl")

# --- the fleet: the template's series for every host, then the template removed --
t1=$(date +%s%N)
sent=$("$py" "$src/tests/bench/make-fleet.py" "$T/template.jsonl" "$vm/api/v1/import" "$hosts" 33) ||
	die "make-fleet.py failed"
curl -fsS "$vm/api/v1/admin/tsdb/delete_series" -d 'match[]={host="stor-template"}' >/dev/null ||
	die "removing the template host"
vm_flush "$vm"
# Judged only once the service shows every point: each host's 12 KIOPS samples.
kiops_count() { curl -fsS "$vm/api/v1/export" -d 'match[]={__name__="scsitune_fio_kiops"}' | wc -l; }
fleet_shown() { [ "$(kiops_count)" -eq $((hosts * 12)) ]; }
poll 600 fleet_shown || die "VictoriaMetrics shows $(kiops_count) KIOPS series, want $((hosts * 12))"
t2=$(date +%s%N)
echo "bench fleet: $hosts hosts x 12 runs, $per_host series per host ($sent sent), imported and shown in $(((t2 - t1) / 1000000)) ms; $(nproc) CPUs"

# --- checked once: the verdicts --------------------------------------------------
gate=(report --query "$vm" --phase tuned --compare baseline -o json)
rc=0
"$bin" "${gate[@]}" --gate 'kiops>=+5%' >"$T/gate.json" 2>"$T/gate.err" || rc=$?
[ "$rc" -eq 0 ] || die "the gate kiops>=+5% exited $rc, want 0 (passed): $(head -3 "$T/gate.err")"
"$py" - "$T/gate.json" "$hosts" <<'PY' || die "the gate's document is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
compared = [h for h in d["hosts"] if h["status"] == "compared"]
assert len(d["hosts"]) == n and len(compared) == n, (len(d["hosts"]), len(compared))
assert d["gate"]["passed"] is True, d["gate"]
print("gate kiops>=+5%%: passed, %d hosts compared" % len(compared))
PY
rc=0
"$bin" "${gate[@]}" --gate 'kiops>=+50%' >/dev/null 2>"$T/gate.err" || rc=$?
[ "$rc" -eq 4 ] || die "the gate kiops>=+50% exited $rc, want 4 (failed: the hosts are about +20 %)"
echo "gate kiops>=+50%: failed (exit 4), as it must"

# --- timed -------------------------------------------------------------------------
floor=(curl -fsS -o "$T/all.jsonl" "$vm/api/v1/export" -d 'match[]={__name__=~"scsitune_.*"}')
"${floor[@]}" || die "curl of the export failed"
bytes=$(stat -c %s "$T/all.jsonl")
: >"$T/t.curl"
: >"$T/t.gate"
for ((i = 0; i < runs; i++)); do
	bench_time /dev/null "$T/err" "$T/t1" "${floor[@]}" || die "curl failed: $(cat "$T/err")"
	cat "$T/t1" >>"$T/t.curl"
	bench_time "$T/out" "$T/err" "$T/t1" "$bin" "${gate[@]}" --gate 'kiops>=+5%' || die "the gate failed: $(head -3 "$T/err")"
	cat "$T/t1" >>"$T/t.gate"
done
med() { sort -n "$T/t.$1" | awk '{ w[NR] = $1; m[NR] = $2; c[NR] = $3 } END { i = int((NR + 1) / 2); print w[i], m[i], c[i] }'; }
read -r cw ck cc < <(med curl)
read -r gw gk gc < <(med gate)
printf '%-6s %10s %10s %10s  %s\n' "" "wall ms" "CPU ms" "peak RSS" command
printf '%-6s %10.1f %10.1f %7.1f MB  curl of every scsitune series (%d MB)\n' curl "$cw" "$cc" "$(awk -v k="$ck" 'BEGIN { print k / 1024 }')" $((bytes / 1048576))
printf '%-6s %10.1f %10.1f %7.1f MB  scsitune report --query ... --gate kiops>=+5%%\n' gate "$gw" "$gc" "$(awk -v k="$gk" 'BEGIN { print k / 1024 }')"
awk -v g="$gw" -v c="$cw" -v k="$gk" -v n="$hosts" -v rec="$T/rec" 'BEGIN {
	v1 = (g / c <= 1.5 ? "met" : "NOT MET"); v2 = (k / 1024 < 512 ? "met" : "NOT MET")
	printf "goals (issue 33), %d hosts, medians of the runs:\n", n
	printf "  gate / curl of every series  %6.2f x  goal <= 1.5 x: %s\n", g / c, v1
	printf "  gate peak RSS             %7.1f MB  goal < 512 MB: %s\n", k / 1024, v2
	printf "  the verdict: right (checked above)\n"
	printf "ratio.gate-vs-curl\t%.3f\tx\t<=1.5\t%s\tcurl\t-\n", g / c, (v1 == "met" ? "met" : "not-met") >rec
	printf "gate.peak-rss\t%.1f\tMiB\t<512\t%s\tcurl\t-\n", k / 1024, (v2 == "met" ? "met" : "not-met") >rec
}'
bench_result hosts "$hosts" hosts
bench_result cpus "$(nproc)" cpus
bench_result export-bytes "$((bytes / 1048576))" MiB
bench_result gate.wall-median "$gw" ms - - curl "$cw"
bench_result gate.cpu-median "$gc" ms - - curl "$cc"
bench_result gate.peak-rss-median "$(awk -v k="$gk" 'BEGIN { printf "%.1f", k / 1024 }')" MiB - - curl "$(awk -v k="$ck" 'BEGIN { printf "%.1f", k / 1024 }')"
bench_results_from "$T/rec"
