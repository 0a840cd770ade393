#!/bin/bash
# layout/functions: no function in cli/ is over 100 lines (check-functions.py),
# and the check itself catches one of 101 lines and passes one of 100, planted
# in a copy of cli/. And no test script (tests/**/*.sh, *.py) is over 400
# lines, the check caught planting one of 401 and passing one of 400.
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
# long_scripts DIR: each test script under DIR/tests over 400 lines, "PATH: N lines".
long_scripts() {
	find "$1/tests" -type f \( -name '*.sh' -o -name '*.py' \) -exec awk 'END { if (NR > 400) print FILENAME ": " NR " lines" }' {} \;
}
long=$(long_scripts "$src")
if [ -n "$long" ]; then
	echo "FAIL: test scripts over 400 lines:"$'\n'"$long"; fails=$((fails + 1))
else
	echo "ok: no test script over 400 lines ($(find "$src/tests" -type f \( -name '*.sh' -o -name '*.py' \) | wc -l) scripts)"
fi
mkdir -p "$tmp/s/tests/x"
seq 401 | sed 's/^/# /' >"$tmp/s/tests/x/long.sh"
seq 400 | sed 's/^/# /' >"$tmp/s/tests/x/ok.py"
long=$(long_scripts "$tmp/s")
[ "$long" = "$tmp/s/tests/x/long.sh: 401 lines" ] && echo "ok: a script of 401 lines caught, one of 400 passed" ||
	{ echo "FAIL: the planted scripts gave: '$long'"; fails=$((fails + 1)); }
exit $((fails > 0))
