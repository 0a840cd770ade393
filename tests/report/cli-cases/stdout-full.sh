# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case stdout-full of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): stdout that cannot be written (/dev/full): exit 1, the error
# said.
# stdout that cannot be written.
rc=0
"$bin" report "$good" >/dev/full 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "writing output: No space left on device" "$work/err" && pass "stdout is /dev/full" ||
	fail "stdout is /dev/full: exit $rc"
