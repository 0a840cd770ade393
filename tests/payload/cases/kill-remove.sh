# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kill-remove (sourced by test-payload.sh; abort_hooks: sysroot-lib.sh).
# --- 6. kill -9 anywhere ------------------------------------------------------------
section "6. kill -9 anywhere: remove"
if abort_hooks; then
	before=$(snap)
	# remove killed half way, then remove again.
	rpoints=0
	for n in $(seq 1 30); do
		st payload install "$b" --state-dir "$state" >/dev/null 2>&1 || { fail "install for the remove kill test"; break; }
		rc=0
		(SCSITUNE_TEST_PAYLOAD_ABORT=$n "$bin" --sysroot "$root" payload remove --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 0 ] && break
		rpoints=$((rpoints + 1))
		[ "$rc" -eq 134 ] || { fail "remove killed at point $n: exit $rc"; break; }
		run 0 "remove after a killed remove ($n)" st payload remove --state-dir "$state" || break
		[ "$(snap)" = "$before" ] || { fail "remove killed at point $n, then remove: the tree differs"; break; }
	done
	[ "$rpoints" -ge 5 ] && ok "remove killed at $rpoints points" || fail "remove: only $rpoints abort points"
	[ "$(snap)" = "$before" ] || fail "after the kill tests the tree differs"
fi
