# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case groups of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): a fio output with stonewall groups refused without --group (one
# line, nothing saved), a group that is not there and a bad --group refused,
# --group 1 the randwrite group alone.
# --- fio groups (a real fio 3.33 output with stonewall: randread, then randwrite).
sw=fio-3.33-stonewall-2groups-json.json
expect "stonewall groups refused" 1 "^scsitune: $fixtures/$sw: 2 fio groups ran one after the other \(stonewall or new_group\): 0 \(randread\), 1 \(randwrite\); their IOPS do not add up: report one group with --group N$" \
	-- report --phase x --state-dir "$work/sw-state" "$fixtures/$sw"
[ -e "$work/sw-state" ] && fail "stonewall refused: a state directory was written"
expect "--group of none" 1 "^scsitune: $fixtures/$sw: no fio group 7 \(groups: 0 \(randread\), 1 \(randwrite\)\)$" \
	-- report --group 7 "$fixtures/$sw"
expect "--group not a number" 64 "--group" -- report --group x "$fixtures/$sw"
rc=0
"$bin" report -o json --group 1 "$fixtures/$sw" >"$work/sw.json" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && "$py" -c 'import json,sys
r=json.load(open(sys.argv[1]))["runs"][0]
assert r["group"]==1 and r["job_count"]==1 and [j["name"] for j in r["jobs"]]==["randwrite"], r["jobs"]
assert r["read"]["iops"]==0 and r["iops"]==r["write"]["iops"]==r["jobs"][0]["write_iops"]>0, r["iops"]' "$work/sw.json" &&
	pass "--group 1: the randwrite group alone" || fail "--group 1: exit $rc $(cat "$work/err")"
