# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kill-depmod (sourced by test-payload.sh; abort_hooks: sysroot-lib.sh).
# --- 6. kill -9 anywhere: depmod and its process group ---------------------------------------
# kmod's depmod writes each index file as NAME.PID.USEC.SEC next to it and
# renames it into place. Here the real depmod runs (in its own root, as
# always under --sysroot) under the host's strace, which kills it (SIGKILL) as
# it is about to rename its Nth file; scsitune then kills itself
# (SCSITUNE_TEST_DEPMOD_KILL_AT=N, a test hook), as a kill of the whole
# process group by a fleet engineer's ^C or a systemd stop would: the
# temporary file stays. Install killed so (the 1st and
# the 4th file, modules.alias.bin), install again (refused: the tree untouched),
# remove: the temporary file gone and named, the tree as before. Then remove
# killed so inside its own depmod, install (finishes that remove, installs: a
# clean install's tree), remove: as before, no temporary file.
section "6. kill -9 anywhere: inside depmod, with the process group"
leftovers() { find "$root/lib/modules/$R" -maxdepth 1 -regextype posix-extended -regex '.*/modules\.[a-z.]+\.[0-9]+\.[0-9]+\.[0-9]+' -printf '%f\n'; }
if ! command -v strace >/dev/null || ! command -v setsid >/dev/null; then
	fail "kill-depmod needs strace and setsid (scripts/install-deps --test)"
elif abort_hooks; then
	before=$(snap)
	killed_in_depmod() { # N COMMAND...: scsitune COMMAND in a process group of its own, its depmod killed at the Nth rename
		local n=$1 rc=0
		shift
		(SCSITUNE_TEST_DEPMOD_KILL_AT=$n setsid --wait "$bin" --sysroot "$root" "$@" --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 137 ] || { fail "$* killed inside depmod (rename $n): exit $rc, want 137 (SIGKILL)"; return 1; }
		[ -n "$(leftovers)" ] || { fail "$* killed inside depmod (rename $n): no temporary file of depmod's left"; return 1; }
		return 0
	}
	for n in 1 4; do
		killed_in_depmod "$n" payload install "$b" || break
		left=$(leftovers)
		now=$(stamp)
		run 1 "install after one killed inside depmod ($n)" st payload install "$b" --state-dir "$state" &&
			err_has "install after one killed inside depmod" "was interrupted .*'scsitune payload remove' undoes it first"
		[ "$(stamp)" = "$now" ] || fail "install after one killed inside depmod ($n): the tree changed"
		run 0 "remove after an install killed inside depmod ($n)" st payload remove --state-dir "$state" || break
		said "removed what a killed depmod left in /lib/modules/$R \(its temporary files\): $left" ||
			{ fail "remove after an install killed inside depmod ($n) does not name $left"; break; }
		[ -z "$(leftovers)" ] || fail "remove after an install killed inside depmod ($n) left $(leftovers)"
		[ "$(snap)" = "$before" ] && ok "install killed inside depmod ($n), then remove: the tree as before, $left removed" ||
			fail "install killed inside depmod ($n), then remove: the tree differs"
	done
	run 0 "install for a remove killed inside depmod" st payload install "$b" --state-dir "$state"
	installed=$(snap)
	if killed_in_depmod 4 payload remove; then
		run 0 "install after a remove killed inside depmod" st payload install "$b" --state-dir "$state" &&
			{ said "A 'payload remove' that stopped half way .* was finished first" ||
				fail "install after a remove killed inside depmod does not say it finished that remove first"; }
		[ -z "$(leftovers)" ] || fail "install after a remove killed inside depmod left $(leftovers)"
		[ "$(snap)" = "$installed" ] && ok "remove killed inside depmod, then install: a clean install's tree" ||
			fail "remove killed inside depmod, then install: the tree is not a clean install's"
	fi
	run 0 "remove after the depmod kills" st payload remove --state-dir "$state"
	[ "$(snap)" = "$before" ] && [ -z "$(leftovers)" ] && ok "after the depmod kills: the tree as before" ||
		fail "after the depmod kills the tree differs"
	# Not remove's to take: a temporary file of a depmod killed before the install began (left,
	# named), and a name that is not depmod's (left). The install begins in a later second than
	# they were made (ctime against the journal's start, in seconds): polled, not slept.
	old_tmp=modules.alias.bin.4242.1.1700000000
	touch "$root/lib/modules/$R/$old_tmp" "$root/lib/modules/$R/modules.alias.bin.keep"
	made=$(date +%s)
	while [ "$(date +%s)" -le "$made" ]; do sleep 0.1; done
	before=$(snap)
	run 0 "install with an older depmod leftover" st payload install "$b" --state-dir "$state"
	run 0 "remove with an older depmod leftover" st payload remove --state-dir "$state" &&
		said "left in /lib/modules/$R, as before install: a temporary file of a depmod killed before install began: $old_tmp" &&
		[ -e "$root/lib/modules/$R/$old_tmp" ] && [ -e "$root/lib/modules/$R/modules.alias.bin.keep" ] && [ "$(snap)" = "$before" ] &&
		ok "remove leaves an older depmod leftover (named) and a name not depmod's" ||
		fail "remove with an older depmod leftover: $(ls "$root/lib/modules/$R" | grep '^modules\.alias\.bin\.' | tr '\n' ' ')"
	rm -f "$root/lib/modules/$R/$old_tmp" "$root/lib/modules/$R/modules.alias.bin.keep"
fi
