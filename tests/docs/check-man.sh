#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Man pages keep up with the program:
#  - every command that `scsitune --help` lists (but `help`) has
#    man/scsitune-CMD.8.scd, and man/CMakeLists.txt builds it;
#  - scsitune.8.scd names every command under COMMANDS;
#  - every long option in `scsitune --help` appears in scsitune.8.scd, and every
#    long option in `scsitune CMD --help` in scsitune-CMD.8.scd;
#  - every line of `scsitune --help` and `scsitune CMD --help` fits an
#    80-column terminal;
#  - with scdoc installed, every page (+ trailer.scd) is valid scdoc;
#  - and the reverse: no page (nor the README) names an option or a command
#    the binary lacks, and every scsitune command line in them uses the
#    options of its command (check-man-names.py).
# Usage: check-man.sh SCSITUNE MANDIR
set -uo pipefail
bin=${1:?usage: check-man.sh SCSITUNE MANDIR}
man=${2:?usage: check-man.sh SCSITUNE MANDIR}
status=0
fail() { echo "FAIL: $*"; status=1; }
# check_width NAME HELP_TEXT: no line over 80 columns (the help is ASCII).
check_width() {
	local over
	over=$(printf '%s\n' "$2" | awk 'length > 80 { printf "%d: %s\n", length, $0 }')
	[ -z "$over" ] || fail "'$1' has lines over 80 columns:"$'\n'"$over"
}


main_help=$("$bin" --help) || { echo "FAIL: $bin --help exited $?"; exit 1; }
# Commands: the indented lines after "Commands:", up to the first blank line.
commands=$(printf '%s\n' "$main_help" | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}')
[ -n "$commands" ] || fail "no commands found in '$bin --help'"
check_width "scsitune --help" "$main_help"

long_opts() { grep -oE -- '(^|[^[:alnum:]-])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

# check_opts HELP_TEXT PAGE: each long option of HELP_TEXT occurs in PAGE.
check_opts() {
	local help=$1 page=$2 opt n=0
	for opt in $(printf '%s\n' "$help" | long_opts); do
		n=$((n + 1))
		grep -qF -- "$opt" "$page" || fail "$(basename "$page") does not document $opt"
	done
	[ "$n" -gt 0 ] || fail "no long options found for $(basename "$page")"
}

overview=$man/scsitune.8.scd
if [ -f "$overview" ]; then
	check_opts "$main_help" "$overview"
else
	fail "$overview is missing"
fi
pages=$(sed -n 's/^set(pages \(.*\))$/\1/p' "$man/CMakeLists.txt")
[[ " $pages " == *" scsitune.8 "* ]] || fail "man/CMakeLists.txt does not build scsitune.8"

for cmd in $commands; do
	[ -f "$overview" ] && ! grep -qE "^\*$cmd\*" "$overview" && fail "scsitune.8.scd has no COMMANDS entry for $cmd"
	[ "$cmd" = help ] && continue
	page=$man/scsitune-$cmd.8.scd
	if [ ! -f "$page" ]; then
		fail "command '$cmd' has no man page ($page)"
		continue
	fi
	[[ " $pages " == *" scsitune-$cmd.8 "* ]] || fail "man/CMakeLists.txt does not build scsitune-$cmd.8"
	cmd_help=$("$bin" "$cmd" --help) || { fail "$bin $cmd --help exited $?"; continue; }
	check_opts "$cmd_help" "$page"
	check_width "scsitune $cmd --help" "$cmd_help"
	grep -qE "^\*scsitune-$cmd\*\(8\)|\*scsitune-$cmd\*\(8\)" "$overview" || fail "scsitune.8.scd does not refer to scsitune-$cmd(8)"
done

"${PYTHON3:-python3}" "$(dirname "$0")/check-man-names.py" "$bin" "$man"/*.scd "$man/../README.md" || status=1

if command -v scdoc >/dev/null; then
	for page in "$man"/*.scd; do
		[ "$(basename "$page")" = trailer.scd ] && continue
		err=$(cat "$page" "$man/trailer.scd" | scdoc 2>&1 >/dev/null) || fail "$(basename "$page"): scdoc: $err"
	done
else
	echo "note: scdoc not installed, page syntax not checked"
fi

if [ "$status" -eq 0 ]; then
	echo "ok: man pages cover commands (${commands//$'\n'/ }) and their long options"
fi
exit "$status"
