#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The journal under attack (issue 15), on the dual-socket-mpi3mr tree with
# Debian 12's /etc/default/irqbalance and --persist's directories:
#  1. kill -9 during revert (SCSITUNE_TEST_KILL_AFTER=N: SIGKILL before the
#     revert's write N+1), at the first three value writes of the revert, the
#     middle one and the last one, and twice in a row: revert again restores
#     everything, the tree byte-identical to the snapshot taken before apply;
#  2. a malformed or truncated journal.json or journal.log in the state
#     directory on the real paths (apply refuses to start over it, revert and
#     verify refuse it): one line naming the file, exit 1, the tree and the
#     journal untouched; a FIFO or a directory in their place is refused at
#     once, never waited on; a torn or garbled journal.log after a killed
#     apply replays up to the damage and revert still restores the tree;
#  3. a journal edited by hand (a change's path outside what scsitune writes:
#     absolute, "..", another directory; an unknown version or state) and a
#     journal.json or journal.log that is a symbolic link: refused the same
#     way, the link never followed;
#  4. a journal naming what apply never writes though inside etc/, sys/ or
#     proc/ (a file over etc/passwd, core_pattern, uevent_helper, a module
#     parameter, another disk attribute, an IRQ's attribute under another
#     IRQ's object, a kernel attribute marked absent, the boot unit's link
#     pointed elsewhere, a file journaled as a link): refused by apply,
#     revert, revert --force and verify, one line naming changes[N], its kind
#     and path, never advising --force; etc/passwd byte-identical.
#  5. a state directory another user could write (issue 29): it or a
#     directory above it owned by nobody, or writable by group or others
#     without the sticky bit (a parent 0777, the state dir 0775, the tree's
#     var/lib for the default one, a link into a 0777 directory): apply,
#     revert and verify refuse with one line naming the directory and the
#     fix, exit 1, nothing written; in a sticky directory of root's (1777)
#     they work; a FIFO as the lock is refused at once.
# Needs -DSCSITUNE_TEST_HOOKS=ON. Usage: test-hostile-journal.sh SCSITUNE FIXTURE_DIR PROFILE_DIR
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-hostile-journal.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
fail() { fails=$((fails + 1)); echo "FAIL $*"; }
ok() { echo "ok   $*"; }

fresh() { # a new tree in $work/root, its snapshot in $work/before
	rm -rf "$work/root" "$work/state"
	mkdir "$work/root"
	tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
	mkdir -p "$work/root/etc/default" "$work/root/etc/udev/rules.d" "$work/root/etc/modprobe.d" \
		"$work/root/etc/systemd/system/multi-user.target.wants"
	install -m 0640 "$here/irqbalance.default" "$work/root/etc/default/irqbalance"
	# The scsitune the boot unit runs, installed in the tree (apply --persist refuses without it).
	[ -n "${installed:-}" ] || installed=$("$bin" --sysroot "$work/root" -o json apply --profile numa \
		--profile-dir "$profiles" --persist --dry-run 2>/dev/null | python3 -c 'import json,re,sys
u=[c for c in json.load(sys.stdin)["changes"] if c["object"]=="persist:boot-unit"][0]
print(re.search(r"ExecStart=\"([^\"]+)\"", u["desired"]).group(1))')
	mkdir -p "$work/root$(dirname "$installed")"
	install -m 0755 /dev/null "$work/root$installed"
	snap >"$work/before"
}
snap() { (cd "$work/root" && find . -printf '%y %m %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
st() { timeout -k 2 60 "$bin" --sysroot "$work/root" "$@" --state-dir "$work/state" >"$work/out" 2>"$work/err"; }
P=(--profile numa --profile-dir "$profiles")

# --- 1. kill -9 during revert, then revert again ---
# How many value writes a revert of apply --persist makes.
fresh
st apply "${P[@]}" --persist || fail "apply --persist: exit $?"
# The hook counts the revert's writes of kernel values (7 on this tree: the applied values; the
# recorded nr_requests and the --persist files are not hook points).
n=$(python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["changes"] if "kind" not in e and e["state"] in ("applied","ignored")))' "$work/state/journal.json")
checks=$((checks + 1))
[ "$n" -ge 5 ] || fail "apply changed only $n values"
points="0 1 2 $((n / 2)) $((n - 1))"
for k in $points; do
	fresh
	st apply "${P[@]}" --persist || { fail "apply (kill at $k): exit $?"; continue; }
	checks=$((checks + 1))
	rc=0
	SCSITUNE_TEST_KILL_AFTER=$k st revert || rc=$?
	[ "$rc" -eq 137 ] || { fail "revert with SCSITUNE_TEST_KILL_AFTER=$k: exit $rc, want 137 (SIGKILL)"; continue; }
	[ -f "$work/state/journal.json" ] || fail "killed revert at write $k: the journal is gone"
	rc=0
	st revert || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -ne 0 ]; then
		fail "revert after a kill at write $k of $n: exit $rc"
		sed 's/^/  /' "$work/out" "$work/err" | head -10
	elif [ "$(snap)" != "$(cat "$work/before")" ]; then
		fail "revert after a kill at write $k of $n: the tree is not byte-identical to before apply"
	elif [ -e "$work/state/journal.json" ]; then
		fail "revert after a kill at write $k: the journal is still there"
	else
		ok "kill -9 at revert write $k of $n, revert again: tree byte-identical, journal removed"
	fi
done
# Killed twice in a row (the second revert works on the first one's leftovers), then completed.
fresh
st apply "${P[@]}" --persist || fail "apply: exit $?"
SCSITUNE_TEST_KILL_AFTER=1 st revert
SCSITUNE_TEST_KILL_AFTER=2 st revert
rc=0
st revert || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ "$(snap)" = "$(cat "$work/before")" ] && ok "two kills, then revert: tree byte-identical" ||
	fail "two kills, then revert: exit $rc or the tree differs"

# --- 2. A broken journal on the real paths ---
fresh
st apply "${P[@]}" || fail "apply: exit $?"
cp "$work/state/journal.json" "$work/good.json"
after=$(snap)
# broken NAME CMD...: with the broken journal in place, CMD exits 1 with one
# line naming journal.json (within the timeout), and nothing changed.
broken() {
	local name=$1 rc=0
	shift
	local j
	j=$(jsum)
	st "$@" || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -ne 1 ]; then
		fail "$name: $1 exit $rc, want 1"
	elif [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q "^scsitune: $work/state/journal.json: " "$work/err"; then
		fail "$name: $1: stderr is not one line naming journal.json:"
		sed 's/^/  /' "$work/err" | head -3
	elif [ "$(snap)" != "$after" ]; then
		fail "$name: $1 changed the tree"
	elif [ "$(jsum)" != "$j" ]; then
		fail "$name: $1 changed the journal"
	else
		ok "$name: $1 refused: $(cut -c1-120 "$work/err")"
	fi
}
# The journal's identity, never reading a FIFO (that would block this script).
jsum() {
	local f=$work/state/journal.json
	if [ -L "$f" ]; then readlink "$f"; elif [ -f "$f" ]; then sha256sum "$f"; else stat -c '%F' "$f"; fi
	[ ! -e "$work/state/journal.log" ] || stat -c '%F %s %Y' "$work/state/journal.log"
}
size=$(stat -c %s "$work/good.json")
for how in truncated empty garbage binary nul fifo directory; do
	rm -rf "$work/state/journal.json"
	case $how in
	truncated) head -c $((size / 2)) "$work/good.json" >"$work/state/journal.json" ;;
	empty) : >"$work/state/journal.json" ;;
	garbage) echo 'not { json' >"$work/state/journal.json" ;;
	binary) head -c 4096 /dev/urandom >"$work/state/journal.json" ;;
	nul) { head -c 100 "$work/good.json"; printf '\0'; tail -c +101 "$work/good.json"; } >"$work/state/journal.json" ;;
	fifo) mkfifo "$work/state/journal.json" ;;
	directory) mkdir "$work/state/journal.json" ;;
	esac
	for cmd in apply revert verify; do
		if [ "$cmd" = apply ]; then
			broken "journal.json $how" apply "${P[@]}"
		else
			broken "journal.json $how" "$cmd"
		fi
	done
done
# 3. Edited by hand: valid JSON that names a path scsitune never writes, or is not this version.
edit() { # edit HOW: the good journal, changed by python
	python3 - "$work/good.json" "$1" >"$work/state/journal.json" <<-'PY'
		import json, sys
		j = json.load(open(sys.argv[1]))
		how = sys.argv[2]
		c = j["changes"]
		val = next(e for e in c if "kind" not in e)
		fil = next((e for e in c if e.get("kind") == "file"), val)
		if how == "dotdot": val["path"] = "sys/block/../../../../etc/shadow"
		elif how == "absolute": val["path"] = "/etc/passwd"
		elif how == "elsewhere": val["path"] = "var/lib/dpkg/status"
		elif how == "file-elsewhere": fil["path"] = "root/.ssh/authorized_keys"
		elif how == "trailing-slash": val["path"] = "sys/block/"
		elif how == "control": val["path"] = "sys/block/sdb/queue/\x1b[2Jnr_requests"
		elif how == "version": j["version"] = 99
		elif how == "state": val["state"] = "done-by-hand"
		elif how == "not-object": c[0] = "sys/block/sdb/queue/nr_requests"
		json.dump(j, sys.stdout, indent=1)
	PY
}
for how in dotdot absolute elsewhere file-elsewhere trailing-slash control version state not-object; do
	rm -rf "$work/state/journal.json"
	edit "$how"
	for cmd in apply revert verify; do
		if [ "$cmd" = apply ]; then
			broken "journal.json edited ($how)" apply "${P[@]}"
		else
			broken "journal.json edited ($how)" "$cmd"
		fi
		case $how in
		dotdot | absolute | elsewhere | file-elsewhere | trailing-slash | control)
			checks=$((checks + 1))
			grep -q 'a change names a path scsitune never writes' "$work/err" ||
				fail "journal.json edited ($how): $cmd does not say why: $(head -1 "$work/err")"
			;;
		esac
	done
done
# 4. A journal naming what apply never writes (issue 29, the audit's reproducers): one more
# change, within the directories the load takes (etc/, sys/, proc/) but not a path, kind or
# object a plan or --persist writes. Refused before any change, by apply, revert and verify,
# naming the entry; revert --force is refused the same way and its advice never suggests it.
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$work/root/etc/passwd"
after=$(snap)
plant() { # plant HOW: the good journal and the hostile change (its index in $work/idx, "KIND PATH" in $work/what)
	python3 - "$work/good.json" "$1" "$work/idx" "$work/what" >"$work/state/journal.json" <<-'PY'
		import json, sys
		j = json.load(open(sys.argv[1]))
		how = sys.argv[2]
		e = {"object": "persist:boot-unit", "setting": "file", "path": "etc/passwd", "kind": "file",
		     "old": "root::0:0:root:/root:/bin/bash", "desired": "x", "after": "not what is there now",
		     "state": "applied"}
		val = lambda path, obj="disk:x": {"object": obj, "setting": "x", "path": path, "old": "|/tmp/evil",
		                                  "desired": "1", "after": "1", "state": "applied"}
		if how == "core-pattern": e = val("proc/sys/kernel/core_pattern")
		elif how == "uevent-helper": e = val("sys/kernel/uevent_helper")
		elif how == "module-parameter": e = val("sys/module/mpi3mr/parameters/poll_queues", "module:mpi3mr")
		elif how == "disk-attribute": e = val("sys/block/sdb/device/delete")
		elif how == "irq-object": e = val("proc/irq/5/smp_affinity_list", "irq:6")
		elif how == "absent-value": e = dict(val("sys/block/sdb/queue/scheduler"), absent=True)
		elif how == "wants-target":
		    e = {"object": "persist:boot-unit-enable", "setting": "symlink", "kind": "symlink",
		         "path": "etc/systemd/system/multi-user.target.wants/scsitune-apply.service",
		         "old": "/tmp/evil.service", "desired": "/etc/systemd/system/scsitune-apply.service",
		         "after": "/etc/systemd/system/scsitune-apply.service", "state": "applied"}
		elif how == "kind-swap": e = dict(e, path="etc/udev/rules.d/90-scsitune.rules", kind="symlink",
		                                  object="persist:udev-rules")
		j["changes"].append(e)
		open(sys.argv[3], "w").write(str(len(j["changes"]) - 1))
		open(sys.argv[4], "w").write("%s %s" % (e.get("kind", "value"), e["path"]))
		json.dump(j, sys.stdout, indent=1)
	PY
}
for how in passwd core-pattern uevent-helper module-parameter disk-attribute irq-object absent-value wants-target kind-swap; do
	rm -rf "$work/state/journal.json" "$work/state/journal.log"
	plant "$how"
	for cmd in apply revert verify "revert --force"; do
		# shellcheck disable=SC2086 # $cmd: the command and its option
		if [ "$cmd" = apply ]; then broken "journal.json plants $how" apply "${P[@]}"; else broken "journal.json plants $how" $cmd; fi
		checks=$((checks + 1))
		grep -qF "journal.json: changes[$(cat "$work/idx")] ($(cat "$work/what")): " "$work/err" &&
			grep -q ': refused before any change$' "$work/err" ||
			fail "journal.json plants $how: $cmd does not name the entry: $(head -1 "$work/err")"
		checks=$((checks + 1))
		! grep -q -- '--force' "$work/out" "$work/err" || fail "journal.json plants $how: $cmd advises --force"
	done
done
checks=$((checks + 1))
[ "$(cat "$work/root/etc/passwd")" = "root:x:0:0:root:/root:/bin/bash" ] && ok "etc/passwd byte-identical after revert and revert --force" ||
	fail "etc/passwd changed: $(cat "$work/root/etc/passwd")"
rm "$work/root/etc/passwd"
after=$(snap)

# A symbolic link in place of journal.json (to a good journal): never followed.
rm -rf "$work/state/journal.json"
cp "$work/good.json" "$work/linked.json"
ln -s "$work/linked.json" "$work/state/journal.json"
for cmd in apply revert verify; do
	if [ "$cmd" = apply ]; then
		broken "journal.json a symlink" apply "${P[@]}"
	else
		broken "journal.json a symlink" "$cmd"
	fi
	checks=$((checks + 1))
	grep -q 'journal.json: a symbolic link: refused' "$work/err" || fail "journal.json a symlink: $cmd does not say so"
done

rm -rf "$work/state/journal.json"
cp "$work/good.json" "$work/state/journal.json"
st revert || fail "revert with the journal put back: exit $?"
checks=$((checks + 1))
[ "$(snap)" = "$(cat "$work/before")" ] && ok "the good journal put back: revert restores the tree" ||
	fail "the good journal put back: revert did not restore the tree"

# A killed apply leaves journal.json naming journal.log: damage the log, revert still restores.
for how in torn garbage-line fifo symlink; do
	fresh
	SCSITUNE_TEST_KILL_AFTER=3 st apply "${P[@]}"
	[ -f "$work/state/journal.log" ] || { fail "killed apply left no journal.log"; continue; }
	after_kill=$(snap)
	case $how in
	torn) truncate -s -7 "$work/state/journal.log" ;;
	garbage-line) sed -i '3s/.*/{"i": 99999, "state": "applied", garbage/' "$work/state/journal.log" ;;
	fifo) rm "$work/state/journal.log" && mkfifo "$work/state/journal.log" ;;
	symlink) mv "$work/state/journal.log" "$work/linked.log" && ln -s "$work/linked.log" "$work/state/journal.log" ;;
	esac
	rc=0
	st revert || rc=$?
	checks=$((checks + 1))
	if [ "$how" = fifo ] || [ "$how" = symlink ]; then
		# Not a log: refused at once, named, nothing written.
		want="not a regular file" && [ "$how" = fifo ] || want="a symbolic link: refused"
		if [ "$rc" -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "journal.log: $want" "$work/err" &&
			[ "$(snap)" = "$after_kill" ]; then
			ok "journal.log a $how: revert refused at once, nothing written: $(head -1 "$work/err" | cut -c1-120)"
		else
			fail "journal.log a $how: revert exit $rc, or not one line saying '$want', or the tree changed"
			sed 's/^/  /' "$work/err" | head -3
		fi
		continue
	fi
	if [ "$rc" -eq 0 ] && [ "$(snap)" = "$(cat "$work/before")" ]; then
		ok "killed apply, journal.log $how: revert restores the tree byte-identical"
	else
		fail "killed apply, journal.log $how: revert exit $rc, or the tree differs"
		sed 's/^/  /' "$work/out" "$work/err" | head -10
	fi
done

# --- 5. A state directory another user could write (issue 29): hostile-statedir.sh ---
# shellcheck source=tests/apply/hostile-statedir.sh
. "$here/hostile-statedir.sh"

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
