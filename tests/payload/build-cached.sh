#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-cached.sh NAME OUT [--input PATH]... -- COMMAND [ARG]...
#
# Runs COMMAND (payload/build, or a script that runs it), which writes the
# directory OUT, unless the tests' cache (tests/lib/ci-cache.sh, outside the
# clone) holds an entry NAME for the same inputs: then OUT is that entry's
# copy and COMMAND does not run. The key is the SHA-256 of:
#   - payload/build, payload/patches/, payload/kbuild/, payload/kconfig/
#     (only for a command with --kernel: the modules' build never reads
#     it), and every --input (files by content);
#   - the kernel release and Debian package version payload/build would
#     build now (payload/build --resolve: a new Debian kernel is a miss);
#   - the versions of the toolchain packages the build runs (gcc-12,
#     binutils, make, dpkg-dev, libc6-dev, bc, bison, flex, kmod, libelf-dev,
#     libssl-dev, python3; one not installed is left out);
#   - COMMAND and its arguments, with OUT and the .deb cache directory
#     (--cache DIR: where the downloads go, not what is built) left out.
# A hit is checked before use: OUT/manifest.json must list files whose
# SHA-256 match (payload/build's own manifest), on top of the cache's
# SHA256SUMS. SCSITUNE_NO_CACHE=1: COMMAND always runs (the result is still
# stored). Exit status: COMMAND's, or 0 on a hit; 64 usage.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
# shellcheck source=../lib/ci-cache.sh
. "$repo/tests/lib/ci-cache.sh"
usage() { echo "usage: build-cached.sh NAME OUT [--input PATH]... -- COMMAND [ARG]..." >&2; exit 64; }
[ $# -ge 4 ] || usage
name=$1 out=$2
shift 2
inputs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	case $1 in
	--input) [ $# -ge 2 ] || usage; inputs+=("$2"); shift 2 ;;
	*) usage ;;
	esac
done
[ "${1:-}" = -- ] || usage
shift
[ $# -ge 1 ] || usage

# The command line as it decides the output: OUT and the download cache's
# place left out (the same build in another build tree is the same build).
args=() skip=''
for a in "$@"; do
	if [ -n "$skip" ]; then skip=''; args+=("$skip_as"); continue; fi
	case $a in
	--cache) skip=1 skip_as=DEBCACHE; args+=("$a") ;;
	--out) skip=1 skip_as=OUT; args+=("$a") ;;
	"$out") args+=(OUT) ;;
	*) args+=("${a#"$repo"/}") ;;
	esac
done
resolved=$("$repo/payload/build" --resolve) || {
	echo "build-cached.sh: payload/build --resolve failed: cannot key $name on the Debian kernel it would build" >&2
	exit 1
}
tools=$(dpkg-query -W -f '${Package}=${Version}\n' gcc-12 binutils make dpkg-dev libc6-dev bc bison flex kmod \
	libelf-dev libssl-dev python3 2>/dev/null | sort) || true
# payload/kconfig/ is what a --kernel build configures its kernel with; a
# build of the modules alone never reads it, so a kernel fragment's change
# leaves their entries valid.
kconfig=()
for a in "$@"; do [ "$a" != --kernel ] || kconfig=("$repo/payload/kconfig"); done
ci_cache_key "$name" "$repo/payload/build" "$repo/payload/patches" "${kconfig[@]}" "$repo/payload/kbuild" \
	"${inputs[@]}" "=kernel $resolved" "=tools ${tools//$'\n'/ }" "=command ${args[*]}"

# check_out DIR: payload/build's manifest lists DIR's files with their SHA-256.
check_out() {
	python3 - "$1" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, 'manifest.json')))
def walk(o):
    if isinstance(o, dict):
        if 'sha256' in o and isinstance(o.get('file'), str):
            yield o['file'], o['sha256']
        if 'config_sha256' in o and isinstance(o.get('config_file'), str):
            yield o['config_file'], o['config_sha256']
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)
n = 0
for f, want in list(walk(m)) + list(m.get('files', {}).items()):
    p = os.path.join(d, f)
    if not os.path.isfile(p) or hashlib.sha256(open(p, 'rb').read()).hexdigest() != want:
        sys.exit('%s: %s does not match its manifest' % (d, f))
    n += 1
if n == 0:
    sys.exit('%s: the manifest lists no file' % d)
PY
}

if ci_cache_fetch "$name" "$CI_CACHE_KEY" "$out"; then
	if check_out "$out"; then
		echo "build-cached.sh: $name: reused for inputs $CI_CACHE_KEY (payload/build not run; inputs:"
		sed 's/^/  /' <<<"$CI_CACHE_INPUTS"
		echo ")"
		exit 0
	fi
	echo "build-cached.sh: $name: the cached output does not match its manifest: built again" >&2
	rm -rf "$out"
fi
rc=0
"$@" || rc=$?
[ $rc -eq 0 ] || exit $rc
check_out "$out"
ci_cache_store "$name" "$CI_CACHE_KEY" "$out"
