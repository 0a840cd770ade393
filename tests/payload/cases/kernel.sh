# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kernel (sourced by test-payload.sh; kernel_bundle: sysroot-lib.sh).
# --- 7b. a kernel package in the bundle (payload/build --kernel) ------------------------
# A small real .deb (dpkg-deb) stands in for the kernel package: this tree has no
# apt-get, so install plans the kernel steps and skips them, saying why
# (tests/vm scenario payload-kernel installs the real one with apt in a real
# Debian guest). verify's kernel rows: not installed; then the tree made to look
# as if the package were installed and its kernel running (dpkg's status file,
# proc/sys/kernel/osrelease, /sys/kernel/notes with a GNU build-id note): the
# payload's manifest is found with the other release's modules, the build-id
# compared (ok: exit 0; another build: drift, exit 2).
section "7b. a kernel package in the bundle"
if kernel_bundle; then
	zstd -q -d -c "$kbk" | tar -t >"$work/kbk.list"
	grep -qFx "$kdeb" "$work/kbk.list" && ok "pack: the kernel package is in the bundle" ||
		fail "pack: $kdeb is not in the bundle ($(tr '\n' ' ' <"$work/kbk.list"))"
	zstd -q -d -c "$kbk" | tar -xO manifest.json | python3 -c '
import json, sys
m = json.load(sys.stdin)
k = m["kernel"]
assert k["release"] == sys.argv[1] and k["build_id"] == sys.argv[2] and k["version"] == "1.0+test", k
assert [f for f in m["files"] if f["name"] == k["file"]], "the kernel file is not in files"
' "$KR" "$KBID" && ok "pack: the manifest's kernel entry" || fail "pack: the manifest's kernel entry"
fi
printf 'x' >>"$kpo/$kdeb"
run 1 "pack of a changed kernel package" "$bin" payload pack "$kpo" --output "$work/x.tar.zst" &&
	err_has "pack changed kernel" "$(basename "$kdeb" | sed 's/[.+]/\\&/g'): SHA-256 differs from .*manifest.json" && one_line "pack changed kernel"
run 64 "--set-default with --no-kernel" st payload install "$kbk" --set-default --no-kernel
run 64 "--set-default for verify" st payload verify --set-default
run 64 "--no-kernel for remove" st payload remove --no-kernel
fresh_root
before=$(snap)
if run 0 "install a kernel bundle (no apt-get in the tree)" st -o json payload install "$kbk" --state-dir "$state" --set-default; then
	python3 - "$work/out" <<-'PY' && ok "install: the kernel steps skipped, saying why" || fail "install: the kernel steps"
		import json, sys
		d = json.load(open(sys.argv[1]))
		ks = [s for s in d["steps"] if s["step"] in ("kernel", "default")]
		assert [s["step"] for s in ks] == ["kernel", "default", "default"], ks
		assert all(s["state"] == "skipped" and "no usr/bin/apt-get" in s["note"] for s in ks), ks
		assert [s["path"] for s in ks[1:]] == ["/vmlinuz", "/initrd.img"], ks
		assert d["result"] == "installed", d["result"]
	PY
	[ ! -e "$root/var/cache/scsitune" ] || fail "install: /var/cache/scsitune written though the kernel was skipped"
fi
# The kernel hook stays quiet for the payload's own kernel package (its manifest names it).
SCSITUNE_SYSROOT=$root SCSITUNE=$bin "$src/payload/postinst.d/scsitune-payload" "$KR" "/boot/vmlinuz-$KR" >"$work/out" 2>"$work/err" ||
	fail "hook, the payload's kernel: exit $?"
[ ! -s "$work/err" ] && ok "hook quiet for the payload's own kernel package" || fail "hook warned for the payload's kernel package: $(cat "$work/err")"
run 2 "verify: the kernel package not installed" st -o json payload verify --release "$R"
[ "$(link_state kernel.package)" = absent ] && ok "verify: kernel.package absent" || fail "verify: kernel.package is '$(link_state kernel.package)'"
# The payload's kernel installed and running (what dpkg, proc and sysfs would say).
cp "$root/var/lib/dpkg/status" "$work/status-k"
cp "$root/proc/sys/kernel/osrelease" "$work/osrelease-k"
printf '\nPackage: linux-image-%s\nStatus: install ok installed\nVersion: 1.0+test\n' "$KR" >>"$root/var/lib/dpkg/status"
run 2 "verify --release of the installed payload kernel, not running" st -o json payload verify --release "$KR" &&
	{ [ "$(link_state kernel.running)" = reboot-pending ] && [ "$(jget verdict)" = reboot-pending ] &&
		ok "verify --release KR: the payload's kernel installed, not running: reboot-pending" ||
		fail "verify --release KR: kernel.running $(link_state kernel.running), verdict $(jget verdict)"; }
echo "$KR" >"$root/proc/sys/kernel/osrelease"
mkdir -p "$root/sys/kernel"
notes() { python3 -c 'import struct, sys
bid = bytes.fromhex(sys.argv[1])
xen = struct.pack("<III", 4, 4, 1) + b"Xen\0" + b"\0\0\0\0"
gnu = struct.pack("<III", 4, len(bid), 3) + b"GNU\0" + bid
sys.stdout.buffer.write(xen + gnu)' "$1" >"$root/sys/kernel/notes"; }
notes "$KBID"
if run 0 "verify: the payload's kernel runs" st -o json payload verify; then
	[ "$(jget verdict)" = loaded ] && [ "$(link_state kernel.running)" = ok ] && [ "$(link_state modules)" = not-checked ] &&
		ok "verify: running the payload's kernel, its build-id the manifest's" ||
		fail "verify (payload kernel): verdict $(jget verdict), kernel.running $(link_state kernel.running)"
fi
run 0 "verify with the bundle, the payload's kernel runs" st -o json payload verify "$kbk" &&
	{ [ "$(link_state kernel.running)" = ok ] && ok "verify FILE: running the payload's kernel" || fail "verify FILE: kernel.running $(link_state kernel.running)"; }
notes fedcba9876543210fedcba9876543210fedcba98
run 2 "verify: another build of the payload's kernel runs" st -o json payload verify &&
	{ [ "$(link_state kernel.running)" = drift ] && ok "verify: another build-id is drift" || fail "verify: kernel.running $(link_state kernel.running)"; }
rm -f "$root/sys/kernel/notes"
cp "$work/status-k" "$root/var/lib/dpkg/status"
cp "$work/osrelease-k" "$root/proc/sys/kernel/osrelease"
if run 0 "remove the kernel bundle's install" st -o json payload remove --state-dir "$state"; then
	[ "$(snap)" = "$before" ] && ok "kernel bundle: install + remove gives back the tree" ||
		fail "kernel bundle: the tree differs after install + remove"
fi
