# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# fleet/query's gate (sourced by test-query.sh, after the six hosts were
# uploaded to both services): verdicts that pass and fail, the implicit
# conditions, each change as a rank test of the runs (not of averages), too
# few runs or hosts said and never a pass, the tests held to a brute-force
# count (check-gate-tests.py), the gate's JSON document.
# --- The gate.
good=(--hosts stor-q1,stor-q2 --hosts stor-q3)
q 0 'gate passed: kiops>=\+5%,spread<=15%,drifted=0 \(3 host\(s\) compared\)' --query "$vm" "${cmp_args[@]}" \
	"${good[@]}" --gate 'kiops>=+5%,spread<=15%,drifted=0'
q 4 'gate failed: drifted=0 \(2: stor-q4 \(drifted: [^)]*\), stor-q5 \(not applied: [^)]*\)\); apart=0 \(3: ' --query "$vm" "${cmp_args[@]}" --gate 'kiops>=+5%,drifted=0'
# A change is a test of the runs (3 a side here), not of averages: stor-q1's avg is +33 %, but its runs do not
# show +25 % at 95 %.
q 4 'gate failed: kiops>=\+25% \(stor-q1 \+[0-9.]+ %: not shown at 95 %: [0-9.]+ % reached \(3 and 3 runs\), stor-q2 \+[0-9.]+ %: not shown' \
	--query "$vm" "${cmp_args[@]}" "${good[@]}" --gate 'kiops>=+25%'
# 3 and 3 runs reach at most 95 %: at 99 % they are too few, said so (never a pass); 3 hosts as units reach 87.5 %.
q 4 'gate failed: kiops>=\+5% \(stor-q1 \+[0-9.]+ %: too few runs for 99 %: 3 and 3 runs reach at most 95.0 %' \
	--query "$vm" "${cmp_args[@]}" "${good[@]}" --gate 'kiops>=+5%' --confidence 99
q 4 'gate failed: selection.kiops>=\+5% \(\+[0-9.]+ %: too few hosts for 95 %: 3 hosts reach at most 87.5 %\)' \
	--query "$vm" "${cmp_args[@]}" "${good[@]}" --gate 'selection.kiops>=+5%'
q 4 'gate failed' --query "$vm" "${cmp_args[@]}" "${good[@]}" --gate 'kiops>=+5%,kiops<=+10%' -o json
cp "$T/out" "$T/view-tests.json"
check "change tests: per host, each equal to a brute-force count of the runs' orderings (U, p, median ratio)" \
	"$py" "$src/tests/fleet/check-gate-tests.py" "$T/view-tests.json"

q 4 'gate failed: missing=0 \(1: stor-zz \(no points in the window\)\)' --query "$vm" "${cmp_args[@]}" --hosts stor-q1,stor-zz --gate 'kiops>=+5%'
q 0 'gate passed' --query "$vm" "${cmp_args[@]}" --hosts stor-q1,stor-zz --gate 'kiops>=+5%,missing<=1'
q 4 'gate failed: apart=0 \(1: stor-q6 \(not comparable: ' --query "$vm" "${cmp_args[@]}" --hosts stor-q1,stor-q6 \
	--gate 'kiops>=+5%'
q 0 'gate passed: kiops>=\+5%,apart<=1 \(1 host' --query "$vm" "${cmp_args[@]}" --hosts stor-q1,stor-q6 \
	--gate 'kiops>=+5%,apart<=1'
q 4 'selection.cov<1 \([0-9.]+ %\)' --query "$ix/query?db=scsitune" "${cmp_args[@]}" "${good[@]}" --gate 'selection.cov<1'
printf '# wave 2\nstor-q1\n\n  stor-q2   # canary\nstor-q1\n' >"$T/wave.txt"
q 0 'gate passed: spread<=15% \(2 host' --query "$vm" "${cmp_args[@]}" --hosts-file "$T/wave.txt" --gate 'spread<=15%' -o json
cp "$T/out" "$T/view-gate.json"
q 4 'gate failed' --query "$vm" --phase tuned --hosts stor-q5 --gate 'drifted=0,hosts>=1,kiops>=60' -o json
cp "$T/out" "$T/view-nocompare.json"
check "gate document: conditions, hosts asked once" "$py" - "$T/view-gate.json" "$T/view-nocompare.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
assert g["query"]["hosts_asked"] == 2 and [h["host"] for h in g["hosts"]] == ["stor-q1", "stor-q2"], g["query"]
c = [(x["condition"], x["implicit"], x["passed"]) for x in g["gate"]["conditions"]]
assert c == [("spread<=15%", False, True), ("missing=0", True, True), ("apart=0", True, True), ("hosts>=1", True, True)], c
n = json.load(open(sys.argv[2]))
assert n["query"]["compare"] is None and n["hosts"][0]["status"] == "compared", "no --compare: none-applied is not apart"
assert not n["gate"]["passed"]
print("conditions %s" % c)
PY

# SPEC.md's seed table on one host: 6,255 -> 7,350 (+17.5 % of the averages) passes kiops>=+5% as a test of
# its 10 and 5 runs; the estimate is the median change (+14.0 %), not the averages' (one 4,200 run does not decide).
q 0 'gate passed: kiops>=\+5% \(1 host' --query "$stub/seeds/api/v1/export" "${cmp_args[@]}" --gate 'kiops>=+5%'
check "the seed table: +17.5 % avg, the test's estimate +14.0 % and its bound above +5 %" \
	grep -Pzo 'change: avg \+17\.5 %[\s\S]*ok    kiops>=\+5%: every compared host \(1\) shown at 95 %\n +h1: \+14\.0 %, at least \+(9|1[0-9])\.[0-9] %' "$T/out"
q 4 'gate failed: kiops>=\+20% \(h1 \+14\.0 %: not shown' --query "$stub/seeds/api/v1/export" "${cmp_args[@]}" \
	--gate 'kiops>=+20%'
