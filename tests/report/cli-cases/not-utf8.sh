# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case not-utf8 of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): a job name that is not UTF-8: one warning naming the file, the
# JSON and the text UTF-8 (the bytes as U+FFFD).
# A job name that is not UTF-8 (a Latin-1 job file): the report goes on, one
# warning names the file, and every output is UTF-8 (the bytes as U+FFFD).
"$py" - "$fixtures/fio-3.33-randread-1job-jsonplus.json" "$work/latin1.json" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b'"jobname" : "single"') == 1
open(sys.argv[2], "wb").write(d.replace(b'"jobname" : "single"', b'"jobname" : "single\xe9\xff"'))
PY
rc=0
"$bin" report -o json "$work/latin1.json" >"$work/l.out" 2>"$work/l.err" || rc=$?
checks=$((checks + 1))
if [ "$rc" -eq 0 ] && [ "$(cat "$work/l.err")" = "scsitune: warning: $work/latin1.json: 2 bytes of its names and options are not UTF-8: shown as U+FFFD" ] &&
	"$py" -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
names = [j["name"] for r in d["runs"] for j in r["jobs"]]
assert names == ["single\ufffd\ufffd"], names' "$work/l.out"; then
	pass "job name not UTF-8: one warning, the JSON is UTF-8"
else
	fail "job name not UTF-8: exit $rc, stderr $(head -c 300 "$work/l.err")"
fi
rc=0
"$bin" report "$work/latin1.json" >"$work/l.txt" 2>/dev/null || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && iconv -f UTF-8 -t UTF-8 "$work/l.txt" >/dev/null 2>&1 && pass "job name not UTF-8: the text is UTF-8" ||
	fail "job name not UTF-8: text exit $rc, or not UTF-8"
