# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# The helpers of test-payload.sh's cases (sourced by it): the checks (run,
# refused, err_has, ...), the tree's fingerprints (snap, stamp), the keys,
# the signed bundle and a fresh --sysroot tree each case starts from
# (setup, bundle), and what more than one case makes (round_trip,
# hostile_bundle, kabi_bundle, kernel_bundle, abort_hooks). Globals the
# driver sets: bin src pout tree kout R V; each case's own: work root state
# status pass.
fail() { echo "FAIL: $*"; status=1; }
ok() { pass=$((pass + 1)); [ -n "${VERBOSE:-}" ] && echo "ok: $*"; return 0; }
section() { echo "test-payload.sh: ${SECONDS}s: $*"; }
snap() { (cd "${1:-$root}" && find . -printf '%y %m %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
# stamp: every name, type, mode, size, mtime and ctime: any write at all (even
# of the same bytes, or a file created and removed again) changes it.
stamp() { (cd "${1:-$root}" && find . -printf '%y %m %s %T@ %C@ %p %l\n' | sort) | sha256sum; }
# run WANT LABEL CMD...: stdout in $work/out, stderr in $work/err; the exit status must be WANT.
run() {
	local want=$1 label=$2 rc=0
	shift 2
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$label: exit $rc, want $want"
		sed 's/^/    /' "$work/err" | tail -5
		sed 's/^/    /' "$work/out" | tail -15
		return 1
	fi
	return 0
}
err_has() { grep -qE -- "$2" "$work/err" || { fail "$1: stderr does not match /$2/: $(head -c 600 "$work/err")"; return 1; }; }
out_has() { grep -qE -- "$2" "$work/out" || { fail "$1: stdout does not match /$2/"; sed 's/^/    /' "$work/out" | head -40; return 1; }; }
# said PATTERN: stdout ($work/out) matches with its wrapped lines joined back (runs of spaces and newlines one space).
said() { tr -s '\n ' '  ' <"$work/out" | grep -qE -- "$1"; }
one_line() { [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$1: $(wc -l <"$work/err") lines on stderr, want one: $(cat "$work/err")"; }
st() { "$bin" --sysroot "$root" "$@"; }
fresh_root() {
	rm -rf "$root" "$state"
	cp -a "$tree" "$root"
	mkdir -p "$root/etc/scsitune/trusted-keys"
	install -m 0644 "$work/a.pub" "$root/etc/scsitune/trusted-keys/fleet-a.pub"
	install -m 0644 "$work/b.pub" "$root/etc/scsitune/trusted-keys/fleet-b.pub"
	chmod 0755 "$root/etc/scsitune" "$root/etc/scsitune/trusted-keys"
}
jget() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d[k]
print(d)' "$work/out" "$1"; }
# refused LABEL PATTERN CMD...: exit 1, one stderr line (at least) matching, tree unchanged, no journal.
refused() {
	local label=$1 pat=$2
	shift 2
	local before
	before=$(stamp)
	if run 1 "$label" "$@"; then
		err_has "$label" "$pat" && ok "$label"
	fi
	[ "$(stamp)" = "$before" ] || fail "$label: the tree changed (a name, mode, size or time)"
	[ ! -e "$state/payload" ] || fail "$label: $state/payload was written"
}
sign() { # sign KEY FILE [minisign options]
	local k=$1 f=$2
	shift 2
	minisign -S -s "$work/$k.key" -m "$f" -t "scsitune payload test $(basename "$f")" "$@" >/dev/null 2>&1 ||
		fail "minisign -S $f"
}

# setup: what every case starts from (the driver calls it): keys A, B and C;
# $b, payload/build's modules packed and signed by key A (the pack case
# checks the packing); a fresh tree trusting A and B ($fresh its snap);
# dpkg's status file kept in $work/status (a case that changes it puts it back).
setup() {
	local k
	for k in a b c; do
		minisign -G -W -p "$work/$k.pub" -s "$work/$k.key" >/dev/null 2>&1 || { echo "FAIL: minisign -G"; exit 1; }
	done
	b=$work/payload.tar.zst
	run 0 "setup: pack" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$pout" --output "$b" && sign a "$b"
	fresh_root
	fresh=$(snap)
	cp "$root/var/lib/dpkg/status" "$work/status"
}
# hostile_bundle NAME: $work/hostile/NAME.tar.zst made by hostile.py, signed by key A.
hostile_bundle() {
	python3 "$(dirname "$0")/hostile.py" "$b" "$work/hostile" "$1" >/dev/null && [ -f "$work/hostile/$1.tar.zst" ] ||
		fail "hostile.py $1"
	sign a "$work/hostile/$1.tar.zst"
}
# kabi_bundle: $kb, the KABI-breaking build packed and signed by key A.
kabi_bundle() {
	kb=$work/kabi.tar.zst
	run 0 "pack the KABI-breaking build" "$bin" payload pack "$kout" --output "$kb" && sign a "$kb"
}

# boot_payload, unboot, link_state, round_trip: the round-trip case's (the schema case runs it again).
# boot_payload: what the tree's kernel would show after booting with the
# payload: an initrd made of the tree's modules (now ours), /sys/module as
# the kernel shows our modules, iocounterbits 64. Kernel state, not install's:
# put back by unboot.
boot_payload() {
	rm -rf "$work/kstate" && mkdir -p "$work/kstate" && cp -a "$root/boot" "$root/sys" "$work/kstate/"
	local ird=$work/ird
	rm -rf "$ird" && mkdir -p "$ird/usr/lib/modules/$R"
	for m in scsi_mod sd_mod sg; do grep -E "(^|/)$m\.ko:" "$root/lib/modules/$R/modules.dep" | tr -d ':' | tr ' ' '\n'; done |
		sort -u | while read -r ko; do
			[ -n "$ko" ] || continue
			mkdir -p "$ird/usr/lib/modules/$R/$(dirname "$ko")" && cp "$root/lib/modules/$R/$ko" "$ird/usr/lib/modules/$R/$ko"
		done
	cp "$root/lib/modules/$R/modules.dep" "$ird/usr/lib/modules/$R/"
	(cd "$ird" && find . | sort | cpio -o -H newc --quiet | zstd -q) >"$root/boot/initrd.img-$R"
	for m in scsi_mod target_core_mod; do
		local ko=$root/lib/modules/$R/updates/scsitune/$m.ko d=$root/sys/module/$m
		modinfo -F version "$ko" >"$d/version"
		modinfo -F srcversion "$ko" >"$d/srcversion"
		echo OE >"$d/taint"
		objcopy -O binary --only-section=.note.gnu.build-id "$ko" "$d/notes/.note.gnu.build-id"
	done
	echo 64 >"$root/sys/bus/scsi/devices/0:0:0:0/iocounterbits"
}
unboot() {
	rm -rf "$root/boot" "$root/sys"
	cp -a "$work/kstate/boot" "$work/kstate/sys" "$root/"
	rm -rf "$work/kstate"
}
link_state() { # LINK MODULE: the state of that row in $work/out (verify -o json)
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(l["state"] for l in d["links"] if l["link"]==sys.argv[2] and (l["module"] or "")==sys.argv[3]))' "$work/out" "$1" "${2:-}"
}
round_trip() { # LABEL
	local label=$1 before
	before=$(snap)
	run 0 "$label: install" st -o json payload install "$b" --state-dir "$state" || return
	cp "$work/out" "$work/schema-install-$label.json"
	[ "$(jget result)" = installed ] || fail "$label: install result $(jget result)"
	[ "$(jget resolution.0.resolves_to)" = "updates/scsitune/scsi_mod.ko" ] || fail "$label: modprobe scsi_mod resolves to $(jget resolution.0.resolves_to)"
	[ "$(jget resolution.0.needs)" = reboot ] || fail "$label: scsi_mod (in use) needs $(jget resolution.0.needs), want reboot"
	[ "$(jget resolution.1.needs)" = reload ] || fail "$label: target_core_mod (not in use) needs $(jget resolution.1.needs), want reload"
	grep -qx "override scsi_mod $R updates/scsitune" "$root/etc/depmod.d/scsitune.conf" || fail "$label: no override line"
	! grep -q '^search' "$root/etc/depmod.d/scsitune.conf" || fail "$label: scsitune.conf has a search line"
	for m in scsi_mod target_core_mod; do
		cmp -s "$root/lib/modules/$R/updates/scsitune/$m.ko" "$pout/modules/$m.ko" || fail "$label: $m.ko is not payload/build's"
		grep -q "^updates/scsitune/$m.ko:" "$root/lib/modules/$R/modules.dep" || fail "$label: modules.dep does not name updates/scsitune/$m.ko"
	done
	[ "$(stat -c %a "$root/lib/modules/$R/updates/scsitune/scsi_mod.ko")" = 644 ] || fail "$label: module mode"
	run 2 "$label: verify before a boot" st -o json payload verify "$b"
	cp "$work/out" "$work/schema-verify-pending-$label.json"
	[ "$(link_state file scsi_mod)" = ok ] && [ "$(link_state modprobe scsi_mod)" = ok ] &&
		[ "$(link_state initrd scsi_mod)" = drift ] && [ "$(link_state loaded.srcversion scsi_mod)" = reboot-pending ] &&
		[ "$(link_state iocounterbits scsi_mod)" = reboot-pending ] && ok "$label: verify before a boot" ||
		fail "$label: verify before a boot: $(python3 -c 'import json,sys; print([(l["link"],l["module"],l["state"]) for l in json.load(open(sys.argv[1]))["links"]])' "$work/out")"
	boot_payload
	if run 0 "$label: verify after a boot" st -o json payload verify "$b"; then
		[ "$(jget verdict)" = loaded ] && ok "$label: verify 0 when ours is loaded" || fail "$label: verdict $(jget verdict)"
		cp "$work/out" "$work/schema-verify-loaded-$label.json"
	fi
	run 0 "$label: verify without the bundle" st payload verify && out_has "$label verify" "^Kernel $R, payload .*: loaded$"
	# Neither module in memory (rmmod'ed, or never loaded): installed, not "loaded"; exit 0 (nothing differs).
	mv "$root/sys/module/scsi_mod" "$work/sm-scsi_mod" && mv "$root/sys/module/target_core_mod" "$work/sm-target_core_mod"
	if run 0 "$label: verify, no module loaded" st -o json payload verify "$b"; then
		[ "$(jget verdict)" = installed ] && ok "$label: verify says installed when no module is loaded" ||
			fail "$label: no module loaded: verdict $(jget verdict), want installed"
		cp "$work/out" "$work/schema-verify-installed-$label.json"
	fi
	run 0 "$label: verify text, no module loaded" st payload verify && {
		said "^Kernel $R, payload [^ ]*: installed \(no module of it is loaded: the next modprobe loads ours\) " ||
			fail "$label: verify text, no module loaded: $(head -3 "$work/out")"
	}
	mv "$work/sm-scsi_mod" "$root/sys/module/scsi_mod" && mv "$work/sm-target_core_mod" "$root/sys/module/target_core_mod"
	# A point release of the kernel package with the same uname -r: drift.
	sed -i "/^Package: linux-image-$R\$/,/^\$/ s/^Version: .*/Version: 6.1.999-1/" "$root/var/lib/dpkg/status"
	if run 2 "$label: verify after a point release" st -o json payload verify; then
		[ "$(link_state debian)" = drift ] && [ "$(jget verdict)" = drift ] && grep -q 'a Debian point release with the same uname -r' "$work/out" &&
			ok "$label: point release is drift" || fail "$label: point release: debian $(link_state debian), verdict $(jget verdict)"
		cp "$work/out" "$work/schema-verify-drift-$label.json"
	fi
	cp "$work/status" "$root/var/lib/dpkg/status"
	# A module iocounterbits says 32 under our module: drift, named.
	echo 32 >"$root/sys/bus/scsi/devices/0:0:0:0/iocounterbits"
	run 2 "$label: verify, iocounterbits 32" st payload verify && out_has "$label iocounterbits" "DRIFT +iocounterbits +expected 64, actual 0 of 1 devices say 64"
	unboot
	run 0 "$label: install again" st payload install "$b" --state-dir "$state" && out_has "$label again" "^Already installed"
	SOURCE_DATE_EPOCH=1700000001 "$bin" payload pack "$pout" --output "$work/newer.tar.zst" >/dev/null && sign a "$work/newer.tar.zst"
	run 1 "$label: another bundle" st payload install "$work/newer.tar.zst" --state-dir "$state" &&
		err_has "$label: another bundle" "payload .* is installed for $R: 'scsitune payload remove' first"
	run 0 "$label: remove" st -o json payload remove --state-dir "$state" && cp "$work/out" "$work/schema-remove-$label.json"
	[ "$(jget complete)" = True ] || [ "$(jget complete)" = true ] || fail "$label: remove not complete"
	[ "$(snap)" = "$before" ] && ok "$label: tree identical after remove" || fail "$label: the tree differs after install + remove"
	[ ! -e "$state/payload" ] || fail "$label: $state/payload left after remove"
	# Nothing to undo is success, as for revert: exit 0, one line (a document with -o json).
	run 0 "$label: remove again" st payload remove --state-dir "$state" &&
		grep -q "^No payload journal in $state/payload: nothing to remove" "$work/out" ||
		fail "$label: remove again: $(cat "$work/out")"
	run 0 "$label: remove again, JSON" st -o json payload remove --state-dir "$state" &&
		cp "$work/out" "$work/schema-remove-none-$label.json"
	[ "$(jget nothing_installed)" = True ] || fail "$label: remove again: nothing_installed $(jget nothing_installed)"
	run 2 "$label: verify, nothing installed" st -o json payload verify && [ "$(jget verdict)" = not-installed ] ||
		fail "$label: verify with nothing installed"
	cp "$work/out" "$work/schema-verify-none-$label.json"
	run 2 "$label: verify text, nothing installed" st payload verify &&
		out_has "$label: verify, nothing installed: the next step" "^To install one: scsitune payload install BUNDLE \(scsitune-payload\(8\)\)$"
}

# abort_hooks: SCSITUNE_TEST_PAYLOAD_ABORT is honoured (a build with
# -DSCSITUNE_TEST_HOOKS=ON; the kill cases need it): an install aborted at
# its first point, then removed.
abort_hooks() {
	if "$bin" --sysroot "$root" payload install "$b" --dry-run --state-dir "$state" >/dev/null 2>&1 &&
		(SCSITUNE_TEST_PAYLOAD_ABORT=1 "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"; exit $?) >/dev/null 2>&1; then
		fail "kill -9: SCSITUNE_TEST_PAYLOAD_ABORT is not honoured (configure with -DSCSITUNE_TEST_HOOKS=ON)"
		st payload remove --state-dir "$state" >/dev/null 2>&1
		return 1
	fi
	st payload remove --state-dir "$state" >/dev/null 2>&1
	return 0
}

# kernel_bundle: $kbk, payload/build's output with a kernel package ($kpo,
# $kdeb: a small real .deb for release $KR, build-id $KBID in the manifest)
# packed and signed by key A. kernel_out [IMAGE [MODULE [TRUSTS.der]]]: only
# $kpo, as payload/build --kernel leaves it (IMAGE: boot/vmlinuz-$KR's
# content, default a line of text; MODULE: a .ko put in lib/modules/$KR;
# TRUSTS.der: the certificate its "trusts" names, as --sign-cert records it).
kernel_out() {
	KR=6.1.0-98-scsitune
	kpo=$work/pout-kernel
	rm -rf "$kpo" "$work/kpkg"
	cp -a "$pout" "$kpo"
	chmod -R u+w "$kpo"
	mkdir -p "$work/kpkg/DEBIAN" "$work/kpkg/boot" "$kpo/kernel"
	printf 'Package: linux-image-%s\nVersion: 1.0+test\nArchitecture: amd64\nMaintainer: scsitune tests <root@localhost>\nDescription: scsitune test kernel package\n' \
		"$KR" >"$work/kpkg/DEBIAN/control"
	if [ -n "${1:-}" ]; then cp "$1" "$work/kpkg/boot/vmlinuz-$KR"; else echo "not a kernel" >"$work/kpkg/boot/vmlinuz-$KR"; fi
	if [ -n "${2:-}" ]; then
		mkdir -p "$work/kpkg/lib/modules/$KR/kernel"
		cp "$2" "$work/kpkg/lib/modules/$KR/kernel/test.ko"
	fi
	kdeb=kernel/linux-image-${KR}_1.0+test_amd64.deb
	dpkg-deb --root-owner-group -Zxz -b "$work/kpkg" "$kpo/$kdeb" >/dev/null || fail "dpkg-deb -b of the test kernel package"
	KBID=0123456789abcdef0123456789abcdef01234567
	python3 - "$kpo/manifest.json" "$kdeb" "$kpo/$kdeb" "$KR" "$KBID" "${3:-}" <<-'PY' || fail "adding a kernel to the build manifest"
		import hashlib, json, subprocess, sys
		p, name, path, rel, bid, trusts = sys.argv[1:7]
		m = json.load(open(p))
		m["kernel"] = {"release": rel, "package": "linux-image-" + rel, "version": "1.0+test", "file": name,
		               "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(), "build_id": bid,
		               "patches": ["A", "C", "D", "E", "B"], "config": "tinyconfig + vm.config"}
		if trusts:
		    skid = subprocess.run(["openssl", "x509", "-inform", "DER", "-in", trusts, "-noout", "-ext",
		                           "subjectKeyIdentifier"], capture_output=True, text=True).stdout.split("\n")
		    m["kernel"]["trusts"] = {"certificate_sha256": hashlib.sha256(open(trusts, "rb").read()).hexdigest(),
		                             "subject": "test", "skid": skid[1].strip().replace(":", "").lower() if len(skid) > 1 and skid[1].strip() else None}
		json.dump(m, open(p, "w"), indent=1)
	PY
}
kernel_bundle() {
	kernel_out
	kbk=$work/payload-kernel.tar.zst
	run 0 "pack with a kernel" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$kpo" --output "$kbk" && sign a "$kbk"
}
