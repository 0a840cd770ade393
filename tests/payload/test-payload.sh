#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# payload tier: `scsitune payload` on a --sysroot tree of a Debian 12 host
# made from Debian's linux-image package (mktree.sh), with the modules
# payload/build made (PAYLOAD_OUT) and a build of them that breaks the KABI
# (KABI_OUT, build-kabi-break.sh); keys and signatures made with Debian's
# minisign. Every refusal must leave the tree untouched (no name, type,
# mode, size, mtime or ctime changed) and write no journal; every round trip
# must give back the tree byte-identical (names, types, modes, link targets,
# contents hashed).
#   1. pack: reproducible, manifest.json first, the exports equal Debian's
#      Module.symvers, a changed build directory refused
#   2. signatures: unsigned, untrusted key, another file's signature,
#      tampered bundle, tampered trusted comment, garbage signature, key
#      file or directory writable by group/others; --trusted-key; two keys
#      trusted at once; legacy (Ed) signatures
#   3. hostile bundles (hostile.py), each signed by a trusted key
#   4. preflight refusals: wrong release, wrong Debian version, CRC
#      mismatch, sig_enforce / lockdown / Secure Boot with unsigned modules,
#      a target directory nobody recorded
#   5. round trips (install, verify, remove -> the same tree) with depmod -b:
#      without and with an admin's `search` line in depmod.d; verify
#      before and after a simulated boot of the payload (exit 2, then 0), a
#      Debian point release (drift), already installed, another bundle,
#      interrupted install, a file changed since install (kept; --force)
#      apply --payload: installed first, its state in apply's document; a
#      hostile or refused bundle stops apply before anything is written
#   6. kill -9 (abort()) at every journaled point of install and of remove,
#      then remove: the tree as before (needs -DSCSITUNE_TEST_HOOKS=ON)
#   7. the kernel postinst hook
#   7b. a kernel package in the bundle: pack, the kernel steps planned and
#      skipped without apt-get, verify's kernel rows (running the payload's
#      kernel: its build-id against the manifest)
#   8. isolation: install, verify, detect and remove under strace read
#      nothing of this machine (libkmod chrooted into the tree);
#      -o json of every subcommand against schema/payload.schema.json
# Usage: test-payload.sh SCSITUNE SRCDIR PAYLOAD_OUT TREE KABI_OUT
set -uo pipefail
export LC_ALL=C
bin=$1 src=$2 pout=$3 tree=$4 kout=$5
for p in minisign zstd depmod python3 cpio objcopy; do
	command -v "$p" >/dev/null || { echo "FAIL: $p not found (scripts/install-deps --test)"; exit 1; }
done
for d in "$pout" "$tree" "$kout"; do
	[ -e "$d" ] || { echo "FAIL: $d is missing (its CTest fixture did not run)"; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-payload.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
status=0
pass=0
fail() { echo "FAIL: $*"; status=1; }
ok() { pass=$((pass + 1)); [ -n "${VERBOSE:-}" ] && echo "ok: $*"; return 0; }
section() { echo "test-payload.sh: ${SECONDS}s: $*"; }
R=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["release"])' "$pout/manifest.json")
V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["debian_version"])' "$pout/manifest.json")
root=$work/root
state=$work/state
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

# --- keys --------------------------------------------------------------------------
for k in a b c; do
	minisign -G -W -p "$work/$k.pub" -s "$work/$k.key" >/dev/null 2>&1 || { echo "FAIL: minisign -G"; exit 1; }
done
sign() { # sign KEY FILE [minisign options]
	local k=$1 f=$2
	shift 2
	minisign -S -s "$work/$k.key" -m "$f" -t "scsitune payload test $(basename "$f")" "$@" >/dev/null 2>&1 ||
		fail "minisign -S $f"
}

# --- 1. pack ---------------------------------------------------------------------
section "1. pack"
b=$work/payload.tar.zst
if run 0 "pack" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$pout" --output "$b"; then
	out_has pack "^Wrote $b" && ok pack
fi
run 0 "pack again" env SOURCE_DATE_EPOCH=1700000000 "$bin" -o json payload pack "$pout" --output "$work/again.tar.zst" &&
	cp "$work/out" "$work/schema-pack.json"
cmp -s "$b" "$work/again.tar.zst" && ok "pack is reproducible" || fail "pack twice with one SOURCE_DATE_EPOCH: different bundles"
first=$(zstd -q -d -c "$b" | tar -t | head -1)
[ "$first" = manifest.json ] && ok "manifest first" || fail "the bundle's first entry is '$first', not manifest.json"
zstd -q -d -c "$b" | tar -xO manifest.json >"$work/manifest.json"
# The CRCs libelf read from the modules equal Debian's Module.symvers (linux-headers .deb in
# payload/build's download cache: $SCSITUNE_PAYLOAD_DEBS, tests/CMakeLists.txt).
debs=${SCSITUNE_PAYLOAD_DEBS:-$pout/../payload-cache}
hdeb=$(ls "$debs"/linux-headers-"$R"_"$V"_*.deb 2>/dev/null | head -1)
if [ -z "$hdeb" ]; then # (payload/build's output reused from the tests' cache, the downloads not)
	mkdir -p "$debs" && (cd "$debs" && apt-get download -q "linux-headers-$R=$V" >/dev/null 2>&1) &&
		hdeb=$(ls "$debs"/linux-headers-"$R"_"$V"_*.deb 2>/dev/null | head -1)
fi
if [ -n "$hdeb" ]; then
	dpkg-deb --fsys-tarfile "$hdeb" | tar -xO --wildcards '*/Module.symvers' >"$work/Module.symvers"
	python3 - "$work/manifest.json" "$work/Module.symvers" <<-'PY' && ok "exports equal Module.symvers" || fail "the manifest's exported CRCs differ from Debian's Module.symvers"
		import json, sys
		m = json.load(open(sys.argv[1]))
		sv = {}
		for line in open(sys.argv[2]):
		    crc, sym, mod = line.split("\t")[:3]
		    sv.setdefault(mod.rsplit("/", 1)[-1], {})[sym] = int(crc, 16)
		for mod in m["modules"]:
		    got = {k: int(v, 16) for k, v in mod["exports"].items()}
		    assert got == sv[mod["name"]], mod["name"]
		    assert len(got) > 50
		print("exports:", ", ".join("%s %d" % (x["name"], len(x["exports"])) for x in m["modules"]))
	PY
else
	fail "no linux-headers-$R .deb in $debs to compare the CRCs with"
fi
cp -a "$pout" "$work/pout-changed"
printf 'x' >>"$work/pout-changed/modules/scsi_mod.ko"
run 1 "pack of a changed build" "$bin" payload pack "$work/pout-changed" --output "$work/x.tar.zst" &&
	err_has "pack of a changed build" 'scsi_mod.ko: SHA-256 differs from .*manifest.json' && one_line "pack changed"
[ ! -e "$work/x.tar.zst" ] || fail "pack of a changed build wrote its output"
run 1 "pack of no directory" "$bin" payload pack "$work/none" --output "$work/x.tar.zst" &&
	err_has "pack none" 'none/manifest.json: no such file' && one_line "pack none"
run 64 "pack without --output" "$bin" payload pack "$pout"
run 64 "payload without subcommand" "$bin" payload
run 64 "payload frob" "$bin" payload frob
run 64 "--force for install" "$bin" payload install "$b" --force
sign a "$b"
fresh_root
fresh=$(snap)

# --- 2. signatures ---------------------------------------------------------------
section "2. signatures"
if run 0 "dry run, key A" st payload install "$b" --dry-run --state-dir "$state"; then
	out_has "dry run" 'Dry run: the preflight passed' && out_has "dry run key" "signed by key [0-9A-F]{16}" && out_has "dry run key file" "fleet-a\.pub" && ok "dry run"
fi
[ "$(snap)" = "$fresh" ] && [ ! -e "$state" ] || fail "the dry run wrote something"
cp "$b" "$work/unsigned.tar.zst"
refused "unsigned" "unsigned.tar.zst: no signature .*unsigned bundle is refused" st payload install "$work/unsigned.tar.zst" --state-dir "$state"
cp "$b" "$work/by-c.tar.zst" && sign c "$work/by-c.tar.zst"
refused "untrusted key" "signed with key [0-9A-F]{16}, which is not a trusted key: refused" \
	st payload install "$work/by-c.tar.zst" --state-dir "$state"
cp "$b" "$work/other.tar.zst" && printf 'x' >>"$work/other.tar.zst"
refused "signature of another file" "does not verify: the file is not the one that was signed" \
	st payload install "$work/other.tar.zst" --signature "$b.minisig" --state-dir "$state"
cp "$b" "$work/tampered.tar.zst" && cp "$b.minisig" "$work/tampered.tar.zst.minisig"
python3 -c 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[len(d)//2]^=1; open(p,"wb").write(d)' "$work/tampered.tar.zst"
refused "tampered bundle" "does not verify" st payload install "$work/tampered.tar.zst" --state-dir "$state"
cp "$b" "$work/tc.tar.zst" && sed 's/^trusted comment: .*/trusted comment: release:6.1.0-99-amd64/' "$b.minisig" >"$work/tc.tar.zst.minisig"
refused "tampered trusted comment" "trusted comment's signature by key [0-9A-F]+ does not verify" \
	st payload install "$work/tc.tar.zst" --state-dir "$state"
cp "$b" "$work/garbage.tar.zst" && echo "not a signature" >"$work/garbage.tar.zst.minisig"
refused "garbage signature" "not a minisign signature" st payload install "$work/garbage.tar.zst" --state-dir "$state"
chmod 0666 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
refused "key writable by others" "fleet-a.pub: writable by others \(mode 0666\): refused as a trusted key" \
	st payload install "$b" --dry-run --state-dir "$state"
chmod 0664 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
refused "key writable by group" "fleet-a.pub: writable by its group" st payload install "$b" --dry-run --state-dir "$state"
chmod 0644 "$root/etc/scsitune/trusted-keys/fleet-a.pub"
chmod 0777 "$root/etc/scsitune/trusted-keys"
refused "key directory writable" "trusted-keys: directory writable by others" st payload install "$b" --dry-run --state-dir "$state"
chmod 0755 "$root/etc/scsitune/trusted-keys"
install -m 0644 "$work/c.pub" "$work/c-ok.pub"
run 0 "--trusted-key" st payload install "$work/by-c.tar.zst" --trusted-key "$work/c-ok.pub" --dry-run --state-dir "$state" &&
	ok "--trusted-key"
install -m 0646 "$work/c.pub" "$work/c-bad.pub"
refused "--trusted-key writable" "c-bad.pub: writable by others" \
	st payload install "$work/by-c.tar.zst" --trusted-key "$work/c-bad.pub" --dry-run --state-dir "$state"
cp "$b" "$work/by-b.tar.zst" && sign b "$work/by-b.tar.zst"
run 0 "key B (rotation: A and B trusted)" st payload install "$work/by-b.tar.zst" --dry-run --state-dir "$state" &&
	out_has "key B" "fleet-b.pub" && ok "two keys"
cp "$b" "$work/legacy.tar.zst" && sign a "$work/legacy.tar.zst" -l
grep -q '^RWQ' "$work/legacy.tar.zst.minisig" || true
run 0 "legacy signature" st -o json payload install "$work/legacy.tar.zst" --dry-run --state-dir "$state" &&
	[ "$(jget bundle.signature.algorithm)" = Ed ] && ok "legacy Ed" || fail "legacy signature: algorithm not Ed"
cp "$work/out" "$work/schema-install-dry.json"
[ "$(snap)" = "$fresh" ] || fail "the signature checks changed the tree"

# --- 3. hostile bundles -----------------------------------------------------------
section "3. hostile bundles"
python3 "$(dirname "$0")/hostile.py" "$b" "$work/hostile" >"$work/hostile.list" || fail "hostile.py"
declare -A want=(
	[traversal]="entry '\.\./\.\./etc/cron\.d/evil' has a '\.\.' component: refused"
	[traversal-inner]="entry 'modules/\.\./\.\./\.\./etc/evil' has a '\.\.' component: refused"
	[absolute]="entry '/etc/cron\.d/evil' has an absolute name: refused"
	[symlink]="entry 'modules/scsi_mod\.ko' is a symbolic link: refused"
	[hardlink]="entry 'modules/scsi_mod\.ko' is a hard link: refused"
	[device]="entry 'modules/scsi_mod\.ko' is a character device node: refused"
	[fifo]="entry 'modules/scsi_mod\.ko' is a FIFO: refused"
	[directory]="entry 'modules/?' is a directory: refused"
	[size-bomb]="entry 'modules/scsi_mod\.ko' is 83886080 bytes: over the size cap"
	[duplicate]="entry 'modules/scsi_mod\.ko' appears twice: refused"
	[manifest-not-first]="the first entry is 'modules/scsi_mod\.ko', not manifest\.json"
	[not-in-manifest]="entry 'modules/extra\.ko' is not named in the manifest: refused"
	[missing-file]="patches/series: named in the manifest, missing from the archive"
	[hash-mismatch]="modules/scsi_mod\.ko: SHA-256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}"
	[module-mismatch]="modules/scsi_mod\.ko: its srcversion differs from what the manifest says"
	[module-swapped]="modules/scsi_mod\.ko: its name differs from what the manifest says"
	[release-path]="manifest\.json: bundle: missing or invalid \"release\""
	[not-json]="manifest\.json: not a JSON object"
	[kernel-not-in-files]="manifest\.json: kernel: its file kernel/linux-image-6\.1\.0-98-scsitune_1\.0_amd64\.deb is not in \"files\""
	[kernel-release-path]="manifest\.json: kernel: missing or invalid \"release\""
	[kernel-package]="manifest\.json: kernel: \"package\" is not linux-image-6\.1\.0-98-scsitune"
	[kernel-same-release]="manifest\.json: kernel: release .* is the modules' release"
	[kernel-version-option]="manifest\.json: kernel: missing or invalid \"version\""
	[truncated]="damaged or truncated"
	[not-an-archive]="not a zstd-compressed tar archive"
)
n=0
while read -r h; do
	n=$((n + 1))
	f=$work/hostile/$h.tar.zst
	sign a "$f"
	[ -n "${want[$h]:-}" ] || { fail "hostile $h: no expectation"; continue; }
	refused "hostile $h" "${want[$h]}" st payload install "$f" --state-dir "$state"
	one_line "hostile $h"
done <"$work/hostile.list"
[ "$n" -eq "${#want[@]}" ] || fail "hostile.py made $n bundles, ${#want[@]} expected"

# --- 4. preflight refusals ---------------------------------------------------------
section "4. preflight refusals"
# Another release: the host has 6.1.0-999-amd64 only.
mv "$root/lib/modules/$R" "$root/lib/modules/6.1.0-999-amd64"
echo 6.1.0-999-amd64 >"$root/proc/sys/kernel/osrelease"
refused "wrong release" "refused: release: kernel $R is not installed on this host .*running 6\.1\.0-999-amd64" \
	st payload install "$b" --state-dir "$state"
mv "$root/lib/modules/6.1.0-999-amd64" "$root/lib/modules/$R"
echo "$R" >"$root/proc/sys/kernel/osrelease"
# Another Debian build of the same release (a point release).
cp "$root/var/lib/dpkg/status" "$work/status"
sed -i "/^Package: linux-image-$R\$/,/^\$/ s/^Version: .*/Version: 6.1.999-1/" "$root/var/lib/dpkg/status"
refused "wrong Debian version" "refused: debian: linux-image-$R 6\.1\.999-1 is installed, the bundle was built against $V: the same uname -r" \
	st payload install "$b" --state-dir "$state"
cp "$work/status" "$root/var/lib/dpkg/status"
# CRC mismatch: the layout change of payload/bad-input.
kb=$work/kabi.tar.zst
run 0 "pack the KABI-breaking build" "$bin" payload pack "$kout" --output "$kb" && sign a "$kb"
refused "CRC mismatch" "refused: kabi scsi_mod: [0-9]+ of [0-9]+ symbol CRCs differ \(first: [a-z0-9_]+\.ko imports [A-Za-z0-9_]+ with CRC 0x[0-9a-f]{8}, our scsi_mod exports 0x[0-9a-f]{8}\)" \
	st payload install "$kb" --state-dir "$state"
# Signature enforcement, lockdown, Secure Boot: unsigned modules refused, the way out named.
echo Y >"$root/sys/module/module/parameters/sig_enforce"
refused "sig_enforce" "module\.sig_enforce is on and scsi_mod\.ko, target_core_mod\.ko are unsigned.*Machine Owner Key.*mokutil --import" \
	st payload install "$b" --state-dir "$state"
echo N >"$root/sys/module/module/parameters/sig_enforce"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
refused "lockdown" "kernel lockdown is on and .* unsigned" st payload install "$b" --state-dir "$state"
echo '[none] integrity confidentiality' >"$root/sys/kernel/security/lockdown"
mkdir -p "$root/sys/firmware/efi/efivars"
printf '\x06\x00\x00\x00\x01' >"$root/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98032b8c4b4"
refused "Secure Boot" "Secure Boot is on .* unsigned" st payload install "$b" --state-dir "$state"
printf '\x06\x00\x00\x00\x00' >"$root/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98032b8c4b4"
run 0 "Secure Boot off" st payload install "$b" --dry-run --state-dir "$state" && ok "Secure Boot off passes"
rm -rf "$root/sys/firmware"
mkdir -p "$root/lib/modules/$R/updates/scsitune"
refused "unrecorded target" "refused: target: /lib/modules/$R/updates/scsitune is there and no payload journal records it" \
	st payload install "$b" --state-dir "$state"
rmdir "$root/lib/modules/$R/updates/scsitune" "$root/lib/modules/$R/updates"
[ "$(snap)" = "$fresh" ] || fail "the preflight checks left the tree changed"

# --- 5. round trips -------------------------------------------------------------------
section "5. round trips"
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
	run 1 "$label: remove again" st payload remove --state-dir "$state" && err_has "$label remove again" "no payload journal"
	run 2 "$label: verify, nothing installed" st -o json payload verify && [ "$(jget verdict)" = not-installed ] ||
		fail "$label: verify with nothing installed"
	cp "$work/out" "$work/schema-verify-none-$label.json"
}
round_trip plain
# An admin's depmod.d with a search line that leaves updates/ out: the override lines still win.
mkdir -p "$root/etc/depmod.d"
echo 'search built-in' >"$root/etc/depmod.d/00-local.conf"
depmod -b "$root" -C "$root/etc/depmod.d" "$R"
grep -q "^kernel/drivers/scsi/scsi_mod.ko:" "$root/lib/modules/$R/modules.dep" || fail "search line: the stock scsi_mod should win before install"
round_trip search-line
rm -rf "$root/etc/depmod.d" && depmod -b "$root" -C /dev/null "$R"

# A file changed since install: left alone (exit 1), then --force.
before=$(snap)
run 0 "install (changed file)" st payload install "$b" --state-dir "$state"
printf 'x' >>"$root/lib/modules/$R/updates/scsitune/target_core_mod.ko"
run 1 "remove, a file changed" st payload remove --state-dir "$state" && err_has "changed file" "changed since install.*--force"
[ -f "$root/lib/modules/$R/updates/scsitune/target_core_mod.ko" ] || fail "remove deleted a file changed since install"
[ -f "$state/payload/journal.json" ] || fail "the journal is gone after an incomplete remove"
run 0 "remove --force" st payload remove --force --state-dir "$state"
[ "$(snap)" = "$before" ] && ok "remove --force: tree identical" || fail "remove --force: the tree differs"

# apply --payload: the payload first under apply's lock, its chain of custody in apply's document.
before=$(snap)
if run 0 "apply --payload" st -o json apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state"; then
	[ "$(jget payload.verdict)" = drift ] && [ "$(jget payload.release)" = "$R" ] && ok "apply --payload: chain of custody in apply's JSON" ||
		fail "apply --payload: payload.verdict $(jget payload.verdict)"
	cp "$work/out" "$work/apply-payload.json"
fi
[ -f "$state/payload/journal.json" ] && [ -f "$root/lib/modules/$R/updates/scsitune/scsi_mod.ko" ] || fail "apply --payload did not install the payload"
run 0 "apply --payload again (already installed)" st apply --profile numa --profile-dir "$src/profiles" --payload "$b" --state-dir "$state" &&
	out_has "apply --payload again" "already installed"
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

# --- 6. kill -9 anywhere ------------------------------------------------------------
section "6. kill -9 anywhere"
if "$bin" --sysroot "$root" payload install "$b" --dry-run --state-dir "$state" >/dev/null 2>&1 &&
	(SCSITUNE_TEST_PAYLOAD_ABORT=1 "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"; exit $?) >/dev/null 2>&1; then
	fail "kill -9: SCSITUNE_TEST_PAYLOAD_ABORT is not honoured (configure with -DSCSITUNE_TEST_HOOKS=ON)"
	st payload remove --state-dir "$state" >/dev/null 2>&1
else
	st payload remove --state-dir "$state" >/dev/null 2>&1
	before=$(snap)
	points=0
	for n in $(seq 1 60); do
		rc=0
		# a subshell: the shell's own "Aborted" report goes to /dev/null with it
		(SCSITUNE_TEST_PAYLOAD_ABORT=$n "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		if [ "$rc" -eq 0 ]; then
			st payload remove --state-dir "$state" >/dev/null 2>&1
			break
		fi
		points=$((points + 1))
		[ "$rc" -eq 134 ] || { fail "kill at point $n: exit $rc, want 134 (abort)"; break; }
		[ "$n" -eq 5 ] && { run 1 "install after an interrupted one" st payload install "$b" --state-dir "$state" &&
			err_has "interrupted" "was interrupted .*'scsitune payload remove' undoes it first"; }
		run 0 "remove after a kill at point $n" st payload remove --state-dir "$state" || break
		[ "$(snap)" = "$before" ] || { fail "kill at install point $n, then remove: the tree differs"; break; }
	done
	[ "$points" -ge 15 ] && ok "install killed at $points points, remove restored the tree each time" ||
		fail "install: only $points abort points"
	# remove killed half way, then remove again.
	rpoints=0
	for n in $(seq 1 30); do
		st payload install "$b" --state-dir "$state" >/dev/null 2>&1 || { fail "install for the remove kill test"; break; }
		rc=0
		(SCSITUNE_TEST_PAYLOAD_ABORT=$n "$bin" --sysroot "$root" payload remove --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 0 ] && break
		rpoints=$((rpoints + 1))
		[ "$rc" -eq 134 ] || { fail "remove killed at point $n: exit $rc"; break; }
		run 0 "remove after a killed remove ($n)" st payload remove --state-dir "$state" || break
		[ "$(snap)" = "$before" ] || { fail "remove killed at point $n, then remove: the tree differs"; break; }
	done
	[ "$rpoints" -ge 5 ] && ok "remove killed at $rpoints points" || fail "remove: only $rpoints abort points"
	[ "$(snap)" = "$before" ] || fail "after the kill tests the tree differs"

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
KR=6.1.0-98-scsitune
kpo=$work/pout-kernel
cp -a "$pout" "$kpo"
mkdir -p "$work/kpkg/DEBIAN" "$work/kpkg/boot" "$kpo/kernel"
printf 'Package: linux-image-%s\nVersion: 1.0+test\nArchitecture: amd64\nMaintainer: scsitune tests <root@localhost>\nDescription: scsitune test kernel package\n' \
	"$KR" >"$work/kpkg/DEBIAN/control"
echo "not a kernel" >"$work/kpkg/boot/vmlinuz-$KR"
kdeb=kernel/linux-image-${KR}_1.0+test_amd64.deb
dpkg-deb -Zxz -b "$work/kpkg" "$kpo/$kdeb" >/dev/null || fail "dpkg-deb -b of the test kernel package"
KBID=0123456789abcdef0123456789abcdef01234567
python3 - "$kpo/manifest.json" "$kdeb" "$kpo/$kdeb" "$KR" "$KBID" <<-'PY' || fail "adding a kernel to the build manifest"
	import hashlib, json, sys
	p, name, path, rel, bid = sys.argv[1:6]
	m = json.load(open(p))
	m["kernel"] = {"release": rel, "package": "linux-image-" + rel, "version": "1.0+test", "file": name,
	               "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(), "build_id": bid,
	               "patches": ["A", "C", "D", "E", "B"], "config": "tinyconfig + vm.config"}
	json.dump(m, open(p, "w"), indent=1)
PY
kbk=$work/payload-kernel.tar.zst
if run 0 "pack with a kernel" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$kpo" --output "$kbk"; then
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
sign a "$kbk"
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

# --- 8. isolation: under --sysroot nothing of this machine is read ----------------------
# strace -f: every path outside the work directory, other than the loader's
# cache and shared libraries (and the binaries run), is a failure. libkmod
# runs in a child chrooted into the tree: that child's absolute paths are
# the tree's (its chroot() must name the tree).
if command -v strace >/dev/null; then
	isolated() { # LABEL WANT CMD...
		local label=$1 want=$2 rc=0
		shift 2
		strace -f -qq -s 4096 -e trace=%file,chroot -o "$work/strace" "$@" >/dev/null 2>"$work/err" || rc=$?
		[ "$rc" -eq "$want" ] || { fail "isolation $label: exit $rc, want $want: $(head -2 "$work/err")"; return; }
		# execve() lines are the binaries run (with execvp's tries along PATH), not reads;
		# kmod's own depmod (run as depmod -b TREE) reads /proc/cmdline for modprobe's
		# options, which depmod does not use, and libcrypto's openssl.cnf (kmod reads
		# module signatures with it): allowed for that process only. The
		# directories above the work directory are looked at when --sysroot is resolved.
		awk -v root="$root" -v work="$work" '
			BEGIN { a = work; while (sub(/\/[^\/]*$/, "", a) && a != "") up[a] = 1 }
			$2 ~ /^chroot\(/ { if (index($2, "chroot(\"" root "\")") != 1 || $NF != "0") print "chroot elsewhere: " $0; chrooted[$1] = 1; next }
			chrooted[$1] { next }
			$2 ~ /^execve\(/ { if ($2 ~ /\/depmod"/ && $NF == "0") depmod[$1] = 1; next }
			{ pid = $1; while (match($0, /"\/[^"]*"/)) { p = substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, RSTART + RLENGTH)
				if (!(p in up) && !(depmod[pid] && (p == "/proc/cmdline" || p == "/usr/lib/ssl/openssl.cnf"))) print p } }' "$work/strace" |
			grep -v "^$work" | grep -Ev '^/etc/ld\.so\.(cache|preload)$|^/(usr/)?lib/x86_64-linux-gnu/|^/lib64/|^/(usr/)?s?bin/|^/(usr/)?lib/(locale|systemd)|^/dev/null$|^/$' |
			sort -u >"$work/escaped"
		if [ -s "$work/escaped" ]; then
			fail "isolation $label: paths of this machine touched: $(head -5 "$work/escaped" | tr '\n' ' ')"
		else
			grep -q 'chroot(' "$work/strace" && ok "isolation $label (libkmod chrooted into the tree)" || ok "isolation $label"
		fi
	}
	work=$(realpath "$work")
	root=$work/root
	isolated "install --dry-run" 0 "$bin" --sysroot "$root" payload install "$b" --dry-run --state-dir "$state"
	isolated "install" 0 "$bin" --sysroot "$root" payload install "$b" --state-dir "$state"
	isolated "verify FILE" 2 "$bin" --sysroot "$root" payload verify "$b"
	isolated "verify" 2 "$bin" --sysroot "$root" payload verify
	isolated "detect" 0 "$bin" --sysroot "$root" detect -o json
	isolated "remove" 0 "$bin" --sysroot "$root" payload remove --state-dir "$state"
else
	fail "strace is not installed (scripts/install-deps --test)"
fi

# --- 8c. valgrind: pack, install, verify, detect, remove and a refusal leak nothing --------
if ldd "$bin" 2>/dev/null | grep -q libasan; then
	echo "test-payload.sh: valgrind part left out: $bin is an ASan build (valgrind cannot run it)"
elif command -v valgrind >/dev/null; then
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

# --- 8b. JSON schema ----------------------------------------------------------------------
section "8. JSON schema"
docs=("$work"/schema-*.json)
check=("${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/payload.schema.json")
"${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/apply.schema.json" "$work/apply-payload.json" >"$work/schema.log" 2>&1 ||
	{ fail "apply --payload's document does not validate against schema/apply.schema.json"; tail -5 "$work/schema.log"; }
if "${check[@]}" --keys "$src/cli/payload/payload.c" "$src/cli/shared/payload-install.c" >"$work/schema.log" 2>&1 && "${check[@]}" "${docs[@]}" >>"$work/schema.log" 2>&1 &&
	"${check[@]}" --mutants "${docs[@]}" >>"$work/schema.log" 2>&1; then
	ok "JSON schema (${#docs[@]} documents)"
else
	fail "payload JSON schema:"
	tail -20 "$work/schema.log"
fi

echo "test-payload.sh: $pass passed$([ "$status" -ne 0 ] && echo ", FAILURES above")"
exit "$status"
