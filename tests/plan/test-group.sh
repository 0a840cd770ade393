#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plans people read: on a host of 24 solid-state mpi3mr disks (mkfixture.py
# bench, rotational 0) the numa profile's identical changes are one row,
# "24 disks (-v lists them)", in apply --dry-run, apply, verify and revert;
# -v lists each disk; rows that differ (the two HBAs' IRQs) stay apart; the
# JSON keeps every change.
# Usage: test-group.sh SCSITUNE MKFIXTURE PROFILE_DIR
set -uo pipefail
bin=$1 mkfixture=$2 profiles=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-group.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
python3 "$mkfixture" bench --hbas 2 --disks 24 "$work/root" >/dev/null || { echo "FAIL: mkfixture"; exit 1; }
n=0
for f in "$work"/root/sys/block/*/queue/rotational; do
	echo 0 >"$(readlink -f "$f")" && n=$((n + 1))
done
[ "$n" = 24 ] || fail "the tree has $n disks, not 24"
run() { "$bin" --sysroot "$work/root" "$@" --state-dir "$work/state"; }
table() { sed -n '/^\(STATE\|RESULT\) /,/^$/p' "$1"; }

run apply --profile numa --profile-dir "$profiles" --dry-run >"$work/dry.txt" || fail "dry run exited $?"
table "$work/dry.txt" >"$work/dry.rows"
grep -qx "change  24 disks       (-v lists them)  scheduler mq-deadline -> none," "$work/dry.rows" ||
	fail "dry run: no one row for the 24 disks: $(cat "$work/dry.rows")"
[ "$(grep -c '^change ' "$work/dry.rows")" = 3 ] || fail "dry run: not 3 rows (the disks, 2 IRQs): $(cat "$work/dry.rows")"
grep -q "irq:100 .*0-31 -> 0$" "$work/dry.rows" && grep -q "irq:133 .*0-31 -> 32$" "$work/dry.rows" ||
	fail "dry run: the two IRQs' different changes are not apart"
grep -q ' sd[a-z]' "$work/dry.rows" && fail "dry run: a disk named in the grouped table"
run apply --profile numa --profile-dir "$profiles" --dry-run -v >"$work/dry-v.txt" || fail "dry run -v exited $?"
[ "$(table "$work/dry-v.txt" | grep -c '^change  *sd')" = 24 ] || fail "dry run -v: not one row per disk"
run apply --profile numa --profile-dir "$profiles" --dry-run -o json >"$work/dry.json" || fail "dry run json exited $?"
python3 -c "
import json, sys
c = [r for r in json.load(open(sys.argv[1]))['changes'] if r['state'] == 'change']
assert len(c) == 122, len(c)
" "$work/dry.json" || fail "JSON: not every change"

run apply --profile numa --profile-dir "$profiles" >"$work/apply.txt" || fail "apply exited $?"
grep -qx "applied  24 disks       (-v lists them)  scheduler mq-deadline -> none," "$work/apply.txt" ||
	fail "apply: no one row for the 24 disks: $(table "$work/apply.txt")"
run verify -v >"$work/verify.txt" || fail "verify exited $?"
[ "$(table "$work/verify.txt" | grep -c '^in-effect *sd')" -ge 24 ] || fail "verify -v: not a row per disk"
run revert >"$work/revert.txt" || fail "revert exited $?"
grep -q "^restored  24 disks  (-v lists them)  scheduler none -> mq-deadline$" "$work/revert.txt" ||
	fail "revert: no one row for the 24 disks: $(table "$work/revert.txt")"
[ "$status" -eq 0 ] && echo "ok: identical changes grouped, -v lists each, JSON keeps all"
exit "$status"
