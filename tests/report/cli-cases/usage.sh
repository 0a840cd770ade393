# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case usage of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): usage errors exit 64: --flush with a file or without a URL,
# empty --upload, bad --upload-timeout, no file, bad --phase and --compare, an
# unknown option.
settings_files
# Usage errors: 64.
expect "flush with a file" 64 "--flush sends the spool only: no FILE" \
	-- report --flush --state-dir "$us" --upload http://127.0.0.1:1/write "$good"
expect "flush without a URL" 64 "--flush: no --upload URL" -- report --flush --state-dir "$us" --config "$work/empty.conf"
expect "empty --upload" 64 "--upload: empty argument" -- report --upload "" "$good"
for t in 0 3601 -1 5s ""; do
	expect "--upload-timeout '$t'" 64 "--upload-timeout: '$t' is not a number of seconds from 1 to 3600" \
		-- report --upload http://127.0.0.1:1/write --upload-timeout "$t" "$good"
done
expect "no file" 64 "report: no fio JSON file given" -- report
expect "bad phase" 64 "--phase: invalid name '../x'" -- report --phase ../x "$good"
expect "bad compare" 64 "--compare: 'a b' is neither a phase name nor a file" -- report --compare "a b" "$good"
expect "unknown option" 64 "^scsitune: report: unknown option '--frob'" -- report --frob "$good"
