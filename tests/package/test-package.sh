#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# package tier: the Debian package as a fleet gets it, built and installed in
# Debian 12 chroots that this script makes with mmdebstrap. Nothing of this
# machine's /sys, /proc or /dev is mounted into a chroot, ever: scsitune reads
# only the fixture trees copied in (--sysroot), and the chroot's /proc and /sys
# are checked to be empty directories before and after.
#
# The fixtures (fixtures.sh; CTest package/chroot and package/build make them
# once, the cases only read them):
#   chroot OUT            Debian 12 (apt variant: Essential + apt) as
#                         OUT/cache/bookworm.tar, made once per build tree and
#                         made again when older than a day.
#   build SRC OUT VERSION `dpkg-buildpackage -us -uc -b` on this machine, in a
#                         copy of SRC's tracked files, with a clean environment.
#                         The .debs, .changes and .buildinfo go to OUT/debs/,
#                         their names with CMake's version; checked: the unit
#                         tests ran at build time, SCSITUNE_TEST_HOOKS=OFF.
#   build-clean SRC OUT VERSION
#                         The same in a fresh copy of the chroot with only
#                         build-essential and `apt-get build-dep ./` (debian/
#                         control's Build-Depends): proves the list complete.
#                         By hand (a few minutes more than build; not in
#                         scripts/test-all); uses or makes OUT/cache/bookworm.tar;
#                         then runs the case contents on what it built.
#
# The cases (cases/CASE.sh, each its own CTest test package/CASE, each on its
# own fresh chroot where it needs one):
#   contents      the .deb's Version is CMake's; its files (the binary, the
#                 completion, the profiles, the conffile, trusted-keys/,
#                 copyright, the kernel hook, every man page, the metrics
#                 timer and service), the hook -rwxr-xr-x root's,
#                 conffiles, the binary stripped and the -dbgsym holding
#                 the debug file of its build ID; scsitune-fleet (all):
#                 exactly fleet/ansible (but .ansible-lint), fleet/alerts
#                 and schema/*.json under /usr/share/scsitune/, and the
#                 two packages share no file.
#   lintian       lintian on OUT/debs/*.changes and every .deb: no error
#                 and no warning (--fail-on error,warning); an override
#                 in debian/*lintian-overrides needs a comment above it.
#   install-purge In another fresh copy (init-system-helpers added, as a
#                 host has it): `apt install ./scsitune_*.deb` (and
#                 scsitune-fleet, without Recommends)
#                 pulls the dependencies from Debian's mirror; `apt
#                 purge` at once (the dependencies stay) and
#                 the chroot's file list (type, mode, owner; size,
#                 mtime, link target) is taken. Installed again (nothing else
#                 changes): the metrics timer and service installed and
#                 not enabled (no link, systemctl --root: disabled,
#                 static; a planted link caught); the fleet's files in
#                 /usr/share/scsitune; detect on a fixture tree (= the fixture
#                 tier's golden), apply --dry-run (the profile found
#                 with no --profile-dir; = the plan tier's golden;
#                 --persist's boot unit runs /usr/sbin/scsitune),
#                 apply/verify/revert with the test hooks' variables
#                 set (ignored: a package build has no hooks), report
#                 with the shipped settings file; the user edits the
#                 conffile and adds a key; `apt purge scsitune`, and the
#                 file list equals the one before but for apt's and
#                 dpkg's records and what the user made. One chain: the
#                 purge is judged on what everything before it left.
#   role          the rollout role's package step, from scsitune-fleet's
#                 /usr/share/scsitune/ansible (the .deb unpacked; its
#                 rollout.yml passes --syntax-check finding its role beside
#                 it), run by ansible-playbook into another fresh chroot
#                 (community.general.chroot): --check installs nothing, the
#                 run installs the package with its dependencies, a second
#                 run changes nothing.
# Every step prints what failed; logs of apt and the build are shown on failure.
# A case that passed no check fails.
# Usage: test-package.sh chroot OUT
#        test-package.sh build|build-clean SRC OUT VERSION
#        test-package.sh [--case CASE] SRC OUT VERSION   (without --case: every case)
#        test-package.sh --list
#        test-package.sh lintian SRC OUT | install SRC OUT VERSION | role SRC OUT VERSION
#                       (the cases lintian, install-purge and role, as before)
# An unknown case is exit 64.
set -uo pipefail
here=$(dirname "$(realpath "$0")")
cases=(contents lintian install-purge role)
usage="usage: test-package.sh chroot OUT | build|build-clean SRC OUT VERSION | [--case CASE] SRC OUT VERSION | --list"
# shellcheck source=tests/package/package-lib.sh
. "$here/package-lib.sh"
# shellcheck source=tests/package/fixtures.sh
. "$here/fixtures.sh"

# run_case CASE: the case in a subshell (its own status, count and EXIT
# trap); a case that passed no check fails. Exit: the case's.
run_case() {
	(
		status=0 pass=0
		echo "test-package.sh: case $1"
		# shellcheck source=/dev/null
		. "$here/cases/$1.sh"
		[ "$pass" -gt 0 ] || fail "case $1: no check passed"
		echo "test-package.sh: case $1: $pass passed$([ "$status" -ne 0 ] && echo ", FAILURES above")"
		exit "$status"
	)
}

only=
case ${1:-} in
--list)
	printf '%s\n' "${cases[@]}"
	exit 0
	;;
--case)
	[ $# -ge 2 ] || { echo "test-package.sh: --case needs a case name (--list names them)" >&2; exit 64; }
	# The whole list against the name (grep -q under pipefail could read printf's SIGPIPE as "no case").
	[[ " ${cases[*]} " == *" $2 "* ]] || { echo "test-package.sh: no case '$2' (--list names them)" >&2; exit 64; }
	only=$2
	shift 2
	;;
chroot | build | build-clean) ;;
lintian) only=lintian; shift; [ $# -eq 2 ] && set -- "$@" "" ;; # as before: lintian SRC OUT
install) only=install-purge; shift ;;
role) only=role; shift ;;
esac
[ "$(id -u)" -eq 0 ] || die "the package tier makes chroots: it needs root (CI runs as root)"
case ${1:-} in
chroot)
	shift
	make_chroot "$@"
	exit
	;;
build | build-clean)
	mode=$1
	shift
	build_debs "$mode" "$@" || exit 1
	[ "$mode" = build ] || run_case contents
	exit
	;;
esac
[ $# -eq 3 ] || { echo "$usage" >&2; exit 64; }
src=$(abs "$1") out=$(abs "$2") version=$3
list=("${cases[@]}")
[ -z "$only" ] || list=("$only")
status=0
for c in "${list[@]}"; do
	run_case "$c" || status=1
done
exit "$status"
