#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report tier, through the binary:
#  - goldens: text and JSON of the committed fio outputs, the saved document,
#    and a comparison; SPEC.md's seed table end to end (synthetic runs with
#    the table's min, max and avg);
#  - bad input: every case exits with its code, prints one line naming the
#    file, nothing on stdout, nothing in the state directory; upload settings
#    (URL, auth file, CA file, settings file) are checked before anything is saved.
# Usage: test-report.sh SCSITUNE FIO_FIXTURES EXPECTED_DIR [--update]
set -uo pipefail
bin=$(realpath "$1") fixtures=$(realpath "$2") expected=$3 update=${4:-}
py=${PYTHON3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }

# golden NAME FILE: FILE equals expected/NAME (or becomes it with --update).
golden() {
	checks=$((checks + 1))
	sed "s|$work|WORK|g" "$2" >"$work/golden.tmp"
	if [ "$update" = --update ]; then
		cp "$work/golden.tmp" "$expected/$1"
		pass "golden $1 (updated)"
	elif diff -u "$expected/$1" "$work/golden.tmp" >"$work/diff"; then
		pass "golden $1"
	else
		fail "golden $1:"; head -40 "$work/diff"
	fi
}

# expect NAME RC STDERR_REGEX -- ARGS...: exit code, message, nothing on stdout, one stderr line.
expect() {
	local name=$1 want_rc=$2 err_re=$3
	shift 4
	local rc=0
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	local why=""
	[ "$rc" -eq "$want_rc" ] || why="exit $rc, want $want_rc"
	[ -z "$why" ] && ! grep -Eq -- "$err_re" "$work/err" && why="stderr does not match /$err_re/"
	[ -z "$why" ] && [ -s "$work/out" ] && why="stdout not empty"
	[ -z "$why" ] && [ "$want_rc" -eq 1 ] && [ "$(grep -vc warning: "$work/err")" -ne 1 ] && why="not one error line"
	if [ -n "$why" ]; then
		fail "$name: $why"; sed 's/^/  stderr: /' "$work/err" | head -5
	else
		pass "$name"
	fi
}

state_empty() { # NAME DIR: no file was written under DIR
	checks=$((checks + 1))
	if [ -z "$(find "$2" -type f 2>/dev/null)" ]; then pass "$1: nothing written"; else fail "$1: files written: $(find "$2" -type f)"; fi
}

# --- Goldens on the committed fio 3.33 outputs (relative names: stable output).
set4=(fio-3.33-randread-2jobs-json.json fio-3.33-randread-2jobs-jsonplus.json
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
(cd "$fixtures" && "$bin" report --phase jsonplus --state-dir "$st" --compare fixtures \
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

# --- Real outputs of older fio (fio/SOURCES.md): 2.1.4 (no timestamp, no total_ios),
# 2.17 (usec, KiB), 3.1 (ns, no clat N): their first fio group (2.1.4 and 2.17
# ran several, one after the other), text golden, saved under the earliest start
# time that a run gives (2.1.4 gives none). Three fio versions and other jobs:
# accepted, each run that differs from the first said on stderr and in the text.
old=(fio-2.1.4-5groups-json.json fio-2.17-randread-randwrite-2groups-json.json fio-3.1-randread-1job-json.json)
os=$work/old-state
(cd "$fixtures" && "$bin" report --group 0 --phase old --state-dir "$os" "${old[@]}") >"$work/o.out" 2>"$work/o.err"
rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ "$(grep -vc '^scsitune: result set saved to ' "$work/o.err")" -eq 2 ] &&
	grep -qx "scsitune: warning: runs not comparable: run 2 (fio-2.17-randread-randwrite-2groups-json.json) against run 1 (fio-2.1.4-5groups-json.json): fio version fio-2.1.4 vs fio-2.17" "$work/o.err" &&
	grep -qx "scsitune: warning: runs not comparable: run 3 (fio-3.1-randread-1job-json.json) against run 1 (fio-2.1.4-5groups-json.json): fio version fio-2.1.4 vs fio-3.1" "$work/o.err" &&
	pass "older fio outputs, --group 0: exit 0, the other fio versions said" ||
	fail "older fio outputs: exit $rc: $(head -3 "$work/o.err")"
golden old-fio.txt "$work/o.out"
checks=$((checks + 1))
[ -f "$os/reports/old/20170928T004552Z.json" ] && pass "older fio outputs: saved as the 2.17 run's start" ||
	fail "older fio outputs: not saved: $(find "$os" -type f)"

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

# --- Runs that cannot be compared. The same content twice (under another name): exit 1,
# one line naming both files, nothing saved.
cp "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
expect "the same run twice" 1 "^scsitune: $work/copy.json: the same run as $fixtures/fio-3.33-randread-2jobs-json.json \(identical content\): give each run once$" \
	-- report --phase x --state-dir "$work/dup-state" "$fixtures/fio-3.33-randread-2jobs-json.json" "$work/copy.json"
[ -e "$work/dup-state" ] && fail "the same run twice: a state directory was written"
# Another job in the set (numjobs 2 vs 1): exit 0, said on stderr, in the text and in the JSON.
pair=("$fixtures/fio-3.33-randread-2jobs-json.json" "$fixtures/fio-3.33-randread-1job-jsonplus.json")
rc=0
"$bin" report -o json "${pair[@]}" >"$work/nc.json" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: runs not comparable: run 2 (.*1job-jsonplus.json) against run 1 (.*2jobs-json.json): numjobs 2 vs 1$" "$work/err" &&
	"$py" -c 'import json,sys
s=json.load(open(sys.argv[1]))["summary"]
assert s["comparable"] is False and len(s["not_comparable"])==1 and s["not_comparable"][0].endswith("numjobs 2 vs 1"), s' "$work/nc.json" &&
	pass "numjobs 2 vs 1 in one set: warned, summary.comparable false" || fail "numjobs 2 vs 1 in one set: exit $rc $(cat "$work/err")"
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

# --- SPEC.md's seed table end to end: synthetic single-job runs with those totals.
seed=$work/seed
mkdir -p "$seed"
mkrun() { # FILE KIOPS START_S
	printf '{"fio version": "fio-3.33", "timestamp": %s, "timestamp_ms": %s000, "time": "seed",\n' "$3" "$3" >"$1"
	printf ' "jobs": [{"jobname": "seed", "groupid": 0, "error": 0, "read": {"io_bytes": 0, "bw": %s, "iops": %s, "runtime": 60000}, "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0}}]}\n' \
		"$(($2 * 4000))" "$(($2 * 1000))" >>"$1"
}
i=0
for k in 4200 6700 6400 6500 6450 6460 6470 6480 6440 6450; do
	i=$((i + 1)); mkrun "$seed/base$i.json" "$k" $((1700000000 + i * 100))
done
i=0
for k in 7000 7700 7350 7300 7400; do
	i=$((i + 1)); mkrun "$seed/tuned$i.json" "$k" $((1700100000 + i * 100))
done
(cd "$seed" && "$bin" report --phase baseline --state-dir "$st" base*.json >/dev/null 2>&1) || fail "seed baseline: exit $?"
(cd "$seed" && "$bin" report --phase tuned --state-dir "$st" --compare baseline tuned*.json) >"$work/s.out" 2>/dev/null ||
	fail "seed tuned: exit $?"
sed -n '/^Comparison/,$p' "$work/s.out" >"$work/s.cmp"
golden seed-compare.txt "$work/s.cmp"
(cd "$seed" && "$bin" report -o json --state-dir "$st" --compare baseline tuned*.json) >"$work/s.json" 2>/dev/null
"$py" - "$work/s.json" <<'PY' || fail "seed table JSON"
import json, sys
c = json.load(open(sys.argv[1]))["compare"]
r, t = c["reference"], c["current"]
assert (r["avg_kiops"], r["min_kiops"], r["max_kiops"], r["spread_pct"]) == (6255, 4200, 6700, 37.313), r
assert (t["avg_kiops"], t["min_kiops"], t["max_kiops"], t["spread_pct"]) == (7350, 7000, 7700, 9.091), t
assert c["avg_change_pct"] == 17.506 and c["spread_change_points"] == -28.223, c
print("ok   seed table: 6,255 / 37.3 % -> 7,350 / 9.1 %, +17.5 % avg")
PY
checks=$((checks + 3))

# --- Bad input: exit 1, one line naming the file, nothing on stdout, nothing saved.
bad=$work/bad
mkdir -p "$bad"
good=$fixtures/fio-3.33-randread-2jobs-json.json
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
[ "$rc" -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 2 ] && [ ! -s "$work/out" ] && pass "two bad files: two lines" ||
	fail "two bad files: exit $rc, $(wc -l <"$work/err") lines"
state_empty "bad input" "$bs"

# Error text before a good document: accepted, with the warning.
{ echo "fio: pid=1, err=5/file:io_u.c:1, func=io_u error, error=Input/output error"; cat "$good"; } >"$bad/prefixed.json"
rc=0
"$bin" report "$bad/prefixed.json" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^scsitune: warning: $bad/prefixed.json: skipped 1 line of text before the JSON document (fio prints errors there): \"fio: pid=1, err=5" "$work/err" &&
	pass "error text before the JSON: warning, accepted" || fail "error text before the JSON: exit $rc"

# State directory that cannot be written: the report is not printed, nothing is left.
touch "$work/a-file"
expect "state dir under a file" 1 "^scsitune: --state-dir $work/a-file/state: saving the result set: Not a directory$" \
	-- report --phase x --state-dir "$work/a-file/state" "$good"
mkdir -p "$work/ro/reports/x"
if [ "$(id -u)" -ne 0 ]; then
	chmod 0555 "$work/ro/reports/x"
	expect "read-only state dir" 1 "saving the result set: Permission denied$" -- report --phase x --state-dir "$work/ro" "$good"
	chmod 0755 "$work/ro/reports/x"
else
	# Root ignores mode bits: a read-only mount in a private namespace stops it.
	rc=0
	unshare --mount --propagation private sh -c 'mount -t tmpfs -o ro scsitune-ro "$1/ro/reports/x" &&
		exec "$2" report --phase x --state-dir "$1/ro" "$3"' sh "$work" "$bin" "$good" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" -eq 1 ] && grep -q "saving the result set: Read-only file system$" "$work/err" && [ ! -s "$work/out" ]; then
		pass "read-only state dir (read-only mount, as root)"
	else
		fail "read-only state dir (read-only mount, as root): exit $rc: $(head -1 "$work/err")"
	fi
fi
state_empty "unwritable state dir" "$work/ro"

# --compare of an unknown phase or a file that is not a result set: nothing saved.
cs=$work/cmp-state
expect "compare unknown phase" 1 "^scsitune: --compare nope: no saved result set for phase 'nope' in $cs/reports/nope$" \
	-- report --phase x --state-dir "$cs" --compare nope "$good"
expect "compare non-result file" 1 "^scsitune: --compare $good: $good: not a scsitune result set: no 'schema_version' and 'runs'$" \
	-- report --phase x --state-dir "$cs" --compare "$good" "$good"
expect "compare missing file" 1 "^scsitune: --compare $work/none.json: $work/none.json: No such file or directory$" \
	-- report --state-dir "$cs" --compare "$work/none.json" "$good"
state_empty "failed compare" "$cs"

# Upload settings are checked before anything is saved (no server needed).
us=$work/up-state
printf 'no-form-here\n' >"$work/form.auth"
chmod 600 "$work/form.auth"
printf '[upload]\nurl = http://127.0.0.1:1/write\n[server]\nurl = x\n' >"$work/bad.conf"
: >"$work/empty.conf"
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
# A bad --upload URL is a usage error, like any bad value on the command line (64).
expect "upload: not http" 64 "^scsitune: --upload ftp://h/w: not an http:// or https:// URL$" \
	-- report --phase x --state-dir "$us" --upload ftp://h/w "$good"
expect "upload: precision in the URL" 64 "^scsitune: --upload http://127.0.0.1:1/write\?precision=ns: sets precision= itself" \
	-- report --phase x --state-dir "$us" --upload 'http://127.0.0.1:1/write?precision=ns' "$good"
expect "upload: missing auth file" 1 "^scsitune: --auth-file $work/none.auth: No such file or directory$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --auth-file "$work/none.auth" "$good"
expect "upload: auth file of no known form" 1 "^scsitune: --auth-file $work/form.auth: first line is not 'Bearer TOKEN', 'Token TOKEN' or 'user:password'$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --auth-file "$work/form.auth" "$good"
expect "upload: missing CA file" 1 "^scsitune: --ca-file $work/none.pem: No such file or directory$" \
	-- report --phase x --state-dir "$us" --upload http://127.0.0.1:1/write --ca-file "$work/none.pem" "$good"
expect "config: missing --config file" 1 "^scsitune: $work/none.conf: No such file or directory$" \
	-- report --phase x --state-dir "$us" --config "$work/none.conf" "$good"
expect "config: unknown section" 1 "^scsitune: $work/bad.conf:4: unknown key 'server.url'$" \
	-- report --phase x --state-dir "$us" --config "$work/bad.conf" "$good"
state_empty "bad upload settings" "$us"

# The default settings file goes through the root layer: under --sysroot TREE it
# is TREE/etc/scsitune/scsitune.conf (never the host's /etc); $SCSITUNE_CONFIG
# still moves it (and wins over the tree); --config still wins over both.
tree=$work/conf-tree
mkdir -p "$tree/sys" "$tree/etc/scsitune"
printf '[upload]\nurl = http://127.0.0.1:1/write\nfrob = 1\n' >"$tree/etc/scsitune/scsitune.conf"
printf '[upload]\nurl = http://127.0.0.1:1/write\ntimeout = 0\n' >"$work/env.conf"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "^scsitune: $tree/etc/scsitune/scsitune.conf:3: unknown key 'upload.frob'$" "$work/err" &&
	pass "config: default file under --sysroot, SCSITUNE_CONFIG unset" ||
	fail "config: default file under --sysroot, SCSITUNE_CONFIG unset: exit $rc: $(cat "$work/err")"
rc=0
SCSITUNE_CONFIG=$work/env.conf "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "^scsitune: $work/env.conf:3: upload.timeout: '0' is not a number of seconds from 1 to 3600$" "$work/err" &&
	pass "config: SCSITUNE_CONFIG wins over the tree's file" || fail "config: SCSITUNE_CONFIG over the tree: exit $rc: $(cat "$work/err")"
expect "config: --config wins over the tree's file" 1 "^scsitune: $work/bad.conf:4: unknown key 'server.url'$" \
	-- --sysroot "$tree" report --flush --state-dir "$us" --config "$work/bad.conf"
rm "$tree/etc/scsitune/scsitune.conf"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 64 ] && grep -q -- "--flush: no --upload URL" "$work/err" && pass "config: no file in the tree: no URL (64)" ||
	fail "config: no file in the tree: exit $rc: $(cat "$work/err")"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$work/no-tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && [ "$(cat "$work/err")" = "scsitune: --sysroot $work/no-tree: No such file or directory" ] &&
	pass "config: a --sysroot that does not exist" || fail "config: bad --sysroot: exit $rc: $(cat "$work/err")"
state_empty "settings file under --sysroot" "$us"

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

# stdout that cannot be written.
rc=0
"$bin" report "$good" >/dev/full 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "writing output: No space left on device" "$work/err" && pass "stdout is /dev/full" ||
	fail "stdout is /dev/full: exit $rc"

echo "$checks checks, $fails failed"
exit $((fails > 0))
