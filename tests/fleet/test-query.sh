#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet tier: `scsitune report --query` against real servers from Debian's
# packages, started here on 127.0.0.1 (free ports, data under a temp dir):
# VictoriaMetrics (dedup on) and InfluxDB 1.x, fed by `report --host-facts
# --upload` from six hosts made of captured trees (tests/fixtures), each with
# fio outputs varied from a recorded real one (tests/report/fio):
#  - the view through each API (VictoriaMetrics export and Prometheus query,
#    InfluxDB /query): the same hosts, selection and cohorts; every host's
#    numbers equal its own `report --compare baseline`; the selection and the
#    cohorts recomputed from the runs; the newest set per host (an older
#    baseline does not count); a drifted, a not applied and a not comparable
#    host shown apart, never averaged in; a host of another firmware in its
#    own cohort; re-sent runs still one copy; text within 80 columns;
#  - --html: the view as HTML (tests/report/check-html.py: well-formed,
#    self-contained, the numbers of -o json), written on a failed gate too,
#    a bad path refused; 6 hosts from the stub: the +100 % one named as the
#    outlier, its name with markup shown as text;
#  - --gate: passes, fails on a condition naming the hosts (exit 4), the
#    implicit missing=0 and apart=0 (a not comparable host beside a good one
#    fails the gate, its reason named; apart<=1 relaxes it), --hosts-file; bad expressions and options (exit 64);
#  - a stub service for what the real ones never do: empty, not JSON,
#    truncated, cut (Content-Length), InfluxDB partial, slow (bounded by
#    --query-timeout, 3 tries), 503 (3 tries), 400 (1 try), a duplicate
#    sample, another phase only, a Prometheus vector, auth (the token masked
#    in the message, a world-readable auth file refused): exit 1, never a view;
#  - the service down: exit 1 after the retries, the gate not passed;
#  - every document valid against schema/report-query.schema.json, which
#    names the same keys as cli/report/render-query.c and rejects broken copies;
#  - valgrind-clean on a query and a gate, --html ($SCSITUNE_VALGRIND, plain build).
# Fails (never skips) when a server is not installed.
# Usage: test-query.sh SCSITUNE SRCDIR
set -uo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
py=${PYTHON3:-python3}
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need victoria-metrics influxd curl
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-query.XXXXXX")
trap 'fleet_cleanup; rm -rf "$T"' EXIT
trap "exit 143" TERM INT
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf
started=$(date +%s)

check() { # NAME COMMAND...: passes when COMMAND does
	checks=$((checks + 1))
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then pass "$name: $(tail -1 "$T/check.out")"; else fail "$name:"; sed 's/^/  /' "$T/check.out" | head -20; fi
}
# q RC STDERR_REGEX ARGS...: scsitune report ARGS (stdout in $T/out), exit code and stderr.
q() {
	local want=$1 re=$2 rc=0
	shift 2
	checks=$((checks + 1))
	"$bin" report "$@" >"$T/out" 2>"$T/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "report $*: exit $rc, want $want"; sed 's/^/  stderr: /' "$T/err" | head -5
	elif [ -z "$re" ] && [ -s "$T/err" ]; then
		fail "report $*: stderr not empty"; sed 's/^/  stderr: /' "$T/err" | head -5
	elif [ -n "$re" ] && ! grep -Eq -- "$re" "$T/err"; then
		fail "report $*: stderr does not match /$re/"; sed 's/^/  stderr: /' "$T/err" | head -5
	else
		pass "report ... ${*: -1} → exit $rc: $(grep -E -- "$re" "$T/err" | head -1 | cut -c1-140)"
	fi
}

take_port vm_port && take_port ix_port && take_port stub_port || { echo "FAIL: no free port"; exit 1; }
start_vm vm "$vm_port" && start_influx influx "$ix_port" || { echo "FAIL: servers not ready"; exit 1; }
vm=http://127.0.0.1:$vm_port ix=http://127.0.0.1:$ix_port
"$py" "$src/tests/fleet/stub-service.py" "$stub_port" "$T/stub.log" &
fleet_pids[stub]=$!
wait_port "$stub_port" || { echo "FAIL: the stub service not ready"; exit 1; }
stub=http://127.0.0.1:$stub_port

# --- Six hosts, their runs uploaded to both servers.
now=$(now_ms)
b0=$((now - 3 * 3600000)) t0=$((now - 3600000))
declare -A fixture=([q1]=dual-socket-mpi3mr [q2]=dual-socket-mpi3mr [q3]=four-node [q4]=dual-socket-mpi3mr
	[q5]=dual-socket-mpi3mr [q6]=dual-socket-mpi3mr)
declare -A base=([q1]="1.0 0.8 0.9" [q2]="0.95 1.0 0.85" [q3]="1.0 1.0 0.97" [q4]="1.0 0.9 0.95"
	[q5]="1.0 0.9 0.95" [q6]="1.0 0.9 0.95")
declare -A tuned=([q1]="1.2 1.15 1.22" [q2]="1.1 1.12 1.08" [q3]="1.3 1.28 1.31" [q4]="1.4 1.5 1.45"
	[q5]="1.0 1.01 0.99" [q6]="1.3 1.3 1.3")
upload() { # HOST PHASE FILES...: to VictoriaMetrics and InfluxDB
	local h=$1 phase=$2 d=$T/$1
	shift 2
	"$bin" --sysroot "$d/root" report --host-facts --phase "$phase" --state-dir "$d/state" --upload "$vm/write" \
		"$@" >/dev/null 2>"$T/up.err" &&
		"$bin" --sysroot "$d/root" report --host-facts --phase "$phase" --state-dir "$d/state" \
			--upload "$ix/write?db=scsitune" "$@" >/dev/null 2>>"$T/up.err" ||
		{ fail "upload $h $phase: $(cat "$T/up.err")"; return 1; }
}
for h in q1 q2 q3 q4 q5 q6; do
	d=$T/$h
	make_host "$d" "${fixture[$h]}" "stor-$h" || { fail "make_host $h"; continue; }
	# shellcheck disable=SC2086
	make_fio "$d/fio" baseline "$b0" ${base[$h]} || fail "make_fio $h"
	# shellcheck disable=SC2086
	FIO_OPTION=$([ "$h" = q6 ] && echo bs=8k) make_fio "$d/fio" tuned "$t0" ${tuned[$h]} || fail "make_fio $h"
	if [ "$h" = q1 ]; then # an older baseline set first: the view must take the newer one
		make_fio "$d/old" baseline $((b0 - 86400000)) 0.1 0.1 0.1 && upload "$h" baseline "$d"/old/*.json
	fi
	if [ "$h" = q3 ]; then # another firmware: another cohort
		fw=$(find "$d/root/sys" -name version_fw -type f | head -1)
		[ -n "$fw" ] && echo 8.10.0.0.00000-00004 >"$fw" || fail "q3: no version_fw in the tree"
	fi
	upload "$h" baseline "$d"/fio/baseline-run*.json
	if [ "$h" != q5 ]; then
		"$bin" --sysroot "$d/root" apply --profile numa --profile-dir "$src/profiles" --state-dir "$d/state" \
			>/dev/null 2>"$T/apply.err" || fail "apply $h: $(cat "$T/apply.err")"
	fi
	if [ "$h" = q4 ]; then # drift: a value apply wrote changed behind its back
		ra=$("$py" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied":
        print(e["path"]); break' "$d/state/journal.json")
		[ -n "$ra" ] && echo 4096 >"$d/root/$ra" || fail "q4: no applied read_ahead_kb to drift"
	fi
	upload "$h" tuned "$d"/fio/tuned-run*.json
	"$bin" report --compare baseline --state-dir "$d/state" -o json "$d"/fio/tuned-run*.json >"$T/local-$h.json" \
		2>"$T/local.err" || fail "local compare $h: $(cat "$T/local.err")"
done
# The same runs of q1 once more: still one copy of each (dedup, overwrite).
upload q1 tuned "$T"/q1/fio/tuned-run*.json
# Judged only once both services show every point just written (6 hosts x 6
# runs + q1's older baseline): VictoriaMetrics flushed, then asked until it does.
vm_flush "$vm"
query_shows "$vm" 39 || fail "VictoriaMetrics does not show the 39 points uploaded"
query_shows "$ix/query?db=scsitune" 39 || fail "InfluxDB does not show the 39 points uploaded"

# --- The view through each API.
cmp_args=(--phase tuned --compare baseline)
q 0 '' --query "$vm" "${cmp_args[@]}" -o json
cp "$T/out" "$T/view-export.json"
q 0 '' --query "$vm/api/v1/query" "${cmp_args[@]}" -o json
cp "$T/out" "$T/view-prometheus.json"
q 0 '' --query "$ix/query?db=scsitune" "${cmp_args[@]}" -o json
cp "$T/out" "$T/view-influxql.json"
locals=()
for h in q1 q2 q3 q4 q5 q6; do locals+=("stor-$h=$T/local-$h.json"); done
check "export view = each host's own compare, selection and cohorts recomputed" \
	"$py" "$src/tests/fleet/check-view.py" "$T/view-export.json" --cohorts 2 \
	--status stor-q1=compared --status stor-q2=compared --status stor-q3=compared --status stor-q4=apart \
	--status stor-q5=apart --status stor-q6=apart "${locals[@]}"
check "prometheus and influxql views = the export view" \
	"$py" "$src/tests/fleet/check-view.py" "$T/view-export.json" --same "$T/view-prometheus.json" \
	--same "$T/view-influxql.json"
check "why apart, the newest set, one copy" "$py" - "$T/view-export.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
h = {x["host"]: x for x in v["hosts"]}
want = {"stor-q4": "drifted", "stor-q5": "not-applied", "stor-q6": "not-comparable"}
got = {k: h[k]["apart"] for k in want}
assert got == want, got
assert "bs 4k in baseline, 8k in tuned" in h["stor-q6"]["reason"], h["stor-q6"]["reason"]
assert h["stor-q1"]["reference"]["summary"]["min_kiops"] > 30, "the older baseline set counted"
assert h["stor-q1"]["current"]["summary"]["runs"] == 3, "q1's re-sent runs counted twice"
assert v["query"]["duplicates"] == 0 and v["query"]["points"] == 6 * 6 + 3, v["query"]
assert v["counts"] == {"compared": 3, "apart": 3, "drifted": 2, "missing": 0}, v["counts"]
assert [c["hosts"] for c in v["cohorts"]] == [2, 1] and v["cohorts"][1]["firmware"] == "8.10.0.0.00000-00004"
print("q4 drifted, q5 not applied, q6 not comparable; q1's newest baseline; 39 points, no duplicates")
PY
q 0 '' --query "$vm" "${cmp_args[@]}"
cp "$T/out" "$T/view.txt"
check "text: 80 columns, apart hosts said" "$py" - "$T/view.txt" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
wide = [l for l in text.splitlines() if len(l) > 80]
assert not wide, wide
for s in ("stor-q4: apart\n  drifted: its tuned runs", "Shown apart, not averaged in (3):", "Selection: 3 compared host(s)",
          "change: avg +", "tuned, set "):
    assert s in text, s
print("%d lines, none over 80 columns" % len(text.splitlines()))
PY

# --- The view as HTML (--html): well-formed, self-contained, the numbers of -o json (report/check-html.py).
q 0 "HTML report written to $T/view.html" --query "$vm" "${cmp_args[@]}" -o json --html "$T/view.html"
cp "$T/out" "$T/view-html.json"
check "HTML view: numbers equal -o json, change per host drawn" \
	"$py" "$src/tests/report/check-html.py" "$T/view.html" "$T/view-html.json"
q 4 'gate failed' --query "$vm" "${cmp_args[@]}" --gate 'kiops>=+5%,drifted=0' --html "$T/gate.html"
check "HTML view of a failed gate: written, says FAILED" grep -q 'FAILED (exit 4)' "$T/gate.html"
q 1 "^scsitune: --html $T/nodir/v.html: $T/nodir: No such file or directory\$" --query "$vm" "${cmp_args[@]}" \
	--html "$T/nodir/v.html"

# --- The gate (query-gate.sh).
# shellcheck source=tests/fleet/query-gate.sh
. "$src/tests/fleet/query-gate.sh"

# --- Usage errors: exit 64, one line naming the option, before any request.
q 64 "--gate 'spred<=15%': unknown metric 'spred'" --query "$vm" "${cmp_args[@]}" --gate 'spred<=15%'
q 64 "--gate 'kiops>=\+5%': a change in % needs --compare" --query "$vm" --phase tuned --gate 'kiops>=+5%'
q 64 "empty condition" --query "$vm" "${cmp_args[@]}" --gate 'kiops>=+5%,'
q 64 "--gate 'kiops=\+5%': a change is a one-sided test" --query "$vm" "${cmp_args[@]}" --gate 'kiops=+5%'
q 64 "--confidence: '100' is not a percentage from 50 to 99.9" --query "$vm" "${cmp_args[@]}" --gate 'kiops>=+5%' \
	--confidence 100
q 64 '--confidence is the confidence of --gate' --query "$vm" "${cmp_args[@]}" --confidence 90
q 64 'give the phase to show' --query "$vm" --compare baseline
q 64 'a phase name, not a file' --query "$vm" --phase tuned --compare base.json
q 64 '--hosts and --hosts-file' --query "$vm" "${cmp_args[@]}" --hosts a --hosts-file "$T/wave.txt"
q 64 "'a b' is not a host name" --query "$vm" "${cmp_args[@]}" --hosts 'a b'
q 64 "--since: '0d'" --query "$vm" "${cmp_args[@]}" --since 0d
q 64 "--query-api: 'sql'" --query "$vm" "${cmp_args[@]}" --query-api sql
q 64 'cannot tell the query API' --query "$vm/other" "${cmp_args[@]}"
q 64 'needs the database' --query "$ix/query" "${cmp_args[@]}"
q 64 '--query reads the central service: no FILE' --query "$vm" "${cmp_args[@]}" "$T/local-q1.json"
q 64 '--upload does not go with report --query' --query "$vm" "${cmp_args[@]}" --upload "$vm/write"
q 64 '--gate does not go with report FILE' "${cmp_args[@]}" --gate 'kiops>=+5%' "$T/local-q1.json"
: >"$T/empty.txt"
q 1 '--hosts-file .*: no host in the file' --query "$vm" "${cmp_args[@]}" --hosts-file "$T/empty.txt"
mkfifo "$T/fifo"
q 1 '--hosts-file .*fifo: not a regular file' --query "$vm" "${cmp_args[@]}" --hosts-file "$T/fifo"

# --- Misbehaving answers (the stub): an error, never a view, never a passed gate.
gate=(--gate 'kiops>=+5%')
q 1 'no point of phase tuned or baseline in the answer, between [0-9-]+ [0-9:]+ UTC and [0-9-]+ [0-9:]+ UTC, nor in the year before; the gate is not passed' \
	--query "$stub/empty/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
# Points older than the window: said, with the --since that takes them (a second ask, a year back).
q 1 'no point of phase tuned or baseline in the answer, between [^;]*; 2 older points of these phases, the newest at [0-9-]+ [0-9:]+ UTC \(--since 16d takes it\); the gate' \
	--query "$stub/old/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'line 1: not JSON' --query "$stub/notjson/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'line 7: truncated JSON' --query "$stub/truncjson/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
: >"$T/stub.log"
q 1 'transfer closed|Transferred a partial file|bytes remaining' --query "$stub/cut/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
checks=$((checks + 1))
[ "$(wc -l <"$T/stub.log")" -eq 3 ] && pass "cut answer: 3 tries" || fail "cut answer: $(wc -l <"$T/stub.log") tries"
q 1 'results\[0\] is partial' --query "$stub/partial/query?db=scsitune" "${cmp_args[@]}" "${gate[@]}"
q 1 'resultType .vector., not matrix' --query "$stub/vector/api/v1/query" "${cmp_args[@]}" "${gate[@]}"
# The payload alone as the treatment (no profile on either side): compared and gated; the same
# with nothing differing is "not applied", apart.
q 0 'gate passed: kiops>=\+5% \(1 host' --query "$stub/payload/api/v1/export" "${cmp_args[@]}" --hosts h1 "${gate[@]}" \
	--html "$T/payload.html"
check "payload-only: compared, the treatment named" grep -q '^  treatment: payload none → 8.4.0.0-scsitune1$' "$T/out"
check "payload-only: the treatment in the HTML hosts table" \
	grep -q '<td class="treatment">payload none → 8.4.0.0-scsitune1</td>' "$T/payload.html"
check "payload-only: the cohort's treatment, its host's" test "$(grep -c '^  treatment: payload none → 8.4.0.0-scsitune1$' "$T/out")" = 2
q 0 'gate passed' --query "$stub/payload/api/v1/export" "${cmp_args[@]}" --hosts h1,h3 "${gate[@]}"
check "two treatments in one cohort: said mixed" grep -q "^  treatment: the hosts' treatments differ (see each host)$" "$T/out"
q 4 'gate failed: apart=0 \(1: h2 \(not applied: its tuned runs were made with no profile applied, and nothing else differs from baseline\)\)' \
	--query "$stub/payload/api/v1/export" "${cmp_args[@]}" --hosts h2 "${gate[@]}"
# Impossible answers fail closed: one line naming what was wrong, exit 1, never a passed gate.
q 1 'host h1, phase tuned: a KIOPS value of -50 \(zero or below: not a run\); the gate is not passed' \
	--query "$stub/negative/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'host h1: its statistics are not finite numbers \(the answer.s values overflow\); the gate is not passed' \
	--query "$stub/overflow/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'host h1, phase tuned: a point at 20[0-9-]+ [0-9:]+ UTC, outside the window asked for \(20[0-9-]+ [0-9:]+ UTC to ' \
	--query "$stub/outside/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 "host h1, phase tuned: verify_state 'Drifted' is none that scsitune writes" \
	--query "$stub/vstate/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'the answer is partial \(isPartial: true\): not judged; the gate is not passed' \
	--query "$stub/ispartial/api/v1/query" "${cmp_args[@]}" "${gate[@]}"
q 1 'HTTP 206: the query APIs answer 200' --query "$stub/206/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
q 1 'no point of phase tuned or baseline' --query "$stub/phase/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
: >"$T/stub.log"
t1=$(date +%s)
q 1 'no answer within the 1 s query timeout' --query "$stub/slow/api/v1/export" "${cmp_args[@]}" --query-timeout 1 "${gate[@]}"
t2=$(date +%s)
checks=$((checks + 1))
# The stub logs a request once its thread has read it, which on a busy machine
# can be after scsitune gave that try up: its log is read once it holds the 3.
stub_has() { [ "$(wc -l <"$T/stub.log")" -ge "$1" ]; }
poll 60 stub_has 3
[ $((t2 - t1)) -le 15 ] && [ "$(wc -l <"$T/stub.log")" -eq 3 ] && pass "slow: 3 tries of 1 s, $((t2 - t1)) s in all" ||
	fail "slow: $((t2 - t1)) s, $(wc -l <"$T/stub.log") tries"
: >"$T/stub.log"
q 1 'HTTP 503: \{"error":"stub overloaded"\}' --query "$stub/503/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
checks=$((checks + 1))
[ "$(wc -l <"$T/stub.log")" -eq 3 ] && pass "503: 3 tries" || fail "503: $(wc -l <"$T/stub.log") tries"
: >"$T/stub.log"
q 1 'HTTP 400: .*stub says the query is bad' --query "$stub/400/api/v1/query" "${cmp_args[@]}" "${gate[@]}"
checks=$((checks + 1))
[ "$(wc -l <"$T/stub.log")" -eq 1 ] && pass "400: one try" || fail "400: $(wc -l <"$T/stub.log") tries"
# The HTML view names the outlier among 6 compared hosts; a host name with markup is text.
q 0 "HTML report written to $T/outlier.html" --query "$stub/outlier/api/v1/export" "${cmp_args[@]}" -o json \
	--html "$T/outlier.html"
cp "$T/out" "$T/outlier.json"
check "HTML view of 6 hosts: numbers equal -o json" "$py" "$src/tests/report/check-html.py" "$T/outlier.html" \
	"$T/outlier.json"
check "HTML view: the +100 % host named as the one outlier, its name '<6>&' as text" "$py" - "$T/outlier.html" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.warn, self.in_warn = [], "", False
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.in_warn = tag == "p" and dict(attrs).get("class") == "note warn"
    def handle_endtag(self, tag):
        if tag == "p":
            self.in_warn = False
    def handle_data(self, data):
        if self.in_warn:
            self.warn += data
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
assert "6" not in p.tags, "an element made from the host name"
assert p.warn.startswith("Outliers") and "h<6>& (+100.0 %)" in p.warn, p.warn
assert not any(f"h{i} " in p.warn for i in range(1, 6)), p.warn
print(p.warn)
PY
check "HTML view: the change axis fits the 5 hosts within the fences, the +100 % bar clipped and marked" "$py" - "$T/outlier.html" "$T/outlier.json" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.load(open(sys.argv[2]))
svg = re.search(r'<svg class="chart" data-scale="signed".*?</svg>', html, re.S).group(0)
ticks = [float(t) for t in re.findall(r'>([+-]?[0-9.]+) %</text>', svg)]
others = [abs(h["compare"]["avg_change_pct"]) for h in d["hosts"] if h["compare"] and abs(h["compare"]["avg_change_pct"]) < 50]
top = max(ticks)
assert others and max(others) <= top < 50, ("the axis does not fit the others", ticks, others)
clipped = re.findall(r'<rect [^>]*data-clipped="1"', svg)
assert len(clipped) == 1 and "beyond the scale: +<tspan" in svg, ("the +100 % bar not clipped and marked", clipped)
print("axis +-%g %% for hosts within +-%.1f %%; the outlier clipped" % (top, max(others)))
PY
: >"$T/stub.log"
: >"$T/stub.log"
q 0 'gate passed' --query "$stub/dup/api/v1/export" "${cmp_args[@]}" --hosts h1 "${gate[@]}"
check "a duplicate sample dropped, counted; the request's form" "$py" - "$T/out" "$T/stub.log" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
assert "(1 duplicates dropped)" in text, text[:600]
req = json.loads(open(sys.argv[2]).readline())
m = req["form"]["match[]"][0]
assert m == ('{__name__=~"scsitune_fio_(kiops|read_clat_p50_ns|read_clat_p99_ns|read_clat_p99_9_ns|'
             'write_clat_p50_ns|write_clat_p99_ns|write_clat_p99_9_ns|worst_clat_p99_ns|fairness)",'
             'phase=~"tuned|baseline",host=~"h1"}'), m
assert float(req["form"]["end"][0]) > float(req["form"]["start"][0]) + 7 * 86400 - 1
print("match[] %s, start/end a 7 d window" % m)
PY
# One set of two jobs (bs 4k and 8k among h1's tuned runs): apart, never judged, the gate fails.
q 4 'gate failed: .*apart=0 \(1: h1 \(not comparable: its tuned runs are not one job \(bs 4k and 8k\)\)\)' \
	--query "$stub/mixed/api/v1/export" "${cmp_args[@]}" "${gate[@]}"
umask 077
printf 'Bearer tok-q\n' >"$T/good.auth"
printf 'Bearer tok-wrong\n' >"$T/bad.auth"
: >"$T/stub.log"
q 0 'gate passed' --query "$stub/auth/api/v1/export" "${cmp_args[@]}" --auth-file "$T/good.auth" "${gate[@]}"
q 1 "HTTP 401: Unauthorized: 'Bearer \*\*\*' is not the token" --query "$stub/auth/api/v1/export" "${cmp_args[@]}" \
	--auth-file "$T/bad.auth" "${gate[@]}"
checks=$((checks + 1))
grep -q 'tok-wrong' "$T/err" && fail "the token reached the message" || pass "401: the token masked"
chmod 644 "$T/good.auth"
q 1 'readable by others' --query "$stub/auth/api/v1/export" "${cmp_args[@]}" --auth-file "$T/good.auth"
checks=$((checks + 1))
[ "$(grep -c '"auth": "Bearer tok-q"' "$T/stub.log")" -eq 1 ] && pass "auth: Authorization sent, a readable auth file never used" ||
	fail "auth: $(cat "$T/stub.log")"

# --- valgrind on a view with a gate and --html, the outlier view's --html, and on a bad answer (plain build only).
if [ -n "${SCSITUNE_VALGRIND:-}" ]; then
	vg=("$SCSITUNE_VALGRIND" -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect)
	for args in "--query $vm --phase tuned --compare baseline --gate kiops>=+5%,drifted=0 -o json --html $T/vg.html" \
		"--query $stub/outlier/api/v1/export --phase tuned --compare baseline --html $T/vg2.html" \
		"--query $stub/truncjson/api/v1/export --phase tuned --compare baseline --gate spread<=15%"; do
		rc=0
		# shellcheck disable=SC2086
		"${vg[@]}" "$bin" report $args >/dev/null 2>"$T/vg.err" || rc=$?
		checks=$((checks + 1))
		[ "$rc" -ne 99 ] && ! grep -q '==[0-9]*==' "$T/vg.err" && pass "valgrind clean: report $args (exit $rc)" ||
			{ fail "valgrind: report $args"; head -30 "$T/vg.err"; }
	done
fi

# --- The service down: no view, the gate not passed, within the retries' bound.
stop_server vm
t1=$(date +%s)
q 1 "query http://127.0.0.1:$vm_port/api/v1/export: .*(Connection refused|Couldn't connect).*; the gate is not passed" \
	--query "$vm" "${cmp_args[@]}" "${gate[@]}"
t2=$(date +%s)
checks=$((checks + 1))
[ $((t2 - t1)) -le 10 ] && pass "service down: $((t2 - t1)) s (3 tries)" || fail "service down: $((t2 - t1)) s"

# --- Every document against the schema; the schema against the renderer; broken copies.
schema=("$py" "$src/tests/docs/check-schema.py" "$src/schema/report-query.schema.json")
keys=()
for k in kernel payload profile profile_digest firmware hba_model verify_state fio_version rw bs iodepth numjobs; do
	keys+=(--key "$k")
done
check "schema and render-query.c name the same keys" "${schema[@]}" --keys "$src/cli/report/render-query.c" "${keys[@]}"
docs=("$T"/view-*.json)
check "documents match the schema (${#docs[@]})" "${schema[@]}" "${docs[@]}"
check "the schema rejects broken copies" "${schema[@]}" --mutants "$T/view-export.json" "$T/view-gate.json" \
	"$T/view-nocompare.json"

echo "fleet/query: $checks checks, $fails failed, $(($(date +%s) - started)) s"
[ "$fails" -eq 0 ]
