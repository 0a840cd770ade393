#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scsitune profile list | active (tuned-adm list / active): every profile of
# the directory with its summary, one that does not load said so with the
# loader's line, hidden files, directories and a FIFO left out (no hang); the
# journal's profile marked and shown with its digest; a file edited since
# apply said to have changed; nothing applied is exit 0 and says so; a
# missing directory, a broken journal and bad command lines are refused with
# their exit codes. Read-only: the tree and state dir are unchanged.
# Usage: test-profile.sh SCSITUNE FIXTURES PROFILE_DIR
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-profile.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
mkdir "$work/root" "$work/prof"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
cp "$profiles/numa" "$profiles/kernel-default" "$work/prof/"
printf '# scsitune profile: broken\n#\n# Broken on purpose.\n\n[queue]\nscheduler = none\n' >"$work/prof/broken"
echo 'scheduler = none' >"$work/prof/.hidden"
mkdir "$work/prof/subdir"
mkfifo "$work/prof/fifo"
p() { timeout 60 "$bin" --sysroot "$work/root" profile "$@"; }
# has TEXT FILE: FILE says TEXT, as words in a row (a line that names a path
# too long for 80 columns goes on under it: every run of spaces and line
# breaks counts as one space, in both).
has() { printf ' %s ' "$(tr -s ' \n' '  ' <"$2")" | grep -qF -- " $(tr -s ' ' <<<"$1") "; }

p list --profile-dir "$work/prof" --state-dir "$work/state" >"$work/list.txt" 2>"$work/list.err" ||
	fail "list exited $?: $(cat "$work/list.err")"
grep -qx "  numa              High-IOPS random I/O on NUMA hosts with SAS HBAs (mpi3mr in" "$work/list.txt" ||
	fail "list: numa and its summary: $(cat "$work/list.txt")"
grep -q "^  broken            does not load: broken: no \[hba\] scope" "$work/list.txt" ||
	fail "list: the broken profile not said to not load with the loader's line: $(cat "$work/list.txt")"
grep -qE "hidden|subdir|fifo" "$work/list.txt" && fail "list: a hidden file, a directory or a FIFO listed"
grep -q '^\*' "$work/list.txt" && fail "list: a profile marked active with no journal"
has "No profile applied (no journal in $work/state)." "$work/list.txt" || fail "list: no 'No profile applied'"
p active --state-dir "$work/state" >"$work/none.txt" || fail "active, nothing applied: exit $? (want 0)"
has "No profile applied (no journal in $work/state)." "$work/none.txt" || fail "active: $(cat "$work/none.txt")"
p active --state-dir "$work/state" -o json | python3 -c 'import json,sys; assert json.load(sys.stdin)["active"] is None' ||
	fail "active -o json: active not null with nothing applied"

"$bin" --sysroot "$work/root" apply --profile numa --profile-dir "$work/prof" --state-dir "$work/state" >/dev/null ||
	fail "apply exited $?"
digest=$("$bin" --sysroot "$work/root" -o json apply --profile numa --profile-dir "$work/prof" --dry-run |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["profile"]["digest"])')
before=$(find "$work/root" "$work/state" -type f -exec sha256sum {} + | sort)
p list --profile-dir "$work/prof" --state-dir "$work/state" >"$work/list2.txt" || fail "list after apply exited $?"
grep -q "^\* numa " "$work/list2.txt" || fail "list: numa not marked active: $(cat "$work/list2.txt")"
has "Active: numa ($work/prof/numa)" "$work/list2.txt" && grep -qE "^Active:    numa( |$)" "$work/list2.txt" ||
	fail "list: no Active line"
p active --state-dir "$work/state" >"$work/active.txt" || fail "active exited $?"
grep -q "applied sha256 ${digest:0:12}, 20[0-9-]* [0-9:]* UTC$" "$work/active.txt" ||
	fail "active: not the digest apply recorded ($digest): $(cat "$work/active.txt")"
grep -q "changed since" "$work/active.txt" && fail "active: unchanged file said to have changed"
sed -i 's/^read_ahead_kb = 16$/read_ahead_kb = 32/' "$work/prof/numa"
p active --state-dir "$work/state" >"$work/changed.txt" || fail "active, file edited: exit $?"
grep -q "the file changed since (sha256 [0-9a-f]\{12\} now)" "$work/changed.txt" ||
	fail "active: an edited profile not said to have changed: $(cat "$work/changed.txt")"
p active --state-dir "$work/state" -o json | python3 -c '
import json, sys
a = json.load(sys.stdin)["active"]
assert a["name"] == "numa" and a["file_state"] == "changed" and a["digest"] != a["digest_now"], a
assert a["applied_unix"] > 1700000000 and a["persist"] is False, a' || fail "active -o json"
[ "$(find "$work/root" "$work/state" -type f -exec sha256sum {} + | sort)" = "$before" ] ||
	fail "profile list/active changed the tree or the state dir"

# Applied by path: the same file marked in the list, named once.
"$bin" --sysroot "$work/root" apply --profile "$work/prof/kernel-default" --state-dir "$work/state2" >/dev/null ||
	fail "apply by path exited $?"
p list --profile-dir "$work/prof" --state-dir "$work/state2" >"$work/list3.txt" || fail "list, applied by path: exit $?"
grep -q "^\* kernel-default " "$work/list3.txt" || fail "list: a profile applied by its path not marked: $(cat "$work/list3.txt")"
has "Active: $work/prof/kernel-default" "$work/list3.txt" && [ "$(grep -c '^Active:' "$work/list3.txt")" = 1 ] &&
	! has "Active: kernel-default" "$work/list3.txt" || fail "list: a profile applied by path not named once"

# Refusals.
p list --profile-dir "$work/nowhere" --state-dir "$work/state" 2>"$work/err" >/dev/null
rc=$?
[ "$rc" = 1 ] && grep -q "^scsitune: profile directory $work/nowhere: No such file or directory" "$work/err" ||
	fail "missing directory: exit $rc, $(cat "$work/err")"
echo '{"not": "a journal"}' >"$work/state/journal.json"
p active --state-dir "$work/state" 2>"$work/err" >/dev/null
rc=$?
[ "$rc" = 1 ] && grep -q "^scsitune: $work/state/journal.json: " "$work/err" ||
	fail "a broken journal: exit $rc, $(cat "$work/err")"
for args in "" "lists" "active --profile-dir $work/prof" "list extra"; do
	# shellcheck disable=SC2086
	p $args >/dev/null 2>"$work/err"
	rc=$?
	[ "$rc" = 64 ] && [ "$(wc -l <"$work/err")" -le 2 ] || fail "profile $args: exit $rc (want 64): $(cat "$work/err")"
done
[ "$status" -eq 0 ] && echo "ok: profile list and active"
exit "$status"
