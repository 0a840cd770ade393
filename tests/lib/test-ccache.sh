#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test-ccache.sh -- the C builds' ccache as scripts/test-all sets it up
# (ci_ccache_setup in ci-cache.sh), on a temporary cache root, with the
# compiler and flags of a -Werror RelWithDebInfo build (-g: debug info names
# the directory): a second compile is a hit; the same sources in another
# clone (another absolute path) hit too; a result whose bytes were changed
# is a miss, compiled again, and its object is the compiler's own; a ccache
# directory another user could write is not used; SCSITUNE_NO_CACHE=1 in
# test-all means no launcher at all (checked in the script's text).
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
t=$(mktemp -d "${TMPDIR:-/tmp}/ccache-test.XXXXXX")
trap 'rm -rf "$t"' EXIT
export SCSITUNE_CI_CACHE=$t/root
# shellcheck source=ci-cache.sh
. "$here/ci-cache.sh"
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v ccache >/dev/null || { echo "FAIL: ccache is not installed (scripts/install-deps --test)"; exit 1; }
cc=${CC:-cc}
flags=(-std=gnu11 -O2 -g -Wall -Wextra -Werror -DNDEBUG)

# Two clones of the same source, at different paths.
for c in clone-a clone-b; do
	mkdir -p "$t/$c/src"
	printf '#include "h.h"\nint triple(int x) { return x * K; }\n' >"$t/$c/src/a.c"
	printf '#define K 3\n' >"$t/$c/src/h.h"
done
# compile CLONE OUT LABEL: through ccache as test-all does, in CLONE; the
# number of hits and misses of that one compile in $hits/$misses.
compile() {
	local clone=$1 out=$2 label=$3
	rm -f "$t/stats"
	(cd "$t/$clone" && ci_ccache_setup "$t/$clone" && CCACHE_STATSLOG=$t/stats ccache "$cc" "${flags[@]}" -c src/a.c -o "$out") ||
		{ fail "$label: the compile failed"; return 1; }
	hits=$(CCACHE_STATSLOG=$t/stats ccache --show-log-stats | awk '/^  Hits:/ { print $2; exit }')
	misses=$(CCACHE_STATSLOG=$t/stats ccache --show-log-stats | awk '/^  Misses:/ { print $2; exit }')
}
"$cc" "${flags[@]}" -c "$t/clone-a/src/a.c" -I "$t/clone-a/src" -o "$t/plain.o"

compile clone-a "$t/1.o" first && [ "$hits" = 0 ] && [ "$misses" = 1 ] &&
	ok "first compile: a miss (hits $hits, misses $misses)" || fail "first compile: hits ${hits:-?}, misses ${misses:-?}, want 0 and 1"
compile clone-a "$t/2.o" again && [ "$hits" = 1 ] && [ "$misses" = 0 ] && cmp -s "$t/1.o" "$t/2.o" &&
	ok "the same compile again: a hit, the same object" || fail "the same compile again: hits ${hits:-?}, misses ${misses:-?}, want 1 and 0"
compile clone-b "$t/3.o" other-clone && [ "$hits" = 1 ] && [ "$misses" = 0 ] &&
	ok "the same sources in another clone (another path, -g): a hit" || fail "another clone: hits ${hits:-?}, misses ${misses:-?}, want 1 and 0"

# A changed header is a miss (ccache keys on the preprocessed source).
printf '#define K 4\n' >"$t/clone-a/src/h.h"
compile clone-a "$t/4.o" changed-header && [ "$hits" = 0 ] && [ "$misses" = 1 ] && ! cmp -s "$t/1.o" "$t/4.o" &&
	ok "a changed header: a miss, another object" || fail "a changed header: hits ${hits:-?}, misses ${misses:-?}, want 0 and 1"
printf '#define K 3\n' >"$t/clone-a/src/h.h"

# Every stored result with one byte flipped: a miss, compiled again, the
# compiler's own object (never the damaged bytes).
n=0
while IFS= read -r -d '' f; do
	python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0xFF; open(p, "wb").write(b)' "$f"
	n=$((n + 1))
done < <(find "$SCSITUNE_CI_CACHE/ccache" -type f -name '*R' -print0)
[ "$n" -gt 0 ] || fail "no result file found under $SCSITUNE_CI_CACHE/ccache to damage"
compile clone-a "$t/5.o" corrupt && [ "$hits" = 0 ] && [ "$misses" = 1 ] &&
	ok "$n damaged result(s): a miss, compiled again" || fail "damaged results: hits ${hits:-?}, misses ${misses:-?}, want 0 and 1"
objdump -d "$t/5.o" >"$t/5.dis" 2>&1 && objdump -d "$t/plain.o" >"$t/plain.dis" 2>&1 &&
	diff <(sed 1,3d "$t/5.dis") <(sed 1,3d "$t/plain.dis") >/dev/null &&
	ok "the object after the miss is the compiler's (same code as a plain compile)" ||
	fail "the object after the damaged result differs from a plain compile"

# A ccache directory another user could write is not used.
chmod 0777 "$SCSITUNE_CI_CACHE/ccache"
if (ci_ccache_setup "$t/clone-a") 2>"$t/err"; then
	fail "a world-writable ccache directory was used"
elif grep -q "writable by group or others" "$t/err"; then
	ok "a world-writable ccache directory: not used ($(cat "$t/err"))"
else
	fail "a world-writable ccache directory: refused without the reason: $(cat "$t/err")"
fi
chmod 0755 "$SCSITUNE_CI_CACHE/ccache"

# test-all: SCSITUNE_NO_CACHE=1 gives no launcher, and every C build is configured with the launcher otherwise.
ta=$repo/scripts/test-all
grep -q 'if \[ "${SCSITUNE_NO_CACHE:-}" = 1 \]; then' "$ta" && [ "$(grep -c '"${launcher\[@\]}"' "$ta")" -eq 3 ] &&
	ok "test-all: three C builds configured with the launcher, none with SCSITUNE_NO_CACHE=1" ||
	fail "test-all: the launcher is not on the three cmake configures (build, build-asan, build-fuzz)"

[ "$fails" -eq 0 ] || { echo "test-ccache.sh: $fails failed"; exit 1; }
echo "test-ccache.sh: all passed"
