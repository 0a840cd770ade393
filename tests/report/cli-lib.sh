# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and setup_case
# SPDX-License-Identifier: GPL-2.0-or-later
# What the cases of test-report.sh share (sourced by it): setup_case, the
# fresh work directory each case runs in; fail, pass, golden, expect,
# state_empty (golden, expect and state_empty count the case's checks);
# settings_files, the settings and auth files of the upload, config-sysroot
# and usage cases; finish_case. Uses bin, fixtures, expected, update, good,
# py and tally from test-report.sh.

setup_case() { # a new empty $work (removed when the case's subshell exits), the counters at 0
	work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-report.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	fails=0 checks=0
}
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; }

# golden NAME FILE: FILE equals expected/NAME (or becomes it with --update).
golden() {
	checks=$((checks + 1))
	sed "s|$work|WORK|g" "$2" >"$work/golden.tmp"
	if [ "$update" = --update ]; then
		cp "$work/golden.tmp" "$expected/$1"
		pass "golden $1 (updated)"
	elif diff -u "$expected/$1" "$work/golden.tmp" >"$work/diff"; then
		pass "golden $1"
	else
		fail "golden $1:"; head -40 "$work/diff"
	fi
}

# expect NAME RC STDERR_REGEX -- ARGS...: exit code, message, nothing on stdout, one stderr line (warnings
# and the hint of the next step, scsitune(8) DIAGNOSTICS, not counted).
expect() {
	local name=$1 want_rc=$2 err_re=$3
	shift 4
	local rc=0
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	local why=""
	[ "$rc" -eq "$want_rc" ] || why="exit $rc, want $want_rc"
	[ -z "$why" ] && ! grep -Eq -- "$err_re" "$work/err" && why="stderr does not match /$err_re/"
	[ -z "$why" ] && [ -s "$work/out" ] && why="stdout not empty"
	[ -z "$why" ] && [ "$want_rc" -eq 1 ] && [ "$(grep -vEc '^scsitune: (warning|hint): ' "$work/err")" -ne 1 ] && why="not one error line"
	if [ -n "$why" ]; then
		fail "$name: $why"; sed 's/^/  stderr: /' "$work/err" | head -5
	else
		pass "$name"
	fi
}

state_empty() { # NAME DIR: no file was written under DIR
	checks=$((checks + 1))
	if [ -z "$(find "$2" -type f 2>/dev/null)" ]; then pass "$1: nothing written"; else fail "$1: files written: $(find "$2" -type f)"; fi
}

settings_files() { # the files the upload, config-sysroot and usage cases name; $us, their state directory
	# Upload settings are checked before anything is saved (no server needed).
	# shellcheck disable=SC2034 # us: used by the cases
	us=$work/up-state
	printf 'no-form-here\n' >"$work/form.auth"
	chmod 600 "$work/form.auth"
	printf '[upload]\nurl = http://127.0.0.1:1/write\n[server]\nurl = x\n' >"$work/bad.conf"
	: >"$work/empty.conf"
}

# finish_case CASE: the end of a case's subshell: its counts into $tally/CASE;
# a case that made no check fails.
finish_case() {
	[ "$checks" -gt 0 ] || fail "case $1 made no check"
	echo "$checks $fails" >"$tally/$1"
	echo "case $1: $checks checks, $fails failed"
	exit $((fails > 0))
}
