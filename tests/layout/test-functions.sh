#!/bin/bash
# layout/functions: no function in cli/ is over 100 lines (check-functions.py),
# and the check itself catches one of 101 lines and passes one of 100, planted
# in a copy of cli/.
set -euo pipefail
src=$1
here=$(dirname "$0")
python3 "$here/check-functions.py" "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# plant LINES: a function of LINES lines (name to closing brace) in a copy of cli/.
plant() {
	rm -rf "$tmp/cli"
	cp -r "$src/cli" "$tmp/cli"
	{
		printf '\nint planted_long(int x)\n{\n'
		for _ in $(seq $(($1 - 4))); do printf '\tx++;\n'; done
		printf '\treturn x;\n}\n'
	} >>"$tmp/cli/lib/core/strv.c"
}
plant 101
if out=$(python3 "$here/check-functions.py" "$tmp" 2>&1); then
	echo "FAIL: a function of 101 lines was not caught"; fails=$((fails + 1))
elif ! grep -q 'cli/lib/core/strv.c:[0-9]*: planted_long() is 101 lines' <<<"$out"; then
	echo "FAIL: the message lacks the file, line, name or length: $out"; fails=$((fails + 1))
else
	echo "ok: 101 lines caught: $(grep planted_long <<<"$out")"
fi
plant 100
if out=$(python3 "$here/check-functions.py" "$tmp" 2>&1); then
	echo "ok: 100 lines pass"
else
	echo "FAIL: a function of 100 lines was refused: $out"; fails=$((fails + 1))
fi
exit $((fails > 0))
