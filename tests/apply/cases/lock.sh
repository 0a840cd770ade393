# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case lock of run-apply.sh (sourced in a subshell on a fresh tree): the lock
# is taken before the host is read, and whoever is kept out is told who holds
# it, by pid:
#  a. a real scsitune apply holding it (SCSITUNE_TEST_LOCK_HOLD: it holds the
#     lock, before it reads anything, while $work/held is there): a second
#     apply, a revert, a verify (with and without --profile) and a payload
#     remove each exit 1 with one line naming it ("another scsitune apply is
#     running (pid N)"), the tree untouched; released, it applies;
#  b. verify holds it shared: another verify runs beside it, an apply is told
#     a verify holds it;
#  c. a holder that is not scsitune: the pid it wrote is named; one that
#     wrote none is said to have written none (never "pid unknown"), and
#     the next line says how to find it (lslocks);
#  d. apply and verify take the lock before they read the host: on a tree
#     whose scan would fail (sys/class/block a file), a held lock is what
#     they report.
mkdir -p "$state"
P=(--profile "$profile" --profile-dir "$profiles")
# hold LABEL ARGS...: scsitune ARGS in the background, holding the lock ($holder: its pid) until release.
hold() {
	local label=$1
	shift
	rm -f "$work/held"
	SCSITUNE_TEST_LOCK_HOLD=$work/held "$bin" --sysroot "$work/root" "$@" >"$work/holder.out" 2>"$work/holder.err" &
	holder=$!
	local i=0
	until [ -e "$work/held" ] || [ $i -ge 3000 ] || ! kill -0 "$holder" 2>/dev/null; do
		i=$((i + 1))
		sleep 0.01
	done
	checks=$((checks + 1))
	[ -e "$work/held" ] || fail "$label: the holder did not take the lock: $(cat "$work/holder.err")"
}
release() { # release WANT_RC: the holder ends, with that exit status
	local rc=0
	rm -f "$work/held"
	wait "$holder" || rc=$?
	checks=$((checks + 1))
	[ "$rc" -eq "$1" ] || { fail "the holder exited $rc, want $1"; sed 's/^/    /' "$work/holder.err" | head -5; }
}
# kept_out LABEL WANT ARGS...: scsitune ARGS exits 1 with the one line WANT, the tree untouched.
kept_out() {
	local label=$1 want=$2
	shift 2
	run 1 "$label" st "$@" --state-dir "$state"
	checks=$((checks + 1))
	[ "$(grep -v '^--[0-9]*--' "$work/err")" = "$want" ] || fail "$label: lock message: $(cat "$work/err")"
	same_tree "$label"
}

# a. A real apply holds it.
hold "apply" apply "${P[@]}" --state-dir "$state"
msg="scsitune: another scsitune apply is running (pid $holder)"
kept_out "apply under a held lock" "$msg" apply "${P[@]}"
kept_out "revert under a held lock" "$msg" revert
kept_out "verify under a held lock" "$msg" verify
kept_out "verify --profile under a held lock" "$msg" verify "${P[@]}"
kept_out "payload remove under a held lock" "$msg" payload remove
release 0
run 0 "revert after the holder applied" st revert --state-dir "$state"
same_tree "revert after the holder applied"

# b. verify holds it shared: verifies run side by side, apply waits for none of them.
hold "verify" verify "${P[@]}" --state-dir "$state"
run 2 "verify beside a verify (the tree is not tuned: drift)" st verify "${P[@]}" --state-dir "$state"
kept_out "apply while a verify reads the host" \
	"scsitune: a scsitune verify is reading the host (it holds $state/lock shared): run this again when it ends" \
	apply "${P[@]}"
release 2

# c. A holder that is not scsitune: the pid it wrote named, or why there is none.
rc=0
flock -n "$state/lock" -c "echo \$\$ | tee '$state/lock' >'$work/pid'; '$bin' --sysroot '$work/root' apply ${P[*]} --state-dir '$state'; exit \$?" \
	>"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] || fail "apply under flock(1) that wrote its pid: exit $rc, want 1"
[ "$(grep -v '^--[0-9]*--' "$work/err")" = "scsitune: another process holds $state/lock (pid $(cat "$work/pid"))" ] ||
	fail "lock message with a pid written: $(cat "$work/err")"
rc=0
flock -n "$state/lock" -c ": >'$state/lock'; '$bin' --sysroot '$work/root' apply ${P[*]} --state-dir '$state'; exit \$?" \
	>"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] || fail "apply under flock(1) that wrote no pid: exit $rc, want 1"
# (printf: the two lines, the second the next step: lslocks names the holder.)
[ "$(grep -v '^--[0-9]*--' "$work/err")" = "$(printf '%s\n%s' \
	"scsitune: another process holds $state/lock: it wrote no pid there (so it is not scsitune, which always does)" \
	"scsitune: hint: to see which: lslocks --output PID,COMMAND,PATH | grep -F $state/lock")" ] ||
	fail "lock message with no pid written: $(cat "$work/err")"
same_tree "apply under flock(1)"

# d. The lock before the host: a scan of this tree fails, the held lock is reported first.
mv "$work/root/sys/class/block" "$work/block"
echo not-a-directory >"$work/root/sys/class/block"
# shellcheck disable=SC2034 # before: what same_tree compares with
before=$(snap)
for cmd in apply verify; do
	rc=0
	flock -n "$state/lock" -c "echo \$\$ | tee '$state/lock' >'$work/pid'; '$bin' --sysroot '$work/root' $cmd ${P[*]} --state-dir '$state'; exit \$?" \
		>"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	[ "$rc" -eq 1 ] && [ "$(grep -v '^--[0-9]*--' "$work/err")" = "scsitune: another process holds $state/lock (pid $(cat "$work/pid"))" ] ||
		fail "$cmd under a held lock on a tree it cannot read: exit $rc, not the lock first: $(cat "$work/err")"
	same_tree "$cmd under a held lock on a tree it cannot read"
done
rm "$work/root/sys/class/block"
mv "$work/block" "$work/root/sys/class/block"
