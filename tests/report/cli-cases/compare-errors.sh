# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case compare-errors of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): --compare of an unknown phase, of a file that is not a result
# set, of a missing file: exit 1, one line, nothing saved.
# --compare of an unknown phase or a file that is not a result set: nothing saved.
cs=$work/cmp-state
expect "compare unknown phase" 1 "^scsitune: --compare nope: no saved result set for phase 'nope' in $cs/reports/nope \(no phase saved there yet\)$" \
	-- report --phase x --state-dir "$cs" --compare nope "$good"
# With phases saved: the refusal lists them (the next step: one of those names).
for ph in base tuned; do
	"$bin" report --phase "$ph" --state-dir "$work/cmp-saved" "$good" >/dev/null 2>&1 || fail "saving phase $ph"
done
expect "compare unknown phase, phases listed" 1 "^scsitune: --compare nope: no saved result set for phase 'nope' in $work/cmp-saved/reports/nope \(phases saved there: base, tuned\)$" \
	-- report --state-dir "$work/cmp-saved" --compare nope "$good"
expect "compare non-result file" 1 "^scsitune: --compare $good: not a scsitune result set: no 'schema_version' and 'runs'$" \
	-- report --phase x --state-dir "$cs" --compare "$good" "$good"
expect "compare missing file" 1 "^scsitune: --compare $work/none.json: No such file or directory$" \
	-- report --state-dir "$cs" --compare "$work/none.json" "$good"
state_empty "failed compare" "$cs"
