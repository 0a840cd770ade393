# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case stdin of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): "-" reads standard input (the same figures as the file), once
# only; garbage on it is one line naming stdin.
# "-" is standard input: the same figures as the file; once only.
"$bin" report -o json "$good" >"$work/file.json" 2>/dev/null
rc=0
"$bin" report -o json - <"$good" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
if [ "$rc" -eq 0 ] && python3 -c 'import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["runs"][0]["iops"] == b["runs"][0]["iops"], (a["runs"][0], b["runs"][0])' "$work/file.json" "$work/out" 2>"$work/py"; then
	pass "report - reads standard input"
else
	fail "report - reads standard input: exit $rc $(cat "$work/err" "$work/py")"
fi
expect "'-' twice" 64 "^scsitune: report: '-' \(standard input\) given more than once$" -- report - - </dev/null
rc=0
echo garbage | "$bin" report - >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "^scsitune: stdin: not JSON" "$work/err" && pass "report - with garbage: one line naming stdin" ||
	fail "report - with garbage: exit $rc $(cat "$work/err")"
