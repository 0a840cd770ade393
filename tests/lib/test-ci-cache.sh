#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test-ci-cache.sh -- the tests' content-keyed cache (ci-cache.sh) on a
# temporary root: keys follow content, a hit gives the stored bytes back, a
# corrupt, partial, extended or foreign-writable entry is never used,
# SCSITUNE_NO_CACHE=1 looks nothing up, old entries go. Also
# tests/payload/build-cached.sh with a stand-in command: it runs on a miss,
# not on a hit, and a hit whose files do not match the manifest is rebuilt.
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
t=$(mktemp -d "${TMPDIR:-/tmp}/ci-cache-test.XXXXXX")
trap 'rm -rf "$t"' EXIT
export SCSITUNE_CI_CACHE=$t/root
unset SCSITUNE_NO_CACHE
# shellcheck source=ci-cache.sh
. "$here/ci-cache.sh"
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { # DESCRIPTION COMMAND...
	local d=$1
	shift
	if "$@"; then ok "$d"; else fail "$d"; fi
}

mkdir -p "$t/in/sub" "$t/src/d"
echo one >"$t/in/a"
echo two >"$t/in/sub/b"
printf 'payload\n' >"$t/src/file"
printf 'more\n' >"$t/src/d/x"
ln -s file "$t/src/link"

ci_cache_key demo "$t/in" =v1
k1=$CI_CACHE_KEY
ci_cache_key demo "$t/in" =v1
check "the same inputs give the same key" [ "$CI_CACHE_KEY" = "$k1" ]
echo ONE >"$t/in/a"
ci_cache_key demo "$t/in" =v1
check "a changed input file changes the key" [ "$CI_CACHE_KEY" != "$k1" ]
echo one >"$t/in/a"
ci_cache_key demo "$t/in" =v2
check "a changed text input changes the key" [ "$CI_CACHE_KEY" != "$k1" ]
mv "$t/in/sub/b" "$t/in/sub/c"
ci_cache_key demo "$t/in" =v1
check "a renamed file changes the key" [ "$CI_CACHE_KEY" != "$k1" ]
mv "$t/in/sub/c" "$t/in/sub/b"
check "a missing input is an error" bash -c '. "$1"; ! ci_cache_key demo /nonexistent/x 2>/dev/null' _ "$here/ci-cache.sh"
check "the inputs are listed" grep -q "^file $t/in " <<<"$CI_CACHE_INPUTS"
# The clone's own files are named relative to it: another clone, the same key.
ci_cache_key demo "$repo/payload/patches" =v1
ka=$CI_CACHE_KEY
mkdir -p "$t/clone/payload" && cp -r "$repo/payload/patches" "$t/clone/payload/"
mkdir -p "$t/clone/tests" && cp -r "$repo/tests/lib" "$t/clone/tests/"
CI_CACHE_KEY='' && ( . "$t/clone/tests/lib/ci-cache.sh"; ci_cache_key demo "$t/clone/payload/patches" =v1; echo "$CI_CACHE_KEY" >"$t/clone-key" )
check "the same sources in another clone give the same key" [ "$(cat "$t/clone-key")" = "$ka" ]
check "and name the input relative to the clone" grep -q "^file payload/patches " <<<"$CI_CACHE_INPUTS"

msg=$(ci_cache_fetch demo "$k1" "$t/out" 2>&1)
check "empty cache: a miss that says why ($msg)" bash -c '[[ $1 == *"miss (no entry for these inputs"* ]]' _ "$msg"
ci_cache_store demo "$k1" "$t/src" 2>"$t/store.err"
check "stored ($(cat "$t/store.err"))" grep -q 'stored' "$t/store.err"
msg=$(ci_cache_fetch demo "$k1" "$t/out" 2>&1)
check "a hit names the key and what was reused ($msg)" bash -c '[[ $1 == *"${2:0:16}: hit, reused"* ]]' _ "$msg" "$k1"
check "the hit's copy is the stored tree (files, link)" diff -r "$t/src" "$t/out"
check "the link is kept as a link" [ -L "$t/out/link" ]
echo changed >"$t/out/file"
ci_cache_fetch demo "$k1" "$t/out" 2>/dev/null
check "a change to the copy does not reach the entry" grep -qx payload "$t/out/file"

msg=$(SCSITUNE_NO_CACHE=1 ci_cache_fetch demo "$k1" "$t/out2" 2>&1)
check "SCSITUNE_NO_CACHE=1: a miss, not looked up" bash -c '[[ $1 == *"SCSITUNE_NO_CACHE=1"* ]] && [ ! -e "$2" ]' _ "$msg" "$t/out2"

e=$SCSITUNE_CI_CACHE/demo/$k1
echo tampered >"$e/data/d/x"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "a changed file: corrupt, removed, a miss ($msg)" bash -c '[[ $1 == *"corrupt entry removed, checksum mismatch"* ]] && [ ! -e "$2" ] && [ ! -e "$3" ]' _ "$msg" "$e" "$t/out3"

ci_cache_store demo "$k1" "$t/src" 2>/dev/null
echo extra >"$e/data/planted"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "a file the sums do not list: corrupt ($msg)" bash -c '[[ $1 == *"corrupt entry removed"* ]]' _ "$msg"

ci_cache_store demo "$k1" "$t/src" 2>/dev/null
rm "$e/data/d/x"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "a missing file: corrupt ($msg)" bash -c '[[ $1 == *"corrupt entry removed"* ]]' _ "$msg"

ci_cache_store demo "$k1" "$t/src" 2>/dev/null
rm "$e/SHA256SUMS"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "no SHA256SUMS: an incomplete entry, not used ($msg)" bash -c '[[ $1 == *"incomplete entry"* ]]' _ "$msg"

ci_cache_store demo "$k1" "$t/src" 2>/dev/null
mkfifo "$e/data/fifo"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "a FIFO in an entry: not used ($msg)" bash -c '[[ $1 == *"corrupt entry removed, it holds something other"* ]]' _ "$msg"

ci_cache_store demo "$k1" "$t/src" 2>/dev/null
chmod 0775 "$SCSITUNE_CI_CACHE/demo"
msg=$(ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "a group-writable cache directory is not used ($msg)" bash -c '[[ $1 == *"writable by group or others"* ]] && [ ! -e "$2" ]' _ "$msg" "$t/out3"
chmod 0755 "$SCSITUNE_CI_CACHE/demo"
msg=$(ci_cache_store demo "$k1" "$t/src" 2>&1; chmod 0777 "$SCSITUNE_CI_CACHE"; ci_cache_store demo other "$t/src" 2>&1)
check "nor is a world-writable root, to store into" bash -c '[[ $1 == *"not stored (cache not usable)"* ]] && [ ! -e "$2" ]' _ "$msg" "$SCSITUNE_CI_CACHE/demo/other"
chmod 0755 "$SCSITUNE_CI_CACHE"

touch -d '3 days ago' "$e/SHA256SUMS"
msg=$(CI_CACHE_MAX_AGE_MIN=1440 ci_cache_fetch demo "$k1" "$t/out3" 2>&1)
check "CI_CACHE_MAX_AGE_MIN: an older entry is a miss ($msg)" bash -c '[[ $1 == *"older than 1440 minutes"* ]] && [ ! -e "$2" ]' _ "$msg" "$e"

# (each entry's age set explicitly, not by the clock: the newest two are kept)
ci_cache_store demo k-a "$t/src" 2>/dev/null && touch -d '3 minutes ago' "$SCSITUNE_CI_CACHE/demo/k-a"
ci_cache_store demo k-b "$t/src" 2>/dev/null && touch -d '2 minutes ago' "$SCSITUNE_CI_CACHE/demo/k-b"
ci_cache_store demo k-c "$t/src" 2>/dev/null
check "two entries are kept, the oldest removed" bash -c '[ ! -e "$1/k-a" ] && [ -d "$1/k-b" ] && [ -d "$1/k-c" ]' _ "$SCSITUNE_CI_CACHE/demo"

# scripts/ci-cache: list, verify (names a corrupt entry, exit 1), clear NAME.
check "ci-cache list shows both entries" bash -c '[ "$("$1" list | grep -c "^demo ")" -eq 2 ]' _ "$repo/scripts/ci-cache"
check "ci-cache verify: all ok" "$repo/scripts/ci-cache" verify
echo tampered >"$SCSITUNE_CI_CACHE/demo/k-b/data/file"
check "ci-cache verify names a corrupt entry and exits 1" \
	bash -c 'out=$("$1" verify); [ $? -eq 1 ] && grep -q "^CORRUPT: .*/demo/k-b" <<<"$out"' _ "$repo/scripts/ci-cache"
"$repo/scripts/ci-cache" clear demo >/dev/null
check "ci-cache clear NAME removes its entries" [ ! -e "$SCSITUNE_CI_CACHE/demo" ]
check "ci-cache with a bad name: usage (64)" bash -c '"$1" clear ../x >/dev/null 2>&1; [ $? -eq 64 ]' _ "$repo/scripts/ci-cache"

# build-cached.sh: a stand-in for payload/build that writes a manifest and
# counts its runs; payload/build --resolve needs apt's index (as in the tests).
cat >"$t/fake-build" <<'EOF'
#!/bin/bash
set -e
out=$2
echo run >>"$(dirname "$out")/runs"
mkdir -p "$out/modules"
echo ko >"$out/modules/scsi_mod.ko"
h=$(sha256sum <"$out/modules/scsi_mod.ko" | cut -c1-64)
printf '{"files": {"modules/scsi_mod.ko": "%s"}}\n' "$h" >"$out/manifest.json"
EOF
chmod +x "$t/fake-build"
if "$repo/payload/build" --resolve >/dev/null 2>&1; then
	runs() { wc -l <"$t/b/runs" 2>/dev/null || echo 0; }
	mkdir -p "$t/b"
	"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: a miss runs the command" [ "$(runs)" -eq 1 ]
	"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: a hit does not, and prints its key and inputs" bash -c '[ "$1" -eq 1 ] && grep -q "reused for inputs" "$2" && grep -q "text kernel " "$2"' _ "$(runs)" "$t/bc.log"
	rm -rf "$t/b/out"
	ent=$(ls -d "$SCSITUNE_CI_CACHE"/fake/*/ | head -1)
	# a wrong file with matching SHA256SUMS (made by hand): the manifest catches it
	echo other >"$ent/data/modules/scsi_mod.ko"
	(cd "$ent/data" && find . -type f -print0 | sort -z | xargs -0 sha256sum --) >"$ent/SHA256SUMS"
	"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: a hit that does not match its manifest is built again" \
		bash -c '[ "$1" -eq 2 ] && grep -q "does not match its manifest" "$2"' _ "$(runs)" "$t/bc.log"
	SCSITUNE_NO_CACHE=1 "$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: SCSITUNE_NO_CACHE=1 runs the command" [ "$(runs)" -eq 3 ]
	echo '# changed' >>"$t/fake-build"
	"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: a changed --input is a miss" [ "$(runs)" -eq 4 ]
	# payload/kconfig/ keys a --kernel build only (the modules' build never reads it)
	"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" >"$t/bc.log" 2>&1
	check "build-cached.sh: without --kernel, payload/kconfig is not an input" \
		bash -c 'grep -q "reused for inputs" "$1" && ! grep -q "file payload/kconfig " "$1"' _ "$t/bc.log"
	for i in 1 2; do
		"$repo/tests/payload/build-cached.sh" fake "$t/b/out" --input "$t/fake-build" -- "$t/fake-build" --out "$t/b/out" --kernel >"$t/bc.log" 2>&1
	done
	check "build-cached.sh: with --kernel, payload/kconfig is an input" \
		bash -c '[ "$1" -eq 5 ] && grep -q "reused for inputs" "$2" && grep -q "file payload/kconfig " "$2"' _ "$(runs)" "$t/bc.log"
else
	fail "payload/build --resolve failed (apt's index: apt-get update?): build-cached.sh not checked"
fi

[ $fails -eq 0 ] && echo "test-ci-cache.sh: all passed" || { echo "test-ci-cache.sh: $fails failed"; exit 1; }
