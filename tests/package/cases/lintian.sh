# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# package/lintian (sourced by test-package.sh; reads OUT/debs, made by
# package/build): lintian on the .changes and every .deb, no error and no
# warning (--fail-on error,warning); an override in debian/*lintian-overrides
# needs a comment above it.
need lintian
changes=$(ls "$out"/debs/*.changes 2>/dev/null) || die "no .changes in $out/debs (package/build first)"
# An override needs a comment above it (or above the group of overrides it is
# in): a warning is not silenced without a written reason.
for f in "$src"/debian/*lintian-overrides "$src"/debian/source/lintian-overrides; do
	[ -f "$f" ] || continue
	awk -v f="$f" '/^[[:space:]]*$/ {prev = ""; next} /^#/ {prev = "#"; next}
		prev != "#" {print "FAIL: " f ":" NR ": override without a comment giving the reason: " $0; bad = 1}
		END {exit bad}' "$f" && ok || status=1
done
rc=0
lintian --fail-on error,warning --display-info "$changes" "$out"/debs/*.deb >"$out/lintian.log" 2>&1 || rc=$?
grep -v '^running with root privileges' "$out/lintian.log"
[ $rc -eq 0 ] && ok || fail "lintian exited $rc (an error or a warning above)"
grep -q '^[EW]: ' "$out/lintian.log" && fail "lintian reported an error or a warning" || ok
[ $status -eq 0 ] && echo "ok: lintian: no error, no warning on $(basename "$changes") and $(cd "$out/debs" && ls ./*.deb | wc -l) .deb"
