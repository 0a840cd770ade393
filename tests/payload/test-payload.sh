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
# Each case starts from its own keys, signed bundle and fresh tree (setup,
# sysroot-lib.sh) and is its own CTest test payload/sysroot/CASE:
#   pack          reproducible, manifest.json first, the exports equal
#                 Debian's Module.symvers, a changed build directory refused
#   signatures    unsigned, untrusted key, another file's signature,
#                 tampered bundle, tampered trusted comment, garbage signature,
#                 key file or directory writable by group/others; a key, its
#                 directory, one above it (the tree's root) owned by nobody or
#                 group-writable, a key that is a symbolic link; --trusted-key
#                 (and owned by nobody, in a group-writable directory);
#                 two keys trusted at once; legacy (Ed) signatures
#   hostile       hostile bundles (hostile.py), each signed by a trusted key;
#                 a payload journal that is a FIFO, a link to /dev/zero, 300 MB,
#                 STATE/payload a link: install and remove refuse at once; a
#                 state directory in a 0777 one or one owned by nobody
#   preflight     refusals: wrong release, wrong Debian version, CRC
#                 mismatch, sig_enforce / lockdown / Secure Boot with unsigned
#                 modules, a target directory nobody recorded
#   trust         payload/build's modules signed by payload/sign with a
#                 throwaway key (the manifest's signer, signer.der, no private
#                 key in any output file; pack's signer line, a module signed
#                 by another key refused; verify of it installed and booted:
#                 loaded.signer ok in .machine, drift when tainted E or the
#                 key is in no keyring): Secure Boot on + lockdown integrity + the key
#                 in .machine (its certificate in MokListRT) passes, naming
#                 the keyring; without the certificate, by name only; the key
#                 only in .platform, or in no keyring, refused (one line naming
#                 signer and key id, one hint); not enforcing: passes with a
#                 note; proc/keys a FIFO: unknown, said why, no hang
#   sign          payload/sign's refusals (key readable by others, a FIFO,
#                 missing; not a certificate, another key's, EC, RSA 1024; not
#                 a payload/build output, signed already; an encrypted key
#                 without KBUILD_SIGN_PIN): one line, the exit status, the
#                 directory unchanged; with KBUILD_SIGN_PIN it signs;
#                 payload/build --sign-key refused before it downloads; the
#                 key's kernel name ("O: CN", or CN) the same from payload/sign
#                 and pack; a manifest signer its certificate belies refused;
#                 --sign-cert alone without --kernel, a certificate alone
#                 (--check)
#   kernel-sign   a --kernel build signed: refusals (no trusted certificate,
#                 another, an image signed already); the image read back with
#                 sbverify, the package's module, md5sums, owners, no private
#                 key; pack's account, and its refusals (a kernel trusting
#                 another certificate, "signed" naming another image or in
#                 an unsigned build); install's "boot" row on Secure Boot
#                 trees (unsigned, signer absent, pending, enrolled;
#                 --no-kernel and Secure Boot off: no row)
#   round-trip    install, verify, remove -> the same tree, with depmod -b:
#                 without and with an admin's `search` line in depmod.d; verify
#                 before and after a simulated boot of the payload (exit 2,
#                 then 0), a Debian point release (drift), already installed,
#                 another bundle
#   changed-file  a file changed since install: kept by remove (exit 1); --force;
#                 install after that remove refused, naming the file; a module
#                 file deleted by hand: install again refused, not "already"
#   apply         apply --payload: installed first, its state in apply's
#                 document; after a remove that stopped half way: finished
#                 first, then installed; a hostile or refused bundle stops
#                 apply before anything is written
#   kill-install  kill -9 (abort()) at every journaled point of install, then
#                 remove: the tree as before; an install after an interrupted one
#   kill-remove   the same at every journaled point of remove
#   kill-remove-install  remove killed at each of its points, then install of
#                 the same bundle: it finishes the remove (one line) and
#                 installs, a clean install's tree; verify says installed
#                 only while the tree is still the installed one
#   kill-depmod   install and remove killed with their process group inside
#                 depmod (strace kills it at a rename): remove takes depmod's
#                 temporary file and names it; the tree as before; one from
#                 before the install is left (named), as is a name not depmod's
#   kill-initramfs  an install killed inside update-initramfs (journals made by
#                 hand): remove takes its leftovers, and only its own
#                 (the kill cases need -DSCSITUNE_TEST_HOOKS=ON)
#   hook          the kernel postinst hook
#   kernel        a kernel package in the bundle: pack, the kernel steps
#                 planned and skipped without apt-get, verify's kernel rows
#                 (running the payload's kernel: its build-id against the manifest)
#   isolation     install, verify, detect and remove under strace read nothing
#                 of this machine (libkmod and depmod chrooted into the tree)
#   escape        lib/modules/R, boot, etc or the state directory's var a
#                 symlink out of the tree: install and remove refused, nothing
#                 outside changed (hashed); links out inside lib/modules/R:
#                 depmod, in its own root, does not follow them; as another
#                 user (a user namespace, or refused)
#   valgrind      pack, install, verify, detect, remove and refusals leak
#                 nothing (fails for an ASan build, which valgrind cannot
#                 run: CMake registers it only without SCSITUNE_SANITIZE)
#   schema        -o json of every subcommand (the documents of pack,
#                 signatures, round-trip and apply, run again) against
#                 schema/payload.schema.json (--keys, --mutants)
# Usage: test-payload.sh [--case CASE] SCSITUNE SRCDIR PAYLOAD_OUT TREE KABI_OUT
#        test-payload.sh --list
# Without --case every case runs, one after the other; an unknown case is exit 64.
set -uo pipefail
export LC_ALL=C
casedir=$(dirname "$0")/cases
cases=(pack signatures hostile preflight trust sign kernel-sign enroll round-trip changed-file apply kill-install kill-remove kill-remove-install
	kill-depmod kill-initramfs hook kernel isolation escape valgrind schema)
only=
while [ $# -gt 0 ]; do
	case $1 in
	--list) printf '%s\n' "${cases[@]}"; exit 0 ;;
	--case) [ $# -ge 2 ] || { echo "test-payload.sh: --case needs a case name (--list names them)" >&2; exit 64; }
		only=$2; shift 2 ;;
	*) break ;;
	esac
done
# (not grep -q: it may exit before printf has written the rest, and pipefail counts that SIGPIPE)
if [ -n "$only" ] && ! printf '%s\n' "${cases[@]}" | grep -Fx -- "$only" >/dev/null; then
	echo "test-payload.sh: no case '$only' (--list names them)" >&2
	exit 64
fi
[ $# -eq 5 ] || { echo "usage: test-payload.sh [--case CASE] SCSITUNE SRCDIR PAYLOAD_OUT TREE KABI_OUT | --list" >&2; exit 64; }
bin=$1 src=$2 pout=$3 tree=$4 kout=$5
for p in minisign zstd depmod python3 cpio objcopy; do
	command -v "$p" >/dev/null || { echo "FAIL: $p not found (scripts/install-deps --test)"; exit 1; }
done
for d in "$pout" "$tree" "$kout"; do
	[ -e "$d" ] || { echo "FAIL: $d is missing (its CTest fixture did not run)"; exit 1; }
done
R=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["release"])' "$pout/manifest.json")
V=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["debian_version"])' "$pout/manifest.json")
# shellcheck source=tests/payload/sysroot-lib.sh
. "$(dirname "$0")/sysroot-lib.sh"

# run_case CASE: the case in a subshell, in its own work directory (nothing
# of another case's is there); a case that passed no check fails. Exit: the
# case's.
run_case() {
	(
		work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-payload.XXXXXX")
		trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
		root=$work/root
		state=$work/state
		status=0
		pass=0
		echo "test-payload.sh: ${SECONDS}s: case $1"
		setup
		# shellcheck source=/dev/null
		. "$casedir/$1.sh"
		[ "$pass" -gt 0 ] || fail "case $1: no check passed"
		echo "test-payload.sh: case $1: $pass passed$([ "$status" -ne 0 ] && echo ", FAILURES above")"
		echo "$pass" >"$counts/$1"
		exit "$status"
	)
}
counts=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-payload-counts.XXXXXX")
trap 'rm -rf "$counts"' EXIT
status=0
list=("${cases[@]}")
[ -z "$only" ] || list=("$only")
for c in "${list[@]}"; do
	run_case "$c" || status=1
done
pass=$(cat "$counts"/* 2>/dev/null | awk '{ n += $1 } END { print n + 0 }')
echo "test-payload.sh: $pass passed$([ "$status" -ne 0 ] && echo ", FAILURES above")"
exit "$status"
