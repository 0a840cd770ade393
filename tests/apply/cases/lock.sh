# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case lock of run-apply.sh (sourced in a subshell on a fresh tree): apply
# while another holds the lock exits 1 with one line, the tree untouched.
# 4. The lock: a second apply while one holds it exits 1 with one line.
mkdir -p "$state"
rc=0
flock -n "$state/lock" -c "echo 4242 >'$state/lock'; '$bin' --sysroot '$work/root' apply --profile "$profile" --profile-dir '$profiles' --state-dir '$state'" \
	>"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "apply under a held lock: exit $rc, want 1"
[ "$(grep -v '^--[0-9]*--' "$work/err")" = "scsitune: another scsitune apply or revert is running (pid 4242)" ] || fail "lock message: $(cat "$work/err")"
same_tree "apply under a held lock"
