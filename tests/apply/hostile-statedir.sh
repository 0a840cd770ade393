# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# apply/hostile-journal, section 5 (sourced by test-hostile-journal.sh: its helpers and $work).

# --- 5. A state directory another user could write (issue 29) ---
# The state directory and every directory above it must be root's and not
# writable by group or others (a sticky directory of root's, like /tmp, is
# fine): else another user's planted journal would drive root. Each command
# refuses with one line naming the directory at fault and the fix, exit 1,
# nothing written (no lock, no journal, the tree untouched), at once.
# trust_refused NAME DIR BAD WHY CMD...: CMD with --state-dir DIR (or the
# tree's default when DIR is "default") refused, naming BAD and WHY.
trust_refused() {
	local name=$1 sd=$2 bad=$3 why=$4 rc=0 shown
	shift 4
	local before listing
	before=$(snap)
	listing=$(find "$work/trust" "$work/root/var" -printf '%y %m %U %p\n' 2>/dev/null | sort)
	if [ "$sd" = default ]; then
		shown=$work/root/var/lib/scsitune
		timeout -k 2 60 "$bin" --sysroot "$work/root" "$@" >"$work/out" 2>"$work/err" || rc=$?
	else
		shown=$sd
		timeout -k 2 60 "$bin" --sysroot "$work/root" "$@" --state-dir "$sd" >"$work/out" 2>"$work/err" || rc=$?
	fi
	checks=$((checks + 1))
	if [ "$rc" -ne 1 ]; then
		fail "$name: $1 exit $rc, want 1"
		sed 's/^/  /' "$work/err" | head -3
	elif [ "$(wc -l <"$work/err")" -ne 1 ] ||
		! grep -qF "scsitune: state directory $shown: not trusted: $bad$why" "$work/err"; then
		fail "$name: $1: stderr is not one line naming $bad:"
		sed 's/^/  /' "$work/err" | head -3
	elif [ "$(snap)" != "$before" ]; then
		fail "$name: $1 changed the tree"
	elif [ "$(find "$work/trust" "$work/root/var" -printf '%y %m %U %p\n' 2>/dev/null | sort)" != "$listing" ]; then
		fail "$name: $1 wrote in the state directory or above it"
	else
		ok "$name: $1 refused: $(cut -c1-140 "$work/err")"
	fi
}
# the commands that read the state directory: apply, revert, verify
all_refused() {
	local name=$1 sd=$2 bad=$3 why=$4
	trust_refused "$name" "$sd" "$bad" "$why" apply "${P[@]}"
	trust_refused "$name" "$sd" "$bad" "$why" revert
	trust_refused "$name" "$sd" "$bad" "$why" verify
}
fresh
mkdir -p "$work/trust"
st apply "${P[@]}" || fail "apply: exit $?"
cp "$work/state/journal.json" "$work/good.json"
st revert || fail "revert: exit $?"
# A parent writable by all, not sticky: not made yet, and with a good journal in it.
mkdir -m 0777 "$work/trust/open"
chmod 0777 "$work/trust/open"
all_refused "parent 0777, state dir not made yet" "$work/trust/open/state" "$work/trust/open" \
	" is writable by its group and others (mode 0777): chmod go-w $work/trust/open"
mkdir -m 0755 "$work/trust/open/state" && cp "$work/good.json" "$work/trust/open/state/journal.json"
all_refused "parent 0777, a journal planted" "$work/trust/open/state" "$work/trust/open" \
	" is writable by its group and others (mode 0777): chmod go-w $work/trust/open"
# A parent owned by another user (nobody), mode 0755.
mkdir -m 0755 -p "$work/trust/theirs/state" && cp "$work/good.json" "$work/trust/theirs/state/journal.json"
chown nobody "$work/trust/theirs"
all_refused "parent owned by nobody" "$work/trust/theirs/state" "$work/trust/theirs" \
	" is owned by uid $(id -u nobody), not root: chown root $work/trust/theirs"
# The state directory itself: another user's, or writable by its group.
mkdir -m 0755 -p "$work/trust/own/state" && cp "$work/good.json" "$work/trust/own/state/journal.json"
chown nobody "$work/trust/own/state"
all_refused "state dir owned by nobody" "$work/trust/own/state" "" \
	"owned by uid $(id -u nobody), not root: chown root $work/trust/own/state"
chown root "$work/trust/own/state" && chmod 0775 "$work/trust/own/state"
all_refused "state dir mode 0775" "$work/trust/own/state" "" \
	"writable by its group (mode 0775): chmod g-w $work/trust/own/state"
# The tree's default state directory: a directory of the tree above it another user's.
mkdir -p "$work/root/var/lib"
chown nobody "$work/root/var/lib"
all_refused "the tree's var/lib owned by nobody" default "$work/root/var/lib" \
	" is owned by uid $(id -u nobody), not root: chown root $work/root/var/lib"
chown root "$work/root/var/lib"
# Reached through a symbolic link (root's) into a directory writable by all: the target is checked.
ln -s "$work/trust/open/state" "$work/trust/link"
all_refused "a link into a 0777 directory" "$work/trust/link" "$work/trust/open" \
	" is writable by its group and others (mode 0777): chmod go-w $work/trust/open"
# A sticky directory of root's (1777, like /tmp): nobody else can replace what is in it: accepted.
mkdir -m 1777 "$work/trust/sticky"
chmod 1777 "$work/trust/sticky"
after=$(snap)
rc=0
st_s() { timeout -k 2 60 "$bin" --sysroot "$work/root" "$@" --state-dir "$work/trust/sticky/state" >"$work/out" 2>"$work/err"; }
st_s apply "${P[@]}" && st_s verify && st_s revert || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ "$(snap)" = "$after" ] && ok "state dir in a sticky directory of root's (1777): apply, verify, revert" ||
	fail "state dir in a sticky directory of root's: exit $rc: $(head -1 "$work/err")"
# The lock: a FIFO in its place is refused at once, never waited on.
mkdir -p "$work/trust/fifo-lock" && mkfifo "$work/trust/fifo-lock/lock"
rc=0
timeout -k 2 60 "$bin" --sysroot "$work/root" apply "${P[@]}" --state-dir "$work/trust/fifo-lock" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -qx "scsitune: $work/trust/fifo-lock/lock: not a regular file" "$work/err" &&
	[ "$(snap)" = "$after" ] && ok "lock a FIFO: refused at once" ||
	fail "lock a FIFO: exit $rc: $(head -1 "$work/err")"
