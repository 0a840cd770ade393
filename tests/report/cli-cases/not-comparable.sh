# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case not-comparable of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): the same run twice refused; numjobs 2 vs 1 in a set refused
# (exit 1, the odd file and the option named, nothing saved), kept with
# --allow-mixed (warned, summary.comparable false, never uploaded), and a
# --compare against such a set, or of such a set, not comparable in the text,
# the JSON and the HTML (the change not coloured); --compare against another
# fio version, numjobs, ioengine and job mix warned on stderr, in the text and
# in the JSON; the same job in json and json+ comparable; a set compared with
# the one saved from the same files (its first run's start) not comparable.
# --- Runs that cannot be compared. The same content twice (under another name): exit 1,
# one line naming both files, nothing saved.
cp "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
expect "the same run twice" 1 "^scsitune: $work/copy.json: the same run as $fixtures/fio-3.33-randread-2jobs-json.json \(identical content\): give each run once$" \
	-- report --phase x --state-dir "$work/dup-state" "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
[ -e "$work/dup-state" ] && fail "the same run twice: a state directory was written"
# Another job in the set (numjobs 2 vs 1): refused, exit 1, the odd file and the option named,
# nothing saved; with --allow-mixed: exit 0, said on stderr, in the text and in the JSON.
pair=("$fixtures/fio-3.33-randread-2jobs-json.json" "$fixtures/fio-3.33-randread-1job-jsonplus.json")
expect "numjobs 2 vs 1 in one set" 1 "^scsitune: $fixtures/fio-3.33-randread-1job-jsonplus.json: not the same fio job as $fixtures/fio-3.33-randread-2jobs-json.json \(numjobs 2 vs 1\): a set is one job; --allow-mixed keeps them, marked not comparable$" \
	-- report --phase x --state-dir "$work/mixed-refused" "${pair[@]}"
[ -e "$work/mixed-refused" ] && fail "numjobs 2 vs 1 refused: a state directory was written"
expect "--allow-mixed never uploaded" 64 "^scsitune: --allow-mixed: a set marked not comparable is never uploaded" \
	-- report --allow-mixed --upload http://127.0.0.1:9/write --state-dir "$work/mixed-refused" "${pair[@]}"
[ -e "$work/mixed-refused" ] && fail "--allow-mixed --upload: a state directory was written"
rc=0
"$bin" report -o json --allow-mixed "${pair[@]}" >"$work/nc.json" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: runs not comparable: run 2 (.*1job-jsonplus.json) against run 1 (.*2jobs-json.json): numjobs 2 vs 1$" "$work/err" &&
	"$py" -c 'import json,sys
s=json.load(open(sys.argv[1]))["summary"]
assert s["comparable"] is False and len(s["not_comparable"])==1 and s["not_comparable"][0].endswith("numjobs 2 vs 1"), s' "$work/nc.json" &&
	pass "numjobs 2 vs 1 in one set, --allow-mixed: warned, summary.comparable false" || fail "numjobs 2 vs 1 in one set: exit $rc $(cat "$work/err")"
# --compare inherits either side's status: a clean set against the mixed one, and the mixed one
# against a clean one: compare.comparable false, said in the text, the HTML change not coloured.
ms=$work/mixed-state
"$bin" report --allow-mixed --phase mixed --state-dir "$ms" "${pair[@]}" >/dev/null 2>&1 || fail "saving the mixed set"
"$bin" report --phase clean --state-dir "$ms" "$fixtures/fio-3.33-randread-2jobs-json.json" >/dev/null 2>&1 || fail "saving clean"
for side in ref cur; do
	if [ $side = ref ]; then
		args=(--compare mixed "$fixtures/fio-3.33-randread-2jobs-jsonplus.json")
		why="the reference set's runs are not one fio job (saved with --allow-mixed)"
	else
		args=(--allow-mixed --compare clean "${pair[@]}")
		why="this set's runs are not one fio job (--allow-mixed)"
	fi
	rc=0
	"$bin" report -o json --state-dir "$ms" --html "$work/m-$side.html" "${args[@]}" >"$work/m-$side.json" 2>"$work/err" || rc=$?
	"$bin" report --state-dir "$ms" "${args[@]}" >"$work/m-$side.txt" 2>/dev/null
	checks=$((checks + 1))
	if [ "$rc" -eq 0 ] && "$py" -c 'import json,sys
c=json.load(open(sys.argv[1]))["compare"]; assert c["comparable"] is False and sys.argv[2] in c["not_comparable"], c' "$work/m-$side.json" "$why" &&
		grep -q "WARNING: NOT COMPARABLE with" "$work/m-$side.txt" && grep -qF -- "- $why" "$work/m-$side.txt" &&
		grep -q 'not comparable: the change means nothing' "$work/m-$side.html" &&
		! grep -q '<p class="headline">[^<]*<span class="\(up\|down\)"' "$work/m-$side.html"; then
		pass "--compare, mixed $side: not comparable in JSON, text and HTML (change uncoloured)"
	else
		fail "--compare, mixed $side: exit $rc: $(head -c 400 "$work/m-$side.json")"
	fi
done
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
# --compare with the set saved from these very files: a set compared with itself, not comparable.
rc=0
"$bin" report -o json --state-dir "$cs" --compare base "$fixtures/fio-3.33-randread-2jobs-json.json" >"$work/self.json" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: --compare base: not comparable: the reference is these runs (its first run started when this set's did): a set compared with itself$" "$work/err" &&
	"$py" -c 'import json,sys
c=json.load(open(sys.argv[1]))["compare"]; assert c["comparable"] is False, c' "$work/self.json" &&
	pass "--compare with itself: not comparable" || fail "--compare with itself: exit $rc $(cat "$work/err")"
