#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report tier, through the binary:
#  - goldens: text and JSON of the committed fio outputs, the saved document,
#    and a comparison; SPEC.md's seed table end to end (synthetic runs with
#    the table's min, max and avg);
#  - bad input: every case exits with its code, prints one line naming the
#    file, nothing on stdout, nothing in the state directory; upload settings
#    (URL, auth file, CA file, settings file) are checked before anything is saved.
# The cases (cli-cases/CASE.sh, each sourced in a subshell with its own work
# directory, made by setup_case in cli-lib.sh; each its own CTest test
# report/cli/CASE; without --case, all in this order; --list prints the names;
# an unknown CASE exits 64; a case that makes no check fails):
#   goldens         ingest of the committed fio 3.33 outputs: text and JSON
#                   goldens, the saved document (its name, equal to -o json,
#                   saved once), --compare with the saved phase and file
#   old-fio         fio 2.1.4, 2.17 and 3.1 outputs with --group 0: accepted,
#                   the other versions warned, text golden, saved under the
#                   earliest start
#   groups          stonewall groups refused without --group, a group that is
#                   not there, --group 1 the randwrite group alone
#   not-comparable  the same run twice refused; another fio, numjobs, ioengine
#                   or job mix warned (stderr, text, JSON); json and json+ of
#                   the same job comparable
#   seed-table      SPEC.md's seed table end to end (37.3 % -> 9.1 %, +17.5 %)
#   bad-input       truncated, not JSON, not fio, invalid, empty, missing, a
#                   directory, a failed job, one bad among good, two bad: exit 1,
#                   one line each, nothing saved; error text before the JSON
#                   accepted with a warning
#   state-dir       a state directory under a file or read-only: exit 1,
#                   nothing printed, nothing left; one another user could
#                   write (in a 0777 directory, owned by nobody) refused, named
#                   with the fix; in a sticky directory of root's accepted; a
#                   phase directory or saved set that is a symbolic link refused
#   compare-errors  --compare of an unknown phase, a non-result file, a missing
#                   file: exit 1, nothing saved
#   stdin           "-" reads standard input, once only; garbage names stdin
#   upload          bad --upload URL (64), auth file, CA file, --config file
#                   (1): refused before anything is saved
#   credentials     a URL with user information or p= (--upload, --query,
#                   --flush: 64; url= of the settings file: 1): refused,
#                   the password in no output, nothing written; an '@' in the
#                   path or query taken
#   config-sysroot  the default settings file under --sysroot TREE is the
#                   tree's; $SCSITUNE_CONFIG and --config win; a missing --sysroot
#   usage           usage errors: 64
#   not-utf8        a job name not UTF-8: one warning, JSON and text UTF-8
#   stdout-full     stdout on /dev/full: exit 1, the error said
# Usage: test-report.sh [--case CASE] SCSITUNE FIO_FIXTURES EXPECTED_DIR [--update]
#        test-report.sh --list
set -uo pipefail
cases=(goldens old-fio groups not-comparable seed-table bad-input state-dir compare-errors stdin upload
	credentials config-sysroot usage not-utf8 stdout-full treatment)
only=
case ${1:-} in
--list) printf '%s\n' "${cases[@]}"; exit 0 ;;
--case)
	only=${2:-}
	known=0
	for c in "${cases[@]}"; do [ "$c" != "$only" ] || known=1; done
	[ "$known" = 1 ] || { echo "test-report.sh: unknown case '$only' (--list names them)" >&2; exit 64; }
	shift 2 ;;
esac
[ $# -ge 3 ] || { echo "usage: test-report.sh [--case CASE] SCSITUNE FIO_FIXTURES EXPECTED_DIR [--update] | --list" >&2; exit 64; }
# shellcheck disable=SC2034 # expected, update, py and good: used by cli-lib.sh and the cases
bin=$(realpath "$1") fixtures=$(realpath "$2") expected=$3 update=${4:-}
# shellcheck disable=SC2034
py=${PYTHON3:-python3}
# shellcheck disable=SC2034
good=$fixtures/fio-3.33-randread-2jobs-json.json
here=$(dirname "$0")
# shellcheck source=tests/report/cli-lib.sh
. "$here/cli-lib.sh"
tally=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-report-tally.XXXXXX")
trap 'rm -rf "$tally"' EXIT

status=0 checks=0 fails=0
for c in "${cases[@]}"; do
	[ -z "$only" ] || [ "$c" = "$only" ] || continue
	# shellcheck disable=SC1090 # cli-cases/*.sh
	(setup_case; . "$here/cli-cases/$c.sh"; finish_case "$c") || status=1
	if [ -f "$tally/$c" ]; then
		read -r n f <"$tally/$c"
		checks=$((checks + n)) fails=$((fails + f))
	else
		echo "FAIL case $c ended before its end (no count)"; fails=$((fails + 1))
	fi
done
echo "$checks checks, $fails failed"
exit $((status != 0 || fails > 0))
