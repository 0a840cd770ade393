# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/escape (sourced by test-payload.sh).
# --- 8d. symlinks out of the tree: nothing outside it changes ----------------------------
# Each planted symlink leads out of the tree as the host resolves it; the
# directory it names outside ($out, a copy of the tree's) is hashed before
# and after (snap: names, types, modes, link targets, contents; stamp: any
# write at all, even of the same bytes, as depmod's index would be), and a copy
# sits at the same path inside the tree too, so that scsitune's own
# resolution (inside the tree) finds a whole kernel there and only a program
# run on the host (depmod -b, before) would go out. lib/modules/R, boot, etc
# and the default state directory's var: refused (exit 1), one line naming
# the link and its target, the tree and the outside unchanged. A symlink
# inside lib/modules/R (absolute, and relative above the top): installed,
# but depmod, in its own root, neither reads nor writes through it. Then
# the same refusal from remove, and as another user.
section "8d. symlinks out of the tree"
out=$work/outside
# the first directory of $out's path, made inside the tree by plant (and removed again); not one of the tree's own
top=${out#/}
top=${top%%/*}
[ ! -e "$tree/$top" ] || fail "/$top is a directory of the tree: plant would put copies there (set TMPDIR elsewhere)"
# plant PATH TARGET INTREE: the tree's PATH copied to $out/PATH and moved to INTREE (inside the tree), PATH a
# symlink to TARGET.
plant() {
	mkdir -p "$(dirname "$out/$1")" "$(dirname "$root/$3")"
	cp -a "$root/$1" "$out/$1"
	mv "$root/$1" "$root/$3"
	ln -s "$2" "$root/$1"
}
# escaped LABEL CMD...: exit 1, one line on stderr naming the link and its target ($link, $target), nothing
# written in the tree or outside it.
# (apply: its warnings about the tree's missing sysfs files before it.)
escaped() {
	local label=$1 before outside
	shift
	before=$(stamp)
	outside=$(outside_now)
	run 1 "$label" "$@" && err_has "$label" "$link is a symlink to $target, which leads out of the --sysroot tree" &&
		{ [ "$1 $2" = "st apply" ] || one_line "$label"; } && ok "$label: refused, naming $link"
	[ "$(stamp)" = "$before" ] || fail "$label: the tree changed"
	[ "$(outside_now)" = "$outside" ] && ok "$label: nothing outside the tree changed" ||
		fail "$label: $out changed (written through $link)"
	[ ! -e "$state/payload" ] || fail "$label: $state/payload was written"
}
reset() { rm -rf "$out" "$state" && fresh_root && mkdir -p "$out"; }
outside_now() { snap "$out" && stamp "$out"; }

reset
link=/lib/modules/$R target=$out/lib/modules/$R
plant "lib/modules/$R" "$target" "${out#/}/lib/modules/$R"
escaped "lib/modules/R -> outside (absolute)" st payload install "$b" --state-dir "$state"
escaped "lib/modules/R -> outside, --dry-run" st payload install "$b" --dry-run
escaped "lib/modules/R -> outside, apply --payload" st apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state"
err_has "apply --payload" "refused: tree: " && [ "$(grep -vc '^scsitune: warning: ' "$work/err")" -eq 1 ] ||
	fail "apply --payload: more than the refusal: $(grep -v '^scsitune: warning: ' "$work/err")"

reset
link=/boot target=$out/boot
plant boot "$target" "${out#/}/boot"
escaped "boot -> outside (absolute)" st payload install "$b" --state-dir "$state"

reset
# relative, above the top: the host goes to $work/outside/etc, the tree's own resolution stays at its top
link=/etc target=../outside/etc
plant etc "$target" outside/etc
escaped "etc -> outside (relative, above the top)" st payload install "$b" --state-dir "$state"

reset
# the default state directory (no --state-dir): its lock, journal and kept initrd would go out
link=/var target=$out/var
plant var "$target" "${out#/}/var"
escaped "var -> outside: the default state directory" st payload install "$b"
err_has "state directory" "^scsitune: state directory $root/var/lib/scsitune: "

# Inside lib/modules/R: an absolute link and a relative one above the top, each to a directory outside holding
# a module. The tree's own view has nothing there; depmod in its own root has nothing there either (before, depmod
# -b read both on the host and indexed them).
reset
mkdir -p "$out/abs" "$out/rel"
cp "$root/lib/modules/$R/kernel/drivers/scsi/sg.ko" "$out/abs/zz_abs.ko"
cp "$root/lib/modules/$R/kernel/drivers/scsi/sg.ko" "$out/rel/zz_rel.ko"
ln -s "$out/abs" "$root/lib/modules/$R/kernel/zz-abs"
ln -s "../../../../../outside/rel" "$root/lib/modules/$R/kernel/zz-rel"
[ -f "$root/lib/modules/$R/kernel/zz-rel/zz_rel.ko" ] || fail "the relative link does not lead to $out/rel on the host"
before=$(snap)
outside=$(outside_now)
if run 0 "install, links out inside lib/modules/R" st payload install "$b" --state-dir "$state"; then
	grep -q "^updates/scsitune/scsi_mod.ko:" "$root/lib/modules/$R/modules.dep" || fail "install: depmod did not index ours"
	! grep -q 'zz_' "$root/lib/modules/$R/modules.dep" && ok "depmod read nothing through the links out of the tree" ||
		fail "depmod indexed modules outside the tree: $(grep zz_ "$root/lib/modules/$R/modules.dep" | head -2)"
fi
[ "$(outside_now)" = "$outside" ] && ok "install: nothing outside the tree changed" || fail "install: $out changed"
# remove, with lib/modules/R made a link out since: refused before anything changes
mv "$root/lib/modules/$R" "$work/moddir"
mkdir -p "$out/lib/modules" "$root${out}/lib/modules"
cp -a "$work/moddir" "$out/lib/modules/$R"
cp -a "$work/moddir" "$root$out/lib/modules/$R"
ln -s "$out/lib/modules/$R" "$root/lib/modules/$R"
link=/lib/modules/$R target=$out/lib/modules/$R
stamp_before=$(stamp)
outside=$(outside_now)
run 1 "remove, lib/modules/R -> outside" st payload remove --state-dir "$state" &&
	err_has "remove refused" "payload remove: $link is a symlink to $target, which leads out of the --sysroot tree.*: refused, nothing was changed" &&
	one_line "remove refused" && ok "remove refused, naming $link"
[ "$(stamp)" = "$stamp_before" ] || fail "remove refused: the tree changed"
[ "$(outside_now)" = "$outside" ] && ok "remove refused: nothing outside the tree changed" || fail "remove refused: $out changed"
[ -f "$state/payload/journal.json" ] || fail "remove refused: the journal is gone"
rm -rf "${root:?}/lib/modules/$R" "${root:?}/${top:?}" "$out/lib"
mv "$work/moddir" "$root/lib/modules/$R"
outside=$(outside_now)
run 0 "remove, links out inside lib/modules/R" st payload remove --state-dir "$state" &&
	{ [ "$(snap)" = "$before" ] && ok "remove: the tree as before" || fail "remove: the tree differs from before install"; }
[ "$(outside_now)" = "$outside" ] || fail "remove: $out changed"

# Another user: depmod's root made in a user namespace of its own where the kernel allows one, else refused in one
# line before anything changes.
reset
chmod 0711 "$work" # to be gone through (the keys in it stay unreadable)
chown -R 65534:65534 "$root" "$out"
mkdir -p "$state" && chown 65534:65534 "$state"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
before=$(snap)
if ! command -v setpriv >/dev/null; then
	fail "setpriv is not installed (util-linux)"
elif as_nobody unshare --user --map-current-user --mount true 2>/dev/null; then
	run 0 "install as another user (user namespaces)" as_nobody "$bin" --sysroot "$root" payload install "$b" --state-dir "$state" &&
		grep -q "^updates/scsitune/scsi_mod.ko:" "$root/lib/modules/$R/modules.dep" && ok "install as another user: depmod ran"
	run 0 "remove as another user" as_nobody "$bin" --sysroot "$root" payload remove --state-dir "$state" &&
		{ [ "$(snap)" = "$before" ] && ok "as another user: the tree as before" || fail "as another user: the tree differs"; }
else
	run 1 "install as another user (no user namespaces)" as_nobody "$bin" --sysroot "$root" payload install "$b" --state-dir "$state" &&
		err_has "no user namespaces" "refused: tree: depmod runs in a root of its own .*needs root or user namespaces: depmod's root: unshare" &&
		one_line "no user namespaces" && ok "install as another user: refused without user namespaces"
	[ "$(snap)" = "$before" ] || fail "install as another user: the tree changed"
fi
chown -R 0:0 "$root" "$out" "$state"
