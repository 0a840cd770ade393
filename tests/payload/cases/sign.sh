# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/sign (sourced by test-payload.sh): payload/sign's refusals,
# each one line naming the file, its exit status, and the directory it was
# to sign left as it was; an encrypted key with and without KBUILD_SIGN_PIN;
# payload/build --sign-key's checks before anything is downloaded.
section "sign"
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
if [ ! -x "$signfile" ]; then
	fail "no $signfile (Debian's linux-kbuild-6.1: scripts/install-deps --test)"
	return
fi
ps=$src/payload/sign
d=$work/to-sign
rm -rf "$d" && cp -r "$pout" "$d" && chmod -R u+w "$d"
newkey() { # NAME [openssl req options]: $work/NAME.key (mode 600) and $work/NAME.der
	local n=$1
	shift
	openssl req -new -x509 -nodes -days 1 -subj "/CN=sign test $n" -keyout "$work/$n.key" -outform DER \
		-out "$work/$n.der" "$@" >/dev/null 2>&1 || fail "openssl req: $n"
	chmod 600 "$work/$n.key"
}
newkey good -newkey rsa:2048
newkey other -newkey rsa:2048
newkey small -newkey rsa:1024
newkey ec -newkey ec -pkeyopt ec_paramgen_curve:prime256v1
# refused_sign LABEL STATUS PATTERN ARGS...: that status, one stderr line matching, $d unchanged.
refused_sign() {
	local label=$1 want=$2 pat=$3 before
	shift 3
	before=$(stamp "$d")
	if run "$want" "$label" timeout 60 "$ps" --sign-file "$signfile" "$@"; then
		err_has "$label" "$pat" && one_line "$label" && ok "$label"
	fi
	[ "$(stamp "$d")" = "$before" ] || fail "$label: $d changed"
	! ls -A "$work" | grep -q '^\.to-sign\.' || fail "$label: a temporary directory was left beside $d"
}
refused_sign "usage: no directory" 64 "^usage: payload/sign" --key "$work/good.key" --cert "$work/good.der"
refused_sign "usage: no key" 64 "^usage: payload/sign" --cert "$work/good.der" "$d"
cp "$work/good.key" "$work/open.key" && chmod 644 "$work/open.key"
refused_sign "a key others can read" 69 "^payload/sign: --key $work/open\.key: mode 644 lets group or others read it \(chmod 600" \
	--key "$work/open.key" --cert "$work/good.der" "$d"
mkfifo "$work/fifo.key"
refused_sign "a key that is a FIFO" 69 "^payload/sign: --key $work/fifo\.key: not a regular file" --key "$work/fifo.key" --cert "$work/good.der" "$d"
refused_sign "no such key" 69 "^payload/sign: --key $work/none\.key: no such file" --key "$work/none.key" --cert "$work/good.der" "$d"
head -c 1000 /dev/urandom >"$work/junk.der"
refused_sign "a certificate that is not one" 69 "^payload/sign: --cert $work/junk\.der: not an X\.509 certificate" \
	--key "$work/good.key" --cert "$work/junk.der" "$d"
refused_sign "another key's certificate" 69 "^payload/sign: --cert $work/other\.der: its public key is not --key $work/good\.key's" \
	--key "$work/good.key" --cert "$work/other.der" "$d"
refused_sign "an EC key" 69 "^payload/sign: --cert $work/ec\.der: not an RSA key \(id-ecPublicKey\)" --key "$work/ec.key" --cert "$work/ec.der" "$d"
refused_sign "RSA 1024" 69 "^payload/sign: --cert $work/small\.der: an RSA key of 1024 bits, under 2048" \
	--key "$work/small.key" --cert "$work/small.der" "$d"
refused_sign "not a payload/build output" 65 "^payload/sign: $work/tree-none: not a directory" \
	--key "$work/good.key" --cert "$work/good.der" "$work/tree-none"
openssl pkey -in "$work/good.key" -aes256 -passout pass:fleet -out "$work/enc.key" 2>/dev/null && chmod 600 "$work/enc.key" ||
	fail "openssl pkey -aes256"
refused_sign "an encrypted key without KBUILD_SIGN_PIN" 69 "^payload/sign: --key $work/enc\.key: not a private key openssl can read \(an encrypted key needs KBUILD_SIGN_PIN\)" \
	--key "$work/enc.key" --cert "$work/good.der" "$d"
if run 0 "an encrypted key with KBUILD_SIGN_PIN" env KBUILD_SIGN_PIN=fleet "$ps" --sign-file "$signfile" --key "$work/enc.key" --cert "$work/good.der" "$d"; then
	[ "$(modinfo -F signer "$d/modules/scsi_mod.ko")" = "sign test good" ] && ok "KBUILD_SIGN_PIN: signed" ||
		fail "KBUILD_SIGN_PIN: modinfo signer $(modinfo -F signer "$d/modules/scsi_mod.ko")"
fi
refused_sign "signed already" 65 "^payload/sign: $d/manifest\.json: already has a signer" --key "$work/good.key" --cert "$work/good.der" "$d"
# A module signed by hand, the manifest without a signer: refused too.
rm -rf "$d" && cp -r "$pout" "$d" && chmod -R u+w "$d" && "$signfile" sha256 "$work/good.key" "$work/good.der" "$d/modules/scsi_mod.ko"
refused_sign "a module signed already" 65 "^payload/sign: $d/modules/scsi_mod\.ko: already signed \(by 'sign test good'\)" \
	--key "$work/good.key" --cert "$work/good.der" "$d"
# payload/build --sign-key: the key and certificate checked before any download; usage.
pb=$src/payload/build
run 69 "payload/build --sign-key readable by others" timeout 60 "$pb" --sign-key "$work/open.key" --sign-cert "$work/good.der" --out "$work/pb-out" &&
	err_has "payload/build: the key" "^payload/sign: --key $work/open\.key: mode 644" && one_line "payload/build --sign-key" &&
	[ ! -e "$work/pb-out" ] && ok "payload/build --sign-key: refused before building"
run 64 "payload/build --sign-key alone" "$pb" --sign-key "$work/good.key" --out "$work/pb-out" &&
	err_has "payload/build --sign-key alone" "--sign-key needs --sign-cert" && ok "payload/build --sign-key alone"
run 64 "payload/build --sign-cert alone" "$pb" --sign-cert "$work/good.der" --out "$work/pb-out" &&
	err_has "payload/build --sign-cert alone" "--sign-cert without --sign-key builds a kernel that trusts it: it needs --kernel" &&
	ok "payload/build --sign-cert alone, without --kernel"
run 69 "payload/build --kernel --sign-cert junk" timeout 60 "$pb" --kernel --sign-cert "$work/junk.der" --out "$work/pb-out" &&
	err_has "payload/build --kernel --sign-cert junk" "^payload/sign: --cert $work/junk\.der: not an X\.509 certificate" &&
	[ ! -e "$work/pb-out" ] && ok "payload/build --kernel --sign-cert: the certificate checked before building"
run 64 "payload/sign --check without --cert" "$ps" --key "$work/good.key" --check &&
	err_has "payload/sign --check without --cert" "^usage: payload/sign" && ok "payload/sign --check needs --cert"
run 0 "payload/sign --cert --check" "$ps" --cert "$work/good.der" --check && ok "payload/sign --cert --check: a certificate alone"
# The name the kernel will give the key in /proc/keys: "O: CN", or CN alone when it begins with
# O, or when both are 7 bytes or longer and share their first 7 (x509_fabricate_name). payload/sign
# writes it, pack derives it from the certificate with libcrypto and refuses a manifest that says
# otherwise: both must agree (vm/secure-boot checks the kernel's own name for its key).
for pair in "Fleet Org|module signing|Fleet Org: module signing" "Fleet Org|Fleet Org module signing|Fleet Org module signing" \
	"Example Storage Fleet|Example module signing|Example module signing" "ExamplOrg|Exampl key|ExamplOrg: Exampl key"; do
	IFS='|' read -r o cn want <<<"$pair"
	openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/O=$o/CN=$cn" -keyout "$work/named.key" \
		-out "$work/named.pem" >/dev/null 2>&1 && chmod 600 "$work/named.key" || fail "openssl req: $o / $cn"
	rm -rf "$d" && cp -r "$pout" "$d" && chmod -R u+w "$d"
	if run 0 "sign, O=$o CN=$cn" "$ps" --sign-file "$signfile" --key "$work/named.key" --cert "$work/named.pem" "$d" &&
		run 0 "pack, O=$o CN=$cn" "$bin" -o json payload pack "$d" --output "$work/named.tar.zst"; then
		[ "$(jget signer.kernel_name)" = "$want" ] && [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["signer"]["kernel_name"])' "$d/manifest.json")" = "$want" ] &&
			ok "the key's name: $want" || fail "O=$o CN=$cn: pack says '$(jget signer.kernel_name)', want '$want'"
	fi
done
# A manifest whose signer says another name than its certificate: pack refuses.
python3 - "$d/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["signer"]["kernel_name"] = "someone else"
json.dump(m, open(sys.argv[1], "w"))
PY
run 1 "pack: a signer that is not its certificate" "$bin" payload pack "$d" --output "$work/lie.tar.zst" &&
	err_has "pack: a lying signer" "signer\.der: its kernel_name differs from what the manifest's signer says" &&
	[ ! -e "$work/lie.tar.zst" ] && ok "pack: a signer the certificate does not bear out is refused"
