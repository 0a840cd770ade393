# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# The helpers of test-package.sh (sourced by it): the checks' counters (fail,
# ok, die), programs needed, the chroot commands (in_chroot, logged,
# nothing_mounted, fresh) and copy_source. Nothing of this machine's /sys,
# /proc or /dev is ever mounted into a chroot: nothing_mounted checks it.
# Globals: status and pass (each case its own, test-package.sh's run_case).
fail() { echo "FAIL: $*"; status=1; }
die() { echo "FAIL: $*"; exit 1; }
# ok: one check passed (a case with none fails).
ok() { pass=$((pass + 1)); return 0; }
status=0 pass=0

need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || die "$p not installed (scripts/install-deps --test installs it)"
	done
}
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
		[ -z "$(ls -A "$root/$d")" ] && ok || fail "$when: the chroot's /$d is not empty"
	done
	! grep -qF " $root/" /proc/self/mounts && ok || fail "$when: something is mounted below $root"
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
