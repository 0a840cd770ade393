#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet/lint: fleet/ansible/rollout.yml, enroll.yml and their role through Debian's
# ansible-playbook --syntax-check and ansible-lint (fleet/ansible/.ansible-lint,
# offline). Ansible's files stay in a temp dir. Fails (never skips) when either
# is not installed.
# Usage: test-lint.sh SRCDIR
set -uo pipefail
# Ansible refuses to run in a locale that is not UTF-8 ("Ansible requires
# the locale encoding to be UTF-8"): the tests choose theirs, whatever the
# caller's (a CI or a shell with LC_ALL=C).
export LC_ALL=C.UTF-8
src=$(realpath "$1")
for p in ansible-playbook ansible-lint; do
	command -v "$p" >/dev/null || { echo "FAIL: $p not installed (scripts/install-deps --test installs it)"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-lint.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME=$T ANSIBLE_HOME=$T/ansible-home ANSIBLE_LOCAL_TEMP=$T/tmp NO_COLOR=1 ANSIBLE_NOCOLOR=1
fails=0
cd "$src/fleet/ansible" || exit 1
for pb in rollout.yml enroll.yml; do
	if ansible-playbook --syntax-check -i localhost, "$pb" >"$T/syntax.log" 2>&1; then
		echo "ok   ansible-playbook --syntax-check $pb"
	else
		echo "FAIL ansible-playbook --syntax-check $pb:"; sed 's/^/  /' "$T/syntax.log"; fails=$((fails + 1))
	fi
done
if ansible-lint -p rollout.yml enroll.yml >"$T/lint.log" 2>&1; then
	echo "ok   ansible-lint: $(grep -E '^(Passed|Failed)' "$T/lint.log" | tail -1)"
else
	echo "FAIL ansible-lint:"; sed 's/^/  /' "$T/lint.log"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
