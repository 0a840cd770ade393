# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/apply (sourced by test-payload.sh).
# apply --payload: the payload first under apply's lock, its chain of custody in apply's document.
hostile_bundle symlink
before=$(snap)
if run 0 "apply --payload" st -o json apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state"; then
	[ "$(jget payload.verdict)" = drift ] && [ "$(jget payload.release)" = "$R" ] && ok "apply --payload: chain of custody in apply's JSON" ||
		fail "apply --payload: payload.verdict $(jget payload.verdict)"
	cp "$work/out" "$work/apply-payload.json"
fi
[ -f "$state/payload/journal.json" ] && [ -f "$root/lib/modules/$R/updates/scsitune/scsi_mod.ko" ] || fail "apply --payload did not install the payload"
run 0 "apply --payload again (already installed)" st apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state" &&
	out_has "apply --payload again" "already installed"
# A payload remove that stopped half way (a file changed since install, put back since):
# apply --payload finishes it first, says so, and installs again.
ko=$root/lib/modules/$R/updates/scsitune/target_core_mod.ko
cp "$ko" "$work/ko" && printf 'x' >>"$ko"
run 1 "payload remove, a file changed (apply)" st payload remove --state-dir "$state"
cp "$work/ko" "$ko"
run 0 "apply --payload after a remove that stopped half way" st apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state" &&
	said "A 'payload remove' that stopped half way \(payload .* for $R, .*\) was finished first: the tree is as before that install\." &&
	[ -f "$root/lib/modules/$R/updates/scsitune/scsi_mod.ko" ] && ok "apply --payload finished a remove that stopped half way, then installed" ||
	fail "apply --payload after a remove that stopped half way: $(head -c 600 "$work/out")"
run 0 "payload remove after apply --payload" st payload remove --state-dir "$state"
[ "$(snap)" = "$before" ] || fail "apply --payload + payload remove: the tree differs"
before=$(stamp)
if run 1 "apply --payload, a hostile bundle" st -o json apply --profile numa --profile-dir "$src/profiles" --payload "$work/hostile/symlink.tar.zst" --state-dir "$state"; then
	err_has "apply --payload hostile" "is a symbolic link: refused" && [ ! -s "$work/out" ] && ok "apply --payload: a hostile bundle refused before anything"
fi
[ "$(stamp)" = "$before" ] && [ ! -e "$state/journal.json" ] || fail "apply --payload with a hostile bundle changed something"
sed -i "/^Package: linux-image-$R\$/,/^\$/ s/^Version: .*/Version: 6.1.999-1/" "$root/var/lib/dpkg/status"
before=$(stamp)
if run 1 "apply --payload, refused in preflight" st -o json apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state"; then
	[ "$(jget command)" = install ] && [ "$(jget result)" = refused ] && ok "apply --payload: the refusal is payload install's document" ||
		fail "apply --payload refused: document $(head -c 200 "$work/out")"
	cp "$work/out" "$work/schema-install-apply-refused.json"
fi
[ "$(stamp)" = "$before" ] || fail "apply --payload refused: the tree changed"
[ ! -e "$state/journal.json" ] && [ ! -e "$state/payload" ] || fail "apply --payload refused: a journal was written"
cp "$work/status" "$root/var/lib/dpkg/status"
