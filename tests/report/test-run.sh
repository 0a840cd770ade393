#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report --run with the installed fio, on regular files only (never a host
# device): 2 short read-only runs, the result set, provenance, the binding
# (through a wrapper that records the CPUs it may run on, then execs fio),
# --sysroot provenance from the fixture trees and its line-protocol tags,
# and the refused cases (writing without --destructive, missing device,
# missing fio, failing fio).
# Usage: test-run.sh SCSITUNE FIXTURES_DIR
set -uo pipefail
bin=$(realpath "$1") fixtures=$(realpath "$2")
py=${PYTHON3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }
fio=$(command -v fio) || { echo "FAIL: fio is not installed (scripts/install-deps --test)"; exit 1; }

# A 64 MiB file to read; the wrapper logs each fio start (not --version) with its CPUs.
data=$work/data
dd if=/dev/zero of="$data" bs=1M count=64 status=none
cat >"$work/fio-wrap" <<WRAP
#!/bin/bash
if [ "\$1" != --version ]; then
	echo "\$(grep Cpus_allowed_list /proc/self/status | cut -f2) \$*" >>"$work/fio.log"
fi
exec "$fio" "\$@"
WRAP
cat >"$work/fio-fail" <<'WRAP'
#!/bin/bash
[ "$1" = --version ] && { echo fio-3.33; exit 0; }
echo "fio: file:filesetup.c:1234, func=open(/dev/nope), error=Permission denied" >&2
echo "second line" >&2
exit 1
WRAP
chmod +x "$work/fio-wrap" "$work/fio-fail"
short=(--runtime 1 --runs 2 --numjobs 2 --iodepth 4)

# --- Two runs, bound to node 0 with -v.
st=$work/state
rc=0
"$bin" -v -o json report --run --fio "$work/fio-wrap" --device "$data" "${short[@]}" --node 0 --phase smoke \
	--state-dir "$st" >"$work/run.json" 2>"$work/run.err" || rc=$?
if [ "$rc" -ne 0 ]; then
	fail "run: exit $rc"; sed 's/^/  /' "$work/run.err"
else
	pass "run: exit 0"
fi
grep -q "^scsitune: binding fio to NUMA node 0 (CPUs [0-9,-]*) with libnuma numa_run_on_node$" "$work/run.err" &&
	pass "run: -v says the libnuma binding was made" || fail "run: no binding message: $(cat "$work/run.err")"
[ "$(grep -c "^scsitune: fio run [12] of 2 done: .* KIOPS, $st/runs/.*-run[12].json$" "$work/run.err")" -eq 2 ] &&
	pass "run: one line per finished run (stderr is not a terminal: no progress line)" ||
	fail "run: summary lines: $(cat "$work/run.err")"
grep -q $'\r' "$work/run.err" && fail "run: progress junk in the log" || pass "run: no carriage returns in the log"
"$py" - "$work/run.json" "$work/fio.log" "$st" "$data" <<'PY' || fails=$((fails + 1))
import glob, json, sys
d = json.load(open(sys.argv[1])); log = open(sys.argv[2]).read().splitlines(); st = sys.argv[3]; data = sys.argv[4]
errors = []
def check(c, what):
    if not c: errors.append(what)
def cpus(text):
    s = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s
check(d["schema_version"] == 2, "schema_version 2")
check(len(d["runs"]) == 2, "2 runs")
for r in d["runs"]:
    check(r["iops"] > 0 and r["failed_jobs"] == 0 and r["job_count"] == 2, "run %s: iops > 0, 2 jobs" % r["file"])
    check(r["file"].startswith(st + "/runs/"), "run file under STATE_DIR/runs")
p = d["provenance"]
check(p["source"] == "run" and p["host"] and p["kernel"], "provenance: source, host, kernel")
check(p["phase"] == "smoke" and p["runs"] == 2 and p["fio_version"].startswith("fio-"), "provenance: phase, runs, fio")
check(p["hba"] is None, "provenance: no HBA for a regular file")
check(p["profile"]["name"] is None and p["profile"]["digest"] is None and p["profile"]["note"],
      "provenance: no journal, profile null with a note")
check(p["profile"]["verify_state"] == "none-applied" and p["profile"]["verify_drifted"] is None,
      "provenance: no journal, verify_state none-applied")
check(p["profile"]["journal_dir"] == st, "provenance: journal_dir is where the journal was looked for (--state-dir)")
j = p["job"]
check(j["readonly"] is True and j["devices"] == [data] and j["job_file"] is None, "provenance: job")
for a in ("--readonly", "--rw=randread", "--bs=4k", "--iodepth=4", "--numjobs=2", "--runtime=1", "--time_based",
          "--direct=1", "--ioengine=libaio", "--filename=" + data):
    check(a in j["fio_args"], "fio_args has " + a)
b = p["numa_binding"]
check(b["node"] == 0 and b["cpus"], "bound to node 0")
check(len(log) == 2, "fio started twice (got %d)" % len(log))
for line in log:
    allowed, args = line.split(" ", 1)
    check(cpus(allowed) == cpus(b["cpus"]), "fio's Cpus_allowed_list %s = node 0's CPUs %s" % (allowed, b["cpus"]))
    check("--readonly" in args.split() and "--output-format=json" in args.split(), "fio args: " + args)
check(len(glob.glob(st + "/runs/*-run[12].json")) == 2, "2 outputs kept in STATE_DIR/runs")
saved = glob.glob(st + "/reports/smoke/*.json")
check(len(saved) == 1, "one saved set")
if saved:
    s = json.load(open(saved[0]))
    check(s["provenance"] == p and s["schema_version"] == 2, "saved set has the provenance")
for e in errors:
    print("FAIL:", e)
print("ok   run: 2 runs, IOPS %s, provenance, fio bound to node 0's CPUs %s" %
      (" / ".join("%.0f" % r["iops"] for r in d["runs"]), b["cpus"]))
sys.exit(1 if errors else 0)
PY
# --compare of the new (schema 2) set against itself works.
"$bin" report --state-dir "$st" --compare smoke "$st"/runs/*-run1.json >/dev/null 2>&1 &&
	pass "compare reads a schema 2 set" || fail "compare of a schema 2 set"

# --- Not bound: a regular file is behind no HBA.
: >"$work/fio.log"
"$bin" -o json report --run --fio "$work/fio-wrap" --device "$data" --runtime 1 --runs 1 --numjobs 1 --iodepth 1 \
	--state-dir "$st" >"$work/nb.json" 2>"$work/nb.err" || fail "not bound: exit $?"
grep -q "^scsitune: the devices are not behind an HBA detect knows: no node to bind to$" "$work/nb.err" &&
	pass "not bound: says why" || fail "not bound: $(cat "$work/nb.err")"

# --- --sysroot: provenance from the tree (a file named after one of its disks), tags in the spool.
for fx in dual-socket-mpi3mr numa-unknown no-hba; do
	mkdir -p "$work/fx/$fx" && tar -xJf "$fixtures/$fx.tar.xz" -C "$work/fx/$fx"
done
mkdir -p "$work/dev"
ln "$data" "$work/dev/sdf" && ln "$data" "$work/dev/sda"
# apply a profile to the (extracted) tree first: its journal names the profile.
"$bin" --sysroot "$work/fx/dual-socket-mpi3mr" apply --profile numa --profile-dir "$fixtures/../../profiles" \
	--state-dir "$work/st2" >/dev/null 2>"$work/apply.err" || fail "apply on the tree: $(cat "$work/apply.err")"
rc=0
"$bin" -o json --sysroot "$work/fx/dual-socket-mpi3mr" report --run --fio "$work/fio-wrap" --device "$work/dev/sdf" \
	--runtime 1 --runs 1 --numjobs 1 --iodepth 1 --phase canary --state-dir "$work/st2" \
	--upload http://127.0.0.1:1/write >"$work/sr.json" 2>"$work/sr.err" || rc=$?
[ "$rc" -eq 3 ] && pass "sysroot: upload pending (exit 3)" || fail "sysroot: exit $rc: $(cat "$work/sr.err")"
# FILEs under --sysroot uploaded without --host-facts would carry this machine's identity: refused (64).
rc=0
"$bin" --sysroot "$work/fx/dual-socket-mpi3mr" report --state-dir "$work/st5" --upload http://127.0.0.1:1/write \
	"$(ls "$work"/st2/runs/*-run1.json | head -1)" >/dev/null 2>"$work/err" || rc=$?
[ "$rc" -eq 64 ] && grep -q "^scsitune: --upload under --sysroot: the runs would be tagged with this machine's host name and kernel, not the tree's: give --host-facts" "$work/err" &&
	[ ! -e "$work/st5/spool" ] && pass "sysroot: FILEs uploaded without --host-facts refused, nothing spooled" ||
	fail "sysroot FILE --upload without --host-facts: exit $rc: $(cat "$work/err")"
# apply used --state-dir st2; report --host-facts with another state dir finds no journal, and says where it looked.
rc=0
"$bin" --sysroot "$work/fx/dual-socket-mpi3mr" report --host-facts --state-dir "$work/st6" \
	"$(ls "$work"/st2/runs/*-run1.json | head -1)" >"$work/hf.txt" 2>"$work/err" || rc=$?
[ "$rc" -eq 0 ] && tr -s '\n ' '  ' <"$work/hf.txt" |
	grep -q "verify: none-applied (no applied profile: no apply journal; stock settings, or reverted); looked in $work/st6/journal.json: an apply with --state-dir DIR needs report --state-dir DIR" &&
	pass "host-facts, another state dir: says where it looked for apply's journal" ||
	fail "host-facts, another state dir: exit $rc: $(grep -A2 'profile' "$work/hf.txt")"
grep -q "^scsitune: --sysroot: the tree is not this host: not bound (--node N binds)$" "$work/sr.err" &&
	pass "sysroot: not bound to the tree's node" || fail "sysroot: binding message: $(cat "$work/sr.err")"
"$py" - "$work/sr.json" "$work/st2" <<'PY' || fails=$((fails + 1))
import glob, json, sys
p = json.load(open(sys.argv[1]))["provenance"]
h = p["hba"]
want = {"model": "Fusion-MPT 24GSAS/PCIe SAS40xx (eHBA 9600-16i Tri-Mode Storage Adapter)",
        "firmware": "8.9.1.0.00000-00011", "pci_address": "0000:b1:00.0", "numa_node": 1, "driver": "mpi3mr"}
assert h == want, h
assert p["host"] == "stor-ds01" and p["kernel"] == "6.1.0-57-amd64" and p["payload_version"] == "scsitune-0.1", p
assert p["numa_binding"]["node"] is None, p["numa_binding"]
pr = p["profile"]
assert pr["name"] == "numa" and len(pr["digest"]) == 64 and pr["journal_state"] == "applied", pr
assert pr["verify_state"] == "in-effect" and pr["verify_drifted"] == 0 and pr["note"], pr
lp = "".join(open(f).read() for f in glob.glob(sys.argv[2] + "/spool/*.lp"))
for tag in ("firmware=8.9.1.0.00000-00011", "hba_model=Fusion-MPT\\ 24GSAS/PCIe\\ SAS40xx\\ (eHBA\\ 9600-16i",
            "host=stor-ds01", "kernel=6.1.0-57-amd64", "payload=scsitune-0.1", "phase=canary", "profile=numa"):
    assert tag in lp, (tag, lp)
print("ok   sysroot: HBA, firmware, node, payload, kernel, host from the tree, profile + digest from apply's journal"
      " (verify_state in-effect, 0 drifted); the same as line-protocol tags")
PY
# verify_state follows the tree: one applied value changed by hand is one drifted setting,
# as `scsitune verify` counts it; the text says so too.
ra=$("$py" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied":
        print(e["path"]); break' "$work/st2/journal.json")
if [ -z "$ra" ]; then
	fail "verify_state: no applied queue/read_ahead_kb in the journal"
else
	echo 4096 >"$work/fx/dual-socket-mpi3mr/$ra"
	rc=0
	"$bin" -o json --sysroot "$work/fx/dual-socket-mpi3mr" verify --state-dir "$work/st2" >"$work/vf.json" 2>/dev/null || rc=$?
	"$bin" -o json --sysroot "$work/fx/dual-socket-mpi3mr" report --run --fio "$work/fio-wrap" --device "$work/dev/sdf" \
		--runtime 1 --runs 1 --numjobs 1 --iodepth 1 --state-dir "$work/st2" >"$work/dr.json" 2>"$work/dr.err" ||
		fail "verify_state drifted: report exit $?: $(cat "$work/dr.err")"
	"$bin" --sysroot "$work/fx/dual-socket-mpi3mr" report --run --fio "$work/fio-wrap" --device "$work/dev/sdf" \
		--runtime 1 --runs 1 --numjobs 1 --iodepth 1 --state-dir "$work/st2" >"$work/dr.txt" 2>/dev/null
	"$py" - "$work/dr.json" "$work/vf.json" "$rc" "$work/dr.txt" <<'PY' || fails=$((fails + 1))
import json, sys
pr = json.load(open(sys.argv[1]))["provenance"]["profile"]
v = json.load(open(sys.argv[2]))
assert sys.argv[3] == "2" and v["summary"]["drifted"] == 1, ("verify", sys.argv[3], v["summary"])
assert pr["verify_state"] == "drifted" and pr["verify_drifted"] == v["summary"]["drifted"], pr
text = open(sys.argv[4]).read()
assert "journal: applied, verify: drifted (drifted settings: 1)" in text, text
print("ok   verify_state: a hand change after apply -> drifted (1), as scsitune verify counts; the text says it")
PY
fi
"$bin" --sysroot "$work/fx/numa-unknown" report --run --fio "$work/fio-wrap" --device "$work/dev/sda" \
	--runtime 1 --runs 1 --numjobs 1 --iodepth 1 --state-dir "$work/st3" >/dev/null 2>"$work/nu.err" ||
	fail "numa-unknown: exit $?"
grep -q "^scsitune: no locality: the HBA's numa_node is -1: not bound$" "$work/nu.err" &&
	pass "numa_node -1: no locality, not bound" || fail "numa_node -1: $(cat "$work/nu.err")"

# --- Two devices: one job section each (json+), per device IOPS, share and p99, the fairness of the shares.
data2=$work/data2
dd if=/dev/zero of="$data2" bs=1M count=64 status=none
rc=0
"$bin" -o json report --run --fio "$work/fio-wrap" --device "$data" --device "$data2" --runtime 1 --runs 1 \
	--numjobs 2 --iodepth 4 --state-dir "$work/st2" >"$work/dev.json" 2>"$work/dev.err" || rc=$?
[ "$rc" -eq 0 ] || fail "two devices: exit $rc: $(cat "$work/dev.err")"
"$py" - "$work/dev.json" "$(tail -1 "$work/fio.log")" "$data" "$data2" <<'PY' && pass "two devices: per device results" ||
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
args, a, b = sys.argv[2].split(), sys.argv[3], sys.argv[4]
assert "--output-format=json+" in args and args[-4:] == ["--name=" + a, "--filename=" + a, "--name=" + b, "--filename=" + b], args
raw = json.load(open(run["file"]))
devs = run["devices"]
assert [d["filename"] for d in devs] == [a, b] and [d["jobs"] for d in devs] == [2, 2], devs
for d in devs:  # fio's own per-job numbers, grouped by file: the independent count
    jobs = [j for j in raw["jobs"] if j["job options"]["filename"] == d["filename"]]
    assert abs(d["kiops"] - sum(j["read"]["iops"] for j in jobs) / 1000) < 0.05, (d, jobs)
    p99 = [j["read"]["clat_ns"]["percentile"]["99.000000"] for j in jobs]
    assert min(p99) * 0.95 <= d["p99_ns"] <= max(p99) * 1.05 and d["percentiles_from"] == "merged-bins", (d, p99)
x = [d["kiops"] for d in devs]
jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
assert abs(run["fairness"] - jain) < 0.002 and abs(sum(d["share_pct"] for d in devs) - 100) < 0.2, run["fairness"]
assert run["worst_p99_ns"] == max(d["p99_ns"] for d in devs) and run["latency_of"] == "read", run
print("ok   fairness %.3f (Jain, from fio's per-job IOPS), worst p99 %d ns" % (run["fairness"], run["worst_p99_ns"]))
PY
	fail "two devices: $(head -c 300 "$work/dev.json")"

# --- A queue-depth sweep: each depth its own set (PHASE.qdN), compared depth by depth, then the table.
sw=(--fio "$work/fio-wrap" --device "$data" --runtime 1 --runs 2 --numjobs 1 --iodepth 1,4 --state-dir "$work/st3")
rc=0
"$bin" report --run "${sw[@]}" --phase base >"$work/sw1.txt" 2>"$work/sw1.err" || rc=$?
"$bin" report --run "${sw[@]}" --phase tuned --compare base >"$work/sw2.txt" 2>"$work/sw2.err" || rc=$((rc + $?))
"$bin" -o json report --run "${sw[@]}" --phase tuned --compare base >"$work/sw3.json" 2>"$work/sw3.err" || rc=$((rc + $?))
[ "$rc" -eq 0 ] || fail "sweep: exit $rc: $(cat "$work/sw1.err" "$work/sw2.err" "$work/sw3.err")"
"$py" - "$work/st3" "$work/sw2.txt" "$work/sw3.json" <<'PY' && pass "sweep: a set per depth, compared depth by depth, the table, a JSON array" ||
import glob, json, re, sys
st, text, docs = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
for ph in ("base.qd1", "base.qd4", "tuned.qd1", "tuned.qd4"):
    assert glob.glob("%s/reports/%s/*.json" % (st, ph)), ph
rows = re.findall(r"^ +(1|4) +2 +[0-9,.]+ +[0-9,.]+ +[-+][0-9.]+ % +[-+][0-9.]+ % \(too few runs\)$", text, re.M)
assert rows == ["1", "4"], text[-800:]
assert "Queue-depth sweep: tuned.qdN against base.qdN, depth by depth" in text
assert isinstance(docs, list) and len(docs) == 2, type(docs)
for d, depth in zip(docs, ("1", "4")):
    got = {r["jobs"][0]["options"].get("iodepth") or r["global_options"].get("iodepth") for r in d["runs"]}
    assert got == {depth}, (got, depth)
    assert d["compare"]["reference"]["label"] == "base.qd" + depth, d["compare"]["reference"]
print("ok   sweep: %d rows, 2 documents" % len(rows))
PY
	fail "sweep: $(tail -20 "$work/sw2.txt")"
for bad in "4,4:4 given twice" "1,2,3,4,5,6,7,8,9:at most 8 depths" "1,x:--iodepth"; do
	rc=0
	"$bin" report --run --fio "$work/fio-wrap" --device "$data" --iodepth "${bad%%:*}" --state-dir "$work/st4" \
		>/dev/null 2>"$work/err" || rc=$?
	[ "$rc" -eq 64 ] && grep -q -- "${bad#*:}" "$work/err" && pass "sweep refused: --iodepth ${bad%%:*}" ||
		fail "sweep --iodepth ${bad%%:*}: exit $rc: $(cat "$work/err")"
done
rc=0
"$bin" report --run "${sw[@]}" --compare "$work/x.json" >/dev/null 2>"$work/err" || rc=$?
[ "$rc" -eq 64 ] && grep -q "takes a phase, not a file" "$work/err" && pass "sweep refused: --compare FILE" ||
	fail "sweep --compare FILE: exit $rc: $(cat "$work/err")"

# --- Refused: exit code, one line, nothing run, nothing saved.
expect() { # NAME RC REGEX -- ARGS...
	local name=$1 want=$2 re=$3 rc=0
	shift 4
	: >"$work/fio.log"
	rm -rf "$work/rs"
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	local why=""
	[ "$rc" -eq "$want" ] || why="exit $rc, want $want"
	[ -z "$why" ] && ! grep -Eq -- "$re" "$work/err" && why="stderr does not match /$re/"
	[ -z "$why" ] && [ -s "$work/out" ] && why="stdout not empty"
	[ -z "$why" ] && [ -s "$work/fio.log" ] && why="fio was run"
	if [ -n "$why" ]; then fail "$name: $why"; sed 's/^/  stderr: /' "$work/err" | head -5; else pass "$name"; fi
}
W=(report --run --fio "$work/fio-wrap" --state-dir "$work/rs")
expect "randwrite without --destructive" 64 "--rw randwrite writes to the devices: refused without --destructive" -- \
	"${W[@]}" --device "$data" --rw randwrite
expect "write without --destructive" 64 "--rw write writes" -- "${W[@]}" --device "$data" --rw write
expect "rw without --destructive" 64 "--rw rw writes" -- "${W[@]}" --device "$data" --rw rw
printf '[global]\nfilename=%s\n[w]\nrw = randwrite\n' "$data" >"$work/write.fio"
expect "writing job file without --destructive" 64 "--job-file .*: 'rw = randwrite' writes: refused without --destructive" -- \
	"${W[@]}" --job-file "$work/write.fio"
expect "job file with --device" 64 "--job-file: the job file says the devices" -- \
	"${W[@]}" --job-file "$work/write.fio" --destructive --device "$data"
expect "missing device" 1 "^scsitune: --device $work/nope: No such file or directory$" -- "${W[@]}" --device "$work/nope"
expect "missing fio" 1 "^scsitune: --fio /nonexistent: No such file or directory$" -- \
	report --run --fio /nonexistent --device "$data" --state-dir "$work/rs"
rc=0
PATH=/nonexistent "$bin" report --run --device "$data" --state-dir "$work/rs" >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] && [ "$(cat "$work/err")" = "scsitune: fio: not found in PATH (install fio, or give --fio PATH)" ] &&
	pass "fio not in PATH" || fail "fio not in PATH: exit $rc: $(cat "$work/err")"
expect "no mpi3mr disk" 1 "no disk behind an mpi3mr HBA found: name the devices with --device DEV" -- \
	--sysroot "$work/fx/no-hba" "${W[@]}"
expect "FILE with --run" 64 "--run makes its own fio outputs: no FILE" -- "${W[@]}" "$work/x.json"
expect "--runs without --run" 64 "--runs does not go with report FILE...; it goes with report --run" -- report --runs 2 "$work/x.json"
expect "--runs 0" 64 "--runs: '0' is not a number" -- "${W[@]}" --runs 0
expect "node this host lacks" 1 "--node 4000: no such NUMA node on this host" -- "${W[@]}" --device "$data" --node 4000
# fio fails: its first stderr line, the output kept, exit 1, nothing saved.
rc=0
"$bin" report --run --fio "$work/fio-fail" --device "$data" --phase f --state-dir "$work/fs" >"$work/out" 2>"$work/err" || rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$work/out" ] && [ ! -d "$work/fs/reports" ] &&
	grep -q "^scsitune: fio run 1 of 3: fio exited with status 1: fio: file:filesetup.c:1234, func=open(/dev/nope), error=Permission denied (output kept: $work/fs/runs/.*-run1.json, $work/fs/runs/.*-run1.stderr)$" "$work/err" &&
	[ -s "$(ls "$work"/fs/runs/*-run1.stderr)" ]; then
	pass "fio fails: exit 1, fio's first stderr line, its stderr kept, nothing saved"
else
	fail "fio fails: exit $rc: $(cat "$work/err")"
fi
exit $((fails > 0))
