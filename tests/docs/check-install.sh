#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command leaves an installed, working scsitune with its
# profiles: it is scripts/setup-and-detect, which runs `cmake --install`;
# that install (here into a DESTDIR, never this machine's /usr) puts the
# binary, the shipped profiles in the directory the binary looks in by
# default, the man pages and the bash completion, the fleet's files (the
# rollout, the alert rules, the JSON schemas) in $datadir/scsitune; and the installed binary
# plans with the installed profiles (its --profile-dir being that directory
# under the DESTDIR). A missing default profile directory is an error that
# says how to install or run from a clone.
# Usage: check-install.sh BUILD_DIR SRCDIR
set -uo pipefail
build=$1 src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

first=$(sed -n '/^## Two commands/,/^## /p' "$src/README.md" | grep -m1 '^\./scripts/' | awk '{print $1}')
[ "$first" = ./scripts/setup-and-detect ] || fail "the README's first command is '$first', not ./scripts/setup-and-detect"
grep -q '^\$sudo cmake --install build' "$src/scripts/setup-and-detect" || fail "scripts/setup-and-detect does not install"
grep -q 'sbin/scsitune" detect' "$src/scripts/setup-and-detect" || fail "scripts/setup-and-detect does not run the installed scsitune"

DESTDIR=$work/dest cmake --install "$build" >"$work/log" 2>&1 || { fail "cmake --install: $(tail -3 "$work/log")"; exit 1; }
prefix=$(cmake -L -N "$build" | sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p')
bin=$work/dest$prefix/sbin/scsitune
[ -x "$bin" ] || fail "no $prefix/sbin/scsitune installed"
# The directory the binary looks in by default, as its help says.
dir=$("$bin" apply --help | tr -s ' \n' ' ' | sed -n 's/.*names) are looked up (default \([^ )]*\)).*/\1/p')
[ -n "$dir" ] || dir=$("$bin" apply --help | tr -s ' \n' ' ' | grep -o '(default /[^ )]*profiles)' | head -1 | tr -d '()' | cut -d' ' -f2)
[ -n "$dir" ] || fail "apply --help names no default profile directory"
for p in numa kernel-default; do
	[ -f "$work/dest$dir/$p" ] || fail "profile $p not installed in $dir (where the binary looks)"
done
for m in scsitune.8 scsitune-detect.8 scsitune-apply.8 scsitune-verify.8 scsitune-metrics.8 scsitune-revert.8 scsitune-report.8 scsitune-profile.5; do
	[ -n "$(find "$work/dest$prefix" -name "$m" -o -name "$m.gz" | head -1)" ] || fail "man page $m not installed"
done
[ -f "$work/dest$prefix/share/bash-completion/completions/scsitune" ] || fail "bash completion not installed"
# The kernel hook, executable (run-parts runs only those), in SYSCONFDIR/kernel/postinst.d.
hook=$(find "$work/dest" -path '*/kernel/postinst.d/scsitune-payload' -type f -perm -0755 | head -1)
[ -n "$hook" ] && cmp -s "$hook" "$src/payload/postinst.d/scsitune-payload" ||
	fail "the kernel hook is not installed executable in kernel/postinst.d/"
# The fleet's files (the Debian package scsitune-fleet): the rollout with its
# role beside it (and the enrolment play), the alert rules and their tests, every JSON schema.
share=$work/dest$prefix/share/scsitune
for f in ansible/rollout.yml ansible/enroll.yml ansible/roles/scsitune_rollout/tasks/main.yml ansible/roles/scsitune_rollout/tasks/enroll.yml alerts/scsitune.rules.yml; do
	cmp -s "$share/$f" "$src/fleet/$f" || fail "$prefix/share/scsitune/$f is not fleet/$f"
done
[ ! -e "$share/ansible/.ansible-lint" ] || fail "the lint settings .ansible-lint are installed"
for f in "$src"/fleet/alerts/tests/*.yml "$src"/schema/*.json; do
	d=$([ "${f##*.}" = json ] && echo schema || echo alerts/tests)
	cmp -s "$share/$d/$(basename "$f")" "$f" || fail "$prefix/share/scsitune/$d/$(basename "$f") is not installed"
done
# The installed binary and profiles plan on a fixture.
mkdir "$work/root"
tar -xJf "$src/tests/fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
"$bin" --sysroot "$work/root" apply --profile numa --profile-dir "$work/dest$dir" --dry-run >"$work/plan" 2>&1 ||
	fail "the installed scsitune cannot plan numa with the installed profiles: $(tail -2 "$work/plan")"
# A profile directory that does not exist (the installed default, when not
# installed): the message says how to install or run from a clone.
rc=0
"$bin" --sysroot "$work/root" apply --profile numa --profile-dir "$work/nope" --dry-run >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "^scsitune: profile 'numa' not found in $work/nope: no such directory (install scsitune: cmake --install build; from a source tree: --profile-dir profiles)$" "$work/err" ||
	fail "a missing profile directory: exit $rc, $(cat "$work/err")"
[ "$status" -eq 0 ] && echo "ok: setup-and-detect installs; the install has the binary, its profiles where it looks, man pages, completion, the fleet's files"
exit "$status"
