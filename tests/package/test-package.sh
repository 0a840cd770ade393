#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# package tier: the Debian package as a fleet gets it, built and installed in
# Debian 12 chroots that this script makes with mmdebstrap. Nothing of this
# machine's /sys, /proc or /dev is mounted into a chroot, ever: scsitune reads
# only the fixture trees copied in (--sysroot), and the chroot's /proc and /sys
# are checked to be empty directories before and after.
#
#   chroot OUT            Debian 12 (apt variant: Essential + apt) as
#                         OUT/cache/bookworm.tar, made once per build tree and
#                         made again when older than a day.
#   build SRC OUT VERSION `dpkg-buildpackage -us -uc -b` on this machine, in a
#                         copy of SRC's tracked files, with a clean environment.
#                         The .debs, .changes and .buildinfo go to OUT/debs/;
#                         their names (CMake's version), contents, conffiles,
#                         the stripped binary and the -dbgsym's build ID are
#                         checked, and that the unit tests ran at build time.
#   build-clean SRC OUT VERSION
#                         The same in a fresh copy of the chroot with only
#                         build-essential and `apt-get build-dep ./` (debian/
#                         control's Build-Depends): proves the list complete.
#                         By hand (a few minutes more than build; not in
#                         scripts/test-all); uses or makes OUT/cache/bookworm.tar.
#   lintian SRC OUT       lintian on OUT/debs/*.changes and every .deb: no error
#                         and no warning (--fail-on error,warning); an override
#                         in debian/*lintian-overrides needs a comment above it.
#   install SRC OUT VERSION
#                         In another fresh copy: `apt install ./scsitune_*.deb`
#                         pulls the dependencies from Debian's mirror; `apt
#                         purge scsitune` at once (the dependencies stay) and
#                         the chroot's file list (type, mode, owner; size,
#                         mtime, link target) is taken. Installed again (nothing else
#                         changes): detect on a fixture tree (= the fixture
#                         tier's golden), apply --dry-run (the profile found
#                         with no --profile-dir; = the plan tier's golden;
#                         --persist's boot unit runs /usr/sbin/scsitune),
#                         apply/verify/revert with the test hooks' variables
#                         set (ignored: a package build has no hooks), report
#                         with the shipped settings file; the user edits the
#                         conffile and adds a key; `apt purge scsitune`, and the
#                         file list equals the one before but for apt's and
#                         dpkg's records and what the user made.
# Every step prints what failed; logs of apt and the build are shown on failure.
set -uo pipefail
mode=${1:?usage: test-package.sh chroot|build|build-clean|lintian|install ...}
shift

fail() { echo "FAIL: $*"; status=1; }
die() { echo "FAIL: $*"; exit 1; }
status=0

need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || die "$p not installed (scripts/install-deps --test installs it)"
	done
}
[ "$(id -u)" -eq 0 ] || die "the package tier makes chroots: it needs root (CI runs as root)"
# abs PATH: absolute (the steps change directory).
abs() { realpath -m "$1"; }

# in_chroot ROOT CMD...: a clean environment; nothing mounted.
in_chroot() {
	local root=$1
	shift
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}
# logged LOG CMD...: run CMD with its output in LOG (appended), shown (last 40
# lines) on failure; prints how long it took.
logged() {
	local log=$1 rc=0 t0=$SECONDS
	shift
	"$@" >>"$log" 2>&1 || rc=$?
	echo "  ($((SECONDS - t0)) s) ${*: -1}"
	if [ $rc -ne 0 ]; then
		echo "--- $* exited $rc; last lines of $log:"
		tail -40 "$log" | sed 's/^/    /'
	fi
	return $rc
}
# nothing_mounted ROOT WHEN: the chroot's /proc and /sys are empty, nothing is mounted below ROOT.
nothing_mounted() {
	local root=$1 when=$2 d
	for d in proc sys; do
		[ -d "$root/$d" ] || continue
		[ -z "$(ls -A "$root/$d")" ] || fail "$when: the chroot's /$d is not empty"
	done
	! grep -qF " $root/" /proc/self/mounts || fail "$when: something is mounted below $root"
}
# fresh ROOT OUT: a new chroot from the cached tarball, with this machine's
# resolver settings so that apt inside reaches Debian's mirror.
fresh() {
	local root=$1 out=$2
	rm -rf "$root"
	mkdir -p "$root"
	tar -xf "$out/cache/bookworm.tar" -C "$root" || die "cannot extract $out/cache/bookworm.tar"
	rm -f "$root/etc/resolv.conf"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
	nothing_mounted "$root" "new chroot"
}
# copy_source SRC DEST: the files git tracks (and untracked, not ignored ones);
# without git, the tree minus build directories.
copy_source() {
	local src=$1 dest=$2
	mkdir -p "$dest"
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$dest"
	else
		tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$dest"
	fi
}

case $mode in
chroot)
	out=$(abs "${1:?usage: test-package.sh chroot OUT}")
	need mmdebstrap tar
	tarball=$out/cache/bookworm.tar
	mkdir -p "$out/cache"
	if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mmin -1440)" ]; then
		echo "ok: $tarball from $(date -r "$tarball" '+%F %T') reused"
		exit 0
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
	. "$(dirname "$(realpath "$0")")/../lib/ci-cache.sh"
	ci_cache_key package-chroot "=${mm[*]}" "=mmdebstrap $(dpkg-query -W -f '${Version}' mmdebstrap 2>/dev/null)" \
		"=apt index $(cat /var/lib/apt/lists/*_InRelease 2>/dev/null | sha256sum | cut -c1-64)"
	if CI_CACHE_MAX_AGE_MIN=1440 ci_cache_fetch package-chroot "$CI_CACHE_KEY" "$out/cache/chroot-entry"; then
		mv -f "$out/cache/chroot-entry/bookworm.tar" "$tarball" && rm -rf "$out/cache/chroot-entry"
		echo "ok: $tarball reused from the tests' cache ($(du -m "$tarball" | cut -f1) MiB)"
		exit 0
	fi
	logged "$out/cache/mmdebstrap.log" "${mm[@]}" ||
		die "mmdebstrap could not make a Debian 12 chroot (network to deb.debian.org?)"
	mv "$tarball.tmp" "$tarball"
	echo "ok: $tarball made ($(du -m "$tarball" | cut -f1) MiB)"
	mkdir -p "$out/cache/chroot-entry" && cp "$tarball" "$out/cache/chroot-entry/" &&
		ci_cache_store package-chroot "$CI_CACHE_KEY" "$out/cache/chroot-entry"
	rm -rf "$out/cache/chroot-entry"
	;;

build | build-clean)
	src=$(abs "${1:?usage: test-package.sh build|build-clean SRC OUT VERSION}") out=$(abs "${2:?}") version=${3:?}
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
		[ -f "$out/cache/bookworm.tar" ] || "$0" chroot "$out" || exit 1
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
	grep -q '100% tests passed' "$out/build.log" || fail "the unit tests did not run at build time (build.log)"
	grep -qE -- '-DSCSITUNE_TEST_HOOKS=OFF' "$out/build.log" || fail "the build did not configure SCSITUNE_TEST_HOOKS=OFF"
	rm -rf "$out/debs"
	mkdir -p "$out/debs"
	cp "$tree"/*.deb "$tree"/*.changes "$tree"/*.buildinfo "$out/debs/" || die "the build left no .deb/.changes"
	arch=$(dpkg --print-architecture)
	deb=$out/debs/scsitune_${version}_$arch.deb dbg=$out/debs/scsitune-dbgsym_${version}_$arch.deb
	for f in "$deb" "$dbg" "$out/debs/scsitune_${version}_$arch.changes"; do
		[ -f "$f" ] || fail "no $(basename "$f") (the version must be CMake's $version): $(ls "$out/debs" | tr '\n' ' ')"
	done
	[ $status -eq 0 ] || exit 1
	[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "the .deb's Version is $(dpkg-deb -f "$deb" Version), not $version"
	dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$out/contents"
	for p in /usr/sbin/scsitune /usr/share/bash-completion/completions/scsitune \
		/usr/share/scsitune/profiles/numa /usr/share/scsitune/profiles/kernel-default \
		/etc/scsitune/scsitune.conf /etc/scsitune/trusted-keys/ /usr/share/doc/scsitune/copyright \
		/etc/kernel/postinst.d/scsitune-payload /usr/share/man/man5/scsitune-profile.5.gz; do
		grep -qxF "$p" "$out/contents" || fail "the .deb lacks $p"
	done
	for page in "$src"/man/scsitune*.8.scd; do
		p=/usr/share/man/man8/$(basename "$page" .scd).gz
		grep -qxF "$p" "$out/contents" || fail "the .deb lacks $p"
	done
	# The kernel hook is run by run-parts: executable, root's.
	hook_mode=$(dpkg-deb -c "$deb" | awk '$6 == "./etc/kernel/postinst.d/scsitune-payload" {print $1, $2}')
	[ "$hook_mode" = "-rwxr-xr-x root/root" ] ||
		fail "/etc/kernel/postinst.d/scsitune-payload is '$hook_mode', not -rwxr-xr-x root/root"
	dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | sort >"$out/conffiles"
	[ "$(cat "$out/conffiles")" = "$(printf '%s\n' /etc/kernel/postinst.d/scsitune-payload /etc/scsitune/scsitune.conf)" ] ||
		fail "conffiles is '$(tr '\n' ' ' <"$out/conffiles")', not /etc/kernel/postinst.d/scsitune-payload /etc/scsitune/scsitune.conf"
	# The -dbgsym holds the debug info of exactly this binary (its build ID).
	tmp=$(mktemp -d)
	dpkg-deb -x "$deb" "$tmp"
	id=$(readelf -n "$tmp/usr/sbin/scsitune" | awk '/Build ID/ {print $3}')
	readelf -S "$tmp/usr/sbin/scsitune" | grep '\.debug_info' >/dev/null && fail "/usr/sbin/scsitune is not stripped"
	rm -rf "$tmp"
	[ -n "$id" ] || fail "/usr/sbin/scsitune has no build ID"
	dbg_files=$(dpkg-deb -c "$dbg")
	grep -qF "./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" <<<"$dbg_files" ||
		fail "the -dbgsym has no debug file for build ID $id"
	[ $status -eq 0 ] && echo "ok: built $where: $(cd "$out/debs" && ls | tr '\n' ' ')"
	exit $status
	;;

lintian)
	src=$(abs "${1:?usage: test-package.sh lintian SRC OUT}") out=$(abs "${2:?}")
	need lintian
	changes=$(ls "$out"/debs/*.changes 2>/dev/null) || die "no .changes in $out/debs (package/build first)"
	# An override needs a comment above it (or above the group of overrides it is
# in): a warning is not silenced without a written reason.
	for f in "$src"/debian/*lintian-overrides "$src"/debian/source/lintian-overrides; do
		[ -f "$f" ] || continue
		awk -v f="$f" '/^[[:space:]]*$/ {prev = ""; next} /^#/ {prev = "#"; next}
			prev != "#" {print "FAIL: " f ":" NR ": override without a comment giving the reason: " $0; bad = 1}
			END {exit bad}' "$f" || status=1
	done
	rc=0
	lintian --fail-on error,warning --display-info "$changes" "$out"/debs/*.deb >"$out/lintian.log" 2>&1 || rc=$?
	grep -v '^running with root privileges' "$out/lintian.log"
	[ $rc -eq 0 ] || fail "lintian exited $rc (an error or a warning above)"
	grep -q '^[EW]: ' "$out/lintian.log" && fail "lintian reported an error or a warning"
	[ $status -eq 0 ] && echo "ok: lintian: no error, no warning on $(basename "$changes") and $(cd "$out/debs" && ls ./*.deb | wc -l) .deb"
	exit $status
	;;

install)
	src=$(abs "${1:?usage: test-package.sh install SRC OUT VERSION}") out=$(abs "${2:?}") version=${3:?}
	need python3 tar
	arch=$(dpkg --print-architecture)
	deb=$out/debs/scsitune_${version}_$arch.deb
	[ -f "$deb" ] || die "no $deb (package/build first)"
	root=$out/install-root
	fresh "$root" "$out"
	trap 'rm -rf "$root"' EXIT
	# What the user brings: the package file, a fixture tree with the
	# directories apply --persist writes into, a fio output.
	mkdir -p "$root/root/pkg" "$root/srv/fixture"
	cp "$deb" "$root/root/pkg/"
	cp "$src/tests/report/fio/fio-3.33-randread-2jobs-json.json" "$root/root/pkg/fio.json"
	fixture=dual-socket-mpi3mr
	tar -xJf "$src/tests/fixtures/$fixture.tar.xz" -C "$root/srv/fixture"
	mkdir -p "$root/srv/fixture/etc/systemd/system/multi-user.target.wants" "$root/srv/fixture/etc/udev/rules.d"
	# The host the tree stands for has the package installed: the boot unit runs its scsitune.
	install -D -m 0755 /dev/null "$root/srv/fixture/usr/sbin/scsitune"
	# snap FILE: every path below the root with type, mode and owner; for all
	# but directories (whose times change with their entries) also size,
	# modification time (ns) and link target: a file written again shows.
	snap() {
		(cd "$root" && { find . -xdev -type d -printf '%y %m %u:%g %p\n'
			find . -xdev ! -type d -printf '%y %m %u:%g %s %T@ %p -> %l\n'; } | sort >"$1")
	}
	tree_hash() { (cd "$root/srv/fixture" && find . -path ./var/lib/scsitune -prune -o -type f -print0 | sort -z |
		xargs -0 sha256sum | sha256sum); }
	tree_before=$(tree_hash)
	pkgs() { in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" {print $2}' | sort; }
	pkgs >"$out/packages-base"

	# 1. apt install ./scsitune_*.deb pulls the dependencies from Debian's
	#    mirror; purged at once, they stay: the state before the real install.
	logged "$out/install.log" in_chroot "$root" sh -c "cd /root/pkg && apt install -y ./$(basename "$deb")" ||
		die "apt install ./$(basename "$deb") failed in the chroot"
	for p in scsitune libnuma1 libjson-c5 libinih1 libudev1 libssl3 libcurl4; do
		in_chroot "$root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null ||
			fail "$p is not installed after apt install (Depends/Recommends)"
	done
	echo "  pulled: $(pkgs | comm -13 "$out/packages-base" - | grep -vx scsitune | tr '\n' ' ')"
	logged "$out/purge.log" in_chroot "$root" apt purge -y scsitune || fail "apt purge scsitune (right after install) failed"
	pkgs >"$out/packages-deps"
	snap "$out/files-before"

	# 2. The install the rest is about: nothing to pull now.
	logged "$out/install.log" in_chroot "$root" sh -c "cd /root/pkg && apt install -y ./$(basename "$deb")" ||
		die "apt install ./$(basename "$deb") (again) failed in the chroot"
	[ "$(pkgs | comm -3 "$out/packages-deps" -)" = "$(printf '\tscsitune')" ] ||
		fail "the second install changed other packages than scsitune: $(pkgs | comm -3 "$out/packages-deps" - | tr '\n\t' '  ')"
	[ "$(in_chroot "$root" dpkg-query -W -f='${Version}' scsitune)" = "$version" ] || fail "installed scsitune is not $version"
	[ "$(in_chroot "$root" scsitune --version)" = "scsitune $version" ] || fail "scsitune --version is not 'scsitune $version'"
	for c in /etc/scsitune/scsitune.conf /etc/kernel/postinst.d/scsitune-payload; do
		in_chroot "$root" dpkg-query -W -f='${Conffiles}\n' scsitune | grep "^ $c " >/dev/null ||
			fail "$c is not a conffile of the installed package"
	done
	[ -d "$root/etc/scsitune/trusted-keys" ] || fail "no /etc/scsitune/trusted-keys/"
	nothing_mounted "$root" "after apt install"

	# run NAME RC CMD...: in the chroot, stdout in $out/NAME.out, stderr in $out/NAME.err.
	run() {
		local name=$1 want=$2 rc=0
		shift 2
		in_chroot "$root" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
		if [ $rc -ne "$want" ]; then
			fail "$name: '$*' exited $rc, want $want"
			sed 's/^/    /' "$out/$name.err" | tail -10
		fi
	}
	sys=/srv/fixture
	# 2. detect from the installed binary equals the fixture tier's golden output.
	#    The chroot has no /proc or /sys: detect under --sysroot needs neither.
	for fmt in json text; do
		ext=$([ $fmt = json ] && echo json || echo txt)
		run detect-$fmt 0 scsitune --sysroot $sys detect -o $fmt
		sed -i "s|$sys|SYSROOT|g" "$out/detect-$fmt.err"
		diff -u "$src/tests/expected/$fixture/detect.$ext" "$out/detect-$fmt.out" >/dev/null ||
			fail "detect -o $fmt differs from tests/expected/$fixture/detect.$ext"
		diff -u "$src/tests/expected/$fixture/detect.$ext.stderr" "$out/detect-$fmt.err" ||
			fail "detect -o $fmt: stderr differs from the golden"
	done
	# 3. apply finds its profile in /usr/share/scsitune/profiles with no
	#    --profile-dir: the plan equals the plan tier's golden (same digest).
	run plan 0 scsitune --sysroot $sys apply --profile numa --dry-run -o json
	diff -u "$src/tests/plan/expected/$fixture.numa.json" "$out/plan.out" >/dev/null ||
		fail "apply --profile numa --dry-run -o json differs from tests/plan/expected/$fixture.numa.json"
	# --persist's boot unit runs the installed binary with the installed profile.
	run persist 0 scsitune --sysroot $sys apply --profile numa --persist --dry-run -o json
	python3 - "$out/persist.out" <<-'EOF' || fail "apply --persist: the boot unit does not run /usr/sbin/scsitune with the installed profile numa"
		import json, sys
		d = json.load(open(sys.argv[1]))
		unit = [c for c in d["changes"] if c["object"] == "persist:boot-unit"]
		# The installed profile by its name (the package's upgrades apply at boot), no --profile-dir.
		want = 'ExecStart="/usr/sbin/scsitune" apply --profile "numa" --state-dir /run/scsitune'
		assert len(unit) == 1 and unit[0]["state"] == "change" and want in unit[0]["desired"].splitlines(), unit
	EOF
	# 4. apply, verify, revert for real on the fixture tree; the test hooks'
	#    variables are set and must change nothing (no hooks in a package build).
	hooks=(env SCSITUNE_FAIL_WRITE=queue/rq_affinity:EINVAL SCSITUNE_TEST_ABORT_AFTER=1)
	run apply 0 "${hooks[@]}" scsitune --sysroot $sys apply --profile numa
	grep -q '^applied ' "$out/apply.out" || fail "apply printed no applied row"
	grep -qE '^(rejected|failed) ' "$out/apply.out" && fail "apply honoured SCSITUNE_FAIL_WRITE: the package has test hooks"
	# Under --sysroot the journal is the tree's: /srv/fixture/var/lib/scsitune.
	[ -f "$root$sys/var/lib/scsitune/journal.json" ] || fail "apply left no journal in $sys/var/lib/scsitune"
	run verify 0 scsitune --sysroot $sys verify
	run revert 0 "${hooks[@]}" scsitune --sysroot $sys revert
	[ "$(tree_hash)" = "$tree_before" ] || fail "after revert the fixture tree is not what it was"
	# 5. report reads the shipped settings file (every key commented out).
	run report 0 scsitune report --config /etc/scsitune/scsitune.conf /root/pkg/fio.json
	grep -q 'KIOPS' "$out/report.out" || fail "report printed no KIOPS"
	# 6. The kernel hook, run as a kernel package's postinst runs it (run-parts
	#    --exit-on-error: a failing hook fails apt). No payload: exit 0, silent.
	kernel_hooks() { # NAME RELEASE: stdout+stderr in $out/NAME.out
		run "$1" 0 run-parts --report --exit-on-error --arg="$2" --arg="/boot/vmlinuz-$2" /etc/kernel/postinst.d
		cat "$out/$1.err" >>"$out/$1.out"
	}
	kernel_hooks hook-none 6.1.0-99-amd64
	[ ! -s "$out/hook-none.out" ] || fail "the kernel hook, no payload: not silent: $(head -3 "$out/hook-none.out")"
	# A payload for 6.1.0-57-amd64 (its manifest is what the hook looks for;
	# removed again before the purge): a new kernel gets the warning, the
	# payload's own kernel none (payload verify fails in the chroot, with no /proc
	# and a bogus manifest: the drift check is left out, silently).
	mkdir -p "$root/lib/modules/6.1.0-57-amd64/updates/scsitune"
	echo '{}' >"$root/lib/modules/6.1.0-57-amd64/updates/scsitune/manifest.json"
	kernel_hooks hook-new 6.1.0-99-amd64
	grep -q 'scsitune: WARNING: kernel 6\.1\.0-99-amd64 is installed without a scsitune payload (payload for: 6\.1\.0-57-amd64)' \
		"$out/hook-new.out" || fail "the kernel hook, a new kernel: no warning: $(head -3 "$out/hook-new.out")"
	kernel_hooks hook-same 6.1.0-57-amd64
	[ ! -s "$out/hook-same.out" ] || fail "the kernel hook, the payload's kernel: not silent: $(head -3 "$out/hook-same.out")"
	nothing_mounted "$root" "after the commands"
	# What the user makes: an edited conffile, a key in trusted-keys/.
	sed -i 's/^#timeout = 30/timeout = 20/' "$root/etc/scsitune/scsitune.conf"
	echo "site key" >"$root/etc/scsitune/trusted-keys/site.pem"

	# 7. apt remove: the conffiles stay, the hook too, without scsitune: it
	#    still warns (the payload's modules stay) and still exits 0.
	logged "$out/purge.log" in_chroot "$root" apt remove -y scsitune || fail "apt remove scsitune failed"
	[ -x "$root/etc/kernel/postinst.d/scsitune-payload" ] && [ ! -e "$root/usr/sbin/scsitune" ] ||
		fail "after apt remove: the hook is not there or /usr/sbin/scsitune is"
	kernel_hooks hook-removed 6.1.0-99-amd64
	grep -q 'WARNING: kernel 6\.1\.0-99-amd64 is installed without a scsitune payload' "$out/hook-removed.out" ||
		fail "the kernel hook, package removed: no warning: $(head -3 "$out/hook-removed.out")"
	kernel_hooks hook-removed-same 6.1.0-57-amd64
	[ ! -s "$out/hook-removed-same.out" ] || fail "the kernel hook, package removed, the payload's kernel: not silent"
	rm -r "$root/lib/modules/6.1.0-57-amd64"
	rmdir "$root/lib/modules" 2>/dev/null || true

	# 8. apt purge: the package's files go, the edited conffile and the hook too.
	logged "$out/purge.log" in_chroot "$root" apt purge -y scsitune || fail "apt purge scsitune failed"
	[ -e "$root/etc/kernel/postinst.d/scsitune-payload" ] && fail "purge left /etc/kernel/postinst.d/scsitune-payload"
	in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' scsitune 2>/dev/null | grep '^[ri]' >/dev/null &&
		fail "dpkg still knows scsitune after purge ($(in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' scsitune))"
	snap "$out/files-after"
	# Allowed to differ: apt's and dpkg's records, caches and logs; what the
	# user made: the key in trusted-keys/ (its directories stay) and the
	# fixture tree (written by apply and revert: same contents, checked above,
	# new times; its state directory with apply's lock).
	compare() {
		python3 - "$1" "$2" <<-'EOF'
			import re, sys
			ok = re.compile(r"\./(var/lib/dpkg|var/lib/apt|var/cache/apt|var/cache/debconf|var/log|var/cache/ldconfig)(/|$)"
			                r"|\./etc/ld\.so\.cache$|\./srv/fixture(/|$)"
			                r"|\./etc/scsitune(/trusted-keys(/site\.pem)?)?$")
			def paths(f):
			    out = {}
			    for line in open(f):
			        line = line.rstrip("\n")
			        fields = line.split(" ", 3 if line[0] == "d" else 5)
			        out[fields[-1].split(" -> ")[0]] = line
			    return out
			a, b = paths(sys.argv[1]), paths(sys.argv[2])
			bad = 0
			for k in sorted(set(a) | set(b)):
			    if a.get(k) == b.get(k) or ok.match(k):
			        continue
			    what = "left behind" if k not in a else "removed" if k not in b else "changed"
			    if bad < 40:
			        print(f"  {what}: {k}")
			    bad += 1
			if bad > 40:
			    print(f"  ... {bad} differences in all")
			sys.exit(1 if bad else 0)
		EOF
	}
	compare "$out/files-before" "$out/files-after" || fail "apt purge left something behind or changed something (above)"
	# Control: a file left in a package directory is seen.
	{ cat "$out/files-after"; echo 'f 644 root:root 1 0 ./usr/share/scsitune/leftover -> '; } >"$out/files-control"
	compare "$out/files-before" "$out/files-control" >/dev/null && fail "control: the comparison missed a planted leftover"
	[ -f "$root/etc/scsitune/trusted-keys/site.pem" ] || fail "purge removed the user's key"
	[ -e "$root/etc/scsitune/scsitune.conf" ] && fail "purge left /etc/scsitune/scsitune.conf"
	find "$root" -xdev -name '*scsitune*' ! -path "$root/etc/scsitune*" ! -path "$root/var/lib/scsitune*" \
		! -path "$root/srv/*" ! -path "$root/root/pkg*" ! -path "$root/var/lib/dpkg/*" ! -path "$root/var/cache/apt/*" \
		! -path "$root/var/log/*" | sed 's/^/  left: /' | grep . && fail "files named *scsitune* left after purge"
	nothing_mounted "$root" "at the end"
	[ $status -eq 0 ] && echo "ok: installed with its dependencies, detect/apply/verify/revert/report ran, purged without a trace"
	exit $status
	;;
role)
	# The rollout role's package step (fleet/ansible/roles/scsitune_rollout/
	# tasks/package.yml) run by ansible-playbook against a fresh chroot
	# (community.general.chroot, Debian's ansible package): a host as the
	# fleet has it (python3 and python3-apt, what Ansible's apt module runs
	# with), scsitune not installed. --check first (nothing installed), then
	# the real run (the package installed, its dependencies pulled, scsitune
	# runs), then again (nothing changed).
	src=$(abs "${1:?}") out=$(abs "${2:?}") version=${3:?}
	need ansible-playbook
	arch=$(dpkg --print-architecture)
	deb=$out/debs/scsitune_${version}_$arch.deb
	[ -f "$deb" ] || die "no $deb (package/build first)"
	[ -f "$out/cache/bookworm.tar" ] || die "no $out/cache/bookworm.tar (package/chroot first)"
	root=$out/role-root
	fresh "$root" "$out"
	work=$(mktemp -d)
	trap 'rm -rf "$root" "$work"' EXIT
	logged "$out/role-host.log" in_chroot "$root" apt-get install -y --no-install-recommends python3 python3-apt ||
		die "apt-get install python3 python3-apt failed in the chroot"
	cat >"$work/play.yml" <<-'YML'
		- name: The rollout role's package step, alone
		  hosts: all
		  gather_facts: false
		  tasks:
		    - name: Package
		      ansible.builtin.include_role:
		        name: scsitune_rollout
		        tasks_from: package
	YML
	# play NAME ARGS...: ansible-playbook into the chroot; its output in $out/role-NAME.log
	play() {
		local name=$1
		shift
		env ANSIBLE_ROLES_PATH="$src/fleet/ansible/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
			ANSIBLE_LOCAL_TEMP="$work/ansible-local" ANSIBLE_REMOTE_TEMP=/tmp/.ansible-tmp \
			ansible-playbook -i "$root," -c community.general.chroot \
			-e ansible_python_interpreter=/usr/bin/python3 -e "scsitune_deb=$deb" "$@" "$work/play.yml" \
			>"$out/role-$name.log" 2>&1
	}
	# recap NAME: the play recap's "changed=N failed=N" for the host
	recap() { sed -n 's/.*: ok=[0-9]* *\(changed=[0-9]*\) .*\(failed=[0-9]*\).*/\1 \2/p' "$out/role-$1.log" | tail -1; }
	installed() { in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}${Version}' scsitune 2>/dev/null; }
	play check --check || fail "the package step in --check mode failed: $(tail -5 "$out/role-check.log" | tr '\n' ' ')"
	[ -z "$(installed | grep '^ii')" ] || fail "--check installed scsitune"
	play install || fail "the package step failed: $(grep -E 'FAILED|fatal|msg' "$out/role-install.log" | head -5 | tr '\n' ' ')"
	[ "$(recap install)" = "changed=4 failed=0" ] ||
		fail "first run: want changed=4 failed=0 (directory, copy, apt deb, libcurl4), got '$(recap install)'"
	[ "$(installed)" = "ii $version" ] || fail "after the role: scsitune is '$(installed)', want 'ii $version'"
	[ "$(in_chroot "$root" scsitune --version)" = "scsitune $version" ] || fail "scsitune --version in the host after the role"
	for p in libnuma1 libjson-c5 libinih1 libcurl4; do
		in_chroot "$root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null ||
			fail "$p not installed by the role (the package's Depends, and libcurl4 its Recommends)"
	done
	play again || fail "the package step, second run, failed"
	[ "$(recap again)" = "changed=0 failed=0" ] || fail "second run: want changed=0 failed=0, got '$(recap again)'"
	nothing_mounted "$root" "after the role"
	[ $status -eq 0 ] && echo "ok: the role's package step (ansible-playbook, chroot connection): --check installs nothing, installs $version with its dependencies, a second run changes nothing"
	exit $status
	;;
*)
	die "unknown mode $mode"
	;;
esac
