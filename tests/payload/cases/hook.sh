# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/hook (sourced by test-payload.sh).
# --- 7. the kernel postinst hook ------------------------------------------------------
section "7. the kernel postinst hook"
hook=$src/payload/postinst.d/scsitune-payload
if [ -x "$hook" ]; then
	st payload install "$b" --state-dir "$state" >/dev/null 2>&1 || fail "install for the hook test"
	mkdir -p "$root/lib/modules/6.1.0-999-amd64"
	rc=0
	SCSITUNE_SYSROOT=$root SCSITUNE=$bin "$hook" 6.1.0-999-amd64 "/boot/vmlinuz-6.1.0-999-amd64" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "hook: exit $rc (a kernel install must not fail because of it)"
	err_has "hook, new ABI" "WARNING: kernel 6\.1\.0-999-amd64 is installed without a scsitune payload \(payload for: $R\)" && ok "hook warns on a new ABI"
	SCSITUNE_SYSROOT=$root SCSITUNE=$bin "$hook" "$R" >"$work/out" 2>"$work/err" || fail "hook, same release: exit $?"
	[ ! -s "$work/err" ] && ok "hook quiet for the payload's own kernel" || fail "hook warned for the payload's kernel: $(cat "$work/err")"
	# scsitune failing (or gone): the drift check is left out, the kernel install still succeeds.
	SCSITUNE_SYSROOT=$root SCSITUNE=/bin/false "$hook" "$R" >"$work/out" 2>"$work/err" || fail "hook, scsitune failing: exit $?"
	[ ! -s "$work/out" ] && [ ! -s "$work/err" ] && ok "hook: scsitune failing, exit 0, silent" ||
		fail "hook, scsitune failing: output $(cat "$work/out" "$work/err")"
	sed -i "/^Package: linux-image-$R\$/,/^\$/ s/^Version: .*/Version: 6.1.999-1/" "$root/var/lib/dpkg/status"
	SCSITUNE_SYSROOT=$root SCSITUNE=$bin "$hook" "$R" >"$work/out" 2>"$work/err" || fail "hook, point release: exit $?"
	err_has "hook, point release" "WARNING.*$R.*6\.1\.999-1.*built against $V" && ok "hook warns on a point release"
	cp "$work/status" "$root/var/lib/dpkg/status"
	rmdir "$root/lib/modules/6.1.0-999-amd64"
	st payload remove --state-dir "$state" >/dev/null 2>&1 || fail "remove after the hook test"
else
	fail "$hook is missing"
fi
