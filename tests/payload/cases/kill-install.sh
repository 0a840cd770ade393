# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kill-install (sourced by test-payload.sh; abort_hooks: sysroot-lib.sh).
# --- 6. kill -9 anywhere ------------------------------------------------------------
section "6. kill -9 anywhere"
if abort_hooks; then
	before=$(snap)
	points=0
	for n in $(seq 1 60); do
		rc=0
		# a subshell: the shell's own "Aborted" report goes to /dev/null with it
		(SCSITUNE_TEST_PAYLOAD_ABORT=$n "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		if [ "$rc" -eq 0 ]; then
			st payload remove --state-dir "$state" >/dev/null 2>&1
			break
		fi
		points=$((points + 1))
		[ "$rc" -eq 134 ] || { fail "kill at point $n: exit $rc, want 134 (abort)"; break; }
		[ "$n" -eq 5 ] && { run 1 "install after an interrupted one" st payload install "$b" --state-dir "$state" &&
			err_has "interrupted" "was interrupted .*'scsitune payload remove' undoes it first"; }
		run 0 "remove after a kill at point $n" st payload remove --state-dir "$state" || break
		[ "$(snap)" = "$before" ] || { fail "kill at install point $n, then remove: the tree differs"; break; }
	done
	[ "$points" -ge 15 ] && ok "install killed at $points points, remove restored the tree each time" ||
		fail "install: only $points abort points"
fi
