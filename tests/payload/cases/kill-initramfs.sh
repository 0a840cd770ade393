# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kill-initramfs (sourced by test-payload.sh; abort_hooks: sysroot-lib.sh).
# --- 6. kill -9 anywhere ------------------------------------------------------------
section "6. kill -9 anywhere: inside update-initramfs"
if abort_hooks; then
	before=$(snap)
	# An install killed while update-initramfs ran (this tree has none: the journal
	# says so by hand, as vm/payload-reboot's real kill leaves it): the initrd not
	# yet replaced, update-initramfs's backup link of it and its half-written
	# INITRD.new next to it; an INITRD.new older than the install is not its own.
	ird=$(cd "$root/boot" && ls initrd.img-* | head -1)
	killed_in_initramfs() { # an install aborted, its journal as if killed inside update-initramfs
		local rc=0
		(SCSITUNE_TEST_PAYLOAD_ABORT=25 "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 134 ] || fail "kill for the initrd leftovers: exit $rc"
		"${PYTHON3:-python3}" - "$state/payload/journal.json" "$root/boot/$ird" <<-'PY'
			import hashlib, json, os, sys
			j = json.load(open(sys.argv[1]))
			for st in j["steps"]:
			    st["state"] = "done" if st["step"] != "initramfs" else "started"
			    if st["step"] == "initramfs":
			        st["old_sha256"] = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
			        st["mode"] = os.stat(sys.argv[2]).st_mode & 0o7777
			json.dump(j, open(sys.argv[1], "w"))
		PY
	}
	if [ -n "$ird" ]; then
		killed_in_initramfs
		ln "$root/boot/$ird" "$root/boot/$ird.dpkg-bak"
		: >"$root/boot/$ird.new"
		run 0 "remove after a kill during update-initramfs" st -o json payload remove --state-dir "$state"
		[ ! -e "$root/boot/$ird.dpkg-bak" ] && [ ! -e "$root/boot/$ird.new" ] &&
			ok "remove took update-initramfs's .dpkg-bak link and half-written .new" ||
			fail "remove left $(cd "$root/boot" && ls "$ird".* 2>/dev/null | tr '\n' ' ')"
		grep -q '(.dpkg-bak), its half-written image (.new)' "$work/out" || fail "remove's initramfs note does not name both"
		[ "$(snap)" = "$before" ] || fail "after the leftovers' remove the tree differs"
		# not ours: an INITRD.new from before the install, and a .dpkg-bak of other bytes
		killed_in_initramfs
		echo older-initrd >"$root/boot/$ird.dpkg-bak"
		echo old >"$root/boot/$ird.new" && touch -d '2000-01-01' "$root/boot/$ird.new"
		run 0 "remove with an old .new and another .dpkg-bak" st payload remove --state-dir "$state"
		[ "$(cat "$root/boot/$ird.dpkg-bak")" = older-initrd ] && [ "$(cat "$root/boot/$ird.new")" = old ] &&
			ok "an INITRD.new older than the install and a .dpkg-bak that is not the initrd's are left" ||
			fail "remove took a .new or .dpkg-bak that was not the killed update-initramfs's"
		rm -f "$root/boot/$ird.dpkg-bak" "$root/boot/$ird.new"
		[ "$(snap)" = "$before" ] || fail "after the leftovers' tests the tree differs"
		# killed after update-initramfs renamed its new image over the initrd, before it
		# removed its backup: the initrd is another now, the backup (a copy here, as
		# update-initramfs makes where links fail) holds the old one, the kept copy too
		killed_in_initramfs
		cp "$root/boot/$ird" "$state/payload/kept-initrd"
		cp "$root/boot/$ird" "$root/boot/$ird.dpkg-bak"
		echo "the payload's initrd" >"$root/boot/$ird"
		run 0 "remove after a kill between update-initramfs's rename and its cleanup" st -o json payload remove --state-dir "$state"
		grep -Eq '"outcome": ?"restored"' "$work/out" && [ ! -e "$root/boot/$ird.dpkg-bak" ] &&
			ok "remove put the kept initrd back and took update-initramfs's .dpkg-bak backup of it" ||
			fail "after a kill before update-initramfs's cleanup: $(grep -o '"note":"the initrd[^"]*"' "$work/out") $(cd "$root/boot" && ls "$ird".* 2>/dev/null | tr '\n' ' ')"
		[ "$(snap)" = "$before" ] || fail "after the restored initrd's remove the tree differs"
	else
		fail "the payload tree has no boot/initrd.img-*"
	fi
fi
