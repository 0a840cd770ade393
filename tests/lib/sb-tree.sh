# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# sb-tree.sh (sourced): a --sysroot tree made to show a Secure Boot host's
# trust, for tests/payload/cases/trust.sh and enroll.sh and
# tests/fleet/test-enroll.sh.
#   sb_efilist TREE VAR [CERT.der...]: TREE's efivars VAR-<shim's GUID>
#       (MokListRT, MokNew) as the firmware shows it: 4 bytes of attributes,
#       then one EFI_SIGNATURE_LIST of type X.509 per certificate; no
#       certificate: the variable removed.
#   sb_keys TREE KEYRING NAME SKID: TREE/proc/keys and the keyring
#       membership (scsitune-capture/keyrings, as capture-host.sh records
#       it): the four system keyrings, Debian's Secure Boot CA in
#       .builtin_trusted_keys, and the key "NAME: SKID" in KEYRING (machine
#       or platform; "": the kernel holds no such key).
sb_shim_guid=605dab50-e046-4300-abb6-3dd810dd8b23
sb_efilist() {
	local f=$1/sys/firmware/efi/efivars/$2-$sb_shim_guid
	shift 2
	rm -f "$f"
	[ $# -gt 0 ] || return 0
	mkdir -p "$(dirname "$f")"
	"${PYTHON3:-python3}" - "$f" "$@" <<'PY'
import struct, sys
x509 = bytes.fromhex("a159c0a5e494a74a87b5ab155c2bf072")  # EFI_CERT_X509_GUID as it lies in memory
owner = bytes.fromhex("50ab5d6046e00043abb63dd810dd8b23")  # shim's GUID: the owner mokutil writes
out = b"\x07\0\0\0"
for f in sys.argv[2:]:
    sig = owner + open(f, "rb").read()
    out += x509 + struct.pack("<III", 28 + len(sig), 0, len(sig)) + sig
open(sys.argv[1], "wb").write(out)
PY
}
sb_keys() {
	local t=$1 kr=$2 name=$3 skid=$4
	{
		echo "0b3e7a0d I------     1 perm 1f0b0000     0     0 keyring   .builtin_trusted_keys: 1"
		echo "1c2d0e4f I------     1 perm 1f0f0000     0     0 keyring   .secondary_trusted_keys: 2"
		echo "2f0a1b7c I------     1 perm 1f0b0000     0     0 keyring   .machine: 1"
		echo "3a9d4e21 I------     1 perm 1f0b0000     0     0 keyring   .platform: 1"
		echo "0f4b6c11 I------     1 perm 1f030000     0     0 asymmetri Debian Secure Boot CA: 6ccece7e4c6c0d1f6149f3dd27dfcc5cbb419ea1: X509.rsa bb419ea1 []"
		[ -z "$kr" ] || echo "25e1c3a8 I------     1 perm 1f030000     0     0 asymmetri $name: $skid: X509.rsa ${skid: -8} []"
	} >"$t/proc/keys"
	mkdir -p "$t/scsitune-capture"
	printf '# keyctl rlist\n0b3e7a0d: 0f4b6c11\n1c2d0e4f: 0b3e7a0d 2f0a1b7c\n2f0a1b7c:%s\n3a9d4e21:%s\n' \
		"$([ "$kr" = machine ] && echo " 25e1c3a8")" "$([ "$kr" = platform ] && echo " 25e1c3a8")" \
		>"$t/scsitune-capture/keyrings"
}
