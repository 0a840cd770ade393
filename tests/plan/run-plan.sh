#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# plan tier: `scsitune --sysroot TREE apply --profile P --dry-run` for the
# shipped profiles (and tests/profiles/numa-every-hba: numa on every HBA, for
# the fixtures without mpi3mr), text and JSON, diffed against tests/plan/expected/.
# Usage: run-plan.sh SCSITUNE FIXTURE_ARCHIVE PROFILE_DIR EXPECTED_DIR [--update]
set -euo pipefail
bin=$1 archive=$2 profiles=$3 expected=$4 update=${5:-}
name=$(basename "$archive" .tar.xz)
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-plan-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$archive" -C "$work/root"
before=$(cd "$work/root" && find . -printf '%p %s %T@\n' | sort | sha256sum)

status=0
every=$(cd "$(dirname "$0")/../profiles" && pwd)/numa-every-hba
for profile in numa kernel-default "$every"; do
	# -v (every row, with its note) for numa on every HBA, which has the most kinds of rows.
	fmts="text json"
	[ "$profile" = "$every" ] && fmts="text json vtext"
	for fmt in $fmts; do
		args=(-o "$fmt")
		[ "$fmt" = vtext ] && args=(-o text -v)
		ext=$(case $fmt in json) echo json ;; vtext) echo v.txt ;; *) echo txt ;; esac)
		out=$work/$name.$(basename "$profile").$ext
		rc=0
		# The test profile by a path that does not depend on where the tree is (text wraps at 80 columns).
		(cd "$(dirname "$every")" && "$bin" --sysroot "$work/root" apply \
			--profile "$([ "$profile" = "$every" ] && echo ./numa-every-hba || echo "$profile")" \
			--profile-dir "$profiles" --dry-run "${args[@]}") >"$out" 2>"$out.stderr" || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "FAIL $name $profile -o $fmt: exited $rc"; cat "$out.stderr"; status=1; continue
		fi
		sed -i "s|$work/root|SYSROOT|g" "$out.stderr"
		if [ "$update" = --update ]; then
			cp "$out" "$out.stderr" "$expected/"
			continue
		fi
		for f in "$out" "$out.stderr"; do
			diff -u "$expected/$(basename "$f")" "$f" || { echo "FAIL: $(basename "$f") differs"; status=1; }
		done
		if [ "$fmt" = json ]; then
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"] == 1' "$out" ||
				{ echo "FAIL $name $profile: stdout is not one plan document"; status=1; }
		fi
	done
done
# PLAN_MEMCHECK=1 (the memcheck label; not for sanitizer builds): valgrind-clean,
# both profiles (the plan engine, the renderer, the include path).
if [ "${PLAN_MEMCHECK:-}" = 1 ]; then
	for profile in numa kernel-default "$every"; do
		valgrind -q --leak-check=full --error-exitcode=99 "$bin" --sysroot "$work/root" apply --profile "$profile" \
			--profile-dir "$profiles" --dry-run -o json >/dev/null 2>"$work/vg" ||
			{ echo "FAIL $name $profile: valgrind"; cat "$work/vg"; status=1; }
	done
	rc=0
	valgrind -q --leak-check=full --error-exitcode=99 "$bin" --sysroot "$work/root" apply \
		--profile "$(dirname "$0")/bad/include-bad" --dry-run >/dev/null 2>"$work/vg" || rc=$?
	[ "$rc" -eq 1 ] || { echo "FAIL $name: valgrind on a bad profile"; cat "$work/vg"; status=1; }
fi
# A dry run reads the tree and changes nothing in it.
after=$(cd "$work/root" && find . -printf '%p %s %T@\n' | sort | sha256sum)
[ "$before" = "$after" ] || { echo "FAIL $name: the tree changed under --dry-run"; status=1; }
[ "$status" -eq 0 ] && echo "ok $name: plans match tests/plan/expected"
exit "$status"
