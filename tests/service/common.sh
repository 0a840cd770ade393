# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by the service and fleet tiers (sourced; needs $py, python3): ports
# that no two tests take at once, and waits that poll for a condition up to a
# deadline (never a fixed sleep).

# take_port VAR: a TCP port on 127.0.0.1 for a server, in VAR, that no other
# test of these tiers takes while this shell runs, and that nothing listens
# on. Below the kernel's ephemeral range (ip_local_port_range, 32768-60999 by
# default: 20000-29999), so no client connection and no bind to port 0 gets
# it in the meantime; taken with an exclusive flock on
# $SCSITUNE_TEST_PORT_LOCKS/PORT (default /tmp/scsitune-test-ports) that this
# shell holds until it exits, even when killed (its servers inherit the lock
# too). Call it in the shell that runs the test, never as $(take_port): a
# command substitution's subshell would let the lock go at once.
test_port_locks=${SCSITUNE_TEST_PORT_LOCKS:-/tmp/scsitune-test-ports}
take_port() {
	local _lo _hi _first _last _p _fd _i
	read -r _lo _hi </proc/sys/net/ipv4/ip_local_port_range || return 1
	if [ "$_lo" -gt 21024 ]; then
		_first=$((_lo > 30000 ? 20000 : _lo - 10000)) _last=$((_lo > 30000 ? 29999 : _lo - 1))
	else
		_first=$((_hi + 1)) _last=65535
	fi
	[ "$_last" -gt "$_first" ] || { echo "take_port: no port range outside $_lo-$_hi" >&2; return 1; }
	mkdir -p "$test_port_locks" 2>/dev/null && chmod 1777 "$test_port_locks" 2>/dev/null
	for _i in $(seq 1 200); do
		_p=$((_first + (RANDOM * 32768 + RANDOM) % (_last - _first + 1)))
		exec {_fd}>>"$test_port_locks/$_p" || continue
		if flock -n "$_fd" && "$py" -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$_p" 2>/dev/null; then
			printf -v "$1" %s "$_p"
			return 0
		fi
		exec {_fd}>&-
	done
	echo "take_port: no free port in $_first-$_last" >&2
	return 1
}

# poll SECONDS COMMAND...: run COMMAND until it succeeds, 0.1 s apart, for at
# most SECONDS (a deadline, however long each try takes); 1 when it never did.
poll() {
	local _end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$_end" ] || return 1
		sleep 0.1
	done
}

# wait_http URL [CURL ARGS...]: URL answers 2xx within 60 s.
wait_http() {
	local _u=$1
	shift
	poll 60 curl -fs -o /dev/null "$@" "$_u" 2>/dev/null && return 0
	echo "not ready within 60 s: $_u" >&2
	return 1
}

# wait_port PORT: something accepts connections on 127.0.0.1:PORT within 60 s.
wait_port() {
	poll 60 "$py" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" \
		2>/dev/null && return 0
	echo "nothing listens on 127.0.0.1:$1 within 60 s" >&2
	return 1
}
