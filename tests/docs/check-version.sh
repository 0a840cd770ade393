#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One version, from one place: project(VERSION) in CMakeLists.txt. Everything
# else that names the program's version must say the same:
#  - `scsitune --version` prints "scsitune VERSION" (the binary under test);
#  - debian/changelog's newest entry is VERSION (a native package: no Debian
#    revision), read with dpkg-parsechangelog;
#  - every "scsitune X.Y.Z" / "scsitune_X.Y.Z" in README.md, tests/README.md,
#    docs/, man/ and schema/ (the schema documents carry only their layout's
#    schema_version today, which is not the program's version).
# Control: the same checks against a wrong version must fail, so a check that
# matches nothing cannot pass.
# Usage: check-version.sh SCSITUNE PROJECT_VERSION SOURCE_DIR
set -uo pipefail
bin=${1:?usage: check-version.sh SCSITUNE PROJECT_VERSION SOURCE_DIR}
want=${2:?usage: check-version.sh SCSITUNE PROJECT_VERSION SOURCE_DIR}
src=${3:?usage: check-version.sh SCSITUNE PROJECT_VERSION SOURCE_DIR}

[[ $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: CMake project version '$want' is not X.Y.Z"; exit 1; }
command -v dpkg-parsechangelog >/dev/null || { echo "FAIL: dpkg-parsechangelog not installed (dpkg-dev)"; exit 1; }

got_bin=$("$bin" --version) || { echo "FAIL: $bin --version exited $?"; exit 1; }
got_deb=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version) ||
	{ echo "FAIL: dpkg-parsechangelog could not read $src/debian/changelog"; exit 1; }
# Mentions in the documents: FILE:LINE:VERSION.
mentions=$(cd "$src" && grep -rnoE 'scsitune[ _]v?[0-9]+\.[0-9]+\.[0-9]+' README.md tests/README.md docs man schema |
	sed -E 's/scsitune[ _]v?//')

# check VERSION: prints one line per disagreement, returns their count (capped).
check() {
	local v=$1 n=0 m
	[ "$got_bin" = "scsitune $v" ] || { echo "  scsitune --version says '$got_bin', not 'scsitune $v'"; n=$((n + 1)); }
	[ "$got_deb" = "$v" ] || { echo "  debian/changelog says $got_deb, not $v"; n=$((n + 1)); }
	while IFS= read -r m; do
		[ -n "$m" ] || continue
		[ "${m##*:}" = "$v" ] || { echo "  ${m%:*} names version ${m##*:}, not $v"; n=$((n + 1)); }
	done <<<"$mentions"
	return $((n > 100 ? 100 : n))
}

status=0
if ! out=$(check "$want"); then
	echo "FAIL: not everything says version $want (CMakeLists.txt project()):"
	printf '%s\n' "$out"
	status=1
fi
if out=$(check 0.0.0-wrong); then
	echo "FAIL: control: the checks passed for a wrong version"
	status=1
fi
[ $status -eq 0 ] && echo "ok: version $want everywhere ($(printf '%s\n' "$mentions" | grep -c . ) mention(s) in the documents, --version, debian/changelog)"
exit $status
