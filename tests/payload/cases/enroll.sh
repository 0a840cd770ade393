# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/enroll (sourced by test-payload.sh): scsitune payload enroll
# --status on trees whose proc/keys, keyring membership and EFI variables
# (MokNew: staged; MokListRT: enrolled) put the bundle's signer in each
# standing: absent (2), pending (3), enrolled but in no searched keyring (2),
# trusted (0), not known (1); an unsigned bundle refused (nothing to enroll);
# staging refused under --sysroot (it writes this machine's firmware
# variables), and the usage errors. Staging itself (mokutil --import, the
# confirmation in MokManager, the reboot) runs in the vm tier's
# vm/secure-boot, under OVMF with Secure Boot on; the password file's checks
# in unit/mok.
section "enroll"
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
if [ ! -x "$signfile" ]; then
	fail "no $signfile (Debian's linux-kbuild-6.1: scripts/install-deps --test)"
	return
fi
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=scsitune enroll test" \
	-addext subjectKeyIdentifier=hash -keyout "$work/mok.key" -outform DER -out "$work/mok.der" >/dev/null 2>&1 ||
	fail "openssl req: the throwaway key"
chmod 600 "$work/mok.key"
skid=$(openssl x509 -inform DER -in "$work/mok.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=another key" -addext subjectKeyIdentifier=hash \
	-keyout "$work/other.key" -outform DER -out "$work/other.der" >/dev/null 2>&1 || fail "openssl req: another key"
rm -rf "$work/signed-out" && cp -r "$pout" "$work/signed-out" && chmod -R u+w "$work/signed-out"
sb=$work/signed.tar.zst
run 0 "payload/sign" "$src/payload/sign" --key "$work/mok.key" --cert "$work/mok.der" --sign-file "$signfile" "$work/signed-out" &&
	run 0 "pack the signed modules" "$bin" payload pack "$work/signed-out" --output "$sb" && sign a "$sb"

efi=$root/sys/firmware/efi/efivars
mkdir -p "$efi"
printf '\x06\x00\x00\x00\x01' >"$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
echo 'none [integrity] confidentiality' >"$root/sys/kernel/security/lockdown"
# shellcheck source=tests/lib/sb-tree.sh
. "$src/tests/lib/sb-tree.sh"
shim=$sb_shim_guid
efilist() { sb_efilist "$root" "$@"; }             # VAR CERT.der...
keys() { sb_keys "$root" "$1" "scsitune enroll test" "$skid"; } # KEYRING

# status WANT-EXIT WANT-STATE LABEL: enroll --status, JSON then text (left in $work/out), the tree unchanged
status() {
	local before
	before=$(stamp)
	run "$1" "$3 (JSON)" st -o json payload enroll "$sb" --status &&
		[ "$(jget state)" = "$2" ] && [ "$(jget signer.skid)" = "$skid" ] && [ "$(jget staged)" = False ] &&
		[ "$(jget command)" = enroll ] && [ "$(jget secure_boot)" = True ] && ok "$3" ||
		fail "$3: JSON $(head -c 900 "$work/out")"
	cp "$work/out" "$work/enroll-$2-$1.json"
	run "$1" "$3" st payload enroll "$sb" --status &&
		said "standing: $2" && said "Signer scsitune enroll test key identifier $skid serial [0-9a-f]+ boot: UEFI" && ok "$3: the text" ||
		fail "$3: the text: $(head -c 900 "$work/out")"
	[ "$(stamp)" = "$before" ] || fail "$3: the tree changed"
}

keys ""
status 2 absent "no key, nothing staged"
said "To stage it: scsitune payload enroll .*--password-file FILE" || fail "absent: the next step"
efilist MokNew "$work/other.der"
status 2 absent "another certificate staged"
efilist MokNew "$work/other.der" "$work/mok.der"
status 3 pending "staged (MokNew lists it)"
said "in MokNew: yes" && said "Next: reboot; at the console, shim's MokManager asks: Enroll MOK" ||
	fail "pending: the next step $(head -c 900 "$work/out")"
efilist MokNew
efilist MokListRT "$work/mok.der"
keys platform
status 2 enrolled "in MokListRT, the key in .platform only"
said "kernel key in: \.platform" && said "MokListTrusted off" || fail "enrolled: the keyring and why: $(head -c 900 "$work/out")"
keys machine
status 0 trusted "the key in .machine"
said "kernel key in: \.machine" && said "The kernel trusts this signer for modules: scsitune payload install" ||
	fail "trusted: the text"
# The keyrings not known (no proc/keys): exit 1, said why; nothing firmware says puts it elsewhere.
efilist MokListRT
rm "$root/proc/keys"
run 1 "the keyrings not known" st payload enroll "$sb" --status && said "standing: unknown" &&
	said "keyrings: /proc/keys" && ok "the keyrings not known: unknown, exit 1" || fail "unknown: $(head -c 900 "$work/out")"
# A MokNew that is not a list: said, not taken for a staged key.
printf '\x07\x00\x00\x00garbage' >"$efi/MokNew-$shim"
keys ""
run 2 "MokNew garbage" st payload enroll "$sb" --status && said "\(MokNew: /sys/firmware/efi/efivars/MokNew-$shim: not a list of EFI signature lists\)" &&
	said "standing: absent" && ok "MokNew garbage: said, absent" || fail "MokNew garbage: $(head -c 900 "$work/out")"
efilist MokNew

# What is refused: an unsigned bundle (nothing to enroll), staging under --sysroot, usage.
refused "unsigned bundle" "payload\.tar\.zst: its modules are unsigned \(the manifest names no signer\): nothing to enroll" \
	st payload enroll "$b" --status
err_has "unsigned: the next step" "^scsitune: hint: sign them with payload/sign"
printf 'secret\n' >"$work/pw" && chmod 600 "$work/pw"
before=$(stamp)
run 64 "--password-file under --sysroot" st payload enroll "$sb" --password-file "$work/pw" &&
	err_has "--sysroot" "payload enroll: --password-file stages the key in this machine's firmware variables: not under --sysroot" &&
	ok "staging under --sysroot: a usage error"
[ "$(stamp)" = "$before" ] || fail "--sysroot staging: the tree changed"
run 64 "neither option" st payload enroll "$sb" && err_has "neither" "give --password-file FILE \(stage the signer\) or --status" && ok "neither option"
run 64 "both options" st payload enroll "$sb" --status --password-file "$work/pw" && ok "both options"
run 64 "no bundle" st payload enroll --status && err_has "no bundle" "payload enroll: give one bundle FILE" && ok "no bundle"
run 64 "--dry-run without --password-file" st payload enroll "$sb" --status --dry-run &&
	err_has "--dry-run alone" "payload enroll: --dry-run goes with --password-file" && ok "--dry-run without --password-file"
run 64 "--reload is install's" st payload enroll "$sb" --status --reload && ok "an option of another subcommand"

# --dry-run with --password-file (allowed under --sysroot): every check of staging, nothing written.
# dry STATUS LABEL PATTERN [PWFILE]: exit STATUS, stdout (0) or stderr (1) matches, the tree unchanged
dry() {
	local before
	before=$(stamp)
	run "$1" "$2" st payload enroll "$sb" --password-file "${4:-$work/pw}" --dry-run &&
		{ if [ "$1" = 0 ]; then said "$3"; else err_has "$2" "$3"; fi; } && ok "$2" ||
		fail "$2: $(head -c 600 "$work/out") $(head -c 300 "$work/err")"
	[ "$(stamp)" = "$before" ] || fail "$2: the tree changed"
}
keys ""
dry 0 "dry-run, absent: would stage" "Would stage it with mokutil --import \(--dry-run: nothing written\)"
run 0 "dry-run JSON" st -o json payload enroll "$sb" --password-file "$work/pw" --dry-run &&
	[ "$(jget dry_run)" = True ] && [ "$(jget staged)" = False ] && [ "$(jget state)" = absent ] &&
	cp "$work/out" "$work/enroll-dry-run.json" && ok "dry-run JSON: dry_run, not staged" || fail "dry-run JSON: $(head -c 600 "$work/out")"
chmod 0640 "$work/pw"
dry 1 "dry-run, a password file the group may read" "^scsitune: --password-file $work/pw: mode 0640: a password file is for its owner only: chmod 0600 it$"
chmod 0600 "$work/pw"
printf 'two\nlines\n' >"$work/pw2" && chmod 600 "$work/pw2"
dry 1 "dry-run, two lines" "^scsitune: --password-file $work/pw2: more than one line" "$work/pw2"
mkfifo "$work/pw.fifo"
dry 1 "dry-run, a FIFO" "^scsitune: --password-file $work/pw.fifo: not a regular file" "$work/pw.fifo"
dry 1 "dry-run, missing" "^scsitune: --password-file $work/none: No such file" "$work/none"
efilist MokNew "$work/mok.der"
dry 0 "dry-run, pending" "Nothing staged: it is staged already \(MokNew lists it\)"
efilist MokNew
efilist MokListRT "$work/mok.der"
keys platform
dry 1 "dry-run, in MokListRT, untrusted" "the signer is in the MOK list already \(MokListRT\), but in no keyring the module verifier searches: nothing to stage"
keys machine
dry 0 "dry-run, trusted" "Nothing staged: the kernel trusts it already"
efilist MokListRT
keys ""
mv "$efi" "$work/efivars.kept" && rmdir "$root/sys/firmware/efi" && mkdir -p "$root/sys/firmware/acpi"
dry 1 "dry-run, a BIOS boot" "this host did not boot through UEFI \(no /sys/firmware/efi\)"
mkdir -p "$root/sys/firmware/efi" && mv "$work/efivars.kept" "$efi"
run 1 "a bundle signed by no trusted key" st payload enroll "$sb" --status --signature /nonexistent.minisig && ok "no signature"

# The documents against schema/payload.schema.json, and the schema not too lax for them.
check=("${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/payload.schema.json")
if "${check[@]}" "$work"/enroll-*.json >"$work/schema.log" 2>&1 && "${check[@]}" --mutants "$work"/enroll-*.json >>"$work/schema.log" 2>&1; then
	ok "enroll -o json: schema/payload.schema.json ($(ls "$work"/enroll-*.json | wc -l) documents)"
else
	fail "enroll -o json against the schema: $(tail -5 "$work/schema.log")"
fi

# valgrind: --status (staged, text and JSON) and a refusal leak nothing (memcheck's rules:
# payload/sysroot/valgrind; an ASan build cannot run under valgrind, and fails here).
if ldd "$bin" 2>/dev/null | grep -q libasan; then
	fail "valgrind: $bin is an ASan build (this check is for a build without -DSCSITUNE_SANITIZE=ON)"
else
	efilist MokNew "$work/mok.der"
	vg() { # WANT ARGS...
		local want=$1 rc=0
		shift
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$bin" --sysroot "$root" "$@" \
			>/dev/null 2>"$work/vg.err" || rc=$?
		[ "$rc" -eq "$want" ] && ok "valgrind: $*" || { fail "valgrind $*: exit $rc, want $want"; head -20 "$work/vg.err"; }
	}
	vg 3 payload enroll "$sb" --status
	vg 3 -o json payload enroll "$sb" --status
	vg 1 payload enroll "$b" --status
fi
