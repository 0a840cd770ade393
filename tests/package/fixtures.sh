# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# The package tier's fixtures (sourced by test-package.sh; its header says
# what each makes): make_chroot OUT (package/chroot) and build_debs MODE SRC
# OUT VERSION (package/build; build-clean by hand). What they write, the
# cases only read: OUT/cache/bookworm.tar, OUT/debs/ and OUT/build.log.

# make_chroot OUT: OUT/cache/bookworm.tar, made again when older than a day.
make_chroot() {
	local out tarball mm
	out=$(abs "${1:?usage: test-package.sh chroot OUT}")
	need mmdebstrap tar
	tarball=$out/cache/bookworm.tar
	mkdir -p "$out/cache"
	if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mmin -1440)" ]; then
		echo "ok: $tarball from $(date -r "$tarball" '+%F %T') reused"
		return 0
	fi
	rm -f "$tarball" "$tarball.tmp"
	# apt's lists are kept: apt inside the chroot installs without an update.
	mm=(mmdebstrap --variant=apt --skip=chroot/mount --skip=cleanup/apt/lists --format=tar bookworm "$tarball.tmp"
		"deb http://deb.debian.org/debian bookworm main"
		"deb http://deb.debian.org/debian bookworm-updates main"
		"deb http://deb.debian.org/debian-security bookworm-security main")
	# The tests' cache outside the clone (tests/lib/ci-cache.sh, entry
	# package-chroot): keyed on this command, mmdebstrap's version and this
	# machine's apt index of the archive (InRelease); like the tarball in the
	# build tree, an entry older than a day is made again (the mirror moves).
	# shellcheck source=../lib/ci-cache.sh
	. "$here/../lib/ci-cache.sh"
	ci_cache_key package-chroot "=${mm[*]}" "=mmdebstrap $(dpkg-query -W -f '${Version}' mmdebstrap 2>/dev/null)" \
		"=apt index $(cat /var/lib/apt/lists/*_InRelease 2>/dev/null | sha256sum | cut -c1-64)"
	if CI_CACHE_MAX_AGE_MIN=1440 ci_cache_fetch package-chroot "$CI_CACHE_KEY" "$out/cache/chroot-entry"; then
		mv -f "$out/cache/chroot-entry/bookworm.tar" "$tarball" && rm -rf "$out/cache/chroot-entry"
		echo "ok: $tarball reused from the tests' cache ($(du -m "$tarball" | cut -f1) MiB)"
		return 0
	fi
	logged "$out/cache/mmdebstrap.log" "${mm[@]}" ||
		die "mmdebstrap could not make a Debian 12 chroot (network to deb.debian.org?)"
	mv "$tarball.tmp" "$tarball"
	echo "ok: $tarball made ($(du -m "$tarball" | cut -f1) MiB)"
	mkdir -p "$out/cache/chroot-entry" && cp "$tarball" "$out/cache/chroot-entry/" &&
		ci_cache_store package-chroot "$CI_CACHE_KEY" "$out/cache/chroot-entry"
	rm -rf "$out/cache/chroot-entry"
}

# build_debs MODE SRC OUT VERSION: MODE build (on this machine) or
# build-clean (in a fresh chroot); OUT/debs/ holds the .debs, .changes and
# .buildinfo, their names CMake's version. Returns non-zero on a failure.
build_debs() {
	# (src, out, version and tree are global: the EXIT trap removes the build
	# tree, and build-clean runs the case contents on what it built)
	local mode=$1 where arch deb dbg f
	src=$(abs "${2:?usage: test-package.sh build|build-clean SRC OUT VERSION}") out=$(abs "${3:?}") version=${4:?}
	need tar dpkg-deb readelf
	rm -f "$out/build-deps.log" "$out/build.log"
	if [ "$mode" = build ]; then
		# On this machine, in a copy of the sources; dpkg-buildpackage checks
		# the Build-Depends are installed (install-deps --test installs them).
		need dpkg-buildpackage
		tree=$out/build-host
		rm -rf "$tree"
		copy_source "$src" "$tree/scsitune"
		trap 'rm -rf "$tree"' EXIT
		logged "$out/build.log" sh -c 'cd "$1" && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" LC_ALL=C.UTF-8 \
			dpkg-buildpackage -us -uc -b' sh "$tree/scsitune" || die "dpkg-buildpackage -us -uc -b failed (build.log)"
		where="on this machine"
	else
		# In a fresh chroot with only build-essential and the Build-Depends:
		# dpkg-buildpackage's own check and the compiler prove the list complete.
		tree=$out/build-root/build
		[ -f "$out/cache/bookworm.tar" ] || "$0" chroot "$out" || return 1
		fresh "$out/build-root" "$out"
		trap 'rm -rf "$out/build-root"' EXIT
		copy_source "$src" "$tree/scsitune"
		# Quicker dpkg in the throw-away build chroot: no fsync, no man pages,
		# documentation or translations unpacked (man-db's trigger has nothing to do).
		printf '%s\n' force-unsafe-io 'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/doc/*' \
			'path-exclude=/usr/share/locale/*' >"$out/build-root/etc/dpkg/dpkg.cfg.d/package-tier"
		logged "$out/build-deps.log" in_chroot "$out/build-root" apt-get install -y --no-install-recommends build-essential ||
			die "apt-get install build-essential failed in the chroot"
		logged "$out/build-deps.log" in_chroot "$out/build-root" sh -c 'cd /build/scsitune && apt-get build-dep -y --no-install-recommends ./' ||
			die "apt-get build-dep ./ failed in the chroot"
		logged "$out/build.log" in_chroot "$out/build-root" sh -c 'cd /build/scsitune && dpkg-buildpackage -us -uc -b' ||
			die "dpkg-buildpackage failed in a chroot with only build-essential and the Build-Depends"
		nothing_mounted "$out/build-root" "after the build"
		where="in a clean Debian 12 chroot (build-essential + Build-Depends only)"
	fi
	grep -q '100% tests passed' "$out/build.log" && ok || fail "the unit tests did not run at build time (build.log)"
	grep -qE -- '-DSCSITUNE_TEST_HOOKS=OFF' "$out/build.log" && ok || fail "the build did not configure SCSITUNE_TEST_HOOKS=OFF"
	rm -rf "$out/debs"
	mkdir -p "$out/debs"
	cp "$tree"/*.deb "$tree"/*.changes "$tree"/*.buildinfo "$out/debs/" || die "the build left no .deb/.changes"
	arch=$(dpkg --print-architecture)
	deb=$out/debs/scsitune_${version}_$arch.deb dbg=$out/debs/scsitune-dbgsym_${version}_$arch.deb
	for f in "$deb" "$dbg" "$out/debs/scsitune-fleet_${version}_all.deb" "$out/debs/scsitune_${version}_$arch.changes"; do
		[ -f "$f" ] && ok || fail "no $(basename "$f") (the version must be CMake's $version): $(ls "$out/debs" | tr '\n' ' ')"
	done
	[ $status -eq 0 ] && echo "ok: built $where: $(cd "$out/debs" && ls | tr '\n' ' ')"
	return $status
}
