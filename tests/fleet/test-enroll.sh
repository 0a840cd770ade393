#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet/enroll: fleet/ansible/enroll.yml (the enrolment waves, the role's
# tasks/enroll.yml) and rollout.yml's scsitune_payload_signed check, run for
# real with Debian's ansible-playbook against local hosts (local connection),
# each a copy of a captured tree (tests/fixtures/dual-socket-mpi3mr) made a
# Secure Boot host whose keyrings and EFI variables put the payload's signer
# in one standing, as payload/sysroot/enroll makes them (keys, efilist):
#   e1 trusted (key in .machine), e2 pending (MokNew lists it), e3 absent;
# waves [1, 1, 100%] in that order. The bundle: payload/build's modules signed
# by payload/sign with a throwaway key, packed, signed with minisign (the
# tree trusts that key). The MOK password comes from an Ansible Vault file.
#   run1  stops at wave 2 with e2's "staged: reboot this host and confirm
#         Enroll MOK ..." (exit 2); e1 passes; e3 is never touched (its tree
#         stamp-identical: no name, mode, size, mtime or ctime changed, no
#         call of scsitune for it, no temp directory);
#   run2  e2's tree flipped to trusted (what a person confirming in MokManager
#         and the reboot leave): waves 1 and 2 pass, wave 3 is reached and
#         e3's staging attempted: the password file handed to scsitune is
#         root's, 0600, in a 0700 directory, holds the vault's password; under
#         --sysroot scsitune refuses to stage (exit 64: it would write this
#         machine's firmware variables) and the play fails naming that
#         reason; the directory is removed;
#   run3  scsitune_enroll_stage: false (the status only): e3 fails with
#         "staging is off", no password file made;
#   rollout.yml with scsitune_payload_signed: e3 (absent) fails before any
#         change naming enroll.yml (its tree stamp-identical, state empty);
#         e1 (trusted) passes the check (--check: its plan shown);
#   run4  e3 flipped to pending then trusted (what vm/secure-boot proves on a
#         real shim): the pending message, then every wave passes (exit 0,
#         changed=0).
# The password appears in no ansible output (-v) and in no file under the
# test's directory (trees, state, Ansible's temp dirs) after any run.
# Staging itself (mokutil --import writing MokNew, MokManager's dialog, the
# reboot) is not run here: it writes the machine's firmware variables; the
# vm tier's vm/secure-boot runs it under OVMF with shim.
# Usage: test-enroll.sh SCSITUNE SRCDIR PAYLOAD_OUT
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: test-enroll.sh SCSITUNE SRCDIR PAYLOAD_OUT" >&2; exit 64; }
bin=$(realpath "$1") src=$(realpath "$2") pout=$(realpath "$3")
py=$("${PYTHON3:-python3}" -c 'import sys; print(sys.executable)') || exit 1
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need ansible-playbook ansible-vault minisign openssl timeout
signfile=/usr/lib/linux-kbuild-6.1/scripts/sign-file
[ -x "$signfile" ] || { echo "FAIL: no $signfile (Debian's linux-kbuild-6.1: scripts/install-deps --test)"; exit 1; }
[ -f "$pout/manifest.json" ] || { echo "FAIL: $pout/manifest.json missing (the payload_modules fixture did not run)"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-enroll.XXXXXX")
trap 'if [ -n "${SCSITUNE_KEEP_TMP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi' EXIT
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf
cat >"$T/ansible.cfg" <<CFG
[defaults]
forks = 10
internal_poll_interval = 0.05
local_tmp = $T/ansible-tmp
remote_tmp = $T/ansible-tmp
retry_files_enabled = False
display_skipped_hosts = False
nocolor = True
interpreter_python = /usr/bin/python3
[connection]
pipelining = True
CFG
export ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_HOME=$T/ansible-home ANSIBLE_NOCOLOR=1 HOME=$T
unset PYTHONUNBUFFERED
started=$(date +%s)
check() { # NAME COMMAND...: one check, its last line said
	checks=$((checks + 1))
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then pass "$name: $(tail -1 "$T/check.out")"; else fail "$name:"; sed 's/^/  /' "$T/check.out" | head -20; fi
}
# stamp TREE: every name, type, mode, size, mtime and ctime (any write at all changes it).
stamp() { (cd "$1" && find . -printf '%y %m %s %T@ %C@ %p %l\n' | LC_ALL=C sort) | sha256sum; }

# The signed bundle, as payload/sysroot/enroll makes it.
openssl req -new -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=scsitune fleet enroll test" \
	-addext subjectKeyIdentifier=hash -keyout "$T/mok.key" -outform DER -out "$T/mok.der" >/dev/null 2>&1 ||
	{ echo "FAIL: openssl req"; exit 1; }
chmod 600 "$T/mok.key"
skid=$(openssl x509 -inform DER -in "$T/mok.der" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
cp -r "$pout" "$T/signed-out" && chmod -R u+w "$T/signed-out"
sb=$T/payload.tar.zst
"$src/payload/sign" --key "$T/mok.key" --cert "$T/mok.der" --sign-file "$signfile" "$T/signed-out" >"$T/sign.log" 2>&1 &&
	"$bin" payload pack "$T/signed-out" --output "$sb" >>"$T/sign.log" 2>&1 &&
	minisign -G -W -p "$T/fleet.pub" -s "$T/fleet.key" >/dev/null 2>&1 &&
	minisign -S -s "$T/fleet.key" -m "$sb" >/dev/null 2>&1 || { echo "FAIL: the signed bundle:"; tail -5 "$T/sign.log"; exit 1; }
rm -f "$T/mok.key" "$T/fleet.key"

# shellcheck source=tests/lib/sb-tree.sh
. "$src/tests/lib/sb-tree.sh"
efilist() { PYTHON3=$py sb_efilist "$@"; }                                # TREE VAR [CERT.der...]
keys() { sb_keys "$1" "$2" "scsitune fleet enroll test" "$skid"; } # TREE KEYRING
standing() { # HOST trusted|pending|absent: what a person and a reboot leave in its tree
	local r=$T/$1/root
	case $2 in
	trusted) keys "$r" machine; efilist "$r" MokNew; efilist "$r" MokListRT "$T/mok.der" ;;
	pending) keys "$r" ""; efilist "$r" MokNew "$T/mok.der"; efilist "$r" MokListRT ;;
	absent) keys "$r" ""; efilist "$r" MokNew; efilist "$r" MokListRT ;;
	esac
}
hosts=(e1 e2 e3)
for h in "${hosts[@]}"; do
	make_host "$T/$h" dual-socket-mpi3mr "stor-$h" || { echo "FAIL: make_host $h"; exit 1; }
	mkdir -p "$T/$h/tmp" "$T/$h/root/etc/scsitune/trusted-keys"
	chmod 0755 "$T/$h/root/etc" "$T/$h/root/etc/scsitune" "$T/$h/root/etc/scsitune/trusted-keys"
	install -m 0644 "$T/fleet.pub" "$T/$h/root/etc/scsitune/trusted-keys/fleet.pub"
done
standing e1 trusted && standing e2 pending && standing e3 absent
# enroll --status -o json HOST: the state and the exit status, as the role reads them.
js() { "$bin" --sysroot "$T/$1/root" payload enroll "$sb" --status -o json 2>/dev/null; }
state_is() { # HOST STATE RC
	local rc=0 out got
	out=$(js "$1") || rc=$?
	got=$(printf '%s' "$out" | "$py" -c 'import json, sys; d = json.load(sys.stdin); print(d["state"], d["staged"], d["signer"]["skid"])')
	if [ "$got" != "$2 False $skid" ] || [ "$rc" -ne "$3" ]; then echo "$1: '$got' exit $rc, want '$2 False $skid' exit $3"; return 1; fi
	echo "$1: $2 (exit $3)"
}
states() { # HOST:STATE:RC...
	local a
	for a in "$@"; do state_is "${a%%:*}" "$(cut -d: -f2 <<<"$a")" "${a##*:}" >/dev/null || { state_is "${a%%:*}" "$(cut -d: -f2 <<<"$a")" "${a##*:}"; return 1; }; done
	echo "enroll --status -o json: $*"
}
check "the trees: e1 trusted, e2 pending, e3 absent" states e1:trusted:0 e2:pending:3 e3:absent:2

# The password: in an Ansible Vault file only; the test keeps its hash.
pw="mok-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$pw" | sha256sum | cut -d' ' -f1 >"$T/pw.sha256"
printf 'vault-%s\n' "$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" >"$T/vault-pass"
printf 'scsitune_mok_password: "%s"\n' "$pw" >"$T/vault.yml"
if ! ansible-vault encrypt --vault-password-file "$T/vault-pass" "$T/vault.yml" >/dev/null 2>&1 ||
	! head -1 "$T/vault.yml" | grep -q '^.ANSIBLE_VAULT;'; then
	echo "FAIL: ansible-vault encrypt"
	exit 1
fi
# scsitune as the role calls it, each call recorded (the tree it reads; for a
# password file: its owner, mode, its directory's mode, and whether it holds
# the vault's password, by hash).
cat >"$T/scsitune" <<WRAP
#!/bin/bash
pf= prev=
for a in "\$@"; do [ "\$prev" = --password-file ] && pf=\$a; prev=\$a; done
{
	printf 'call %s\n' "\$*"
	[ -z "\$pf" ] || printf 'password-file %s dir %s holds-vault-password %s\n' "\$(stat -c '%U:%G %a' "\$pf")" \
		"\$(stat -c %a "\$(dirname "\$pf")")" "\$([ "\$(sha256sum <"\$pf" | cut -d' ' -f1)" = "\$(cat "$T/pw.sha256")" ] && echo yes || echo no)"
} >>"$T/calls.log"
exec "$bin" "\$@"
WRAP
chmod 0755 "$T/scsitune"
{
	echo "scsitune:"
	echo "  hosts:"
	for h in "${hosts[@]}"; do
		printf '    %s:\n      scsitune_sysroot: %s\n      scsitune_state_dir: %s\n      scsitune_enroll_tmpdir: %s\n' \
			"$h" "$T/$h/root" "$T/$h/state" "$T/$h/tmp"
	done
	cat <<VARS
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    scsitune_bin: $T/scsitune
    scsitune_payload: $sb
    scsitune_profile_dir: $src/profiles
    scsitune_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
VARS
} >"$T/inventory.yml"
for h in "${hosts[@]}"; do stamp "$T/$h/root" >"$T/$h.stamp"; done

# play NAME WANT_RC PLAYBOOK [ansible-playbook args]: -v, the vault, waves [1, 1, 100%]; output in $T/NAME.log.
play() {
	local name=$1 want=$2 pb=$3 rc=0 t0
	shift 3
	t0=$(date +%s)
	: >"$T/calls.log"
	timeout 600 ansible-playbook -v -i "$T/inventory.yml" "$src/fleet/ansible/$pb" -e @"$T/vault.yml" \
		--vault-password-file "$T/vault-pass" -e '{"scsitune_serial": [1, 1, "100%"]}' "$@" >"$T/$name.log" 2>&1 || rc=$?
	cp "$T/calls.log" "$T/$name.calls"
	checks=$((checks + 1))
	if [ "$rc" -eq "$want" ]; then
		pass "$name: ansible-playbook $pb exit $rc ($(($(date +%s) - t0)) s)"
	else
		fail "$name: ansible-playbook $pb exit $rc, want $want"
		grep -E 'fatal|FAILED|ERROR|WARNING|msg' "$T/$name.log" | head -20
	fi
	check "$name: the password in no output and no file" no_password "$name"
}
no_password() { # NAME: not in the run's output, nowhere under $T, no temp directory left
	! grep -qF -- "$pw" "$T/$1.log" || { echo "the password is in ansible's output"; return 1; }
	local f
	f=$(grep -rlF -- "$pw" "$T" 2>/dev/null | head -3)
	[ -z "$f" ] || { echo "the password is in $f"; return 1; }
	for h in "${hosts[@]}"; do [ -z "$(ls -A "$T/$h/tmp")" ] || { echo "$h: left in its temp dir: $(ls -A "$T/$h/tmp")"; return 1; }; done
	echo "not in ansible's output (-v), in no file under the test's directory, no temp directory left"
}
has() { # NAME PATTERN...: each an extended regex found in the run's output
	local p
	for p in "${@:2}"; do grep -qE -- "$p" "$T/$1.log" || { echo "not in $1.log: /$p/"; grep -E 'msg|fatal' "$T/$1.log" | head -10; return 1; }; done
	echo "said: ${*:2}"
}
recap() { # NAME HOST:CHANGED:FAILED ("HOST:-": not in the recap: never run)
	local a h line
	for a in "${@:2}"; do
		h=${a%%:*}
		line=$(grep -E "^$h +:" "$T/$1.log")
		if [ "${a#*:}" = - ]; then
			[ -z "$line" ] || { echo "$h ran: $line"; return 1; }
		elif ! [[ $line =~ changed=$(cut -d: -f2 <<<"$a")\ .*failed=${a##*:}\  ]]; then
			echo "$h: '$line', want changed=$(cut -d: -f2 <<<"$a") failed=${a##*:}"
			return 1
		fi
	done
	echo "as expected: ${*:2}"
}
unchanged() { # HOST...: the tree stamp-identical, the state directory empty
	local h
	for h in "$@"; do
		[ "$(stamp "$T/$h/root")" = "$(cat "$T/$h.stamp")" ] || { echo "$h: its tree changed"; return 1; }
		[ -z "$(ls -A "$T/$h/state")" ] || { echo "$h: state $(ls -A "$T/$h/state")"; return 1; }
	done
	echo "stamp-identical, state empty: $*"
}
not_called() { # NAME HOST...: no scsitune call for these hosts in the run
	local h
	for h in "${@:2}"; do ! grep -qF -- "--sysroot $T/$h/root " "$T/$1.calls" || { echo "$h: scsitune was called for it"; return 1; }; done
	echo "no scsitune call for ${*:2}"
}
no_staging() { # NAME: no password file made, no staging in the run
	! grep -q 'TASK \[scsitune_rollout : A private directory' "$T/$1.log" || { echo "a password directory was made"; return 1; }
	! grep -q -- --password-file "$T/$1.calls" || { echo "payload enroll --password-file was run"; return 1; }
	echo "no password file, no payload enroll --password-file"
}
only_read() { # NAME: the run called detect and enroll --status only, both
	local other
	other=$(grep -vE '^call --sysroot \S+ (detect -o json|payload enroll \S+ -o json --status)$' "$T/$1.calls")
	[ -z "$other" ] || { echo "other calls: $other"; return 1; }
	grep -q ' detect ' "$T/$1.calls" && grep -q ' --status' "$T/$1.calls" || { echo "calls: $(cat "$T/$1.calls")"; return 1; }
	echo "detect and enroll --status only"
}
msg_pending='staged: reboot this host and confirm Enroll MOK in MokManager at its console \(password: the vault.s scsitune_mok_password\); then run enroll.yml again'

# run1: wave 1 passes, wave 2 stops the play, wave 3 never touched.
play run1 2 enroll.yml
check "run1: e1 trusted, e2 pending (its message), the play stops" has run1 \
	"e1: trusted: the kernel trusts the payload signer \(scsitune fleet enroll test, key in \.machine\)" \
	"fatal: \[e2\]: FAILED! => \{\"changed\": false, \"msg\": \"e2: $msg_pending\"\}" \
	"NO MORE HOSTS LEFT"
check "run1: the recap" recap run1 e1:0:0 e2:0:1 e3:-
check "run1: e3 (wave 3) never touched" not_called run1 e3
check "run1: every tree as before (e1 and e2 only read)" unchanged e1 e2 e3
check "run1: nothing staged" no_staging run1

# The operators confirmed e2 at its console and it rebooted: run2 passes waves 1 and 2, stages e3.
standing e2 trusted
for h in e1 e2; do stamp "$T/$h/root" >"$T/$h.stamp"; done
play run2 2 enroll.yml
check "run2: waves 1 and 2 pass, e3's staging attempted and refused under --sysroot (exit 64), named" has run2 \
	"e2: trusted: the kernel trusts the payload signer" \
	"fatal: \[e3\]: FAILED! => \{\"changed\": false, \"msg\": \"e3: not enrolled \(absent\): staging failed \(payload enroll --password-file, exit 64\): scsitune: payload enroll: --password-file stages the key in this machine's firmware variables: not under --sysroot" \
	"enrolment wave \(1 host\(s\)\): 1 host\(s\) not trusted yet: the play stops after this wave" \
	"e3\] => \{\"censored\": \"the output has been hidden due to the fact that 'no_log: true' was specified for this result\""
check "run2: the password file scsitune was given: root's, 0600, in a 0700 directory, the vault's password" \
	grep -xE "password-file root:root 600 dir 700 holds-vault-password yes" "$T/run2.calls"
check "run2: every tree as before (the staging refused)" unchanged e1 e2 e3
check "run2: the recap" recap run2 e1:0:0 e2:0:0 e3:0:1

# run3: the status only (scsitune_enroll_stage: false): e3 fails, nothing staged.
play run3 2 enroll.yml -e '{"scsitune_enroll_stage": false}'
check "run3: staging off: e3 fails so, no password file" has run3 \
	"fatal: \[e3\]: FAILED! => \{\"changed\": false, \"msg\": \"e3: not enrolled \(absent\): staging is off \(scsitune_enroll_stage: false\), nothing was staged\"\}"
check "run3: nothing staged" no_staging run3

# rollout.yml with scsitune_payload_signed: e3 (absent) fails before any change; e1 (trusted) passes the check.
ro='{"scsitune_payload_signed": true, "scsitune_payload_release": "6.1.0-57-amd64", "scsitune_query_url": "http://127.0.0.1:9", "scsitune_serial": ["100%"]}'
play rollout-e3 2 rollout.yml --limit e3 -e "$ro"
check "rollout.yml, e3 not trusted: fails before any change, naming enroll.yml" has rollout-e3 \
	"fatal: \[e3\]: FAILED! => \{\"changed\": false, \"msg\": \"e3 \(stor-e3\): the payload's signer \(scsitune fleet enroll test, key id $skid\) is not trusted by this host's kernel \(payload enroll --status: absent, exit 2\): enrol it first with enroll.yml"
check "rollout.yml, e3: nothing changed" unchanged e3
check "rollout.yml, e3: no apply" only_read rollout-e3
play rollout-e1 0 rollout.yml --limit e1 --check -e "$ro"
check "rollout.yml --check, e1 trusted: its plan shown" has rollout-e1 '"e1 \(stor-e1\): profile numa: [0-9]+ setting\(s\) to change'
check "rollout.yml --check, e1: the signer asked" grep -E "call --sysroot $T/e1/root payload enroll $sb -o json --status" "$T/rollout-e1.calls"

# run4: e3 staged (as vm/secure-boot stages it for real), then confirmed: every wave passes.
standing e3 pending
stamp "$T/e3/root" >"$T/e3.stamp"
play run4a 2 enroll.yml
check "run4a: e3 pending: its message, nothing staged again" has run4a "fatal: \[e3\]: FAILED! => \{\"changed\": false, \"msg\": \"e3: $msg_pending\"\}"
check "run4a: e3 only read" unchanged e3
check "run4a: nothing staged for a pending host" no_staging run4a
standing e3 trusted
play run4b 0 enroll.yml
check "run4b: every wave passes" has run4b "e3: trusted: the kernel trusts the payload signer" \
	"enrolment wave \(1 host\(s\)\): every host trusts the signer"
check "run4b: the recap" recap run4b e1:0:0 e2:0:0 e3:0:0
check "the trees: every host trusted" states e1:trusted:0 e2:trusted:0 e3:trusted:0

echo "fleet/enroll: $checks checks, $fails failed, $(($(date +%s) - started)) s"
[ "$fails" -eq 0 ] && [ "$passes" -gt 0 ]
