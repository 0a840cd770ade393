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
