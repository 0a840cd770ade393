#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cli tier: scsitune metrics on the dual-socket-mpi3mr tree (--sysroot, the
# journal and result sets in a separate --state-dir): the text against goldens
# (tests/cli/metrics/*.prom, the last_check values masked) with the numa profile
# applied, drifted by hand and reverted, each checked against verify -o json and
# linted by promtool; result sets against their saved JSON; --textfile; the
# escapes of a profile path with " and \ in it; and the bad states: each one line
# on stderr, exit 1, the previous DIR/scsitune.prom whole and no temporary file.
# Usage: test-metrics.sh SCSITUNE FIXTURES PROFILES [--update]
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3 update=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/metrics
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-metrics.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root" "$work/prom"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
mkdir -p "$work/root/etc/default"
install -m 0640 "$here/../apply/irqbalance.default" "$work/root/etc/default/irqbalance"
state=$work/state
status=0 checks=0
fail() { echo "FAIL: $*"; status=1; }
ok() { checks=$((checks + 1)); }
st() { "$bin" --sysroot "$work/root" "$@"; }
command -v promtool >/dev/null || { echo "FAIL: promtool not installed (Debian package prometheus; scripts/install-deps --test)"; exit 1; }

# metrics NAME [ARGS]: stdout in $work/NAME.prom (exit 0, stderr empty), the
# last_check samples between the clock before and after, then masked as T.
metrics() {
	local name=$1 t0 t1 rc=0
	shift
	t0=$(date +%s)
	st metrics --state-dir "$state" "$@" >"$work/$name.prom" 2>"$work/$name.err" || rc=$?
	t1=$(date +%s)
	ok
	[ "$rc" = 0 ] && [ ! -s "$work/$name.err" ] || fail "$name: metrics exited $rc: $(cat "$work/$name.err")"
	python3 - "$work/$name.prom" "$t0" "$t1" <<'PY' || fail "$name: last_check timestamps not between the clock before and after"
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("scsitune_last_check_timestamp_seconds{")]
checks = sorted(re.search(r'check="(\w+)"', l).group(1) for l in lines)
assert checks == ["hba", "payload", "profile", "report"], checks
for l in lines:
    v = float(l.split()[-1])
    assert int(sys.argv[2]) <= v < int(sys.argv[3]) + 1, l
PY
	ok
	promtool check metrics <"$work/$name.prom" >"$work/promtool.out" 2>&1 && [ ! -s "$work/promtool.out" ] ||
		fail "$name: promtool check metrics: $(cat "$work/promtool.out")"
	sed -i -E 's/^(scsitune_last_check_timestamp_seconds\{[^}]*\}) .*/\1 T/; s/^(scsitune_info\{version=")[^"]*/\1VERSION/' "$work/$name.prom"
}
# golden NAME: $work/NAME.prom equals tests/cli/metrics/NAME.prom (or --update writes it).
golden() {
	ok
	if [ "$update" = --update ]; then cp "$work/$1.prom" "$golden/$1.prom"; return; fi
	diff -u "$golden/$1.prom" "$work/$1.prom" || fail "$1: differs from tests/cli/metrics/$1.prom"
}
# against_verify NAME: the profile and settings families equal verify -o json's state and summary.
against_verify() {
	st verify --state-dir "$state" -o json >"$work/verify.json" 2>/dev/null
	ok
	python3 - "$work/$1.prom" "$work/verify.json" <<'PY' || fail "$1: metrics disagree with verify -o json"
import json, re, sys
prom = open(sys.argv[1]).read()
v = json.load(open(sys.argv[2]))
got = {m[0]: int(m[1]) for m in re.findall(r'^scsitune_verify_settings\{state="([a-z-]+)"\} (\d+)$', prom, re.M)}
s = v["summary"]
want = {"in-effect": s["in_effect"], "drifted": s["drifted"], "profile-changed": s["profile_changed"],
        "not-applicable": s["not_applicable"], "not-settable": s["not_settable"]}
assert got == want, (got, want)
state = re.search(r'^scsitune_profile_info\{name="numa",digest="([0-9a-f]{64})",state="([a-z-]+)"\} 1$', prom, re.M)
assert state and state.group(2) == v["state"] and state.group(1) == v["profile"]["applied_digest"], state
PY
}

# 1. Nothing applied, nothing saved: a state, not an error.
metrics none
golden none
# 2. numa applied; 3. a setting changed by hand (drift); 4. reverted: as before apply.
st apply --profile numa --profile-dir "$profiles" --state-dir "$state" >/dev/null 2>&1 || fail "apply numa failed"
cp "$state/journal.json" "$work/journal.applied"
metrics applied
golden applied
against_verify applied
path=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied": print(e["path"]); break' "$state/journal.json")
[ -n "$path" ] || fail "no applied read_ahead_kb in the journal"
echo 4096 >"$work/root/$path"
metrics drifted
golden drifted
against_verify drifted
grep -q '^scsitune_verify_settings{state="drifted"} 1$' "$work/drifted.prom" || fail "drifted: not one drifted setting"
# --per-disk: each disk detect finds, and per disk the settings by verify state, which add up to the
# disk rows of verify -o json (the drifted one on its disk); without it, no disk family at all.
grep -q '^scsitune_disk' "$work/drifted.prom" && fail "drifted: a disk family without --per-disk"
metrics per-disk --per-disk
ok
python3 - "$work/per-disk.prom" "$work/verify.json" "$work/drifted.prom" <<'PY' || fail "--per-disk: the disk families disagree with verify -o json"
import json, re, sys
from collections import Counter
prom = open(sys.argv[1]).read()
v = json.load(open(sys.argv[2]))
disks = re.findall(r'^scsitune_disk_info\{disk="([^"]*)",hba="([^"]*)",key="([^"]*)"\} 1$', prom, re.M)
assert len(disks) == 9 and ("sdb", "0000:17:00.0", "wwn-0x5002538f42a1b2c3") in disks, disks
got = Counter()
for d, st, n in re.findall(r'^scsitune_disk_verify_settings\{disk="([^"]*)",state="([a-z-]+)"\} (\d+)$', prom, re.M):
    got[(d, st)] += int(n)
names = {d[0] for d in disks}
assert {d for d, _ in got} == names and len(got) == 5 * len(names), got
want = Counter((s["device"], s["state"]) for s in v["settings"] if s["device"] in names)
assert +got == want, (+got, want)
assert got[("sdb", "drifted")] == 1, got
# the rest of the document is the one without --per-disk
rest = re.sub(r'^(# (HELP|TYPE) )?scsitune_disk_.*\n', '', prom, flags=re.M)
assert rest == open(sys.argv[3]).read(), "--per-disk changed the other families"
PY
st revert --force --state-dir "$state" >/dev/null 2>&1 || fail "revert failed"
metrics reverted
ok
cmp -s "$work/none.prom" "$work/reverted.prom" || fail "reverted: not the metrics of the tree before apply: $(diff "$work/none.prom" "$work/reverted.prom")"

# 5. Result sets: the newest set of each phase, its figures from the saved JSON.
fio=$here/../report/fio
"$bin" report --state-dir "$state" --phase baseline "$fio/fio-3.33-randread-2jobs-json.json" "$fio/fio-3.33-randread-2jobs-jsonplus.json" >/dev/null 2>&1 ||
	fail "report --phase baseline failed"
"$bin" report --state-dir "$state" --phase tuned "$fio/fio-3.33-randread-1job-jsonplus.json" >/dev/null 2>&1 || fail "report --phase tuned failed"
metrics reports
ok
python3 - "$work/reports.prom" "$state/reports" <<'PY' || fail "reports: the last_report families do not match the saved sets"
import glob, json, math, os, re, statistics, sys
prom = open(sys.argv[1]).read()
def val(name, phase):
    m = re.search(r'^%s\{phase="%s"\} (\S+)$' % (name, phase), prom, re.M)
    return float(m.group(1)) if m else None
for d in sorted(glob.glob(os.path.join(sys.argv[2], "*"))):
    phase = os.path.basename(d)
    doc = json.load(open(sorted(glob.glob(d + "/*.json"))[-1]))
    kiops = [r["kiops"] for r in doc["runs"]]
    iops = statistics.mean(kiops) * 1000
    assert abs(val("scsitune_last_report_iops", phase) - iops) < 0.001, (phase, iops)
    cov = val("scsitune_last_report_iops_cov_ratio", phase)
    if len(kiops) > 1:
        assert abs(cov - statistics.stdev(kiops) / statistics.mean(kiops)) < 1e-12, (phase, cov)
    else:
        assert math.isnan(cov), cov
    assert val("scsitune_last_report_runs", phase) == len(kiops)
    start = min(r["start_time_ms"] for r in doc["runs"]) / 1000
    assert abs(val("scsitune_last_report_timestamp_seconds", phase) - start) < 0.0005, (phase, start)
assert val("scsitune_last_report_runs", "baseline") == 2 and val("scsitune_last_report_runs", "tuned") == 1
PY
golden reports

# 6. --textfile DIR: DIR/scsitune.prom, mode 0644, the same text; nothing on stdout.
st metrics --state-dir "$state" --textfile "$work/prom" >"$work/out" 2>"$work/err"
ok
[ -f "$work/prom/scsitune.prom" ] && [ "$(stat -c %a "$work/prom/scsitune.prom")" = 644 ] && [ ! -s "$work/out" ] && [ ! -s "$work/err" ] ||
	fail "--textfile: no 0644 scsitune.prom, or output: $(cat "$work/out" "$work/err")"
ok
sed -E 's/^(scsitune_last_check_timestamp_seconds\{[^}]*\}) .*/\1 T/; s/^(scsitune_info\{version=")[^"]*/\1VERSION/' "$work/prom/scsitune.prom" |
	cmp -s - "$work/reports.prom" || fail "--textfile: not the text stdout has"
cp "$work/prom/scsitune.prom" "$work/previous"

# 7. Bad states: exit 1, one line naming the file or setting, the previous file whole, no temporary file.
# bad LABEL PATTERN ARGS...: metrics ARGS --textfile $work/prom (unless ARGS name one).
bad() {
	local label=$1 pattern=$2 rc=0
	shift 2
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	ok
	[ "$rc" = 1 ] || fail "$label: exit $rc, want 1"
	ok
	# (a "scsitune: hint:" line, the next step, is not one of the error's lines: scsitune(8) DIAGNOSTICS)
	[ "$(grep -vc '^scsitune: hint: ' "$work/err")" = 1 ] && grep -qE "^scsitune: $pattern" "$work/err" &&
		[ ! -s "$work/out" ] ||
		fail "$label: not one line matching '$pattern': $(cat "$work/err" "$work/out")"
	ok
	cmp -s "$work/previous" "$work/prom/scsitune.prom" || fail "$label: the previous scsitune.prom changed"
	ok
	[ "$(ls -A "$work/prom")" = scsitune.prom ] || fail "$label: left in the directory: $(ls -A "$work/prom")"
}
mkdir "$work/empty"
bad "sysroot without sys/" "--sysroot $work/empty: no sys/ directory" \
	"$bin" --sysroot "$work/empty" metrics --state-dir "$state" --textfile "$work/prom"
bad "--textfile missing" "--textfile $work/nowhere: No such file or directory" \
	st metrics --state-dir "$state" --textfile "$work/nowhere"
bad "--textfile a file" "--textfile $work/previous: not a directory" \
	st metrics --state-dir "$state" --textfile "$work/previous"
echo 'not json' >"$state/journal.json"
bad "journal not JSON" "$state/journal.json: not a scsitune journal" st metrics --state-dir "$state" --textfile "$work/prom"
# apply's own journal with its first change's path turned to etc/shadow: refused as revert refuses it.
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); j["changes"][0]["path"]="etc/shadow"; json.dump(j, open(sys.argv[2], "w"))' \
	"$work/journal.applied" "$state/journal.json"
bad "journal naming etc/shadow" "$state/journal.json: a change names a path scsitune never writes" \
	st metrics --state-dir "$state" --textfile "$work/prom"
rm -f "$state/journal.json"
chmod 0777 "$state"
bad "state directory writable by others" "state directory $state: not trusted" \
	st metrics --state-dir "$state" --textfile "$work/prom"
chmod 0755 "$state"
echo '{"schema_version": 2, "runs": []}' >"$state/reports/tuned/20991231T000000Z.json"
bad "a saved set without runs" "$state/reports/tuned/20991231T000000Z.json: result set without runs" \
	st metrics --state-dir "$state" --textfile "$work/prom"
rm "$state/reports/tuned/20991231T000000Z.json"
# A full disk: DIR a 16 KiB tmpfs in a mount namespace of its own (the host's mounts untouched).
unshare_m=(unshare -m)
[ "$(id -u)" = 0 ] || unshare_m=(unshare -rm)
ok
"${unshare_m[@]}" bash -c '
	set -e
	full=$1/full prev=$2; shift 2
	mkdir "$full"
	mount -t tmpfs -o size=16k,mode=0755 tmpfs "$full"
	cp "$prev" "$full/scsitune.prom"
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true
	rc=0
	"$@" --textfile "$full" >/dev/null 2>"$full.err" || rc=$?
	rm "$full/filler"
	echo "rc=$rc" >"$full.rc"
	cmp -s "$prev" "$full/scsitune.prom" && echo whole >>"$full.rc"
	ls -A "$full" >"$full.ls"
' sh "$work" "$work/previous" "$bin" --sysroot "$work/root" metrics --state-dir "$state" ||
	fail "full disk: could not mount a tmpfs in a mount namespace (unshare -m; as a user unshare -rm)"
[ "$(cat "$work/full.rc" 2>/dev/null)" = $'rc=1\nwhole' ] && [ "$(cat "$work/full.ls")" = scsitune.prom ] &&
	grep -qx "scsitune: writing $work/full/scsitune.prom: No space left on device (the file there is left as it was)" "$work/full.err" ||
	fail "full disk: $(cat "$work/full.rc" "$work/full.ls" "$work/full.err" 2>&1)"

# 8. Usage: -o json, an argument, an unknown option: 64.
for args in "-o json" "extra" "--per-host"; do
	rc=0
	# shellcheck disable=SC2086 # the words of args
	st metrics --state-dir "$state" $args >/dev/null 2>"$work/err" || rc=$?
	ok
	[ "$rc" = 64 ] || fail "metrics $args: exit $rc, want 64"
done

# 9. Escapes: a profile applied by a path with " and \ and é in it: the name label escaped, promtool happy.
odd=$work/'we"ird\dir é'
mkdir "$odd"
cp "$profiles/numa" "$odd/numa"
st apply --profile "$odd/numa" --state-dir "$state" >/dev/null 2>&1 || fail "apply by an odd path failed"
metrics odd
ok
esc=$(printf '%s' "$odd/numa" | sed 's/\\/\\\\/g; s/"/\\"/g')
grep -qF "scsitune_profile_info{name=\"$esc\",digest=" "$work/odd.prom" || fail "odd: the profile's name is not escaped: $(grep profile_info "$work/odd.prom")"
st revert --force --state-dir "$state" >/dev/null 2>&1

[ "$status" = 0 ] && echo "ok metrics: $checks checks"
exit "$status"
