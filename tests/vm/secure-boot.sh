#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# secure-boot.sh SCSITUNE PAYLOAD_OUT BUNDLE_DIR KERNEL_SIGNED OUTDIR -- CTest
# vm/secure-boot: the payload's signed modules enrolled as a Machine Owner Key
# and loaded by Debian's kernel under UEFI Secure Boot, then the payload's own
# kernel, signed by the same key, booted through shim (tests/vm/README.md,
# "Scenario `secure-boot`").
#
# On this side, in OUTDIR/keys (mode 700; never in the guest's share): the
# fleet's key and certificate, the published test key of tests/keys (copied
# to a file of mode 600; made as payload/README.md's "Secure Boot" says: RSA
# 2048, digitalSignature, codeSigning, a subject key identifier), which the
# test kernels are built to trust; a second key of the same kind made per run
# and never enrolled; a copy of payload/build's output (PAYLOAD_OUT, the
# payload_modules fixture) signed by each with payload/sign, packed with
# scsitune payload pack and signed with a minisign key made here. BUNDLE_DIR
# is the payload_bundle fixture (tests/payload/make-bundle.sh): the same
# modules unsigned. KERNEL_SIGNED is payload/sign-kernel's output (the
# payload_kernel_signed fixture: the --kernel build signed by the test key),
# packed and minisigned here too. Then tests/vm/rootfs/run.sh boots the Debian image with
# SCSITUNE_VM_FIRMWARE=secureboot (OVMF, shim, GRUB, Debian's signed kernel)
# through the stage scenarios/secure-boot.stage.sh, MokManager driven over the
# serial console by rootfs/mokmanager.py with the one-time password made here,
# and scenarios/secure-boot.check.py checks what the guest wrote. Last, no
# file of the share may hold a private key.
#
# The guest gets in /vm/in/files: unsigned.tar.zst + .minisig + unsigned.pub
# (its minisign key), signed.tar.zst, other.tar.zst and kernel.tar.zst +
# .minisig, sb.pub
# (their minisign key), fleet.der and other.der (the certificates, for the
# checks), mok.pw (MokManager's one-time password, one line).
# Exit 0 passed, 1 failed (one line saying which step and why), 64 usage.
set -euo pipefail
export LC_ALL=C
umask 022
here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
[ $# -eq 5 ] || { echo "usage: secure-boot.sh SCSITUNE PAYLOAD_OUT BUNDLE_DIR KERNEL_SIGNED OUTDIR" >&2; exit 64; }
bin=$(readlink -f -- "$1")
pout=$2 ub=$3 kout=$4 out=$5
die() { echo "secure-boot.sh: FAIL: $*" >&2; exit 1; }
for p in openssl minisign python3 modinfo; do
	command -v "$p" >/dev/null || die "$p not found (scripts/install-deps --test)"
done
[ -x "$bin" ] || die "$1 is not an executable"
[ -f "$pout/manifest.json" ] || die "$pout: no manifest.json (payload/build's output: ctest -R '^payload/build$')"
[ -f "$kout/manifest.json" ] && [ -d "$kout/kernel" ] ||
	die "$kout: no signed --kernel build (ctest -R '^payload/sign-kernel$')"
for f in payload.tar.zst payload.tar.zst.minisig fleet.pub; do
	[ -s "$ub/$f" ] || die "$ub/$f: missing (the unsigned bundle: ctest -R '^payload/bundle$')"
done
rm -rf "$out"
mkdir -p "$out/keys" "$out/files"
out=$(cd "$out" && pwd -P)
chmod 700 "$out/keys"
keys=$out/keys files=$out/files

# mkkey NAME CN: keys/NAME.key (mode 600) and keys/NAME.crt, the fleet's way.
mkkey() {
	openssl req -new -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$2/" \
		-addext keyUsage=digitalSignature -addext extendedKeyUsage=codeSigning -addext subjectKeyIdentifier=hash \
		-outform PEM -keyout "$keys/$1.key" -out "$keys/$1.crt" >"$keys/$1.openssl.log" 2>&1 ||
		die "openssl req for the $1 key: $(tail -1 "$keys/$1.openssl.log")"
	chmod 600 "$keys/$1.key"
	openssl x509 -in "$keys/$1.crt" -outform DER -out "$files/$1.der" # fleet.der, other.der
}
install -m 600 "$repo/tests/keys/fleet-test.key" "$keys/fleet.key"
cp "$repo/tests/keys/fleet-test.crt" "$keys/fleet.crt"
openssl x509 -in "$keys/fleet.crt" -outform DER -out "$files/fleet.der"
mkkey other "scsitune vm other key"
minisign -G -W -p "$files/sb.pub" -s "$keys/sb.minisign.key" >/dev/null || die "minisign -G failed"
# pack NAME DIR: DIR packed and minisigned as files/NAME.tar.zst.
pack() {
	SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$2" --output "$files/$1.tar.zst" >"$out/pack-$1.log" 2>&1 ||
		die "scsitune payload pack of the $1 bundle: $(tail -1 "$out/pack-$1.log")"
	minisign -S -s "$keys/sb.minisign.key" -m "$files/$1.tar.zst" -t "scsitune vm/secure-boot $1 $(date -u +%FT%TZ)" >/dev/null ||
		die "minisign -S of the $1 bundle"
}
# bundle NAME KEY: payload/build's output, copied, signed by KEY (payload/sign), packed and minisigned.
bundle() {
	local d=$keys/$1-out
	rm -rf "$d" && cp -r "$pout" "$d" && chmod -R u+w "$d"
	"$repo/payload/sign" --key "$keys/$2.key" --cert "$keys/$2.crt" "$d" 2>"$out/sign-$1.log" ||
		die "payload/sign of the $1 bundle's modules: $(tail -1 "$out/sign-$1.log")"
	pack "$1" "$d"
	[ "$(modinfo -F signer "$d/modules/scsi_mod.ko")" = "$(openssl x509 -in "$keys/$2.crt" -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= //p')" ] ||
		die "the $1 bundle's scsi_mod.ko is not signed by the $2 key (modinfo -F signer: $(modinfo -F signer "$d/modules/scsi_mod.ko"))"
}
bundle signed fleet
bundle other other
# the --kernel build payload/sign-kernel signed with the same key: its image
# for shim, its modules for the kernel built to trust that certificate
python3 - "$kout/manifest.json" "$keys/fleet.crt" <<'PY' || die "$kout is not the --kernel build signed by the test key (above)"
import hashlib, json, subprocess, sys
m = json.load(open(sys.argv[1]))
der = subprocess.run(["openssl", "x509", "-in", sys.argv[2], "-outform", "DER"], check=True, capture_output=True).stdout
k = m["kernel"]
assert k.get("signed", {}).get("image_signature") == "sbsign", k.get("signed")
assert k.get("trusts", {}).get("certificate_sha256") == hashlib.sha256(der).hexdigest(), k.get("trusts")
PY
pack kernel "$kout"
cp "$ub/payload.tar.zst" "$files/unsigned.tar.zst"
cp "$ub/payload.tar.zst.minisig" "$files/unsigned.tar.zst.minisig"
cp "$ub/fleet.pub" "$files/unsigned.pub"
# MokManager's one-time password (what mokutil stages a hash of, and what a
# person types at the console): printable, one line.
openssl rand -hex 6 >"$files/mok.pw"
chmod 0644 "$files"/*

rc=0
SCSITUNE_VM_FIRMWARE=secureboot SCSITUNE_VM_MOK_PASSWORD_FILE="$files/mok.pw" \
	SCSITUNE_VM_FILES="$(echo "$files"/*)" "$here/rootfs/run.sh" "$bin" secure-boot "$out/run" || rc=$?

# No private key may have reached the guest's share: no PEM private key, and
# neither key's private exponent (its first and last 32 bytes) in any file.
python3 - "$out/run/share" "$keys/fleet.key" "$keys/other.key" <<'PY' || die "a private key is in the guest's share (above)"
import os, re, subprocess, sys
share, keys = sys.argv[1], sys.argv[2:]
bad = []
for k in keys:
    txt = subprocess.run(["openssl", "pkey", "-in", k, "-noout", "-text"], check=True, capture_output=True, text=True).stdout
    h = re.search(r"privateExponent:\n((?:\s+[0-9a-f:]+\n)+)", txt).group(1)
    d = bytes.fromhex(re.sub(r"[\s:]", "", h)).lstrip(b"\0")
    for dp, _, fs in os.walk(share):
        for f in fs:
            p = os.path.join(dp, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                b = fh.read()
            if b"PRIVATE KEY" in b or d[:32] in b or d[-32:] in b:
                bad.append(p)
for p in sorted(set(bad)):
    print("secure-boot.sh: private key material in " + p, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "secure-boot.sh: no private key in the guest's share"
# The whole test's CPU: this script and everything it ran (QEMU's per boot: run/timing.txt).
times >"$out/times.txt" # (a builtin in a pipeline would run in a subshell, with its own times)
tail -1 "$out/times.txt" | awk '{ gsub(/m/, " "); gsub(/s/, ""); printf "secure-boot.sh: CPU of everything it ran: user %.1f s, system %.1f s\n", $1 * 60 + $2, $3 * 60 + $4 }'
[ "$rc" -eq 0 ] || die "rootfs/run.sh exited with $rc (its reason above)"
echo "secure-boot.sh: passed"
