#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# apply, verify, revert and profile -o json validate against schema/{apply,verify,revert,profile}.schema.json,
# each schema rejects every broken copy of them, and names the same keys as its renderer.
# Usage: check-apply-schemas.sh SCSITUNE SRCDIR FIXTURE_ARCHIVE
set -uo pipefail
bin=$1 src=$2 archive=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-apply-schema.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$archive" -C "$work/root"
st() { "$bin" --sysroot "$work/root" -o json "$@" --state-dir "$work/state"; }
p=(--profile numa --profile-dir "$src/profiles")
st apply "${p[@]}" >"$work/apply-ok.json"
# A failed write: numa on a second copy of the tree (another profile is not applied over numa).
mkdir "$work/root2"
tar -xJf "$archive" -C "$work/root2"
SCSITUNE_FAIL_WRITE=queue/nomerges:EIO "$bin" --sysroot "$work/root2" -o json apply "${p[@]}" --state-dir "$work/state2" \
	>"$work/apply-fail.json"
grep -q '"failed"' "$work/apply-fail.json" || { echo "FAIL: apply-fail.json has no failed row"; exit 1; }
# Drift: a value apply wrote changed by hand; revert then leaves it (partial) until --force.
ra=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied": print(e["path"]); break' "$work/state/journal.json")
echo 4096 >"$work/root/$ra"
st verify >"$work/verify-drift.json"
st revert >"$work/revert-partial.json"
st revert --force >"$work/revert-complete.json"
st revert >"$work/revert-none.json"
st verify "${p[@]}" >"$work/verify-plain.json"
# The profile file changed since apply: profile-changed (exit 5).
mkdir "$work/prof"
cp "$src/profiles/numa" "$work/prof/numa"
st apply --profile numa --profile-dir "$work/prof" >/dev/null
sed -i 's/^read_ahead_kb = 16$/read_ahead_kb = 32/' "$work/prof/numa"
st verify >"$work/verify-profile-changed.json"
st profile active >"$work/profile-none.json"
st apply --profile numa --profile-dir "$work/prof" >/dev/null
"$bin" --sysroot "$work/root" -o json profile list --profile-dir "$work/prof" --state-dir "$work/state" >"$work/profile-list.json"
sed -i 's/^read_ahead_kb = 16$/read_ahead_kb = 64/' "$work/prof/numa"
st profile active >"$work/profile-changed.json"
st revert --force >/dev/null
status=0
for kind in apply verify revert profile; do
	renderer=$src/cli/tune/$kind.c
	[ "$kind" = apply ] && renderer=$src/cli/tune/apply-run.c
	check=("${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/$kind.schema.json")
	docs=("$work/$kind"-*.json)
	"${check[@]}" --keys "$renderer" && "${check[@]}" "${docs[@]}" && "${check[@]}" --mutants "${docs[@]}" ||
		{ echo "FAIL: $kind schema"; status=1; }
done
[ "$status" -eq 0 ] && echo "ok: apply, verify, revert and profile JSON match their schemas"
exit "$status"
