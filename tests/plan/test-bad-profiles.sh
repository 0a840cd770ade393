#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad profiles: exit 1, exactly one line on stderr naming FILE:LINE, nothing
# on stdout (text and JSON). Usage: test-bad-profiles.sh SCSITUNE PLANDIR FIXTURES
set -uo pipefail
bin=$1 dir=$2 fixtures=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-badprof.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$fixtures/vm-virtio-scsi.tar.xz" -C "$work/root"
status=0
bad=$dir/bad

# expect RC PATTERN ARGS...: exit code, stderr one line matching PATTERN, stdout empty.
expect() {
	local want=$1 pattern=$2 rc fmt
	shift 2
	for fmt in text json; do
		rc=0
		"$bin" --sysroot "$work/root" -o "$fmt" apply "$@" >"$work/out" 2>"$work/err" || rc=$?
		if [ "$rc" -ne "$want" ]; then
			echo "FAIL apply $* (-o $fmt): exit $rc, want $want"; cat "$work/err"; status=1
		fi
		if [ -s "$work/out" ]; then
			echo "FAIL apply $* (-o $fmt): stdout not empty"; status=1
		fi
		# A usage error adds the usual "Try 'scsitune apply --help'" line.
		[ "$want" -eq 64 ] && sed -i "/^Try 'scsitune apply --help'/d" "$work/err"
		# The next step after the error is not one of its lines (scsitune(8) DIAGNOSTICS).
		sed -i '/^scsitune: hint: /d' "$work/err"
		if [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -qE -- "$pattern" "$work/err"; then
			echo "FAIL apply $* (-o $fmt): stderr is not one line matching '$pattern':"; cat "$work/err"; status=1
		fi
	done
}

d=(--dry-run --profile-dir "$dir/../../profiles")
expect 1 "^scsitune: $bad/unknown-key:3: unknown key 'schedular' in \[queue\]$" --profile "$bad/unknown-key" "${d[@]}"
expect 1 "^scsitune: $bad/bad-value:3: bad value '3' for nomerges in \[queue\] \(expected 0, 1 or 2\)$" \
	--profile "$bad/bad-value" "${d[@]}"
expect 1 "^scsitune: $bad/loop-b:2: include loop: $bad/loop-a -> $bad/loop-b -> $bad/loop-a$" \
	--profile "$bad/loop-a" "${d[@]}"
expect 1 "^scsitune: $bad/missing-include:1: include 'no-such-profile': no such profile$" \
	--profile "$bad/missing-include" "${d[@]}"
expect 1 "^scsitune: $bad/unknown-key:3: unknown key 'schedular' in \[queue\]$" --profile "$bad/include-bad" "${d[@]}"
expect 1 "^scsitune: $bad/no-scope: no \[hba\] scope: say which HBAs the profile tunes, e\.g\. '\[hba\]' and 'match_driver = mpi3mr' \('match_driver = \*' for every HBA\)$" \
	--profile "$bad/no-scope" "${d[@]}"
# The profiles there are said, as tuned-adm list does.
expect 1 "^scsitune: profile 'no-such' not found in .* \(profiles there: kernel-default, numa\)$" --profile no-such "${d[@]}"
expect 1 "^scsitune: profile $work/none: No such file or directory$" --profile "$work/none" "${d[@]}"
expect 1 "^scsitune: bad profile name '\.\.'" --profile .. "${d[@]}"
# Usage: no --profile, stray argument.
expect 64 "^scsitune: apply: --profile NAME\\|PATH is required \\(scsitune profile list names them\\)$" --dry-run
# A good profile by path works too.
rc=0
"$bin" --sysroot "$work/root" apply --profile "$dir/../../profiles/numa" --dry-run >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 0 ] && grep -q '^Profile .*numa' "$work/out" || { echo "FAIL: profile by path (exit $rc)"; cat "$work/err"; status=1; }
[ "$status" -eq 0 ] && echo "ok: bad profiles rejected with one FILE:LINE line, nothing on stdout"
exit "$status"
