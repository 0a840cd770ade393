#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the installed fio on small files in a temporary directory and write its
# JSON outputs to OUTDIR as fio-VERSION-CASE.json. The cases cover fio's
# traps (../../shared/reference/peers.md section 6): numjobs=2 with one job
# name, json and json+, a [global] section, a mixed read/write job, two
# stonewall groups, and a failing job whose error text fio prints on stdout
# before the JSON.
# Usage: make-fio-outputs.sh OUTDIR [RUNTIME_S]
set -euo pipefail
out=${1:?usage: make-fio-outputs.sh OUTDIR [RUNTIME_S]}
runtime=${2:-1}
fio=${FIO:-fio}
command -v "$fio" >/dev/null || { echo "make-fio-outputs: fio not installed" >&2; exit 1; }
ver=$("$fio" --version)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" # relative file names: no temporary path ends up in the outputs

common=(--ioengine=psync --bs=4k --size=8M --runtime="$runtime" --time_based --group_reporting=0)

# randread, numjobs=2: two jobs[] entries named "rr".
for fmt in json json+; do
	name=${fmt/+/plus}
	"$fio" --name=rr --filename=rr.dat --rw=randread --numjobs=2 "${common[@]}" \
		--output-format="$fmt" --output="$out/$ver-randread-2jobs-$name.json" >/dev/null
done

# One job, json+: its own percentiles against those computed from its bins.
"$fio" --name=single --filename=single.dat --rw=randread "${common[@]}" \
	--output-format=json+ --output="$out/$ver-randread-1job-jsonplus.json" >/dev/null

# A job file with [global] and two differently named jobs, one of them mixed read/write.
cat >mixed.fio <<JOB
[global]
ioengine=psync
bs=4k
size=8M
runtime=$runtime
time_based
filename=mixed.dat

[reader]
rw=randread

[mixer]
rw=randrw
rwmixread=70
JOB
"$fio" mixed.fio --output-format=json --output="$out/$ver-global-mixed-json.json" >/dev/null

# stonewall: two groups that ran one after the other (randread, then randwrite): their IOPS do not add up.
cat >stonewall.fio <<JOB
[global]
ioengine=psync
bs=4k
size=8M
runtime=$runtime
time_based
filename=stonewall.dat

[randread]
rw=randread

[randwrite]
stonewall
rw=randwrite
JOB
"$fio" stonewall.fio --output-format=json --output="$out/$ver-stonewall-2groups-json.json" >/dev/null

# A job that fails (ENOSPC on /dev/full): fio prints the error on stdout before the JSON and exits 1.
rc=0
"$fio" --name=full --filename=/dev/full --rw=write --bs=4k --size=1M \
	--output-format=json >"$out/$ver-enospc-stdout-json.json" 2>/dev/null || rc=$?
[ "$rc" -ne 0 ] || echo "make-fio-outputs: note: fio exited 0 on /dev/full" >&2
echo "$ver"
