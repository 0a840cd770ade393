#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet tier: the Ansible rollout (fleet/ansible/rollout.yml and its role) run
# for real with Debian's ansible-playbook against local hosts (local
# connection), each a copy of a captured tree (tests/fixtures: dual-socket,
# four-node and offline-cpus mpi3mr hosts, one without an HBA) with its own
# state directory, its fio results varied per host from a recorded real fio
# output and ingested (scsitune_fio_files), and a real VictoriaMetrics on
# 127.0.0.1 as the central service (started and stopped here).
#
# Each case is its own CTest test fleet/rollout/CASE, with its own hosts
# (fresh copies of the trees), state directories and service; a case that
# passed no check fails.
#
# Fleet A, eight hosts, the default waves [1, 10%, 25%, 100%] = 1, 1, 2, 4:
#   check    --check (one wave of all eight): each eligible host's plan
#            (apply --dry-run), every tree byte-identical afterwards, no
#            state written (check mode asks no service: none is started);
#   all-good (1) all good: every wave's gate passes and marks its hosts, every
#            host verifies, the fleet view's numbers equal each host's own
#            report --compare;
#            (5) the whole play again: zero changes, no new point;
#   late     the gate alone (gate-late.yml) for f1 against a stub service that
#            fails (503) at the first ask and holds no point of the phases at
#            the second (report --query exits 1 for both): asked again, passed
#            at the third; by request count, not by time.
# Fleet B, five hosts, waves [1, 1, 2, 100%] (scsitune_serial with -e), one
# chain, each step on what the one before left:
#   failures (2) the canary's tuned results worse than its baseline: the play
#            stops after wave 1, the canary is reverted (its tree hashes as
#            before), no other host is touched;
#            (4) its results fixed and rerun: the central service goes down
#            during wave 2: the gate asks again until scsitune_gate_wait (20 s
#            here) is spent and fails closed, the rollout stops with wave 2
#            applied and its results in the spool; the service back, a rerun
#            resumes (wave 1 not redone, the spool sent, wave 2 judged) and
#            completes with one copy of every run;
#            (3) in that rerun a host of wave 3 drifts after apply: verify
#            fails, it is reverted (revert --force: tree as before) and
#            reported, counted against the failure budget (50 %, not
#            exceeded), and the wave's gate decides on the other host;
#            stale: the gate alone (gate-stale.yml) on an answer that never
#            shows the host's recorded set: asked until scsitune_gate_wait is
#            spent, then it fails closed naming the set and how often it asked.
# What a test judges in a service it wrote to is read once the service shows
# it (asked again up to a deadline; VictoriaMetrics flushed first), ports
# come from take_port (tests/service/common.sh), and no wait is a fixed sleep.
# Without --case the cases run in two lanes at the same time, all-good in one,
# check, late and failures in the other (about the same time alone: 250 and
# 240 s on a loaded 2-core machine). all-good and failures each start their
# own VictoriaMetrics (fleet B's with the server's default search flags,
# -search.latencyOffset=30s), late a stub service; each rollout is a chain of
# small waves, mostly waiting, so side by side they take the wall time of the
# longer lane (CTest runs the cases side by side the same way, -j2). Each
# ansible-playbook run is bounded (timeout 1200 s).
# Fails (never skips) when ansible-playbook or victoria-metrics is missing.
# Usage: test-rollout.sh [--case CASE] SCSITUNE SRCDIR
#        test-rollout.sh --list
# Without --case every case runs; an unknown case is exit 64.
set -uo pipefail
cases=(check all-good late failures)
lanes=("all-good" "check late failures")
only=
while [ $# -gt 0 ]; do
	case $1 in
	--list) printf '%s\n' "${cases[@]}"; exit 0 ;;
	--case) [ $# -ge 2 ] || { echo "test-rollout.sh: --case needs a case name (--list names them)" >&2; exit 64; }
		only=$2; shift 2 ;;
	*) break ;;
	esac
done
# The whole list against the name (grep -q may exit before printf has written the rest: under
# pipefail that SIGPIPE would read as "no case").
if [ -n "$only" ] && [[ " ${cases[*]} " != *" $only "* ]]; then
	echo "test-rollout.sh: no case '$only' (--list names them)" >&2
	exit 64
fi
[ $# -eq 2 ] || { echo "usage: test-rollout.sh [--case CASE] SCSITUNE SRCDIR | --list" >&2; exit 64; }
bin=$(realpath "$1") src=$(realpath "$2")
# The interpreter itself, not a version manager's shim (pyenv's costs about
# 0.5 s of CPU per call in bash scripts; the test calls python3 often).
py=$("${PYTHON3:-python3}" -c 'import sys; print(sys.executable)') || exit 1
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need ansible-playbook victoria-metrics curl timeout
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-rollout.XXXXXX")
# shellcheck source=tests/fleet/rollout-lib.sh
. "$src/tests/fleet/rollout-lib.sh"
# The cases' subshells and their servers (pids in $T/*.pid and $T/CASE/*.pid)
# go with this script.
cleanup_all() {
	local f
	fleet_cleanup
	for f in "$T"/*.pid "$T"/*/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	if [ -n "${SCSITUNE_KEEP_TMP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
}
trap cleanup_all EXIT
trap "exit 143" TERM INT
started=$(date +%s)
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf
# Ansible's own files stay in the temp dir: no ~/.ansible, no /etc/ansible.
cat >"$T/ansible.cfg" <<CFG
[defaults]
forks = 10
# The controller polls its workers every 1 ms by default: on 2 cores that CPU is theirs.
internal_poll_interval = 0.05
local_tmp = $T/ansible-tmp
remote_tmp = $T/ansible-tmp
retry_files_enabled = False
display_skipped_hosts = False
nocolor = True
interpreter_python = /usr/bin/python3
[connection]
pipelining = True
CFG
export ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_HOME=$T/ansible-home ANSIBLE_NOCOLOR=1
# Each module runs as python3 reading its ~130 KB program on stdin
# (pipelining); with PYTHONUNBUFFERED set (as in some CI images) Python reads
# it one byte per read(2): about 0.2 s more CPU per module run.
unset PYTHONUNBUFFERED
playbook=$src/fleet/ansible/rollout.yml
now=$(now_ms)

# run_case CASE: the case in a subshell with its own directory ($T/CASE),
# counters and servers; its counts in $T/CASE/count when it finished.
run_case() {
	(
		local t0
		t0=$(date +%s)
		echo "$BASHPID" >"$T/$1-shell.pid"
		T=$T/$1
		mkdir -p "$T"
		checks=0 fails=0 passes=0
		trap fleet_cleanup EXIT
		trap "exit 143" TERM INT
		# shellcheck source=/dev/null
		. "$src/tests/fleet/rollout/$1.sh"
		[ "$passes" -gt 0 ] || fail "case $1: no check passed"
		echo "case $1: $checks checks, $fails failed, $(($(date +%s) - t0)) s"
		echo "$checks $fails" >"$T/count"
		rm -f "${T%/*}/$1-shell.pid"
	)
}
if [ -n "$only" ]; then
	run_case "$only"
else
	# Both lanes at once, each case's output in $T/CASE.out, shown in the cases' order.
	for lane in "${lanes[@]}"; do
		# shellcheck disable=SC2086 # the lane is a list of case names
		(for c in $lane; do run_case "$c" >"$T/$c.out" 2>&1; done) &
	done
	wait
fi
list=("${cases[@]}")
[ -z "$only" ] || list=("$only")
for c in "${list[@]}"; do
	[ -n "$only" ] || { echo "===== case $c ====="; cat "$T/$c.out"; }
	if [ -f "$T/$c/count" ]; then
		read -r n f <"$T/$c/count"
		checks=$((checks + n)) fails=$((fails + f))
	else
		fail "case $c did not finish"
	fi
done
echo "fleet/rollout${only:+/$only}: $checks checks, $fails failed, $(($(date +%s) - started)) s"
[ "$fails" -eq 0 ]
