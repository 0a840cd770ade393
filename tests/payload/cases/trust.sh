# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/trust (sourced by test-payload.sh): payload/build's modules
# signed by payload/sign with the kernel's sign-file and a throwaway key (made
# in $work, never kept; the manifest's signer, signer.der, the key in no
# output file), packed (the signer line; a module signed by another key
# refused) and signed; the preflight's trust rows against trees
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
chmod 600 "$work/mok.key"
skid=$(openssl x509 -inform DER -in "$work/mok.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
serial=$(openssl x509 -inform DER -in "$work/mok.der" -noout -serial | sed 's/^serial=//' | tr A-F a-f)
# Signed by payload/sign (the tool a fleet uses: payload/build --sign-key runs it too).
rm -rf "$work/signed-out" && cp -r "$pout" "$work/signed-out" && chmod -R u+w "$work/signed-out"
run 0 "payload/sign" "$src/payload/sign" --key "$work/mok.key" --cert "$work/mok.der" --sign-file "$signfile" "$work/signed-out" &&
	err_has "payload/sign: the line it prints" "^payload/sign: signed scsi_mod\.ko target_core_mod\.ko with scsitune trust test \(serial [0-9a-f]+, SKID $skid\)"
sig_key=$(modinfo -F sig_key "$work/signed-out/modules/scsi_mod.ko")
[ "$(modinfo -F signer "$work/signed-out/modules/scsi_mod.ko")" = "scsitune trust test" ] || fail "modinfo: signer"
cmp -s "$work/signed-out/signer.der" "$work/mok.der" || fail "payload/sign: signer.der is not the certificate"
python3 - "$work/signed-out" "$skid" "$serial" <<'PY' || fail "payload/sign: the manifest's signer and files"
import hashlib, json, sys
d, skid, serial = sys.argv[1:4]
m = json.load(open(d + "/manifest.json"))
s = m["signer"]
assert s["kernel_name"] == "scsitune trust test" and s["issuer_cn"] == "scsitune trust test", s
while serial.startswith("00"):
    serial = serial[2:]
assert s["skid"] == skid and s["serial"] == serial, (s, serial)
assert s["certificate"] == "signer.der" and s["hash"] == "sha256" and s["bits"] == 2048, s
for name, sha in m["files"].items():
    assert hashlib.sha256(open(d + "/" + name, "rb").read()).hexdigest() == sha, name
assert "signer.der" in m["files"], m["files"]
PY
# The private key went nowhere: no file of the output holds its PEM text or its private
# exponent's bytes (the modulus is public: the certificate carries it).
openssl pkey -in "$work/mok.key" -noout -text >"$work/mok.key.txt" 2>/dev/null || fail "openssl pkey -text"
python3 - "$work/signed-out" "$work/mok.key" "$work/mok.key.txt" <<'PY' || fail "payload/sign: the private key is in the output"
import os, re, sys
d = sys.argv[1]
pem = [l for l in open(sys.argv[2]).read().splitlines() if l and not l.startswith("-----")]
txt = open(sys.argv[3]).read()
hexd = re.search(r"privateExponent:\n((?:\s+[0-9a-f:]+\n)+)", txt).group(1)
priv = bytes.fromhex(re.sub(r"[\s:]", "", hexd)).lstrip(b"\0")
assert len(priv) > 200, len(priv)
for dp, _, fs in os.walk(d):
    for f in fs:
        b = open(os.path.join(dp, f), "rb").read()
        assert b"PRIVATE KEY" not in b and priv[:64] not in b and priv[-64:] not in b, f
        assert not any(l.encode() in b for l in pem[1:-1]), f
PY
sb=$work/signed.tar.zst
run 0 "pack the signed modules" "$bin" payload pack "$work/signed-out" --output "$sb" && sign a "$sb" &&
	said "signer scsitune trust test \(serial [0-9a-f]+, SKID $skid\); certificate signer\.der in the bundle" &&
	ok "pack: the signer line"
run 0 "pack -o json, the signed modules" "$bin" -o json payload pack "$work/signed-out" --output "$work/signed2.tar.zst" &&
	[ "$(jget signer.skid)" = "$skid" ] && [ "$(jget signer.kernel_name)" = "scsitune trust test" ] &&
	[ "$(jget signer.certificate)" = signer.der ] && ok "pack -o json: the signer" || fail "pack -o json: signer $(head -c 600 "$work/out")"
python3 - "$sb" <<'PY' || fail "the bundle: the private key or no certificate"
import subprocess, sys
names = subprocess.run(["tar", "--zstd", "-tf", sys.argv[1]], check=True, capture_output=True, text=True).stdout.split()
assert "signer.der" in names and not any(n.endswith((".key", ".pem")) for n in names), names
PY
# A module signed by another key than the manifest's signer: pack refuses, naming the module.
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=another key" -keyout "$work/other.key" \
	-outform DER -out "$work/other.der" >/dev/null 2>&1 || fail "openssl req: another key"
rm -rf "$work/mixed" && cp -r "$work/signed-out" "$work/mixed" && cp "$pout/modules/target_core_mod.ko" "$work/mixed/modules/" &&
	chmod u+w "$work/mixed/modules/target_core_mod.ko" &&
	"$signfile" sha256 "$work/other.key" "$work/other.der" "$work/mixed/modules/target_core_mod.ko" &&
	python3 - "$work/mixed" <<'PY' || fail "mixed: the manifest's SHA-256"
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
m["files"]["modules/target_core_mod.ko"] = hashlib.sha256(open(d + "/modules/target_core_mod.ko", "rb").read()).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"))
PY
run 1 "pack: a module signed by another key" "$bin" payload pack "$work/mixed" --output "$work/mixed.tar.zst" &&
	err_has "pack: another key" "modules/target_core_mod\.ko: signed by 'another key' \(key id [0-9A-F:]+\), not by the signer's certificate \(scsitune trust test, serial [0-9a-f]+\)" &&
	[ ! -e "$work/mixed.tar.zst" ] && ok "pack: a module signed by another key is refused, nothing written"

# The signed bundle made hostile (hostile.py, signed by a trusted key): a manifest signer whose
# serial its certificate belies, a signer whose certificate is not in the bundle: install refuses
# each in one line before anything is written.
python3 "$(dirname "$0")/hostile.py" "$sb" "$work/hostile-signer" signer-serial signer-not-in-files >/dev/null ||
	fail "hostile.py on the signed bundle"
sign a "$work/hostile-signer/signer-serial.tar.zst"
sign a "$work/hostile-signer/signer-not-in-files.tar.zst"
refused "hostile: a signer serial the certificate belies" "signer\.der: its serial differs from what the manifest's signer says" \
	st payload install "$work/hostile-signer/signer-serial.tar.zst" --state-dir "$state"
refused "hostile: the signer's certificate not in the bundle" "manifest\.json: signer: its certificate signer\.der is not in \"files\"" \
	st payload install "$work/hostile-signer/signer-not-in-files.tar.zst" --state-dir "$state"

# Signed by other means (sign-file by hand, as DKMS does; no signer in the manifest): the
# preflight matches through the firmware's copy of the certificate, or by name only.
rm -rf "$work/hand-out" && cp -r "$pout" "$work/hand-out" && chmod -R u+w "$work/hand-out"
for ko in "$work/hand-out"/modules/*.ko; do
	"$signfile" sha256 "$work/mok.key" "$work/mok.der" "$ko" || fail "sign-file $ko"
done
python3 - "$work/hand-out" <<'PY'
import hashlib, json, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
for name in m["files"]:
    m["files"][name] = hashlib.sha256(open(d + "/" + name, "rb").read()).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"), indent=2, sort_keys=True)
PY
hb=$work/hand.tar.zst
run 0 "pack the hand-signed modules" "$bin" payload pack "$work/hand-out" --output "$hb" && sign a "$hb" &&
	said "signer not recorded \(the modules were not signed with payload/sign\)" && ok "pack: a hand-signed bundle says so"

# The host: Secure Boot on, lockdown integrity (what Debian's kernel does under it), the four keyrings.
efi=$root/sys/firmware/efi/efivars
mkdir -p "$efi"
printf '\x06\x00\x00\x00\x01' >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
# shellcheck source=tests/lib/sb-tree.sh
. "$src/tests/lib/sb-tree.sh"
keys() { sb_keys "$root" "$1" "scsitune trust test" "$skid"; } # KEYRING-OF-OUR-KEY ("": none)
# Secure Boot + lockdown + the key in .machine (MOK) with its certificate in MokListRT: trusted.
keys machine
sb_efilist "$root" MokListRT "$work/mok.der"
if run 0 "key in .machine" st -o json payload install "$sb" --dry-run --state-dir "$state"; then
	python3 - "$work/out" <<'PY' && ok "key in .machine: trusted" || fail "key in .machine: $(cat "$work/out" | head -c 2000)"
import json, sys
rows = [c for c in json.load(open(sys.argv[1]))["preflight"]["checks"] if c["check"] == "trust"]
assert len(rows) == 2, rows
for c in rows:
    assert c["passed"] and c["actual"] == "trusted: .machine", c
    assert "matched by the key identifier of the bundle's signer certificate" in c["why"], c
PY
fi
run 0 "key in .machine, text" st payload install "$sb" --dry-run --state-dir "$state" &&
	said "ok +trust +scsi_mod: trusted: \.machine; signed by 'scsitune trust test' \(key id $sig_key\)" &&
	ok "key in .machine: the text row names the signer and modinfo's sig_key"
run 0 "hand-signed, key in .machine" st payload install "$hb" --dry-run --state-dir "$state" &&
	said "ok +trust +scsi_mod: trusted: \.machine; .*matched by issuer and serial through the firmware's certificate" &&
	ok "hand-signed: matched through MokListRT's certificate"
# Without the certificate (MokListRT not readable): the bundle's signer still matches exactly
# (its SKID); a hand-signed bundle is trusted by name only, said so.
rm "$efi/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23"
run 0 "key in .machine, no MokListRT" st payload install "$sb" --dry-run --state-dir "$state" &&
	said "ok +trust +scsi_mod: trusted: \.machine; .*key identifier of the bundle's signer certificate" &&
	ok "no certificate in the firmware: the bundle's signer matches by SKID"
run 0 "hand-signed, no MokListRT" st payload install "$hb" --dry-run --state-dir "$state" &&
	said "trusted-by-name: \.machine; .*by name only" && ok "hand-signed, no certificate: by name only"
# The key only in .platform (UEFI db): refused, naming why.
keys platform
refused "key only in .platform" "refused: trust scsi_mod: scsi_mod\.ko is signed by 'scsitune trust test' \(key id $sig_key\) and its key is in \.platform only, which the kernel does not use for modules .*Key was rejected by service" \
	st payload install "$sb" --state-dir "$state"
err_has "key only in .platform: the next step" "^scsitune: hint: enrol the certificate that signed the modules as a Machine Owner Key: scsitune payload enroll BUNDLE --password-file FILE"
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

# verify, the signed payload installed and booted (Secure Boot on, the key in .machine): the
# loaded.signer row names the keyring; a signed module tainted E, or the key in no keyring, is drift.
fresh_root
mkdir -p "$efi"
printf '\x06\x00\x00\x00\x01' >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
keys machine
if run 0 "install the signed bundle" st payload install "$sb" --state-dir "$state"; then
	boot_payload
	for m in scsi_mod target_core_mod; do echo O >"$root/sys/module/$m/taint"; done
	if run 0 "verify: signed, booted" st -o json payload verify "$sb"; then
		[ "$(link_state loaded.signer scsi_mod)" = ok ] && [ "$(link_state loaded.taint scsi_mod)" = ok ] &&
			python3 - "$work/out" <<'PY' && ok "verify: loaded.signer ok, trusted: .machine" || fail "verify: loaded.signer $(head -c 1500 "$work/out")"
import json, sys
rows = [l for l in json.load(open(sys.argv[1]))["links"] if l["link"] == "loaded.signer"]
assert len(rows) == 2 and all(r["state"] == "ok" and r["actual"] == "trusted: .machine" for r in rows), rows
assert "'scsitune trust test' (serial" in rows[0]["note"] and "in .machine" in rows[0]["note"], rows
PY
	fi
	for m in scsi_mod target_core_mod; do echo OE >"$root/sys/module/$m/taint"; done
	run 2 "verify: signed, tainted E" st -o json payload verify "$sb" &&
		[ "$(link_state loaded.taint scsi_mod)" = drift ] && [ "$(jget verdict)" != loaded ] &&
		ok "verify: a signed module tainted E is drift" || fail "verify: tainted E: $(head -c 800 "$work/out")"
	for m in scsi_mod target_core_mod; do echo O >"$root/sys/module/$m/taint"; done
	keys ""
	run 2 "verify: the key in no keyring" st -o json payload verify "$sb" &&
		[ "$(link_state loaded.signer target_core_mod)" = drift ] &&
		ok "verify: the signer in no keyring is drift" || fail "verify: key absent: $(head -c 800 "$work/out")"
	run 2 "verify: the key in no keyring, text" st payload verify "$sb" &&
		said "signer .*'scsitune trust test' \(serial [0-9a-f]+\) is in no keyring the kernel holds" &&
		ok "verify text: the signer row says why"
	unboot
fi
