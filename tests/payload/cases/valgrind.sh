# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/valgrind (sourced by test-payload.sh; registered only in a
# build without SCSITUNE_SANITIZE: valgrind cannot run an ASan binary).
# --- 8c. valgrind: pack, install, verify, detect, remove and a refusal leak nothing --------
if ldd "$bin" 2>/dev/null | grep -q libasan; then
	fail "valgrind: $bin is an ASan build, which valgrind cannot run (this case is for a build without -DSCSITUNE_SANITIZE=ON)"
elif command -v valgrind >/dev/null; then
	hostile_bundle hardlink
	kabi_bundle
	kernel_bundle
	vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
	memcheck() { # LABEL WANT ARGS...
		local label=$1 want=$2 rc=0
		shift 2
		"${vg[@]}" "$bin" "$@" >/dev/null 2>"$work/vg.err" || rc=$?
		[ "$rc" -eq "$want" ] && ok "valgrind $label" ||
			{ fail "valgrind $label: exit $rc, want $want"; grep -v 'unhandled amd64-linux syscall\|README_MISSING\|You may be able\|Nevertheless\|valgrind.org' "$work/vg.err" | head -20; }
	}
	memcheck pack 0 payload pack "$pout" --output "$work/vg.tar.zst"
	memcheck "install" 0 --sysroot "$root" payload install "$b" --state-dir "$state"
	memcheck "verify FILE" 2 --sysroot "$root" -o json payload verify "$b"
	memcheck "detect" 0 --sysroot "$root" detect
	memcheck "remove" 0 --sysroot "$root" payload remove --state-dir "$state"
	memcheck "hostile" 1 --sysroot "$root" payload install "$work/hostile/hardlink.tar.zst" --state-dir "$state"
	memcheck "refused" 1 --sysroot "$root" payload install "$kb" --state-dir "$state"
	memcheck "install, kernel steps skipped" 0 --sysroot "$root" payload install "$kbk" --state-dir "$state" --set-default
	memcheck "verify FILE, kernel" 2 --sysroot "$root" -o json payload verify "$kbk"
	memcheck "remove, kernel steps skipped" 0 --sysroot "$root" payload remove --state-dir "$state"
else
	fail "valgrind is not installed (scripts/install-deps --test)"
fi
