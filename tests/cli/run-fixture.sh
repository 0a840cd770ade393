#!/bin/bash
# Fixture tier: extract a captured tree, run `scsitune detect --sysroot` on it
# in text (default and -v) and JSON, and diff stdout and stderr against
# tests/expected/NAME/ (detect.txt, detect.v.txt, detect.json).
# Usage: run-fixture.sh SCSITUNE ARCHIVE EXPECTED_DIR [--update]
set -euo pipefail
bin=$(realpath "$1") archive=$(realpath "$2") expected=$(realpath -m "$3") update=${4:-}
name=$(basename "$archive" .tar.xz)
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fixture-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$archive" -C "$work/root"
# --sysroot root, relative: the commands detect prints to run next repeat it as
# given, the same in the golden files wherever $work is.
cd "$work"

status=0
for fmt in text json vtext; do
	rc=0
	args=(-o "$fmt")
	[ "$fmt" = vtext ] && args=(-o text -v)
	"$bin" --sysroot root detect "${args[@]}" >"$work/detect.$fmt" 2>"$work/stderr.$fmt" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL $name: detect -o $fmt exited $rc"; cat "$work/stderr.$fmt"; status=1; continue
	fi
	# Warnings name files under the temporary root: make them stable.
	sed -i "s|$work/root|SYSROOT|g" "$work/stderr.$fmt"
	ext=$(case $fmt in json) echo json ;; vtext) echo v.txt ;; *) echo txt ;; esac)
	if [ "$update" = --update ]; then
		mkdir -p "$expected"
		cp "$work/detect.$fmt" "$expected/detect.$ext"
		cp "$work/stderr.$fmt" "$expected/detect.$ext.stderr"
		continue
	fi
	for pair in "detect.$fmt:detect.$ext" "stderr.$fmt:detect.$ext.stderr"; do
		got=$work/${pair%%:*} want=$expected/${pair#*:}
		if ! diff -u "$want" "$got"; then
			echo "FAIL $name: $(basename "$want") differs"; status=1
		fi
	done
done
# detect -v's disk lines fit 80 columns as laid out: no field wrapped onto a line of its own (issue 31:
# queue_depth alone on a line).
if grep -nE '^ +[a-z_]+ [^ ]+$' "$work/detect.vtext" | grep -E 'queue_depth|read_ahead_kb|nomerges' >"$work/wrapped"; then
	echo "FAIL $name: detect -v wraps a disk's field onto its own line:"; cat "$work/wrapped"; status=1
fi
# The threaded disk scan gives the same bytes, messages in the same order.
for fmt in text json; do
	rc=0
	SCSITUNE_THREADS=4 "$bin" --sysroot root detect -o "$fmt" >"$work/t4.$fmt" 2>"$work/t4err.$fmt" || rc=$?
	sed -i "s|$work/root|SYSROOT|g" "$work/t4err.$fmt"
	if [ "$rc" -ne 0 ] || ! cmp -s "$work/t4.$fmt" "$work/detect.$fmt" || ! cmp -s "$work/t4err.$fmt" "$work/stderr.$fmt"; then
		echo "FAIL $name: SCSITUNE_THREADS=4 -o $fmt differs from the one-thread scan (exit $rc)"; status=1
	fi
done
# JSON mode: stdout must hold exactly one JSON document.
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/detect.json" ||
	{ echo "FAIL $name: stdout is not one JSON document"; status=1; }
[ "$status" -eq 0 ] && echo "ok $name: text and JSON match tests/expected/$name"
exit "$status"
