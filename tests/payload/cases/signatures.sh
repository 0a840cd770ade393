# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/signatures (sourced by test-payload.sh).
# --- 2. signatures ---------------------------------------------------------------
section "2. signatures"
if run 0 "dry run, key A" st payload install "$b" --dry-run --state-dir "$state"; then
	out_has "dry run" 'Dry run: the preflight passed' && out_has "dry run key" "signed by key [0-9A-F]{16}" && out_has "dry run key file" "fleet-a\.pub" && ok "dry run"
fi
[ "$(snap)" = "$fresh" ] && [ ! -e "$state" ] || fail "the dry run wrote something"
cp "$b" "$work/unsigned.tar.zst"
refused "unsigned" "unsigned.tar.zst: no signature .*unsigned bundle is refused" st payload install "$work/unsigned.tar.zst" --state-dir "$state"
cp "$b" "$work/by-c.tar.zst" && sign c "$work/by-c.tar.zst"
refused "untrusted key, the trusted ones listed" "signed with key [0-9A-F]{16}, which is not a trusted key \(trusted: [0-9A-F]{16} \([^)]*fleet-a\.pub\), [0-9A-F]{16} \([^)]*fleet-b\.pub\)\): refused" \
	st payload install "$work/by-c.tar.zst" --state-dir "$state"
err_has "untrusted key: the next step" "^scsitune: hint: to trust a key: .* in $root/etc/scsitune/trusted-keys/, or --trusted-key FILE"
cp "$b" "$work/other.tar.zst" && printf 'x' >>"$work/other.tar.zst"
refused "signature of another file" "does not verify: the file is not the one that was signed" \
	st payload install "$work/other.tar.zst" --signature "$b.minisig" --state-dir "$state"
err_has "signature of another file: the next step" "^scsitune: hint: the bundle or its signature changed after signing: take both again"
cp "$b" "$work/tampered.tar.zst" && cp "$b.minisig" "$work/tampered.tar.zst.minisig"
python3 -c 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[len(d)//2]^=1; open(p,"wb").write(d)' "$work/tampered.tar.zst"
refused "tampered bundle" "does not verify" st payload install "$work/tampered.tar.zst" --state-dir "$state"
cp "$b" "$work/tc.tar.zst" && sed 's/^trusted comment: .*/trusted comment: release:6.1.0-99-amd64/' "$b.minisig" >"$work/tc.tar.zst.minisig"
refused "tampered trusted comment" "trusted comment's signature by key [0-9A-F]+ does not verify" \
	st payload install "$work/tc.tar.zst" --state-dir "$state"
# A trusted comment is the signer's text, not ours: a bidi control (U+202E reverses what follows on a
# terminal) shows as \u202e and a tab as a space in the text; -o json has the comment as it is.
tc="bidi $(printf '\xe2\x80\xae')fdp.exe$(printf '\t')end"
cp "$b" "$work/bidi.tar.zst" && minisign -S -s "$work/a.key" -m "$work/bidi.tar.zst" -t "$tc" >/dev/null 2>&1 ||
	fail "minisign -S -t with U+202E"
if run 0 "trusted comment with U+202E and a tab" st payload install "$work/bidi.tar.zst" --dry-run --state-dir "$state" &&
	out_has "trusted comment escaped" '^  trusted comment: bidi \\u202efdp\.exe end$'; then
	if grep -q "$(printf '\xe2\x80\xae')" "$work/out" || grep -qF '\x09' "$work/out"; then
		fail "trusted comment: U+202E or \\x09 in the text"
	else
		ok "trusted comment escaped"
	fi
fi
run 0 "trusted comment with U+202E, -o json" st -o json payload install "$work/bidi.tar.zst" --dry-run --state-dir "$state" &&
	[ "$(jget bundle.signature.trusted_comment)" = "$tc" ] && ok "trusted comment in JSON as signed" ||
	fail "trusted comment in JSON: $(jget bundle.signature.trusted_comment | od -c | head -3)"
cp "$b" "$work/garbage.tar.zst" && echo "not a signature" >"$work/garbage.tar.zst.minisig"
refused "garbage signature" "not a minisign signature" st payload install "$work/garbage.tar.zst" --state-dir "$state"
err_has "garbage signature: the next step" "^scsitune: hint: a signature is what minisign -S -s KEY -m FILE writes as FILE.minisig: sign the bundle again"
refused "no such bundle" "nothere.tar.zst: No such file or directory" st payload install "$work/nothere.tar.zst" --state-dir "$state"
err_has "no such bundle: the next step" "^scsitune: hint: a bundle is made by scsitune payload pack DIR --output FILE and signed with minisign"
chmod 0666 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
refused "key writable by others" "fleet-a.pub: refused as a trusted key: writable by its group and others \(mode 0666\): chmod go-w .*/fleet-a.pub$" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0664 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
refused "key writable by group" "fleet-a.pub: refused as a trusted key: writable by its group \(mode 0664\): chmod g-w" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0644 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
chmod 0777 "$root/etc/scsitune/trusted-keys"
refused "key directory writable" "trusted-keys: its keys are not trusted: writable by its group and others \(mode 0777\)" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0755 "$root/etc/scsitune/trusted-keys"
# Issue 29: trusted keys are root's. A key file owned by another user (mode 0644) is not trusted,
# nor one in a directory, or below one, that another user owns or whose group may write it, up
# to / (the tree's own prefix too): whoever can replace any of them can swap the keys.
chown nobody "$root/etc/scsitune/trusted-keys/fleet-a.pub"
refused "key owned by nobody" "fleet-a.pub: refused as a trusted key: owned by uid $(id -u nobody), not root: chown root .*/fleet-a.pub$" \
	st payload install "$b" --dry-run --state-dir "$state"
chown root "$root/etc/scsitune/trusted-keys/fleet-a.pub"
chown nobody "$root/etc/scsitune/trusted-keys"
refused "key directory owned by nobody" "trusted-keys: its keys are not trusted: owned by uid $(id -u nobody), not root" \
	st payload install "$b" --dry-run --state-dir "$state"
chown root "$root/etc/scsitune/trusted-keys"
chmod 0775 "$root/etc/scsitune"
refused "key directory's parent writable by its group" \
	"trusted-keys: its keys are not trusted: $root/etc/scsitune is writable by its group \(mode 0775\): chmod g-w $root/etc/scsitune$" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0755 "$root/etc/scsitune"
chmod 0775 "$root"
refused "the tree's root writable by its group" \
	"trusted-keys: its keys are not trusted: $root is writable by its group \(mode 0775\): chmod g-w $root$" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0755 "$root"
chown nobody "$root/etc"
refused "etc owned by nobody" "trusted-keys: its keys are not trusted: $root/etc is owned by uid $(id -u nobody), not root" \
	st payload verify "$b"
chown root "$root/etc"
ln -s fleet-b.pub "$root/etc/scsitune/trusted-keys/linked.pub"
refused "a key that is a symbolic link" "linked.pub: a symbolic link: refused as a trusted key" \
	st payload install "$b" --dry-run --state-dir "$state"
rm "$root/etc/scsitune/trusted-keys/linked.pub"
install -m 0644 "$work/c.pub" "$work/c-ok.pub"
run 0 "--trusted-key" st payload install "$work/by-c.tar.zst" --trusted-key "$work/c-ok.pub" --dry-run --state-dir "$state" &&
	ok "--trusted-key"
install -m 0646 "$work/c.pub" "$work/c-bad.pub"
refused "--trusted-key writable" "c-bad.pub: refused as a trusted key: writable by others \(mode 0646\)" \
	st payload install "$work/by-c.tar.zst" --trusted-key "$work/c-bad.pub" --dry-run --state-dir "$state"
install -m 0644 -o nobody "$work/c.pub" "$work/c-theirs.pub"
refused "--trusted-key owned by nobody" "c-theirs.pub: refused as a trusted key: owned by uid $(id -u nobody), not root" \
	st payload install "$work/by-c.tar.zst" --trusted-key "$work/c-theirs.pub" --dry-run --state-dir "$state"
mkdir -p "$work/gw" && chmod 0775 "$work/gw" && install -m 0644 "$work/c.pub" "$work/gw/c.pub"
refused "--trusted-key in a directory writable by its group" \
	"gw/c.pub: refused as a trusted key: $work/gw is writable by its group \(mode 0775\): chmod g-w $work/gw$" \
	st payload install "$work/by-c.tar.zst" --trusted-key "$work/gw/c.pub" --dry-run --state-dir "$state"
cp "$b" "$work/by-b.tar.zst" && sign b "$work/by-b.tar.zst"
run 0 "key B (rotation: A and B trusted)" st payload install "$work/by-b.tar.zst" --dry-run --state-dir "$state" &&
	out_has "key B" "fleet-b.pub" && ok "two keys"
cp "$b" "$work/legacy.tar.zst" && sign a "$work/legacy.tar.zst" -l
grep -q '^RWQ' "$work/legacy.tar.zst.minisig" || true
run 0 "legacy signature" st -o json payload install "$work/legacy.tar.zst" --dry-run --state-dir "$state" &&
	[ "$(jget bundle.signature.algorithm)" = Ed ] && ok "legacy Ed" || fail "legacy signature: algorithm not Ed"
cp "$work/out" "$work/schema-install-dry.json"
[ "$(snap)" = "$fresh" ] || fail "the signature checks changed the tree"
