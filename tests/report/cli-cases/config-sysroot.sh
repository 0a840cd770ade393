# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case config-sysroot of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): the default settings file under --sysroot TREE is
# TREE/etc/scsitune/scsitune.conf; $SCSITUNE_CONFIG and --config win over it; a
# --sysroot that does not exist.
settings_files
# The default settings file goes through the root layer: under --sysroot TREE it
# is TREE/etc/scsitune/scsitune.conf (never the host's /etc); $SCSITUNE_CONFIG
# still moves it (and wins over the tree); --config still wins over both.
tree=$work/conf-tree
mkdir -p "$tree/sys" "$tree/etc/scsitune"
printf '[upload]\nurl = http://127.0.0.1:1/write\nfrob = 1\n' >"$tree/etc/scsitune/scsitune.conf"
printf '[upload]\nurl = http://127.0.0.1:1/write\ntimeout = 0\n' >"$work/env.conf"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "^scsitune: $tree/etc/scsitune/scsitune.conf:3: unknown key 'upload.frob'$" "$work/err" &&
	pass "config: default file under --sysroot, SCSITUNE_CONFIG unset" ||
	fail "config: default file under --sysroot, SCSITUNE_CONFIG unset: exit $rc: $(cat "$work/err")"
rc=0
SCSITUNE_CONFIG=$work/env.conf "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "^scsitune: $work/env.conf:3: upload.timeout: '0' is not a number of seconds from 1 to 3600$" "$work/err" &&
	pass "config: SCSITUNE_CONFIG wins over the tree's file" || fail "config: SCSITUNE_CONFIG over the tree: exit $rc: $(cat "$work/err")"
expect "config: --config wins over the tree's file" 1 "^scsitune: $work/bad.conf:4: unknown key 'server.url'$" \
	-- --sysroot "$tree" report --flush --state-dir "$us" --config "$work/bad.conf"
rm "$tree/etc/scsitune/scsitune.conf"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 64 ] && grep -q -- "--flush: no --upload URL" "$work/err" && pass "config: no file in the tree: no URL (64)" ||
	fail "config: no file in the tree: exit $rc: $(cat "$work/err")"
rc=0
env -u SCSITUNE_CONFIG "$bin" --sysroot "$work/no-tree" report --flush --state-dir "$us" >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
[ "$rc" -eq 1 ] && [ "$(cat "$work/err")" = "scsitune: --sysroot $work/no-tree: No such file or directory" ] &&
	pass "config: a --sysroot that does not exist" || fail "config: bad --sysroot: exit $rc: $(cat "$work/err")"
state_empty "settings file under --sysroot" "$us"
