#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# apply tier: apply / verify / revert round trip on a fixture tree extracted
# to a temporary directory (--sysroot), with the journal and lock in a
# separate --state-dir; fault injection (needs -DSCSITUNE_TEST_HOOKS=ON) and
# the lock. After every revert the tree must be byte-identical to the
# snapshot taken before the first apply.
# Usage: run-apply.sh [--case CASE] SCSITUNE FIXTURE_ARCHIVE PROFILE_DIR [PROFILE]
#        run-apply.sh --list
# PROFILE: numa by default; a fixture without mpi3mr HBAs (which numa leaves
# alone) names tests/profiles/numa-every-hba.
# The cases (cases/CASE.sh, each sourced in a subshell on a fresh copy of the
# tree, set up by setup_tree in apply-lib.sh; without --case, all in this order;
# --list prints the names; an unknown CASE exits 64; a case that makes no
# check (run, same_tree) fails):
#   round-trip       apply, verify 0, a hand change is drift (2) and left alone by
#                    revert, as is a recorded nr_requests; revert --force: the tree
#                    byte-identical; revert and verify without a journal
#   profile-changed  the profile file edited since apply: verify 5, not drift (2)
#   faults           EINVAL, EIO and an ignored write reported, the rest applied,
#                    revert restores
#   abort            apply aborted half way: journal and log replay, revert restores
#   disk-keys        revert finds disks by key: renamed since apply, a key no disk
#                    has, the disk back, a key two disks share
#   earlier-boot     revert in another boot writes no IRQ of the earlier one
#   lock             apply under a held lock: exit 1, one line
#   irqbalance       the bans added to IRQBALANCE_ARGS in place, a hand edit left
#                    alone, a value that is not plain untouched; with no IRQ to
#                    pin (vm-virtio-scsi), the file left as it is
#   persist          apply --persist: udev rules, the boot unit, modprobe.d;
#                    verify checks them, revert removes them
set -uo pipefail
cases=(round-trip profile-changed faults abort disk-keys earlier-boot lock irqbalance persist)
only=
case ${1:-} in
--list) printf '%s\n' "${cases[@]}"; exit 0 ;;
--case)
	only=${2:-}
	known=0
	for c in "${cases[@]}"; do [ "$c" != "$only" ] || known=1; done
	[ "$known" = 1 ] || { echo "run-apply.sh: unknown case '$only' (--list names them)" >&2; exit 64; }
	shift 2 ;;
esac
[ $# -ge 3 ] || { echo "usage: run-apply.sh [--case CASE] SCSITUNE FIXTURE_ARCHIVE PROFILE_DIR [PROFILE] | --list" >&2; exit 64; }
# shellcheck disable=SC2034 # profiles and profile: used by the cases
bin=$1 archive=$2 profiles=$3 profile=${4:-numa}
name=$(basename "$archive" .tar.xz)
here=$(dirname "$0")
# shellcheck source=tests/apply/apply-lib.sh
. "$here/apply-lib.sh"

status=0
for c in "${cases[@]}"; do
	[ -z "$only" ] || [ "$c" = "$only" ] || continue
	# shellcheck disable=SC1090 # cases/*.sh
	(setup_tree; . "$here/cases/$c.sh"; finish_case "$c") || status=1
done
[ "$status" -eq 0 ] && [ -z "$only" ] && echo "ok $name: apply/verify/revert round trip, faults, abort and lock"
exit "$status"
