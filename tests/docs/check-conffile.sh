#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# etc/scsitune.conf, the settings file the package installs as the conffile
# /etc/scsitune/scsitune.conf, keeps up with the parser (cli/lib/core/config.c):
#  - as shipped (every setting commented out) scsitune accepts it;
#  - every key the parser knows has a commented example 'key = value' in it,
#    and with every example uncommented scsitune accepts it too;
#  - control: an unknown key makes scsitune name the file and line (exit 1).
# `report --config FILE - -` reads the file, then stops with the usage error
# "'-' (standard input) given more than once" (exit 64): nothing is sent and
# no other file is read.
# Usage: check-conffile.sh SCSITUNE SOURCE_DIR
set -uo pipefail
bin=${1:?usage: check-conffile.sh SCSITUNE SOURCE_DIR}
src=${2:?usage: check-conffile.sh SCSITUNE SOURCE_DIR}
conf=$src/etc/scsitune.conf
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-conffile.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# accepts LABEL FILE: the file parses (exit 64 after it was read, no error naming it).
accepts() {
	local rc=0
	"$bin" report --config "$2" - - >"$work/out" 2>"$work/err" || rc=$?
	if [ $rc -ne 64 ] || ! grep -qF "'-' (standard input) given more than once" "$work/err" || grep -qF "$2" "$work/err"; then
		fail "$1: scsitune report --config exited $rc: $(head -2 "$work/err")"
	fi
}

accepts "etc/scsitune.conf as shipped" "$conf"
keys=$(grep -oE 'strcmp\(name, "[a-z_]+"\)' "$src/cli/lib/core/config.c" | sed -E 's/.*"([a-z_]+)".*/\1/' | sort -u)
[ -n "$keys" ] || fail "no keys found in cli/lib/core/config.c (strcmp(name, \"KEY\"))"
for k in $keys; do
	grep -qE "^#$k = [^ ]" "$conf" || fail "etc/scsitune.conf has no commented example '#$k = VALUE'"
done
sed -E 's/^#([a-z_]+ = )/\1/' "$conf" >"$work/uncommented.conf"
[ "$(grep -cE '^[a-z_]+ = ' "$work/uncommented.conf")" -eq "$(printf '%s\n' "$keys" | grep -c .)" ] ||
	fail "uncommenting the examples does not give one line per key"
accepts "etc/scsitune.conf with every example uncommented" "$work/uncommented.conf"

# Control: the same check sees a bad file.
{ cat "$conf"; echo "user = nobody"; } >"$work/bad.conf"
rc=0
"$bin" report --config "$work/bad.conf" - - >/dev/null 2>"$work/err" || rc=$?
line=$(wc -l <"$work/bad.conf")
[ $rc -eq 1 ] && grep -qF "$work/bad.conf:$line: unknown key 'upload.user'" "$work/err" ||
	fail "control: an unknown key gave exit $rc and '$(head -1 "$work/err")'"
[ $status -eq 0 ] && echo "ok: etc/scsitune.conf parses as shipped and uncommented; keys: $(echo $keys)"
exit $status
