#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The next step (issue 31, item 7): where a stranger's command exits
# non-zero for a reason they can fix, the error line is followed by one line,
# "scsitune: hint: ", that says what to run or where to look. Each case: the exit code, the
# error line, the next-step line (exactly), and nothing else on stderr.
# Cases: a --sysroot that is missing, not a tree or an archive; metrics
# --textfile missing; a profile path that is
# not there; apply of another profile over an applied one (revert first); verify with no journal, with the journal's profile deleted and
# broken; report on missing, empty and non-JSON files; --compare, --html,
# --auth-file and --fio naming what is not there; --query of a service that
# does not answer (127.0.0.1, a closed port).
# Usage: test-next-step.sh SCSITUNE FIXTURES PROFILE_DIR
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-next.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0 checks=0
fail() { echo "FAIL: $*"; status=1; }
mkdir "$work/root" "$work/prof" "$work/empty"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
cp "$profiles/numa" "$profiles/kernel-default" "$work/prof/"
fio=$(dirname "$0")/../report/fio/fio-3.33-randread-1job-jsonplus.json

# case LABEL WANT_EXIT EXPECTED_STDERR -- CMD...: stderr exactly EXPECTED_STDERR (lines joined by \n).
case_is() {
	local label=$1 want=$2 expected=$3 rc=0
	shift 4
	checks=$((checks + 1))
	timeout 60 "$@" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "$label: exit $rc, want $want: $(cat "$work/err")"
	[ "$(cat "$work/err")" = "$expected" ] ||
		fail "$label: stderr is
$(sed 's/^/    /' "$work/err")
  want
$(printf '%s\n' "$expected" | sed 's/^/    /')"
}
S="$bin --sysroot $work/root"

capture="scsitune: hint: a tree is made on the host, as root, by tests/fixtures/capture-host.sh NAME DIR of the source tree (scsitune(8))"
case_is "--sysroot missing" 1 "scsitune: --sysroot $work/nothere: No such file or directory
$capture" -- "$bin" --sysroot "$work/nothere" detect
case_is "--sysroot not a tree" 1 "scsitune: --sysroot $work/empty: no sys/ directory: not a captured root tree
$capture" -- "$bin" --sysroot "$work/empty" detect

case_is "--sysroot an archive" 1 "scsitune: --sysroot $fixtures/dual-socket-mpi3mr.tar.xz: Not a directory
scsitune: hint: a --sysroot is a directory; an archive of one is extracted first: mkdir DIR && tar -xf $fixtures/dual-socket-mpi3mr.tar.xz -C DIR" -- \
	"$bin" --sysroot "$fixtures/dual-socket-mpi3mr.tar.xz" detect
case_is "metrics --textfile missing" 1 "scsitune: --textfile $work/node-exporter: No such file or directory
scsitune: hint: it is node_exporter's --collector.textfile.directory (Debian's prometheus-node-exporter makes /var/lib/prometheus/node-exporter); to make it: mkdir -p $work/node-exporter" -- \
	$S metrics --textfile "$work/node-exporter" --state-dir "$work/state"

case_is "apply --profile PATH missing" 1 "scsitune: profile ./missing: No such file or directory
scsitune: hint: a profile is a path to a file or a name in $work/prof: kernel-default, numa" -- \
	$S apply --profile ./missing --profile-dir "$work/prof" --state-dir "$work/state"

case_is "verify, no journal" 1 "scsitune: no journal in $work/state: no apply changed this host with this state directory
scsitune: hint: to check a profile all the same: scsitune --sysroot $work/root verify --state-dir $work/state --profile NAME (scsitune profile list names them)" -- \
	$S verify --state-dir "$work/state"

$S apply --profile numa --profile-dir "$work/prof" --state-dir "$work/state" >/dev/null 2>&1 || fail "apply numa: exit $?"
# Another profile over an applied one: refused (the first's own settings would stay), nothing written
# (but the lock file, which names its last holder).
before=$(cd "$work" && find root state -type f ! -path state/lock -print0 | sort -z | xargs -0 sha256sum | sha256sum)
case_is "apply of another profile over an applied one" 1 "scsitune: profile numa is applied ($work/state/journal.json): kernel-default over it would leave the settings only numa made
scsitune: hint: to switch profiles, undo that apply first (back to the values before it): scsitune --sysroot $work/root revert --state-dir $work/state; then apply kernel-default" -- \
	$S apply --profile kernel-default --profile-dir "$work/prof" --state-dir "$work/state"
[ "$(cd "$work" && find root state -type f ! -path state/lock -print0 | sort -z | xargs -0 sha256sum | sha256sum)" = "$before" ] ||
	fail "apply of another profile: the tree or the state directory changed"
$S apply --profile numa --profile-dir "$work/prof" --state-dir "$work/state" >/dev/null 2>&1 ||
	fail "apply numa again (the same profile): exit $?"
next_journal="scsitune: hint: the last apply used that profile; to check another: scsitune --sysroot $work/root verify --state-dir $work/state --profile NAME; to undo apply: scsitune --sysroot $work/root revert --state-dir $work/state"
mv "$work/prof/numa" "$work/numa"
case_is "verify, the journal's profile deleted" 1 "scsitune: profile $work/prof/numa: No such file or directory
$next_journal" -- $S verify --state-dir "$work/state"
echo 'garbage [' >"$work/prof/numa"
case_is "verify, the journal's profile broken" 1 "scsitune: $work/prof/numa:1: syntax error: expected [section] or key = value
$next_journal" -- $S verify --state-dir "$work/state"
mv "$work/numa" "$work/prof/numa"

fio_next="scsitune: hint: a run is what fio --output-format=json+ --output FILE writes, or report --run makes (scsitune-report(8))"
: >"$work/empty.json"
echo hello >"$work/hello.json"
case_is "report, files that are not fio's" 1 "scsitune: $work/missing.json: No such file or directory
scsitune: $work/empty.json: empty file, no JSON document
scsitune: $work/hello.json: not JSON: no line starts with '{' (begins \"hello\")
$fio_next" -- "$bin" report "$work/missing.json" "$work/empty.json" "$work/hello.json"
case_is "report --compare FILE missing" 1 "scsitune: --compare $work/ref.json: No such file or directory
scsitune: hint: --compare takes a phase that report --phase saved, or a file of it in $work/state/reports/PHASE/ (scsitune-report(8))" -- \
	"$bin" report --state-dir "$work/state" --compare "$work/ref.json" "$fio"
case_is "report --html in a missing directory" 1 "scsitune: --html $work/no dir/r.html: $work/no dir: No such file or directory
scsitune: hint: to make the directory: mkdir -p '$work/no dir'" -- "$bin" report --html "$work/no dir/r.html" "$fio"
auth_next="scsitune: hint: an auth file is one line, user:password, Bearer TOKEN or Token TOKEN, mode 0600 (scsitune-report(8), CREDENTIALS)"
case_is "report --upload --auth-file missing" 1 "scsitune: --auth-file $work/auth: No such file or directory
$auth_next" -- "$bin" report --state-dir "$work/state" --upload http://127.0.0.1:1/write --auth-file "$work/auth" "$fio"
case_is "report --query --auth-file missing" 1 "scsitune: --auth-file $work/auth: No such file or directory
$auth_next" -- "$bin" report --query http://127.0.0.1:1 --phase tuned --auth-file "$work/auth"
case_is "report --run --fio missing" 1 "scsitune: --fio $work/fio: No such file or directory
scsitune: hint: --fio names fio's program; Debian's is /usr/bin/fio (apt-get install fio)" -- \
	$S report --run --fio "$work/fio" --device sdb --state-dir "$work/state"
# A closed port on the loopback: refused at once, three tries (1 s, 2 s apart), announced.
checks=$((checks + 1))
rc=0
timeout 60 "$bin" report --query http://127.0.0.1:1 --phase tuned >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "query, nothing listening: exit $rc, want 1"
[ "$(tail -1 "$work/err")" = "scsitune: hint: check the URL (--query, or url= in [upload] of the settings file) and that the service answers" ] ||
	fail "query, nothing listening: no next step: $(cat "$work/err")"
grep -q "^scsitune: query http://127.0.0.1:1/api/v1/export: .*[Cc]onnect" "$work/err" ||
	fail "query, nothing listening: the error line: $(cat "$work/err")"

echo "$checks cases"
exit $status
