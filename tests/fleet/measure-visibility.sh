#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Not a test: measures how long after `scsitune report --upload` returns the
# points it wrote show in `scsitune report --query` (the delay the rollout
# gate's scsitune_gate_wait must cover; fleet/ansible/README.md has the
# figures). Servers from Debian's packages on 127.0.0.1, data under a temp
# dir, each with its default flags/configuration but for the listen address
# and the data directory:
#   vm        VictoriaMetrics with nothing else (-search.latencyOffset=30s etc.)
#   vm-dedup  the same with -dedup.minScrapeInterval=1ms (as the role requires)
#   influx    InfluxDB 1.x, database scsitune
# Per sample: 3 fio runs (varied from the recorded one, start times now) are
# uploaded under a phase never used before (so the service holds no point of
# it: the first wave's case), then `report --query URL --phase P -o json` is
# asked every 0.1 s until its answer shows the 3 runs. The delay is from
# report --upload's exit (the server acknowledged the write) to the end of
# the first answer that shows them (each ask takes 0.02-0.1 s, so the figure
# is within 0.2 s), and how many samples the first ask already showed. Runs
# `stress-ng --cpu N` beside it when STRESS=N is set.
# Usage: measure-visibility.sh SCSITUNE SRCDIR [SAMPLES] [vm|vm-dedup|influx...]
set -uo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
samples=${3:-10}
shift 3 2>/dev/null || shift $#
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(vm vm-dedup influx)
py=${PYTHON3:-python3}
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need victoria-metrics influxd curl
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-visibility.XXXXXX")
stress_pid=
trap '[ -n "$stress_pid" ] && kill "$stress_pid" 2>/dev/null; fleet_cleanup; rm -rf "$T"' EXIT
trap "exit 143" TERM INT
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf
if [ -n "${STRESS:-}" ]; then
	need stress-ng
	stress-ng --cpu "$STRESS" --quiet >/dev/null 2>&1 &
	stress_pid=$!
fi

measure() { # KIND WRITE_URL QUERY_URL
	local kind=$1 w=$2 q=$3 k
	for k in $(seq 1 "$samples"); do
		local phase
		phase=m$(date +%s%N | cut -c9-16)k$k
		make_fio "$T/$kind-$k" "$phase" "$(($(now_ms) - 10000))" 1.0 0.95 1.05 >/dev/null || return 1
		"$py" - "$bin" "$w" "$q" "$phase" "$T/$kind-$k" <<'PY'
import glob, json, subprocess, sys, time
bin, w, q, phase, d = sys.argv[1:]
files = sorted(glob.glob(d + "/*.json"))
subprocess.run([bin, "report", "--phase", phase, "--state-dir", d + "/state", "--upload", w] + files,
               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t0 = time.monotonic()
asks = 0
while True:
    asks += 1
    p = subprocess.run([bin, "report", "--query", q, "--phase", phase, "-o", "json"], capture_output=True, text=True)
    if p.returncode == 0:
        hosts = json.loads(p.stdout)["hosts"]
        if hosts and len(hosts[0]["current"]["runs"]) == 3:
            break
    elif "no point of phase" not in p.stderr:
        sys.exit("query: exit %d: %s" % (p.returncode, p.stderr.strip()))
    if time.monotonic() - t0 > 300:
        sys.exit("not visible after 300 s")
    time.sleep(0.1)
print("%.1f %d" % (time.monotonic() - t0, asks))
PY
	done
}

for kind in "${kinds[@]}"; do
	take_port port || exit 1
	case $kind in
	vm | vm-dedup)
		extra=()
		[ "$kind" = vm-dedup ] && extra=(-dedup.minScrapeInterval=1ms)
		victoria-metrics -storageDataPath="$T/$kind" -httpListenAddr="127.0.0.1:$port" "${extra[@]}" \
			>"$T/$kind.log" 2>&1 &
		fleet_pids[$kind]=$!
		wait_http "http://127.0.0.1:$port/health" || exit 1
		out=$(measure "$kind" "http://127.0.0.1:$port/write" "http://127.0.0.1:$port") || { echo "$kind: $out"; exit 1; }
		;;
	influx)
		start_influx influx "$port" || exit 1
		out=$(measure influx "http://127.0.0.1:$port/write?db=scsitune" "http://127.0.0.1:$port/query?db=scsitune") ||
			{ echo "$kind: $out"; exit 1; }
		;;
	*) echo "unknown kind $kind" >&2; exit 64 ;;
	esac
	stop_server "$kind"
	echo "$out" | awk -v k="$kind" -v s="${STRESS:+, stress-ng --cpu $STRESS}" '
		{ d[NR] = $1; sum += $1; first += $2 == 1; if (NR == 1 || $1 < min) min = $1; if ($1 > max) max = $1 }
		END { line = ""; for (i = 1; i <= NR; i++) line = line " " d[i];
		      printf "%s%s: %d samples, delay (s):%s; min %.1f, mean %.1f, max %.1f; shown at the first ask: %d\n",
		             k, s, NR, line, min, sum / NR, max, first }'
done
