# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case goldens of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): ingest of the committed fio 3.33 outputs: text and JSON goldens,
# the saved document (its name, equal to -o json, saved once), --compare with
# the saved phase (golden) and with the saved file named (JSON).
# --- Goldens on the committed fio 3.33 outputs (relative names: stable output).
# Four different jobs (numjobs, job mix) and fio versions: a set only with --allow-mixed.
set4=(--allow-mixed fio-3.33-randread-2jobs-json.json fio-3.33-randread-2jobs-jsonplus.json
	fio-3.33-randread-1job-jsonplus.json fio-3.33-global-mixed-json.json)
st=$work/state
(cd "$fixtures" && "$bin" report --phase fixtures --state-dir "$st" "${set4[@]}") >"$work/t.out" 2>"$work/t.err"
rc=$?
[ "$rc" -eq 0 ] || fail "ingest text: exit $rc"
golden ingest.txt "$work/t.out"
golden ingest.txt.stderr "$work/t.err"
saved=$(find "$st/reports/fixtures" -name '*.json')
checks=$((checks + 1))
[ "$(basename "$saved")" = 20261130T063852Z.json ] && pass "saved as reports/fixtures/START.json" ||
	fail "saved file name: $saved"
(cd "$fixtures" && "$bin" report -o json --phase fixtures --state-dir "$st" "${set4[@]}") >"$work/j.out" 2>"$work/j.err"
golden ingest.json "$work/j.out"
checks=$((checks + 1))
cmp -s "$work/j.out" "$saved" && pass "saved document = -o json output" || fail "saved document differs from -o json"
checks=$((checks + 1))
[ "$(find "$st" -type f | wc -l)" -eq 1 ] && pass "same runs saved twice: one file" || fail "files: $(find "$st" -type f)"

# Comparison with the saved phase: the two json+ runs against the four.
(cd "$fixtures" && "$bin" report --allow-mixed --phase jsonplus --state-dir "$st" --compare fixtures \
	fio-3.33-randread-2jobs-jsonplus.json fio-3.33-randread-1job-jsonplus.json) >"$work/c.out" 2>"$work/c.err" ||
	fail "compare: exit $?"
golden compare.txt "$work/c.out"
# ... and with the saved file named directly, in JSON.
"$bin" report -o json --compare "$saved" "$fixtures/fio-3.33-randread-1job-jsonplus.json" >"$work/cj.out" 2>"$work/cj.err" ||
	fail "compare FILE: exit $?"
"$py" - "$work/cj.out" <<'PY' || fail "compare FILE JSON"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["compare"]
assert d["phase"] is None and c["reference"]["label"] == "fixtures" and c["reference"]["runs"] == 4, c
assert c["current"]["label"] == "this set" and c["current"]["runs"] == 1
exp = (c["current"]["avg_kiops"] - c["reference"]["avg_kiops"]) / c["reference"]["avg_kiops"] * 100
assert abs(c["avg_change_pct"] - exp) < 0.01, (c["avg_change_pct"], exp)
print("ok   compare FILE: JSON compare block")
PY
