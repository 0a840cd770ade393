# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the fleet tier's scripts: servers from Debian's packages started
# on 127.0.0.1 (ports taken with take_port, data under $T), hosts made from
# the captured trees of tests/fixtures, and fio outputs varied from a recorded
# real one. The caller sets T (a temp dir), src (the source tree), py
# (python3), and calls fleet_cleanup from its EXIT trap.

# Ansible refuses to run in a locale that is not UTF-8 ("Ansible requires
# the locale encoding to be UTF-8"): the tests choose theirs, whatever the
# caller's (a CI or a shell with LC_ALL=C).
export LC_ALL=C.UTF-8
# take_port, poll, wait_http, wait_port
# shellcheck source=tests/service/common.sh
. "$src/tests/service/common.sh"
declare -A fleet_pids=()
fails=0 checks=0 passes=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }
fleet_cleanup() {
	local p
	for p in "${fleet_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${fleet_pids[@]}"; do wait "$p" 2>/dev/null; done
}
need() { # PROGRAM...: installed, else the tier fails (never skips)
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || { echo "FAIL: $p not installed (scripts/install-deps --test installs it)"; exit 1; }
	done
}

# start_vm NAME PORT: VictoriaMetrics with dedup on, as production should run it;
# $vm_search_flags (default -search.latencyOffset=0s; set it empty for the
# server's defaults) are its query flags. Its pid also in $T/NAME.pid.
start_vm() {
	# shellcheck disable=SC2086 # the flags are words
	victoria-metrics -storageDataPath="$T/$1" -httpListenAddr="127.0.0.1:$2" -retentionPeriod=100y \
		${vm_search_flags--search.latencyOffset=0s} -dedup.minScrapeInterval=1ms -loggerLevel=WARN >>"$T/$1.log" 2>&1 &
	fleet_pids[$1]=$!
	echo $! >"$T/$1.pid"
	wait_http "http://127.0.0.1:$2/health"
}
stop_server() { # NAME
	[ -n "${fleet_pids[$1]:-}" ] || return 0
	kill "${fleet_pids[$1]}" 2>/dev/null
	wait "${fleet_pids[$1]}" 2>/dev/null
	unset "fleet_pids[$1]"
	rm -f "$T/$1.pid"
}
start_influx() { # NAME PORT: InfluxDB 1.x, auth off, database scsitune
	local rpc_port
	take_port rpc_port || return 1
	cat >"$T/$1.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$rpc_port"
[meta]
  dir = "$T/$1/meta"
[data]
  dir = "$T/$1/data"
  wal-dir = "$T/$1/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:$2"
  auth-enabled = false
  log-enabled = false
[continuous_queries]
  enabled = false
CONF
	influxd run -config "$T/$1.conf" >"$T/$1.log" 2>&1 &
	fleet_pids[$1]=$!
	wait_http "http://127.0.0.1:$2/ping" &&
		curl -fsS -XPOST "http://127.0.0.1:$2/query" --data-urlencode 'q=CREATE DATABASE scsitune' >/dev/null
}
vm_flush() { curl -fsS "$1/internal/force_flush" >/dev/null; }
# query_shows URL N [report --query ARGS...]: within 60 s, `report --query URL
# --phase tuned --compare baseline ARGS -o json` answers with N points (the
# points just written are searchable: VictoriaMetrics shows them only once it
# has flushed its buffers, /internal/force_flush or seconds later).
query_points_are() { # URL N [ARGS...]
	local url=$1 n=$2
	shift 2
	"$bin" report --query "$url" --phase tuned --compare baseline "$@" -o json 2>/dev/null |
		"$py" -c 'import json, sys; sys.exit(json.load(sys.stdin)["query"]["points"] != int(sys.argv[1]))' "$n" 2>/dev/null
}
query_shows() {
	poll 60 query_points_are "$@" && return 0
	echo "$1: not $2 points within 60 s" >&2
	return 1
}

# make_host DIR FIXTURE HOSTNAME: DIR/root is a copy of the captured tree
# tests/fixtures/FIXTURE.tar.xz whose host name is HOSTNAME; DIR/state is
# its own state directory (journal, saved sets, spool).
make_host() {
	mkdir -p "$1/root" "$1/state" || return 1
	tar -xJf "$src/tests/fixtures/$2.tar.xz" -C "$1/root" || return 1
	printf '%s\n' "$3" >"$1/root/proc/sys/kernel/hostname"
}

# A tree's identity: every path, type, mode and link target, every file's hash.
snap() { (cd "$1" && find . -printf '%y %m %p %l\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort) | sha256sum; }

# make_fio DIR PHASE START_MS FACTOR...: DIR/PHASE-runK.json, one per factor,
# from the recorded fio 3.33 json+ output (2 jobs), 2 s apart from START_MS;
# $FIO_OPTION (bs=8k) changes a job option of every run.
fio_template=fio-3.33-randread-2jobs-jsonplus.json
make_fio() {
	local dir=$1 phase=$2 start=$3 k=0 f specs=()
	shift 3
	mkdir -p "$dir" || return 1
	for f in "$@"; do
		k=$((k + 1))
		specs+=("$dir/$phase-run$k.json:$f:$((start + k * 2000))")
	done
	"$py" "$src/tests/fleet/vary-fio.py" "$src/tests/report/fio/$fio_template" ${FIO_OPTION:+"$FIO_OPTION"} "${specs[@]}"
}
now_ms() { "$py" -c 'import time; print(int(time.time() * 1000))'; }
