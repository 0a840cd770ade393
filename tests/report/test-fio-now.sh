#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the installed fio now (make-fio-outputs.sh) and check that `report`
# accepts what it writes: no golden numbers (they change every run), but the
# job counts, names, IOPS > 0, latencies present, and the failing job refused.
# Usage: test-fio-now.sh SCSITUNE MAKE_FIO_OUTPUTS
set -uo pipefail
bin=$1 make=$2
py=${PYTHON3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fio-now.XXXXXX")
trap 'rm -rf "$work"' EXIT
command -v fio >/dev/null || { echo "FAIL: fio is not installed (scripts/install-deps --test)"; exit 1; }
ver=$("$make" "$work/out" 1) || { echo "FAIL: make-fio-outputs.sh failed"; exit 1; }
echo "fio: $ver"
fails=0
ok=("$work"/out/"$ver"-randread-2jobs-json.json "$work"/out/"$ver"-randread-2jobs-jsonplus.json
	"$work"/out/"$ver"-randread-1job-jsonplus.json "$work"/out/"$ver"-global-mixed-json.json)
for f in "${ok[@]}"; do
	[ -s "$f" ] || { echo "FAIL: fio wrote no $f"; fails=$((fails + 1)); }
done
if ! "$bin" report -o json --allow-mixed "${ok[@]}" >"$work/report.json" 2>"$work/err"; then
	echo "FAIL: report refused fresh fio output:"; cat "$work/err"; fails=$((fails + 1))
else
	"$py" - "$work/report.json" "$ver" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1])); ver = sys.argv[2]
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)
runs = d["runs"]
check(d["schema_version"] == 2, "schema_version")
check(d["provenance"]["source"] == "files", "provenance of ingested files")
check(len(runs) == 4, "4 runs")
want = [(2, {"rr"}, "json", "max-of-jobs"), (2, {"rr"}, "json+", "merged-bins"),
        (1, {"single"}, "json+", "fio"), (2, {"reader", "mixer"}, "json", "max-of-jobs")]
for run, (jobs, names, fmt, pct) in zip(runs, want):
    f = run["file"]
    check(run["fio_version"] == ver, f + ": fio_version")
    check(run["job_count"] == jobs == len(run["jobs"]), f + ": job count")
    check({j["name"] for j in run["jobs"]} == names, f + ": job names")
    check(run["output_format"] == fmt, f + ": output format")
    check(run["failed_jobs"] == 0, f + ": failed jobs")
    check(run["iops"] > 0 and abs(run["kiops"] * 1000 - run["iops"]) < 1, f + ": iops")
    check(abs(run["iops"] - sum(j["read_iops"] + j["write_iops"] for j in run["jobs"])) < 1, f + ": iops = sum of jobs")
    c = run["read"]["clat_ns"]
    check(c["samples"] > 0 and c["mean"] > 0 and 0 < c["p50"] <= c["p99"] <= c["p99_9"], f + ": read clat")
    check(c["percentiles_from"] == pct, f + ": percentiles_from " + c["percentiles_from"])
    check(run["start_time_ms"] > 0, f + ": start time")
check(runs[3]["write"]["iops"] > 0, "mixed job writes")
s = d["summary"]
check(s["runs"] == 4 and s["min_kiops"] <= s["avg_kiops"] <= s["max_kiops"], "summary")
check(s["stddev_kiops"] is not None and s["cov_pct"] is not None, "stddev and CoV")
for e in errors:
    print("FAIL:", e)
print("ok: fresh %s outputs accepted: %s" % (ver, ", ".join("%.1f KIOPS" % r["kiops"] for r in runs)))
sys.exit(1 if errors else 0)
PY
fi
# stonewall: two groups that ran one after the other are refused (their IOPS do not add up),
# naming the groups; --group 1 reports the randwrite group alone.
sw=$work/out/$ver-stonewall-2groups-json.json
rc=0
"$bin" report "$sw" >"$work/out.txt" 2>"$work/err" || rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$work/out.txt" ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
	grep -q "^scsitune: $sw: 2 fio groups ran one after the other .*: 0 (randread), 1 (randwrite); .*--group N" "$work/err"; then
	echo "ok: fresh stonewall output refused without --group"
else
	echo "FAIL: stonewall output without --group: exit $rc"; cat "$work/err"; fails=$((fails + 1))
fi
if "$bin" report -o json --group 1 "$sw" >"$work/sw.json" 2>"$work/err" &&
	"$py" -c 'import json,sys
r=json.load(open(sys.argv[1]))["runs"][0]
assert r["group"]==1 and r["job_count"]==1 and r["jobs"][0]["name"]=="randwrite", r["jobs"]
assert r["read"]["iops"]==0 and r["write"]["iops"]>0 and abs(r["iops"]-r["write"]["iops"])<1e-6, r["iops"]' "$work/sw.json"; then
	echo "ok: fresh stonewall output, --group 1: the randwrite group alone"
else
	echo "FAIL: stonewall output with --group 1"; cat "$work/err"; fails=$((fails + 1))
fi
# The failing job: refused with its error, exit 1, nothing on stdout.
rc=0
"$bin" report "$work/out/$ver-enospc-stdout-json.json" >"$work/out.txt" 2>"$work/err" || rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$work/out.txt" ] && grep -q "skipped 1 line of text" "$work/err" &&
	grep -q "fio job 0 'full' failed with error 28 (No space left on device)" "$work/err"; then
	echo "ok: failing fio job refused"
else
	echo "FAIL: failing fio job: exit $rc"; cat "$work/err"; fails=$((fails + 1))
fi
exit $((fails > 0))
