# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/trust (sourced by test-payload.sh): payload/build's modules
# signed here with the kernel's sign-file and a throwaway key (made in $work,
# never kept), packed and signed; the preflight's trust rows against trees
# whose proc/keys, keyring membership (scsitune-capture/keyrings) and EFI
# variables say where the kernel holds the key.
section "trust"
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
if [ ! -x "$signfile" ]; then
	fail "no $signfile (Debian's linux-kbuild-6.1: scripts/install-deps --test)"
	return
fi
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=scsitune trust test" \
	-addext subjectKeyIdentifier=hash -keyout "$work/mok.key" -outform DER -out "$work/mok.der" >/dev/null 2>&1 ||
	fail "openssl req: the throwaway key"
skid=$(openssl x509 -inform DER -in "$work/mok.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
rm -rf "$work/signed-out" && cp -r "$pout" "$work/signed-out" && chmod -R u+w "$work/signed-out"
for ko in "$work/signed-out"/modules/*.ko; do
	"$signfile" sha256 "$work/mok.key" "$work/mok.der" "$ko" || fail "sign-file $ko"
done
sig_key=$(modinfo -F sig_key "$work/signed-out/modules/scsi_mod.ko")
[ "$(modinfo -F signer "$work/signed-out/modules/scsi_mod.ko")" = "scsitune trust test" ] || fail "modinfo: signer"
# payload/build's manifest holds each file's SHA-256: the signed modules' now.
python3 - "$work/signed-out" <<'PY'
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
for name in m["files"]:
    m["files"][name] = hashlib.sha256(open(d + "/" + name, "rb").read()).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"), indent=2, sort_keys=True)
PY
sb=$work/signed.tar.zst
run 0 "pack the signed modules" "$bin" payload pack "$work/signed-out" --output "$sb" && sign a "$sb"

# The host: Secure Boot on, lockdown integrity (what Debian's kernel does under it), the four keyrings.
efi=$root/sys/firmware/efi/efivars
mkdir -p "$efi"
printf '\x06\x00\x00\x00\x01' >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
# keys KEYRING-OF-OUR-KEY: proc/keys and the membership, our key (if any) in that keyring
keys() {
	{
		echo "0b3e7a0d I------     1 perm 1f0b0000     0     0 keyring   .builtin_trusted_keys: 1"
		echo "1c2d0e4f I------     1 perm 1f0f0000     0     0 keyring   .secondary_trusted_keys: 2"
		echo "2f0a1b7c I------     1 perm 1f0b0000     0     0 keyring   .machine: 1"
		echo "3a9d4e21 I------     1 perm 1f0b0000     0     0 keyring   .platform: 1"
		echo "0f4b6c11 I------     1 perm 1f030000     0     0 asymmetri Debian Secure Boot CA: 6ccece7e4c6c0d1f6149f3dd27dfcc5cbb419ea1: X509.rsa bb419ea1 []"
		[ -z "$1" ] || echo "25e1c3a8 I------     1 perm 1f030000     0     0 asymmetri scsitune trust test: $skid: X509.rsa ${skid: -8} []"
	} >"$root/proc/keys"
	mkdir -p "$root/scsitune-capture"
	{
		echo "# keyctl rlist"
		echo "0b3e7a0d: 0f4b6c11"
		echo "1c2d0e4f: 0b3e7a0d 2f0a1b7c"
		echo "2f0a1b7c:$([ "$1" = machine ] && echo " 25e1c3a8")"
		echo "3a9d4e21:$([ "$1" = platform ] && echo " 25e1c3a8")"
	} >"$root/scsitune-capture/keyrings"
}
# Secure Boot + lockdown + the key in .machine (MOK) with its certificate in MokListRT: trusted.
keys machine
python3 - "$work/mok.der" "$efi/MokListRT-605dab50-e046-4293-a645-bc4e9f1a37ab" <<'PY'
import struct, sys
der = open(sys.argv[1], "rb").read()
x509 = bytes.fromhex("a159c0a5e494a74a87b5ab155c2bf072")  # EFI_CERT_X509_GUID as it lies in memory
sig = b"\x11" * 16 + der
open(sys.argv[2], "wb").write(b"\x07\0\0\0" + x509 + struct.pack("<III", 28 + len(sig), 0, len(sig)) + sig)
PY
if run 0 "key in .machine" st -o json payload install "$sb" --dry-run --state-dir "$state"; then
	python3 - "$work/out" <<'PY' && ok "key in .machine: trusted" || fail "key in .machine: $(cat "$work/out" | head -c 2000)"
import json, sys
rows = [c for c in json.load(open(sys.argv[1]))["preflight"]["checks"] if c["check"] == "trust"]
assert len(rows) == 2, rows
for c in rows:
    assert c["passed"] and c["actual"] == "trusted: .machine", c
    assert "matched by issuer and serial" in c["why"], c
PY
fi
run 0 "key in .machine, text" st payload install "$sb" --dry-run --state-dir "$state" &&
	said "ok +trust +scsi_mod: trusted: \.machine; signed by 'scsitune trust test' \(key id $sig_key\)" &&
	ok "key in .machine: the text row names the signer and modinfo's sig_key"
# Without the certificate (MokListRT not readable): trusted by name only, said so.
rm "$efi/MokListRT-605dab50-e046-4293-a645-bc4e9f1a37ab"
run 0 "key in .machine, no MokListRT" st payload install "$sb" --dry-run --state-dir "$state" &&
	said "trusted-by-name: \.machine; .*by name only" && ok "no certificate: by name only"
# The key only in .platform (UEFI db): refused, naming why.
keys platform
refused "key only in .platform" "refused: trust scsi_mod: scsi_mod\.ko is signed by 'scsitune trust test' \(key id $sig_key\) and its key is in \.platform only, which the kernel does not use for modules .*Key was rejected by service" \
	st payload install "$sb" --state-dir "$state"
err_has "key only in .platform: the next step" "^scsitune: hint: enrol the certificate that signed the modules as a Machine Owner Key: mokutil --import"
[ "$(grep -c '^scsitune: hint:' "$work/err")" -eq 1 ] || fail "key only in .platform: one hint line, not $(grep -c '^scsitune: hint:' "$work/err")"
# The key in no keyring: refused.
keys ""
refused "key absent" "refused: trust target_core_mod: target_core_mod\.ko is signed by 'scsitune trust test' \(key id $sig_key\) and no keyring the kernel holds has that key; kernel lockdown is on, so the kernel would refuse" \
	st payload install "$sb" --state-dir "$state"
# Not enforcing (no lockdown, no Secure Boot, sig_enforce N): the same key absent passes, with the note.
echo '[none] integrity confidentiality' >"$root/sys/kernel/security/lockdown"
printf '\x06\x00\x00\x00\x00' >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
run 0 "key absent, not enforcing" st payload install "$sb" --dry-run --state-dir "$state" &&
	said "ok +trust +scsi_mod: absent; .*not enforced, so the kernel loads it and taints itself \(E\)" &&
	ok "not enforcing: passes with a note"
# Unsigned modules under enforcement: refused by the signatures row (the existing rule), no trust row.
echo Y >"$root/sys/module/module/parameters/sig_enforce"
refused "unsigned under sig_enforce" "module\.sig_enforce is on and scsi_mod\.ko, target_core_mod\.ko are unsigned" \
	st payload install "$b" --state-dir "$state"
! grep -q "trust" "$work/err" || fail "unsigned: a trust row for an unsigned module"
# proc/keys a FIFO: one line of why in the note, nothing hangs; the keyrings unknown is not a refusal.
rm "$root/proc/keys" && mkfifo "$root/proc/keys"
run 0 "proc/keys a FIFO" timeout 60 "$bin" --sysroot "$root" payload install "$sb" --dry-run --state-dir "$state" &&
	said "unknown; signed by .* whether the kernel trusts it is not known: /proc/keys: not a regular file" &&
	ok "proc/keys a FIFO: unknown, said why"
rm -f "$root/proc/keys"
echo N >"$root/sys/module/module/parameters/sig_enforce"
rm -rf "$root/sys/firmware" "$root/scsitune-capture"
echo '[none] integrity confidentiality' >"$root/sys/kernel/security/lockdown"
