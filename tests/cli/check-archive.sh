#!/bin/bash
# The committed fixture archive equals what tests/fixtures/mkfixture.py
# generates for it: fixtures are code-reviewed data, never hand-edited tars.
# Captured real hosts (no generator scenario) are checked for readability only.
set -euo pipefail
python=$1 dir=$2 name=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-archive.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$python" "$dir/mkfixture.py" --list | grep -qx "$name"; then
	tar -tJf "$dir/$name.tar.xz" >/dev/null
	echo "ok $name: captured tree, archive readable"
	exit 0
fi
"$python" "$dir/mkfixture.py" --pack "$name" "$work/$name.tar.xz"
if ! cmp -s "$work/$name.tar.xz" "$dir/$name.tar.xz"; then
	echo "FAIL $name: tests/fixtures/$name.tar.xz differs from mkfixture.py output"
	diff <(tar -tvJf "$dir/$name.tar.xz") <(tar -tvJf "$work/$name.tar.xz") | head -20 || true
	exit 1
fi
echo "ok $name: archive matches the generator"
