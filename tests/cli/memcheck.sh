#!/bin/bash
# memcheck tier: scsitune detect (and metrics) under valgrind on one fixture
# tree; any error or leak fails.
set -euo pipefail
valgrind=$1 bin=$2 archive=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-memcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xJf "$archive" -C "$work"
# Once on one thread, once with the threaded disk scan.
for fmt in text json json-threads; do
	threads=1
	[ "$fmt" = json-threads ] && threads=4 && fmt=json
	SCSITUNE_THREADS=$threads "$valgrind" -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible \
		"$bin" --sysroot "$work" detect -o "$fmt" >/dev/null 2>"$work/vg.$fmt" || {
		echo "FAIL: valgrind reported errors (-o $fmt):"; cat "$work/vg.$fmt"; exit 1; }
	if grep -q '^==[0-9]*==' "$work/vg.$fmt"; then
		echo "FAIL: valgrind output (-o $fmt):"; cat "$work/vg.$fmt"; exit 1
	fi
done
# scsitune metrics: the host, the (empty) state directory, the payload chain, the writer.
"$valgrind" -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible \
	"$bin" --sysroot "$work" metrics --state-dir "$work/var/lib/scsitune" >/dev/null 2>"$work/vg.metrics" || {
	echo "FAIL: valgrind reported errors (metrics):"; cat "$work/vg.metrics"; exit 1; }
if grep -q '^==[0-9]*==' "$work/vg.metrics"; then
	echo "FAIL: valgrind output (metrics):"; cat "$work/vg.metrics"; exit 1
fi
echo "ok $(basename "$archive"): valgrind-clean in text and JSON, and metrics"
