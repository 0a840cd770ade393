#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sign-test-build.sh SRC_OUT DST_OUT -- CTest payload/sign-kernel: a copy of
# payload/build's output (SRC_OUT: payload/build-kernel's, built with
# --sign-cert tests/keys/fleet-test.crt) signed by payload/sign with the
# published test key tests/keys/fleet-test.key (tests/keys/README.md), as a
# fleet signs on the host that keeps its key: the payload modules, and each
# kernel package's image (sbsign, for shim) and modules. The key is first
# copied to a private file (mode 600 in a directory of mode 700: payload/sign
# refuses a key others can read), removed at the end. Then checks that
# payload/sign's manifest says what was signed and that the key is nowhere in
# DST_OUT. DST_OUT is written in a temporary directory and renamed into place.
# Exit 0 signed, 1 failed (one line saying why), 64 usage.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
[ $# -eq 2 ] || { echo "usage: sign-test-build.sh SRC_OUT DST_OUT" >&2; exit 64; }
src=$1 dst=$2
die() { echo "sign-test-build.sh: FAIL: $*" >&2; exit 1; }
[ -f "$src/manifest.json" ] || die "$src: no manifest.json (payload/build's output: ctest -R '^payload/build-kernel$')"
mkdir -p "$(dirname "$dst")"
t=$(mktemp -d "$(dirname "$dst")/.signed.XXXXXX")
keys=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-testkey.XXXXXX")
trap 'rm -rf "$t" "$keys"' EXIT
chmod 700 "$keys"
install -m 600 "$repo/tests/keys/fleet-test.key" "$keys/fleet.key"
cp -a "$src/." "$t/"
chmod -R u+w "$t"
"$repo/payload/sign" --key "$keys/fleet.key" --cert "$repo/tests/keys/fleet-test.crt" "$t" 2>"$keys/sign.log" ||
	die "payload/sign: $(tail -1 "$keys/sign.log")"
cat "$keys/sign.log" >&2
python3 - "$t/manifest.json" <<'PY' || die "the signed manifest does not say what was signed (above)"
import json, sys
m = json.load(open(sys.argv[1]))
# (the CN alone: CN and O share their first 7 bytes, as the kernel names it)
assert m["signer"]["kernel_name"] == "scsitune TEST fleet key", m["signer"]
for k in ("kernel", "kernel_control"):
    if k in m:
        s = m[k].get("signed")
        assert s and s["image_signature"] == "sbsign" and s["modules"] > 0, (k, s)
        assert m[k]["trusts"]["skid"] == m["signer"]["skid"], (k, m[k]["trusts"], m["signer"])
PY
# No private key in the output: no PEM private key, not the key file's base64 body.
body=$(grep -v -- '-----' "$keys/fleet.key" | tr -d '\n' | cut -c 40-100)
for f in $(find "$t" -type f); do
	case $f in
	*.deb) dpkg-deb --fsys-tarfile "$f" ;;
	*) cat "$f" ;;
	esac | grep -aq -e 'PRIVATE KEY' -e "$body" && die "private key material in ${f#"$t"/}"
done
rm -rf "$dst"
mv -T "$t" "$dst"
echo "sign-test-build.sh: $dst signed with tests/keys/fleet-test.key; no private key in it"
