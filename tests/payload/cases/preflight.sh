# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/preflight (sourced by test-payload.sh).
# --- 4. preflight refusals ---------------------------------------------------------
section "4. preflight refusals"
# Another release: the host has 6.1.0-999-amd64 only.
mv "$root/lib/modules/$R" "$root/lib/modules/6.1.0-999-amd64"
echo 6.1.0-999-amd64 >"$root/proc/sys/kernel/osrelease"
refused "wrong release" "refused: release: kernel $R is not installed on this host .*running 6\.1\.0-999-amd64" \
	st payload install "$b" --state-dir "$state"
mv "$root/lib/modules/6.1.0-999-amd64" "$root/lib/modules/$R"
echo "$R" >"$root/proc/sys/kernel/osrelease"
# Another Debian build of the same release (a point release).
cp "$root/var/lib/dpkg/status" "$work/status"
sed -i "/^Package: linux-image-$R\$/,/^\$/ s/^Version: .*/Version: 6.1.999-1/" "$root/var/lib/dpkg/status"
refused "wrong Debian version" "refused: debian: linux-image-$R 6\.1\.999-1 is installed, the bundle was built against $V: the same uname -r" \
	st payload install "$b" --state-dir "$state"
cp "$work/status" "$root/var/lib/dpkg/status"
# CRC mismatch: the layout change of payload/bad-input.
kabi_bundle
refused "CRC mismatch" "refused: kabi scsi_mod: [0-9]+ of [0-9]+ symbol CRCs differ \(first: [a-z0-9_]+\.ko imports [A-Za-z0-9_]+ with CRC 0x[0-9a-f]{8}, our scsi_mod exports 0x[0-9a-f]{8}\)" \
	st payload install "$kb" --state-dir "$state"
# Signature enforcement, lockdown, Secure Boot: unsigned modules refused, the way out named.
echo Y >"$root/sys/module/module/parameters/sig_enforce"
refused "sig_enforce" "module\.sig_enforce is on and scsi_mod\.ko, target_core_mod\.ko are unsigned.*Machine Owner Key.*scsitune payload enroll BUNDLE --password-file FILE" \
	st payload install "$b" --state-dir "$state"
echo N >"$root/sys/module/module/parameters/sig_enforce"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
refused "lockdown" "kernel lockdown is on and .* unsigned" st payload install "$b" --state-dir "$state"
echo '[none] integrity confidentiality' >"$root/sys/kernel/security/lockdown"
mkdir -p "$root/sys/firmware/efi/efivars"
printf '\x06\x00\x00\x00\x01' >"$root/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
refused "Secure Boot" "Secure Boot is on .* unsigned" st payload install "$b" --state-dir "$state"
printf '\x06\x00\x00\x00\x00' >"$root/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
run 0 "Secure Boot off" st payload install "$b" --dry-run --state-dir "$state" && ok "Secure Boot off passes"
rm -rf "$root/sys/firmware"
mkdir -p "$root/lib/modules/$R/updates/scsitune"
refused "unrecorded target" "refused: target: /lib/modules/$R/updates/scsitune is there and no payload journal records it" \
	st payload install "$b" --state-dir "$state"
rmdir "$root/lib/modules/$R/updates/scsitune" "$root/lib/modules/$R/updates"
[ "$(snap)" = "$fresh" ] || fail "the preflight checks left the tree changed"
