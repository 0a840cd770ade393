# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case state-dir of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): a state directory under a file or read-only: exit 1, one line,
# the report not printed, nothing left; one another user could write (issue 29:
# in a 0777 directory, owned by nobody) refused for --phase, --compare and
# --flush, naming the directory and the fix, one in a sticky directory of
# root's accepted; a phase directory or saved set that is a symbolic link
# refused, never followed.
# State directory that cannot be written: the report is not printed, nothing is left.
touch "$work/a-file"
expect "state dir under a file" 1 "^scsitune: --state-dir $work/a-file/state: saving the result set: Not a directory$" \
	-- report --phase x --state-dir "$work/a-file/state" "$good"
mkdir -p "$work/ro/reports/x"
if [ "$(id -u)" -ne 0 ]; then
	chmod 0555 "$work/ro/reports/x"
	expect "read-only state dir" 1 "saving the result set: Permission denied$" -- report --phase x --state-dir "$work/ro" "$good"
	chmod 0755 "$work/ro/reports/x"
else
	# Root ignores mode bits: a read-only mount in a private namespace stops it.
	rc=0
	unshare --mount --propagation private sh -c 'mount -t tmpfs -o ro scsitune-ro "$1/ro/reports/x" &&
		exec "$2" report --phase x --state-dir "$1/ro" "$3"' sh "$work" "$bin" "$good" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" -eq 1 ] && grep -q "saving the result set: Read-only file system$" "$work/err" && [ ! -s "$work/out" ]; then
		pass "read-only state dir (read-only mount, as root)"
	else
		fail "read-only state dir (read-only mount, as root): exit $rc: $(head -1 "$work/err")"
	fi
fi
state_empty "unwritable state dir" "$work/ro"
# Issue 29: a state directory another user could write, or one above it (owned by nobody, or
# writable by group or others without the sticky bit): refused before anything is read or
# written there, one line naming the directory at fault and the fix.
mkdir -p "$work/open" && chmod 0777 "$work/open"
open_re="^scsitune: state directory $work/open/state: not trusted: $work/open is writable by its group and others \(mode 0777\): chmod go-w $work/open$"
expect "state dir in a 0777 directory: --phase" 1 "$open_re" -- report --phase x --state-dir "$work/open/state" "$good"
expect "state dir in a 0777 directory: --compare" 1 "$open_re" -- report --compare x --state-dir "$work/open/state" "$good"
expect "state dir in a 0777 directory: --flush" 1 "$open_re" \
	-- report --flush --upload http://127.0.0.1:1/write --state-dir "$work/open/state"
state_empty "state dir in a 0777 directory" "$work/open"
[ ! -e "$work/open/state" ] || fail "state dir in a 0777 directory: $work/open/state was made"
"$bin" report --phase x --state-dir "$work/theirs" "$good" >/dev/null 2>&1 || fail "saving a set to compare with"
chown -R nobody "$work/theirs"
expect "state dir owned by nobody: --compare" 1 \
	"^scsitune: state directory $work/theirs: not trusted: owned by uid $(id -u nobody), not root: chown root $work/theirs$" \
	-- report --compare x --state-dir "$work/theirs" "$good"
chown -R root "$work/theirs"
# A sticky directory of root's (1777, like /tmp): nobody else can replace what is in it: accepted.
mkdir -p "$work/sticky" && chmod 1777 "$work/sticky"
checks=$((checks + 1))
if "$bin" report --phase x --state-dir "$work/sticky/state" "$good" >/dev/null 2>"$work/err" &&
	[ -n "$(find "$work/sticky/state/reports/x" -name '*.json')" ]; then
	pass "state dir in a sticky directory of root's: saved"
else
	fail "state dir in a sticky directory of root's: $(head -1 "$work/err")"
fi
# The saved sets are read back without following a symbolic link: a phase directory or a set
# that is one is refused, named.
mkdir -p "$work/ln/reports" "$work/elsewhere"
cp -r "$work/theirs/reports/x" "$work/elsewhere/x"
ln -s "$work/elsewhere/x" "$work/ln/reports/x"
expect "--compare: the phase directory a symbolic link" 1 \
	"^scsitune: --compare x: $work/ln/reports/x: a symbolic link: refused$" -- report --compare x --state-dir "$work/ln" "$good"
expect "--phase: the phase directory a symbolic link" 1 \
	"^scsitune: --state-dir $work/ln: saving the result set: a symbolic link: refused$" \
	-- report --phase x --state-dir "$work/ln" "$good"
rm "$work/ln/reports/x" && mkdir "$work/ln/reports/x"
set_file=$(basename "$(find "$work/elsewhere/x" -name '*.json' | head -1)")
ln -s "$work/elsewhere/x/$set_file" "$work/ln/reports/x/$set_file"
expect "--compare: the saved set a symbolic link" 1 \
	"^scsitune: --compare x: $work/ln/reports/x/$set_file: a symbolic link: refused$" \
	-- report --compare x --state-dir "$work/ln" "$good"
[ "$(find "$work/elsewhere" -type f | wc -l)" -eq 1 ] || fail "something was written where the links point"
