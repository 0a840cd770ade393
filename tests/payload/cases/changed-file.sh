# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/changed-file (sourced by test-payload.sh).
# A file changed since install: left alone (exit 1), then --force.
before=$(snap)
run 0 "install (changed file)" st payload install "$b" --state-dir "$state"
printf 'x' >>"$root/lib/modules/$R/updates/scsitune/target_core_mod.ko"
run 1 "remove, a file changed" st payload remove --state-dir "$state" && err_has "changed file" "changed since install.*--force"
[ -f "$root/lib/modules/$R/updates/scsitune/target_core_mod.ko" ] || fail "remove deleted a file changed since install"
[ -f "$state/payload/journal.json" ] || fail "the journal is gone after an incomplete remove"
run 0 "remove --force" st payload remove --force --state-dir "$state"
[ "$(snap)" = "$before" ] && ok "remove --force: tree identical" || fail "remove --force: the tree differs"
# That remove stopped half way, a file changed since install kept: install of the same
# bundle finishes it as remove would, and cannot: refused, naming the file and the way out.
run 0 "install (changed file, then install)" st payload install "$b" --state-dir "$state"
printf 'x' >>"$root/lib/modules/$R/updates/scsitune/target_core_mod.ko"
run 1 "remove, a file changed (then install)" st payload remove --state-dir "$state"
now=$(snap) # (the second try of remove runs depmod again: the same bytes, new times)
run 1 "install after a remove that left a changed file" st payload install "$b" --state-dir "$state" &&
	err_has "install after a remove that left a changed file" \
		"a 'payload remove' that stopped half way \(payload .* for $R, .*\) cannot be finished: .*half-done: file /lib/modules/$R/updates/scsitune/target_core_mod.ko \(changed-since\); 'scsitune payload remove --force' finishes it" &&
	one_line "install after a remove that left a changed file" && ok "install after a remove that left a changed file: refused, named"
[ "$(snap)" = "$now" ] || fail "install after a remove that left a changed file: the tree changed"
run 0 "remove --force (then install)" st payload remove --force --state-dir "$state"
[ "$(snap)" = "$before" ] || fail "remove --force after the refused install: the tree differs"
# A module file deleted by hand: not "already installed".
run 0 "install (file deleted)" st payload install "$b" --state-dir "$state"
rm "$root/lib/modules/$R/updates/scsitune/scsi_mod.ko"
run 1 "install again, a module file gone" st payload install "$b" --state-dir "$state" &&
	err_has "install again, a module file gone" "journaled as installed for $R .*but /lib/modules/$R/updates/scsitune/scsi_mod.ko is gone: 'scsitune payload remove', then install again" &&
	ok "install again with a module file gone: refused, named"
run 0 "remove (file deleted)" st payload remove --state-dir "$state"
[ "$(snap)" = "$before" ] && ok "remove after a module file was deleted: tree identical" || fail "remove after a module file was deleted: the tree differs"
