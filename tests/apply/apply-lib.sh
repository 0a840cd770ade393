# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# What the cases of run-apply.sh share (sourced by it): setup_tree, the fresh
# tree each case runs on, its snapshot and the valgrind wrapper; fail, run,
# same_tree (run and same_tree count the case's checks); the output helpers.
# Uses bin, archive, profiles, profile, name and here from run-apply.sh.

setup_tree() { # the fixture extracted to a new $work/root, $before its snapshot, $state
	work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-apply-$name.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	mkdir "$work/root"
	tar -xJf "$archive" -C "$work/root"
	# Debian 12's /etc/default/irqbalance (irqbalance 1.9.2-1, as shipped):
	# apply adds the bans for the IRQs it pins, revert puts it back.
	mkdir -p "$work/root/etc/default"
	install -m 0640 "$here/irqbalance.default" "$work/root/etc/default/irqbalance"
	# The directories apply --persist writes into, as on a Debian host with udev and systemd.
	mkdir -p "$work/root/etc/udev/rules.d" "$work/root/etc/modprobe.d" "$work/root/etc/systemd/system/multi-user.target.wants"
	before=$(snap)
	# APPLY_MEMCHECK=1 (the memcheck label; not for sanitizer builds): every run under valgrind.
	if [ "${APPLY_MEMCHECK:-}" = 1 ]; then
		printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect %s "$@"\n' \
			"$bin" >"$work/vg"
		chmod +x "$work/vg"
		bin=$work/vg
	fi
	state=$work/state
	status=0
	checks=0
}
snap() { (cd "$work/root" && find . -printf '%y %m %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
fail() { echo "FAIL $name: $*"; status=1; }
st() { "$bin" --sysroot "$work/root" "$@"; }
run() { # run EXPECTED_RC LABEL ARGS...: output in $work/out, $work/err
	local want=$1 label=$2 rc=0
	shift 2
	checks=$((checks + 1))
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$label: exit $rc, want $want"
		sed 's/^/    /' "$work/out" "$work/err" | tail -20
	fi
}
# The text rows with their wrapped continuation lines joined (a row's settings wrap under its column).
joined() { awk '/^ / { sub(/^ +/, " "); printf "%s", $0; next } NR > 1 { print "" } { printf "%s", $0 } END { print "" }' "$work/out"; }
# Command lines the output suggests, with their " \" continuations joined.
commands() { sed -e :a -e '/ \\$/{N; s/ \\\n */ /; ta' -e '}' "$work/out"; }
# grep ARGS over joined(), read from a file: a pipe into grep -q fails under pipefail when grep stops early.
jgrep() { joined >"$work/joined" && grep "$@" "$work/joined"; }
same_tree() { checks=$((checks + 1)); [ "$(snap)" = "$before" ] || { fail "$1: the tree is not byte-identical to the snapshot"; }; }
journal_path() { # first journal entry (state applied, or $2) for a setting
	python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
for e in j["changes"]:
    if e["setting"]==sys.argv[2] and e["state"]==sys.argv[3]: print(e["path"], e["object"]); break' "$state/journal.json" "$1" "${2:-applied}"
}
# finish_case CASE: the end of a case's subshell; a case that made no check fails.
finish_case() {
	[ "$checks" -gt 0 ] || fail "case $1 made no check"
	[ "$status" -eq 0 ] && echo "ok $name/$1: $checks checks"
	exit "$status"
}
