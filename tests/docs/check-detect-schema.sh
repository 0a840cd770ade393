#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `scsitune detect -o json` matches schema/detect.schema.json on every fixture
# scenario (built fresh with tests/fixtures/mkfixture.py, never the real /sys),
# on a small bench tree, and on any extra JSON files given (golden outputs).
# Each document must validate, and the schema must reject every broken copy of
# it (check-schema.py --mutants). Also checks that the schema and the renderer
# name the same keys.
# Usage: check-detect-schema.sh SCSITUNE SRCDIR [EXTRA.json...]
# Exit: 0 ok, 1 failure (a missing python3-jsonschema is a failure too).
set -uo pipefail
bin=${1:?usage: check-detect-schema.sh SCSITUNE SRCDIR [EXTRA.json...]}
src=${2:?usage: check-detect-schema.sh SCSITUNE SRCDIR [EXTRA.json...]}
shift 2
py=${PYTHON3:-python3}
check=("$py" "$src/tests/docs/check-schema.py" "$src/schema/detect.schema.json")
mk=$src/tests/fixtures/mkfixture.py

"${check[@]}" --keys "$src/cli/detect/render-topology.c" || exit 1

work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-schema.XXXXXX")
trap 'rm -rf "$work"' EXIT
docs=()
if [ -f "$mk" ]; then
	scenarios=$("$py" "$mk" --list | awk '$1 != "bench" {print $1}')
	for s in $scenarios; do
		"$py" "$mk" "$s" "$work/$s" >/dev/null || { echo "FAIL: mkfixture.py $s"; exit 1; }
	done
	"$py" "$mk" --hbas 2 --disks 16 bench "$work/bench" >/dev/null || { echo "FAIL: mkfixture.py bench"; exit 1; }
	for s in $scenarios bench; do
		rc=0
		"$bin" --sysroot "$work/$s" detect -o json >"$work/$s.json" 2>"$work/$s.stderr" || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "FAIL: detect on $s exited $rc"
			cat "$work/$s.stderr"
			exit 1
		fi
		docs+=("$work/$s.json")
	done
else
	echo "note: $mk not found, only the files given are checked"
fi
docs+=("$@")
[ ${#docs[@]} -gt 0 ] || { echo "FAIL: no document to check"; exit 1; }

"${check[@]}" "${docs[@]}" || exit $?
"${check[@]}" --mutants "${docs[@]}" || exit $?
