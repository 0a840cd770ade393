# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case state-dir of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): a state directory under a file or read-only: exit 1, one line,
# the report not printed, nothing left.
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
