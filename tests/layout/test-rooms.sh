#!/bin/bash
# layout: the engine's rooms include only the rooms below them and their
# libraries link exactly what they include, the front end is main.c and
# folders with no command reaching into another and no import circle
# (check-rooms.py), and the check itself fails on each kind of breach,
# planted in a copy of cli/ and CMakeLists.txt.
set -euo pipefail
src=$1
here=$(dirname "$0")
python3 "$here/check-rooms.py" "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
plant() { # WHAT FILE LINE EXPECTED-MESSAGE
	rm -rf "$tmp/cli"
	cp -r "$src/cli" "$tmp/cli"
	cp "$src/CMakeLists.txt" "$tmp/CMakeLists.txt"
	printf '%s\n' "$3" >>"$tmp/cli/$2"
	if out=$(python3 "$here/check-rooms.py" "$tmp" 2>&1); then
		echo "FAIL: $1 was not caught"; fails=$((fails + 1))
	elif ! grep -qF -- "$4" <<<"$out"; then
		echo "FAIL: $1: message lacks '$4': $out"; fails=$((fails + 1))
	else
		echo "ok: $1 caught: $(grep -F -- "$4" <<<"$out" | head -1)"
	fi
}
plant "core including tune" lib/core/strv.c '#include "tune/plan.h"' "core includes tune/plan.h: core/ may include only itself"
plant "detect including report" lib/detect/scan.h '#include "report/fio.h"' "detect includes report/fio.h"
plant "tune including stats" lib/tune/verify.c '#include "stats/stats.h"' "tune includes stats/stats.h: tune/ may include only core, detect"
plant "payload including tune" lib/payload/state.c '#include "tune/journal.h"' "payload includes tune/journal.h"
plant "net including report (a room beside it)" lib/net/http.c '#include "report/fio.h"' "net includes report/fio.h: net/ may include only core"
plant "fleet including report" lib/fleet/gate.c '#include "report/session.h"' "fleet includes report/session.h"
plant "an include without its room" lib/tune/plan.c '#include "profile.h"' 'does not say its room'
plant "a private header from another room" lib/tune/plan.c '#include "detect/gather.h"' 'private to detect/'
plant "the command layer using a private header" detect/detect.c '#include "detect/gather.h"' 'the command layer includes'
plant "a command including another command's header" tune/verify.c '#include "query.h"' "another command's header (report/)"
plant "a command reaching out by .." tune/verify.c '#include "../report/query.h"' 'no ".."'
plant "shared/ including a command's header" shared/rows.c '#include "apply-run.h"' "another command's header (tune/)"
plant "an import circle" shared/rows.h '#include "plan-view.h"' 'import circle: shared/plan-view -> shared/rows -> shared/plan-view'
plant "a file loose in cli/" extra.c '/* */' 'the front end is main.c and folders'
plant "shared code defined in a command" tune/verify.c $'const char *cli_hba_name(const struct stune_hba *h, char *buf, size_t len)\n{\n\treturn buf;\n}' 'cli_hba_name() is declared in shared/ but defined in tune/'
plant "a command exporting a helper no header declares" report/render.c $'int render_helper(void)\n{\n\treturn 0;\n}' 'render_helper() is exported by report/'
# link(): the same for CMakeLists.txt, edited by sed.
link() { # WHAT SED-SCRIPT EXPECTED-MESSAGE
	rm -rf "$tmp/cli"
	cp -r "$src/cli" "$tmp/cli"
	sed "$2" "$src/CMakeLists.txt" >"$tmp/CMakeLists.txt"
	if cmp -s "$src/CMakeLists.txt" "$tmp/CMakeLists.txt"; then
		echo "FAIL: $1: the sed script changed nothing"; fails=$((fails + 1))
	elif out=$(python3 "$here/check-rooms.py" "$tmp" 2>&1); then
		echo "FAIL: $1 was not caught"; fails=$((fails + 1))
	elif ! grep -qF -- "$3" <<<"$out"; then
		echo "FAIL: $1: message lacks '$3': $out"; fails=$((fails + 1))
	else
		echo "ok: $1 caught: $(grep -F -- "$3" <<<"$out" | head -1)"
	fi
}
link "a library linking a room its files do not include" 's/^target_link_libraries(stune_payload PUBLIC stune_core/& stune_tune/' \
	'stune_payload links stune_tune, but no file of payload/ includes tune/'
link "a library missing a room its files include" 's/^target_link_libraries(stune_fleet PUBLIC stune_core stune_net stune_stats/target_link_libraries(stune_fleet PUBLIC stune_core stune_net/' \
	'stune_fleet does not link stune_stats, which fleet/ includes'
touch "$tmp/x" && rm -rf "$tmp/cli" && cp -r "$src/cli" "$tmp/cli" && echo '/* */' >"$tmp/cli/lib/loose.c"
if python3 "$here/check-rooms.py" "$tmp" >/dev/null 2>&1; then
	echo "FAIL: a file outside every room was not caught"; fails=$((fails + 1))
else
	echo "ok: a file outside every room caught"
fi
exit $((fails > 0))
