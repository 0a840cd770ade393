# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kernel-sign (sourced by test-payload.sh; kernel_out:
# sysroot-lib.sh): a --kernel build signed by payload/sign, and the bundle's
# kernel on a Secure Boot host.
#   - payload/sign refuses a kernel built to trust no certificate, or another
#     one, and an image signed already (exit 65, one line, the directory as
#     it was);
#   - it signs the package's image for shim (read back here with sbverify
#     against the certificate) and its modules (modinfo), keeps the package
#     root-owned with md5sums that match, gives the manifest the package's
#     new SHA-256 and "signed", and puts no private key in it;
#   - pack shows it (image_signed, signed_modules, trusts_skid), and refuses
#     a kernel trusting another certificate than the signer's, a "signed"
#     naming another image, a "signed" kernel without a signer;
#   - install's preflight on a Secure Boot tree: an unsigned kernel image is
#     refused ("boot"), so is one whose signer is in neither MokListRT nor
#     db, and one pending enrolment; with the signer in MokListRT and its key
#     in .machine the dry run passes; --no-kernel leaves the row out; with
#     Secure Boot off there is no row.
# The real kernel's signing and its boot through shim: vm/secure-boot.
section "kernel-sign"
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
efi_unsigned=/usr/lib/grub/x86_64-efi/monolithic/grubx64.efi # an unsigned EFI application: the image's stand-in
efi_signed=/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
for f in "$signfile" "$efi_unsigned" "$efi_signed"; do
	[ -f "$f" ] || { fail "no $f (scripts/install-deps --test: linux-kbuild-6.1, grub-efi-amd64-signed)"; return; }
done
command -v sbsign >/dev/null || { fail "sbsign not found (scripts/install-deps --test: sbsigntool)"; return; }
ps=$src/payload/sign
mkcert() { # NAME: $work/NAME.key (600), NAME.der, NAME.pem
	openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=kernel-sign $1" -addext subjectKeyIdentifier=hash \
		-keyout "$work/$1.key" -out "$work/$1.pem" >/dev/null 2>&1 || fail "openssl req: $1"
	chmod 600 "$work/$1.key"
	openssl x509 -in "$work/$1.pem" -outform DER -out "$work/$1.der"
}
mkcert fleet
mkcert other
skid=$(openssl x509 -inform DER -in "$work/fleet.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
ko=$work/unsigned-test.ko
cp "$pout/modules/scsi_mod.ko" "$ko"
# refused_ks LABEL PATTERN: payload/sign of $kpo exits 65 with one line matching, $kpo unchanged.
refused_ks() {
	local before
	before=$(stamp "$kpo")
	if run 65 "$1" "$ps" --sign-file "$signfile" --key "$work/fleet.key" --cert "$work/fleet.der" "$kpo"; then
		err_has "$1" "$2" && one_line "$1" && ok "$1"
	fi
	[ "$(stamp "$kpo")" = "$before" ] || fail "$1: $kpo changed"
}
kernel_out "$efi_unsigned" "$ko"
refused_ks "sign: a kernel built without --sign-cert" "kernel/linux-image-.*\.deb: built without --sign-cert: the kernel trusts no fleet certificate"
kernel_out "$efi_unsigned" "$ko" "$work/other.der"
refused_ks "sign: a kernel built to trust another certificate" "the kernel was built to trust another certificate .*not --cert $work/fleet\.der"
oskid=$(openssl x509 -inform DER -in "$work/other.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
run 0 "pack an unsigned build whose kernel trusts a certificate" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$kpo" --output "$work/u.tar.zst" &&
	said "image unsigned: shim refuses to boot it under Secure Boot \(payload/sign\) built to trust the certificate of SKID $oskid \(payload/build --sign-cert\); nothing signed with it yet" &&
	ok "pack: an unsigned build's kernel trusting a certificate says so" || fail "pack: the unsigned build's text: $(cat "$work/out")"
kernel_out "$efi_signed" "$ko" "$work/fleet.der"
refused_ks "sign: an image signed already" "its vmlinuz-$KR is already signed"

kernel_out "$efi_unsigned" "$ko" "$work/fleet.der"
if run 0 "sign a --kernel build" "$ps" --sign-file "$signfile" --key "$work/fleet.key" --cert "$work/fleet.der" "$kpo"; then
	x=$work/kx
	rm -rf "$x" && dpkg-deb -R "$kpo/$kdeb" "$x"
	sbverify --cert "$work/fleet.pem" "$x/boot/vmlinuz-$KR" >/dev/null 2>&1 && ok "sign: sbverify reads the image's signature back" ||
		fail "sign: sbverify --cert of the signed image: $(sbverify --cert "$work/fleet.pem" "$x/boot/vmlinuz-$KR" 2>&1 | tail -1)"
	! sbverify --cert "$work/other.pem" "$x/boot/vmlinuz-$KR" >/dev/null 2>&1 && ok "sign: the image does not verify against another certificate" ||
		fail "sign: sbverify passed with another certificate"
	[ "$(modinfo -F signer "$x/lib/modules/$KR/kernel/test.ko")" = "kernel-sign fleet" ] && ok "sign: the package's module signed" ||
		fail "sign: the package's module: modinfo signer '$(modinfo -F signer "$x/lib/modules/$KR/kernel/test.ko")'"
	(cd "$x" && md5sum --quiet -c DEBIAN/md5sums) >/dev/null 2>&1 && ok "sign: the package's md5sums match its files" ||
		fail "sign: md5sums: $(cd "$x" && md5sum --quiet -c DEBIAN/md5sums 2>&1 | head -2)"
	dpkg-deb -c "$kpo/$kdeb" | awk '$2 != "root/root" { bad = 1 } END { exit bad }' && ok "sign: the package stays root-owned" ||
		fail "sign: owners in the package: $(dpkg-deb -c "$kpo/$kdeb" | awk '{ print $2 }' | sort -u | tr '\n' ' ')"
	keyb64=$(grep -v -- '-----' "$work/fleet.key" | tr -d '\n' | cut -c 40-100)
	{ dpkg-deb --fsys-tarfile "$kpo/$kdeb"; cat "$kpo/manifest.json"; } | grep -aqe 'PRIVATE KEY' -e "$keyb64" &&
		fail "sign: private key material in the package or manifest" || ok "sign: no private key in the package or manifest"
	python3 - "$kpo" "$kdeb" "$KR" <<-'PY' && ok "sign: the manifest's kernel entry" || fail "sign: the manifest's kernel entry"
		import hashlib, json, os, sys
		d, deb, kr = sys.argv[1:4]
		k = json.load(open(os.path.join(d, "manifest.json")))["kernel"]
		assert k["signed"] == {"image": "boot/vmlinuz-" + kr, "image_signature": "sbsign", "modules": 1}, k
		assert k["sha256"] == hashlib.sha256(open(os.path.join(d, deb), "rb").read()).hexdigest(), "sha256"
	PY
	refused_ks "sign: signed already" "manifest\.json: already has a signer"
	kbk=$work/kernel-signed.tar.zst
	if run 0 "pack the signed --kernel build" env SOURCE_DATE_EPOCH=1700000000 "$bin" -o json payload pack "$kpo" --output "$kbk"; then
		cp "$work/out" "$work/schema-pack-kernel.json"
		[ "$(jget kernel.image_signed)" = True ] && [ "$(jget kernel.signed_modules)" = 1 ] && [ "$(jget kernel.trusts_skid)" = "$skid" ] &&
			ok "pack: image_signed, signed_modules, trusts_skid" ||
			fail "pack: kernel $(jget kernel)"
		sign a "$kbk"
		run 0 "pack, text" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$kpo" --output "$work/k2.tar.zst" &&
			said "image signed for shim \(sbsign\) by the signer, 1 of its modules signed built to trust the signer \(SKID $skid\)" &&
			ok "pack: the text says so" || fail "pack: the text: $(cat "$work/out")"
	fi
fi
# A manifest whose kernel trusts another certificate than the signer's: pack refuses.
python3 - "$kpo/manifest.json" <<-'PY'
	import json, sys
	m = json.load(open(sys.argv[1]))
	m["kernel"]["trusts"]["certificate_sha256"] = "0" * 64
	json.dump(m, open(sys.argv[1], "w"))
PY
run 1 "pack: a kernel trusting another certificate" "$bin" payload pack "$kpo" --output "$work/lie.tar.zst" &&
	err_has "pack: trusts" "kernel: it trusts certificate 0000000000000000\.\.\., not the signer's signer\.der" &&
	[ ! -e "$work/lie.tar.zst" ] && ok "pack: a kernel trusting another certificate is refused"

# A kernel entry whose "signed" names another image, or a "signed" kernel in an unsigned build: refused.
python3 - "$kpo/manifest.json" <<-'PY'
	import json, sys
	m = json.load(open(sys.argv[1]))
	del m["kernel"]["trusts"]
	m["kernel"]["signed"]["image"] = "boot/vmlinuz-other"
	json.dump(m, open(sys.argv[1], "w"))
PY
run 1 "pack: a kernel whose signed image is another" "$bin" payload pack "$kpo" --output "$work/lie.tar.zst" &&
	err_has "pack: signed image" "kernel: invalid \"signed\" \(expected image boot/vmlinuz-$KR" &&
	[ ! -e "$work/lie.tar.zst" ] && ok "pack: a kernel whose \"signed\" names another image is refused"
kernel_out "$efi_unsigned"
python3 - "$kpo/manifest.json" "$KR" <<-'PY'
	import json, sys
	m = json.load(open(sys.argv[1]))
	m["kernel"]["signed"] = {"image": "boot/vmlinuz-" + sys.argv[2], "image_signature": "sbsign", "modules": 0}
	json.dump(m, open(sys.argv[1], "w"))
PY
run 1 "pack: a signed kernel without a signer" "$bin" payload pack "$kpo" --output "$work/lie.tar.zst" &&
	err_has "pack: no signer" "kernel: \"signed\", but the manifest names no signer" &&
	[ ! -e "$work/lie.tar.zst" ] && ok "pack: a kernel said to be signed in an unsigned build is refused"

# --- install's preflight on a Secure Boot tree ------------------------------------------
# shellcheck source=tests/lib/sb-tree.sh
. "$src/tests/lib/sb-tree.sh"
kernel_out
ukb=$work/kernel-unsigned.tar.zst
run 0 "pack the unsigned kernel bundle" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$kpo" --output "$ukb" && sign a "$ukb"
sb_tree() { # SECUREBOOT(0/1) KEYRING MOKLIST-CERT MOKNEW-CERT
	fresh_root
	local efi=$root/sys/firmware/efi/efivars
	mkdir -p "$efi"
	printf '\x06\x00\x00\x00\x0'"$1" >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
	sb_keys "$root" "$2" "kernel-sign fleet" "$skid"
	sb_efilist "$root" MokListRT ${3:+"$3"}
	sb_efilist "$root" MokNew ${4:+"$4"}
}
boot_row() { # LABEL PASSED(true/false) ACTUAL
	python3 - "$work/out" "$2" "$3" <<-'PY' && ok "$1" || fail "$1: the boot row"
		import json, sys
		rows = [r for r in json.load(open(sys.argv[1]))["preflight"]["checks"] if r["check"] == "boot"]
		assert len(rows) == 1 and rows[0]["passed"] == (sys.argv[2] == "true") and rows[0]["actual"] == sys.argv[3], rows
	PY
}
sb_tree 1 "" "" ""
refused "preflight: an unsigned kernel on a Secure Boot host" \
	"^scsitune: refused: boot linux-image-$KR: linux-image-$KR's image is unsigned: Secure Boot is on, so shim would refuse to boot it" \
	st -o json payload install "$ukb" --dry-run && boot_row "preflight: the unsigned image's row" false unsigned &&
	cp "$work/out" "$work/schema-install-boot-refused.json"
if [ -f "$kbk" ]; then
	refused "preflight: a kernel whose signer is not enrolled" \
		"^scsitune: refused: boot linux-image-$KR: .*signed by kernel-sign fleet, which is in neither shim's MOK list nor db" \
		st -o json payload install "$kbk" --dry-run && boot_row "preflight: the absent signer's row" false "signer not enrolled"
	grep -q "^scsitune: hint: enrol the certificate" "$work/err" && ok "preflight: the hint names enrolment" || fail "preflight: hint: $(cat "$work/err")"
	sb_tree 1 "" "" "$work/fleet.der"
	refused "preflight: a kernel whose signer's enrolment is pending" "signed by kernel-sign fleet, whose enrolment waits for the console" \
		st -o json payload install "$kbk" --dry-run && boot_row "preflight: the pending signer's row" false "signer pending"
	sb_tree 1 machine "$work/fleet.der" ""
	run 0 "preflight: the signer enrolled" st -o json payload install "$kbk" --dry-run &&
		boot_row "preflight: the enrolled signer's row" true "signer enrolled" && cp "$work/out" "$work/schema-install-boot.json"
fi
# (its unsigned modules are refused on such a host all the same: the row alone is looked at)
sb_tree 1 "" "" ""
run 1 "preflight: --no-kernel" st -o json payload install "$ukb" --dry-run --no-kernel &&
	python3 -c 'import json, sys; assert not [r for r in json.load(open(sys.argv[1]))["preflight"]["checks"] if r["check"] == "boot"]' "$work/out" &&
	ok "preflight: --no-kernel: no boot row"
sb_tree 0 "" "" ""
run 0 "preflight: Secure Boot off" st -o json payload install "$ukb" --dry-run &&
	python3 -c 'import json, sys; assert not [r for r in json.load(open(sys.argv[1]))["preflight"]["checks"] if r["check"] == "boot"]' "$work/out" &&
	ok "preflight: Secure Boot off: no boot row"
