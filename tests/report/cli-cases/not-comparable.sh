# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case not-comparable of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): the same run twice refused; numjobs 2 vs 1 in a set and
# --compare against another fio version, numjobs, ioengine and job mix warned on
# stderr, in the text and in the JSON; the same job in json and json+
# comparable.
# --- Runs that cannot be compared. The same content twice (under another name): exit 1,
# one line naming both files, nothing saved.
cp "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
expect "the same run twice" 1 "^scsitune: $work/copy.json: the same run as $fixtures/fio-3.33-randread-2jobs-json.json \(identical content\): give each run once$" \
	-- report --phase x --state-dir "$work/dup-state" "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
[ -e "$work/dup-state" ] && fail "the same run twice: a state directory was written"
# Another job in the set (numjobs 2 vs 1): exit 0, said on stderr, in the text and in the JSON.
pair=("$fixtures/fio-3.33-randread-2jobs-json.json" "$fixtures/fio-3.33-randread-1job-jsonplus.json")
rc=0
"$bin" report -o json "${pair[@]}" >"$work/nc.json" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: runs not comparable: run 2 (.*1job-jsonplus.json) against run 1 (.*2jobs-json.json): numjobs 2 vs 1$" "$work/err" &&
	"$py" -c 'import json,sys
s=json.load(open(sys.argv[1]))["summary"]
assert s["comparable"] is False and len(s["not_comparable"])==1 and s["not_comparable"][0].endswith("numjobs 2 vs 1"), s' "$work/nc.json" &&
	pass "numjobs 2 vs 1 in one set: warned, summary.comparable false" || fail "numjobs 2 vs 1 in one set: exit $rc $(cat "$work/err")"
"$bin" report -o json "$fixtures/fio-3.33-randread-2jobs-json.json" "$fixtures/fio-3.33-randread-2jobs-jsonplus.json" >"$work/c.json" 2>"$work/err"
checks=$((checks + 1))
[ ! -s "$work/err" ] && "$py" -c 'import json,sys
s=json.load(open(sys.argv[1]))["summary"]; assert s["comparable"] is True and s["not_comparable"]==[], s' "$work/c.json" &&
	pass "the same job in json and json+: comparable, no warning" || fail "the same job in json and json+: $(cat "$work/err")"
# --compare across jobs: randread numjobs 2 saved, compared with the mixed job file and fio 3.1.
cs=$work/noncomparable-state
"$bin" report --phase base --state-dir "$cs" "$fixtures/fio-3.33-randread-2jobs-json.json" >/dev/null 2>&1 || fail "saving base"
rc=0
"$bin" report --state-dir "$cs" --compare base "$fixtures/fio-3.1-randread-1job-json.json" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: --compare base: not comparable: fio version fio-3.33 vs fio-3.1$" "$work/err" &&
	grep -q "^scsitune: warning: --compare base: not comparable: numjobs 2 vs 1$" "$work/err" &&
	grep -q "^scsitune: warning: --compare base: not comparable: ioengine psync vs libaio$" "$work/err" &&
	grep -q "^  WARNING: NOT COMPARABLE with base, the change means nothing:$" "$work/out" &&
	pass "--compare another fio and job: warned in stderr and text" || fail "--compare another fio and job: exit $rc $(cat "$work/err")"
"$bin" report -o json --state-dir "$cs" --compare base "$fixtures/fio-3.33-global-mixed-json.json" >"$work/cj.json" 2>/dev/null
checks=$((checks + 1))
"$py" -c 'import json,sys
c=json.load(open(sys.argv[1]))["compare"]
assert c["comparable"] is False and "numjobs 2 vs 1" in c["not_comparable"] and "jobs 1 (randread) vs 2 (randread, randrw)" in c["not_comparable"], c' "$work/cj.json" &&
	pass "--compare with the mixed job file: compare.comparable false, the jobs named" || fail "--compare JSON: $(cat "$work/cj.json" | head -c 600)"
"$bin" report -o json --state-dir "$cs" --compare base "$fixtures/fio-3.33-randread-2jobs-jsonplus.json" >"$work/cs.json" 2>"$work/err"
checks=$((checks + 1))
[ ! -s "$work/err" ] && "$py" -c 'import json,sys
c=json.load(open(sys.argv[1]))["compare"]; assert c["comparable"] is True and c["not_comparable"]==[], c' "$work/cs.json" &&
	pass "--compare the same job: comparable" || fail "--compare the same job: $(cat "$work/err")"
