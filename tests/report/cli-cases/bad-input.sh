# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case bad-input of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): bad fio input (truncated, not JSON, not fio, invalid, empty,
# missing, a directory, a failed job, one bad among good, two bad): exit 1, one
# line each naming the file, nothing on stdout, nothing saved; error text before
# a good document accepted with a warning.
# --- Bad input: exit 1, one line naming the file, nothing on stdout, nothing saved.
bad=$work/bad
mkdir -p "$bad"
head -c 3000 "$good" >"$bad/truncated.json"
printf 'this is not json\n' >"$bad/text.json"
printf '{"name": "not fio", "items": [1, 2]}\n' >"$bad/other.json"
printf '{"jobs": [ }\n' >"$bad/broken.json"
: >"$bad/empty.json"
bs=$work/bad-state
expect "truncated file" 1 "^scsitune: $bad/truncated.json: truncated JSON: the document starting at byte 0 ends early$" \
	-- report --phase x --state-dir "$bs" "$bad/truncated.json"
expect "not JSON" 1 "^scsitune: $bad/text.json: not JSON: no line starts with '\{' \(begins \"this is not json\"\)$" \
	-- report --phase x --state-dir "$bs" "$bad/text.json"
expect "JSON that is not fio" 1 "^scsitune: $bad/other.json: not fio output: no 'jobs' array$" \
	-- report --phase x --state-dir "$bs" "$bad/other.json"
expect "invalid JSON" 1 "^scsitune: $bad/broken.json: invalid JSON at byte [0-9]+: " \
	-- report --phase x --state-dir "$bs" "$bad/broken.json"
expect "empty file" 1 "^scsitune: $bad/empty.json: empty file, no JSON document$" \
	-- report --phase x --state-dir "$bs" "$bad/empty.json"
expect "missing file" 1 "^scsitune: $bad/nope.json: No such file or directory$" \
	-- report --phase x --state-dir "$bs" "$bad/nope.json"
expect "directory" 1 "^scsitune: $bad: Is a directory$" -- report --phase x --state-dir "$bs" "$bad"
expect "per-job error" 1 "^scsitune: $fixtures/fio-3.33-enospc-stdout-json.json: fio job 0 'full' failed with error 28 \(No space left on device\)$" \
	-- report --phase x --state-dir "$bs" "$fixtures/fio-3.33-enospc-stdout-json.json"
grep -q "warning: .*skipped 1 line of text before the JSON document" "$work/err" ||
	fail "per-job error: no warning about the text before the JSON"
expect "one bad among good" 1 "^scsitune: $bad/other.json: not fio output" \
	-- report --phase x --state-dir "$bs" "$good" "$bad/other.json" "$fixtures/fio-3.33-randread-2jobs-jsonplus.json"
# Two bad files: one line each.
rc=0
"$bin" report "$bad/text.json" "$bad/truncated.json" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
# (then the hint, once: what a run is)
[ "$rc" -eq 1 ] && [ "$(grep -vc '^scsitune: hint: ' "$work/err")" -eq 2 ] && [ ! -s "$work/out" ] &&
	[ "$(tail -1 "$work/err")" = "scsitune: hint: a run is what fio --output-format=json+ --output FILE writes, or report --run makes (scsitune-report(8))" ] &&
	pass "two bad files: two lines and the hint" ||
	fail "two bad files: exit $rc: $(cat "$work/err")"
state_empty "bad input" "$bs"

# Error text before a good document: accepted, with the warning.
{ echo "fio: pid=1, err=5/file:io_u.c:1, func=io_u error, error=Input/output error"; cat "$good"; } >"$bad/prefixed.json"
rc=0
"$bin" report "$bad/prefixed.json" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: $bad/prefixed.json: skipped 1 line of text before the JSON document (fio prints errors there): \"fio: pid=1, err=5" "$work/err" &&
	pass "error text before the JSON: warning, accepted" || fail "error text before the JSON: exit $rc"
