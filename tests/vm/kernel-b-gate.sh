#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel-b-gate.sh -- what scsitune says about patch B from the kernel-b
# guests' "fair" runs (LUN 0 read 64 deep beside a light LUN 1, one read in
# flight, on a 32-tag shared host; 4 runs per kernel): each run ingested
# with its per-LUN results (IOPS, p99, Jain's fairness, the worst LUN's
# p99), the control's as phase nob and B's as phase b compared with it,
# both uploaded to a VictoriaMetrics of Debian's package started on
# 127.0.0.1, and the fleet gate asked about B:
#   kiops>=-2%,worst_p99<=+10%,fairness>=-2%
# Prints the per-LUN figures and the gate's verdict. Exit status: 0 when
# every run had both LUNs and the gate gave a verdict (passed or failed:
# the verdict is the finding, not the test's), 1 otherwise.
#
#   kernel-b-gate.sh SCSITUNE OUTDIR   (OUTDIR/b, OUTDIR/nob: kernel-b.sh's)
set -uo pipefail
export LC_ALL=C.UTF-8
[ $# -eq 2 ] || { echo "usage: kernel-b-gate.sh SCSITUNE OUTDIR" >&2; exit 64; }
bin=$(readlink -f -- "$1") out=$(readlink -f -- "$2")
src=$(cd "$(dirname "$0")/../.." && pwd -P) py=${PYTHON3:-python3}
T=$out/gate
rm -rf "$T" && mkdir -p "$T"
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
trap fleet_cleanup EXIT
need victoria-metrics
take_port port || { echo "kernel-b-gate.sh: FAIL: no free port"; exit 1; }
start_vm vm "$port" || { echo "kernel-b-gate.sh: FAIL: VictoriaMetrics did not start: $(tail -3 "$T/vm.log")"; exit 1; }
vm=http://127.0.0.1:$port
for v in nob b; do
	files=("$out/$v"/results/fair[1-4].fio.json)
	[ ${#files[@]} -eq 4 ] && [ -f "${files[0]}" ] || { echo "kernel-b-gate.sh: FAIL: $v: no fair runs"; exit 1; }
	cmp=()
	[ $v = b ] && cmp=(--compare nob)
	"$bin" -o json report --phase "$v" "${cmp[@]}" --state-dir "$T/st" --upload "$vm/write" "${files[@]}" \
		>"$T/$v.json" 2>"$T/$v.err" || { echo "kernel-b-gate.sh: FAIL: report $v: $(cat "$T/$v.err")"; exit 1; }
done
vm_flush "$vm"
# The figures, and each run's LUNs against fio's own per-job numbers.
"$py" - "$T/nob.json" "$T/b.json" <<'PY' || exit 1
import json, sys
for path in sys.argv[1:]:
    doc = json.load(open(path))
    for i, run in enumerate(doc["runs"]):
        devs = run["devices"]
        assert len(devs) == 2 and 0 < run["fairness"] <= 1, (path, i, devs)
        raw = {j["job options"]["filename"]: j["read"]["iops"] for j in json.load(open(run["file"]))["jobs"]}
        assert all(abs(d["kiops"] * 1000 - raw[d["filename"]]) < 1 for d in devs), (devs, raw)
        print("%-4s run %d: %s  fairness %.3f, worst p99 %.1f ms" % (
            doc["runs"][0]["file"].split("/")[-3], i + 1,
            ", ".join("%s %.0f IOPS p99 %.1f ms" % (d["filename"], d["kiops"] * 1000, d["p99_ns"] / 1e6) for d in devs),
            run["fairness"], run["worst_p99_ns"] / 1e6))
PY
rc=0
"$bin" report --query "$vm" --phase b --compare nob --since 1d --gate 'kiops>=-2%,worst_p99<=+10%,fairness>=-2%' \
	>"$T/gate.txt" 2>"$T/gate.err" || rc=$?
sed -n '/^Gate/,$p' "$T/gate.txt"
cat "$T/gate.err"
case $rc in
0) echo "kernel-b-gate.sh: the gate passes patch B against its control" ;;
4) echo "kernel-b-gate.sh: the gate FAILS patch B against its control (the finding above)" ;;
*) echo "kernel-b-gate.sh: FAIL: report --query exit $rc"; exit 1 ;;
esac
exit 0
