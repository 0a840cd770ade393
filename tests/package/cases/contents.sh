# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# package/contents (sourced by test-package.sh; reads OUT/debs, made by
# package/build): the .deb's Version is CMake's, its files, the kernel hook
# executable and root's, conffiles, the binary stripped and the -dbgsym holding
# the debug file of its build ID.
need tar dpkg-deb readelf
arch=$(dpkg --print-architecture)
deb=$out/debs/scsitune_${version}_$arch.deb dbg=$out/debs/scsitune-dbgsym_${version}_$arch.deb
[ -f "$deb" ] && [ -f "$dbg" ] || die "no $deb or $(basename "$dbg") (package/build first)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] && ok || fail "the .deb's Version is $(dpkg-deb -f "$deb" Version), not $version"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$out/contents"
for p in /usr/sbin/scsitune /usr/share/bash-completion/completions/scsitune \
	/usr/share/scsitune/profiles/numa /usr/share/scsitune/profiles/kernel-default \
	/etc/scsitune/scsitune.conf /etc/scsitune/trusted-keys/ /usr/share/doc/scsitune/copyright \
	/etc/kernel/postinst.d/scsitune-payload /usr/share/man/man5/scsitune-profile.5.gz; do
	grep -qxF "$p" "$out/contents" && ok || fail "the .deb lacks $p"
done
# The metrics timer and its service (dh_installsystemd; enabled by no one: install-purge checks).
for p in /lib/systemd/system/scsitune-metrics.service /lib/systemd/system/scsitune-metrics.timer; do
	grep -qxF "$p" "$out/contents" && ok || fail "the .deb lacks $p"
done
for page in "$src"/man/scsitune*.8.scd; do
	p=/usr/share/man/man8/$(basename "$page" .scd).gz
	grep -qxF "$p" "$out/contents" && ok || fail "the .deb lacks $p"
done
# The kernel hook is run by run-parts: executable, root's.
hook_mode=$(dpkg-deb -c "$deb" | awk '$6 == "./etc/kernel/postinst.d/scsitune-payload" {print $1, $2}')
[ "$hook_mode" = "-rwxr-xr-x root/root" ] && ok ||
	fail "/etc/kernel/postinst.d/scsitune-payload is '$hook_mode', not -rwxr-xr-x root/root"
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | sort >"$out/conffiles"
[ "$(cat "$out/conffiles")" = "$(printf '%s\n' /etc/kernel/postinst.d/scsitune-payload /etc/scsitune/scsitune.conf)" ] && ok ||
	fail "conffiles is '$(tr '\n' ' ' <"$out/conffiles")', not /etc/kernel/postinst.d/scsitune-payload /etc/scsitune/scsitune.conf"
# The -dbgsym holds the debug info of exactly this binary (its build ID).
tmp=$(mktemp -d)
dpkg-deb -x "$deb" "$tmp"
id=$(readelf -n "$tmp/usr/sbin/scsitune" | awk '/Build ID/ {print $3}')
readelf -S "$tmp/usr/sbin/scsitune" | grep '\.debug_info' >/dev/null && fail "/usr/sbin/scsitune is not stripped" || ok
rm -rf "$tmp"
[ -n "$id" ] && ok || fail "/usr/sbin/scsitune has no build ID"
dbg_files=$(dpkg-deb -c "$dbg")
grep -qF "./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" <<<"$dbg_files" && ok ||
	fail "the -dbgsym has no debug file for build ID $id"
# scsitune-fleet (Architecture: all): exactly the fleet's files under
# /usr/share/scsitune/ (the role and playbook but .ansible-lint, the alert
# rules and their tests, every schema), none of them in scsitune, and no
# file of scsitune's in it.
fleet=$out/debs/scsitune-fleet_${version}_all.deb
if [ -f "$fleet" ]; then
	[ "$(dpkg-deb -f "$fleet" Version) $(dpkg-deb -f "$fleet" Architecture)" = "$version all" ] && ok ||
		fail "scsitune-fleet is $(dpkg-deb -f "$fleet" Version) $(dpkg-deb -f "$fleet" Architecture), not $version all"
	dpkg-deb -c "$fleet" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|' | grep -v '^/usr/share/doc/scsitune-fleet/' | sort >"$out/contents-fleet"
	# The files the build had (copy_source: git's list, else the tree).
	files() { if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$src" && git ls-files -co --exclude-standard "$@"); else (cd "$src" && find "$@" -type f); fi; }
	{ files fleet/ansible fleet/alerts | grep -v '/\.ansible-lint$' | sed 's|^fleet/|/usr/share/scsitune/|'
		files schema | grep '\.json$' | sed 's|^|/usr/share/scsitune/|'; } | sort >"$out/contents-fleet-want"
	diff -u "$out/contents-fleet-want" "$out/contents-fleet" >"$out/contents-fleet.diff" && ok ||
		{ fail "scsitune-fleet's files are not fleet/ansible, fleet/alerts and schema/*.json:"; sed 's/^/    /' "$out/contents-fleet.diff"; }
	grep -E '^/usr/share/scsitune/(ansible|alerts|schema)/' "$out/contents" | sed 's/^/    in scsitune: /' | grep . &&
		fail "the fleet's files are in scsitune too" || ok
	grep -E '^/(usr/sbin|etc|lib)/|/profiles/' "$out/contents-fleet" | sed 's/^/    in scsitune-fleet: /' | grep . &&
		fail "scsitune's files are in scsitune-fleet" || ok
else
	fail "no $(basename "$fleet") (package/build first)"
fi
[ $status -eq 0 ] && echo "ok: the .debs: version $version, their files, the hook 0755 root's, conffiles, stripped, the -dbgsym of build ID $id, scsitune-fleet's files"
