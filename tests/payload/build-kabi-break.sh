#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# build-kabi-break.sh CACHE OUT -- payload/build's modules with one more
# patch that grows struct scsi_device where genksyms sees it (the layout
# change of payload/test-bad-input.sh): the exported CRCs of scsi_mod then
# differ from Debian's (84 of 122). Built with --no-crc-check (so the output
# is written) and --skip-block, from the .debs payload/build cached in CACHE.
# The hostile-bundle test packs it and expects payload install's KABI
# preflight to refuse it, naming a stock module and a symbol.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
cache=${1:?usage: build-kabi-break.sh CACHE OUT}
out=${2:?usage: build-kabi-break.sh CACHE OUT}
t=$(mktemp -d "${TMPDIR:-/tmp}/kabi-break.XXXXXX")
trap 'rm -rf "$t"' EXIT
cp "$repo/payload/patches"/* "$t/"
cp "$here/9999-break-kabi.patch" "$t/" # (payload/test-bad-input.sh uses it too)
echo 9999-break-kabi.patch >>"$t/series"
"$repo/payload/build" --patches "$t" --cache "$cache" --no-crc-check --skip-block --out "$out"
python3 - "$out/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
bad = [x['module'] for x in m['modules'] if not x['crcs_equal_module_symvers']]
if bad != ['scsi_mod']:
    sys.exit('build-kabi-break.sh: expected scsi_mod alone to break the KABI, the manifest says %r' % bad)
PY
echo "build-kabi-break.sh: $out: scsi_mod with a KABI-breaking layout change"
