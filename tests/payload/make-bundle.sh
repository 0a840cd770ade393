#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make-bundle.sh SCSITUNE PAYLOAD_OUT DIR -- the payload bundle the vm tier
# installs: payload/build's output packed by `scsitune payload pack`
# (SOURCE_DATE_EPOCH fixed) and signed with a minisign key made here:
#   DIR/payload.tar.zst  DIR/payload.tar.zst.minisig  DIR/fleet.pub (the
#   trusted key, for /etc/scsitune/trusted-keys/)  DIR/fleet.key
# DIR is written in a temporary directory and renamed into place.
set -euo pipefail
bin=${1:?usage: make-bundle.sh SCSITUNE PAYLOAD_OUT DIR}
pout=${2:?usage: make-bundle.sh SCSITUNE PAYLOAD_OUT DIR}
dir=${3:?usage: make-bundle.sh SCSITUNE PAYLOAD_OUT DIR}
command -v minisign >/dev/null || { echo "make-bundle.sh: minisign not found (scripts/install-deps --test)" >&2; exit 1; }
mkdir -p "$(dirname "$dir")"
t=$(mktemp -d "$(dirname "$dir")/.bundle.XXXXXX")
trap 'rm -rf "$t"' EXIT
minisign -G -W -p "$t/fleet.pub" -s "$t/fleet.key" >/dev/null
SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$pout" --output "$t/payload.tar.zst" >/dev/null
minisign -S -s "$t/fleet.key" -m "$t/payload.tar.zst" -t "scsitune vm tier $(date -u +%FT%TZ)" >/dev/null
chmod 0644 "$t/fleet.pub" "$t"/payload.tar.zst*
rm -rf "$dir"
mv -T "$t" "$dir"
echo "make-bundle.sh: $dir/payload.tar.zst, signed with $dir/fleet.key"
