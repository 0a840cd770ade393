#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# service tier: scsitune metrics --textfile read by the real parts. Debian's
# prometheus-node-exporter serves the file with its textfile collector alone
# (--collector.disable-defaults --collector.textfile) on a port of its own, and
# Debian's VictoriaMetrics scrapes it every second (-promscrape.config); both
# started here on 127.0.0.1 with data under a temp dir and stopped at the end,
# also on failure. A node_exporter the package may have started on :9100 is
# never used. On the dual-socket-mpi3mr tree (--sysroot, a separate
# --state-dir) with the numa profile applied, drifted by hand, and reverted,
# the service is asked again (check-scrape.py, a deadline, never a fixed
# sleep) until it shows the scrape of the file just written; then every sample
# of the file, node_textfile_scrape_error 0, and the settings and the profile's
# state equal verify -o json (reverted: none-applied, all 0).
# Usage: test-metrics-scrape.sh SCSITUNE FIXTURES PROFILES
set -uo pipefail
bin=$(realpath "$1") fixtures=$(realpath "$2") profiles=$(realpath "$3")
here=$(dirname "$(realpath "$0")")
py=${PYTHON3:-python3}
for p in victoria-metrics prometheus-node-exporter curl; do
	command -v "$p" >/dev/null || { echo "FAIL: $p not installed (scripts/install-deps --test installs it)"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-metrics-scrape.XXXXXX")
declare -A pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap "exit 143" TERM INT
# take_port VAR, poll SECONDS CMD..., wait_http URL
# shellcheck source=tests/service/common.sh
. "$here/common.sh"
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

mkdir "$T/root" "$T/prom" "$T/state"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$T/root"
mkdir -p "$T/root/etc/default"
install -m 0640 "$here/../apply/irqbalance.default" "$T/root/etc/default/irqbalance"
st() { "$bin" --sysroot "$T/root" "$@"; }

ne_port='' vm_port=''
take_port ne_port || exit 1
take_port vm_port || exit 1
prometheus-node-exporter --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/prom" --web.listen-address="127.0.0.1:$ne_port" >"$T/ne.log" 2>&1 &
pids[ne]=$!
cat >"$T/scrape.yml" <<YML
scrape_configs:
  - job_name: scsitune-metrics-test
    scrape_interval: 1s
    static_configs:
      - targets: ["127.0.0.1:$ne_port"]
YML
victoria-metrics -storageDataPath="$T/vm" -httpListenAddr="127.0.0.1:$vm_port" -retentionPeriod=100y \
	-search.latencyOffset=0s -promscrape.config="$T/scrape.yml" -loggerLevel=WARN >"$T/vm.log" 2>&1 &
pids[vm]=$!
wait_http "http://127.0.0.1:$ne_port/metrics" || { cat "$T/ne.log"; exit 1; }
wait_http "http://127.0.0.1:$vm_port/health" || { cat "$T/vm.log"; exit 1; }

# scraped NAME VERIFY_JSON|-: write the file, then ask the service until it shows it (60 s).
scraped() {
	checks=$((checks + 1))
	st metrics --state-dir "$T/state" --textfile "$T/prom" 2>"$T/err" || { fail "$1: metrics: $(cat "$T/err")"; return; }
	if poll 60 "$py" "$here/check-scrape.py" "http://127.0.0.1:$vm_port" scsitune-metrics-test "$T/prom/scsitune.prom" "$2" \
		>"$T/why" 2>&1; then
		echo "ok   $1: $(tail -1 "$T/why")"
	else
		fail "$1: within 60 s: $(tail -1 "$T/why")"
	fi
}

st apply --profile numa --profile-dir "$profiles" --state-dir "$T/state" >/dev/null 2>&1 || fail "apply numa"
st verify --state-dir "$T/state" -o json >"$T/applied.json" 2>/dev/null || fail "verify after apply"
scraped applied "$T/applied.json"
path=$("$py" -c 'import json,sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied": print(e["path"]); break' "$T/state/journal.json")
echo 4096 >"$T/root/$path"
rc=0
st verify --state-dir "$T/state" -o json >"$T/drifted.json" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "verify after a hand change: exit $rc, want 2"
scraped drifted "$T/drifted.json"
st revert --force --state-dir "$T/state" >/dev/null 2>&1 || fail "revert"
rc=0
st verify --state-dir "$T/state" >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "verify after revert: exit $rc, want 1 (no journal)"
scraped reverted -

[ "$fails" = 0 ] && echo "ok metrics scraped: $checks states through node_exporter and VictoriaMetrics"
exit $((fails > 0))
