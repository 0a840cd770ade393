# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case compare-errors of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): --compare of an unknown phase, of a file that is not a result
# set, of a missing file: exit 1, one line, nothing saved.
# --compare of an unknown phase or a file that is not a result set: nothing saved.
cs=$work/cmp-state
expect "compare unknown phase" 1 "^scsitune: --compare nope: no saved result set for phase 'nope' in $cs/reports/nope$" \
	-- report --phase x --state-dir "$cs" --compare nope "$good"
expect "compare non-result file" 1 "^scsitune: --compare $good: $good: not a scsitune result set: no 'schema_version' and 'runs'$" \
	-- report --phase x --state-dir "$cs" --compare "$good" "$good"
expect "compare missing file" 1 "^scsitune: --compare $work/none.json: $work/none.json: No such file or directory$" \
	-- report --state-dir "$cs" --compare "$work/none.json" "$good"
state_empty "failed compare" "$cs"
