# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# package/install-purge (sourced by test-package.sh; reads OUT/debs and
# OUT/cache/bookworm.tar, made by package/build and package/chroot): one
# chain in a fresh chroot, each step on what the one before left (the purge
# is judged after everything the package did): apt install pulls the
# dependencies, purged at once; installed again: detect, plan, apply, verify,
# revert, report, the kernel hook; the user's edits; apt remove; apt purge
# leaves no trace (test-package.sh's header says each step).
need python3 tar systemctl
arch=$(dpkg --print-architecture)
deb=$out/debs/scsitune_${version}_$arch.deb fleet=$out/debs/scsitune-fleet_${version}_all.deb
[ -f "$deb" ] && [ -f "$fleet" ] || die "no $deb or $(basename "$fleet") (package/build first)"
root=$out/install-root
fresh "$root" "$out"
trap 'rm -rf "$root"' EXIT
# What the user brings: the package file, a fixture tree with the
# directories apply --persist writes into, a fio output.
mkdir -p "$root/root/pkg" "$root/srv/fixture"
cp "$deb" "$fleet" "$root/root/pkg/"
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
# A host has init-system-helpers (systemd depends on it): the package's
# postinst then runs deb-systemd-helper for the metrics timer as on a host.
logged "$out/install.log" in_chroot "$root" apt-get install -y --no-install-recommends init-system-helpers ||
	die "apt-get install init-system-helpers failed in the chroot"
pkgs >"$out/packages-base"
# install_both: scsitune with its Recommends (libcurl4), scsitune-fleet
# without (ansible-core is for a control node).
install_both() {
	logged "$out/install.log" in_chroot "$root" sh -c "cd /root/pkg && apt install -y ./$(basename "$deb")" &&
		logged "$out/install.log" in_chroot "$root" sh -c "cd /root/pkg && apt install -y --no-install-recommends ./$(basename "$fleet")"
}

# 1. apt install ./scsitune_*.deb pulls the dependencies from Debian's
#    mirror; purged at once, they stay: the state before the real install.
install_both || die "apt install ./$(basename "$deb") ./$(basename "$fleet") failed in the chroot"
for p in scsitune libnuma1 libjson-c5 libinih1 libudev1 libssl3 libcurl4; do
	in_chroot "$root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null && ok ||
		fail "$p is not installed after apt install (Depends/Recommends)"
done
echo "  pulled: $(pkgs | comm -13 "$out/packages-base" - | grep -vx -e scsitune -e scsitune-fleet | tr '\n' ' ')"
logged "$out/purge.log" in_chroot "$root" apt purge -y scsitune scsitune-fleet && ok ||
	fail "apt purge scsitune scsitune-fleet (right after install) failed"
pkgs >"$out/packages-deps"
snap "$out/files-before"

# 2. The install the rest is about: nothing to pull now.
install_both || die "apt install ./$(basename "$deb") ./$(basename "$fleet") (again) failed in the chroot"
[ "$(pkgs | comm -3 "$out/packages-deps" -)" = "$(printf '\tscsitune\n\tscsitune-fleet')" ] && ok ||
	fail "the second install changed other packages than scsitune and scsitune-fleet: $(pkgs | comm -3 "$out/packages-deps" - | tr '\n\t' '  ')"
[ "$(in_chroot "$root" dpkg-query -W -f='${Version}' scsitune)" = "$version" ] && ok || fail "installed scsitune is not $version"
[ "$(in_chroot "$root" scsitune --version)" = "scsitune $version" ] && ok || fail "scsitune --version is not 'scsitune $version'"
for c in /etc/scsitune/scsitune.conf /etc/kernel/postinst.d/scsitune-payload; do
	in_chroot "$root" dpkg-query -W -f='${Conffiles}\n' scsitune | grep "^ $c " >/dev/null && ok ||
		fail "$c is not a conffile of the installed package"
done
[ -d "$root/etc/scsitune/trusted-keys" ] && ok || fail "no /etc/scsitune/trusted-keys/"
# The metrics timer and its service are installed, not enabled: no link in
# /etc/systemd, systemctl (this machine's, offline on the chroot) says
# disabled and static; the postinst's deb-systemd-helper did run (its state
# file), so nothing was left out for want of it. Control: a link as `systemctl
# enable` makes it is seen.
not_enabled() { # ROOT: prints what is enabled; exit 1 when something is
	local r=$1 links state
	links=$(find "$r/etc/systemd" -name 'scsitune-metrics*' 2>/dev/null)
	state=$(systemctl --root="$r" is-enabled scsitune-metrics.timer scsitune-metrics.service 2>&1 | tr '\n' ' ')
	[ -z "$links" ] && [ "$state" = "disabled static " ] && return 0
	echo "links: ${links:-none}; systemctl is-enabled: $state"
	return 1
}
for u in scsitune-metrics.service scsitune-metrics.timer; do
	[ -f "$root/lib/systemd/system/$u" ] && ok || fail "no /lib/systemd/system/$u after install"
done
why=$(not_enabled "$root") && ok || fail "the metrics timer is enabled after install: $why"
[ -e "$root/var/lib/systemd/deb-systemd-helper-enabled/scsitune-metrics.timer.dsh-also" ] && ok ||
	fail "the postinst's deb-systemd-helper left no state for scsitune-metrics.timer (did it run?)"
ctl=$(mktemp -d)
mkdir -p "$ctl/lib/systemd/system" "$ctl/etc/systemd/system/timers.target.wants"
cp "$root"/lib/systemd/system/scsitune-metrics.* "$ctl/lib/systemd/system/"
ln -s /lib/systemd/system/scsitune-metrics.timer "$ctl/etc/systemd/system/timers.target.wants/"
not_enabled "$ctl" >/dev/null && fail "control: an enabled timer was not seen" || ok
rm -rf "$ctl"
# scsitune-fleet's files where the README says.
for f in /usr/share/scsitune/ansible/rollout.yml /usr/share/scsitune/ansible/roles/scsitune_rollout/tasks/main.yml \
	/usr/share/scsitune/alerts/scsitune.rules.yml /usr/share/scsitune/schema/detect.schema.json; do
	[ -f "$root$f" ] && ok || fail "no $f after installing scsitune-fleet"
done
nothing_mounted "$root" "after apt install"

# run NAME RC CMD...: in the chroot, stdout in $out/NAME.out, stderr in $out/NAME.err.
run() {
	local name=$1 want=$2 rc=0
	shift 2
	in_chroot "$root" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$name: '$*' exited $rc, want $want"
		sed 's/^/    /' "$out/$name.err" | tail -10
	else
		ok
	fi
}
sys=/srv/fixture
# 2. detect from the installed binary equals the fixture tier's golden output.
#    The chroot has no /proc or /sys: detect under --sysroot needs neither.
for fmt in json text; do
	ext=$([ $fmt = json ] && echo json || echo txt)
	run detect-$fmt 0 scsitune --sysroot $sys detect -o $fmt
	sed -i "s|$sys|SYSROOT|g" "$out/detect-$fmt.err"
	# (the golden's command to run next repeats the fixture tier's relative --sysroot root)
	sed -i "s|scsitune --sysroot $sys |scsitune --sysroot root |" "$out/detect-$fmt.out"
	diff -u "$src/tests/expected/$fixture/detect.$ext" "$out/detect-$fmt.out" >/dev/null && ok ||
		fail "detect -o $fmt differs from tests/expected/$fixture/detect.$ext"
	diff -u "$src/tests/expected/$fixture/detect.$ext.stderr" "$out/detect-$fmt.err" && ok ||
		fail "detect -o $fmt: stderr differs from the golden"
done
# 3. apply finds its profile in /usr/share/scsitune/profiles with no
#    --profile-dir: the plan equals the plan tier's golden (same digest).
run plan 0 scsitune --sysroot $sys apply --profile numa --dry-run -o json
diff -u "$src/tests/plan/expected/$fixture.numa.json" "$out/plan.out" >/dev/null && ok ||
	fail "apply --profile numa --dry-run -o json differs from tests/plan/expected/$fixture.numa.json"
# --persist's boot unit runs the installed binary with the installed profile.
run persist 0 scsitune --sysroot $sys apply --profile numa --persist --dry-run -o json
python3 - "$out/persist.out" <<-'EOF' && ok || fail "apply --persist: the boot unit does not run /usr/sbin/scsitune with the installed profile numa"
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
grep -q '^applied ' "$out/apply.out" && ok || fail "apply printed no applied row"
grep -qE '^(rejected|failed) ' "$out/apply.out" && fail "apply honoured SCSITUNE_FAIL_WRITE: the package has test hooks" || ok
# Under --sysroot the journal is the tree's: /srv/fixture/var/lib/scsitune.
[ -f "$root$sys/var/lib/scsitune/journal.json" ] && ok || fail "apply left no journal in $sys/var/lib/scsitune"
run verify 0 scsitune --sysroot $sys verify
run revert 0 "${hooks[@]}" scsitune --sysroot $sys revert
[ "$(tree_hash)" = "$tree_before" ] && ok || fail "after revert the fixture tree is not what it was"
# 5. report reads the shipped settings file (every key commented out).
run report 0 scsitune report --config /etc/scsitune/scsitune.conf /root/pkg/fio.json
grep -q 'KIOPS' "$out/report.out" && ok || fail "report printed no KIOPS"
# 6. The kernel hook, run as a kernel package's postinst runs it (run-parts
#    --exit-on-error: a failing hook fails apt). No payload: exit 0, silent.
kernel_hooks() { # NAME RELEASE: stdout+stderr in $out/NAME.out
	run "$1" 0 run-parts --report --exit-on-error --arg="$2" --arg="/boot/vmlinuz-$2" /etc/kernel/postinst.d
	cat "$out/$1.err" >>"$out/$1.out"
}
kernel_hooks hook-none 6.1.0-99-amd64
[ ! -s "$out/hook-none.out" ] && ok || fail "the kernel hook, no payload: not silent: $(head -3 "$out/hook-none.out")"
# A payload for 6.1.0-57-amd64 (its manifest is what the hook looks for;
# removed again before the purge): a new kernel gets the warning, the
# payload's own kernel none (payload verify fails in the chroot, with no /proc
# and a bogus manifest: the drift check is left out, silently).
mkdir -p "$root/lib/modules/6.1.0-57-amd64/updates/scsitune"
echo '{}' >"$root/lib/modules/6.1.0-57-amd64/updates/scsitune/manifest.json"
kernel_hooks hook-new 6.1.0-99-amd64
grep -q 'scsitune: WARNING: kernel 6\.1\.0-99-amd64 is installed without a scsitune payload (payload for: 6\.1\.0-57-amd64)' \
	"$out/hook-new.out" && ok || fail "the kernel hook, a new kernel: no warning: $(head -3 "$out/hook-new.out")"
kernel_hooks hook-same 6.1.0-57-amd64
[ ! -s "$out/hook-same.out" ] && ok || fail "the kernel hook, the payload's kernel: not silent: $(head -3 "$out/hook-same.out")"
nothing_mounted "$root" "after the commands"
# What the user makes: an edited conffile, a key in trusted-keys/.
sed -i 's/^#timeout = 30/timeout = 20/' "$root/etc/scsitune/scsitune.conf"
echo "site key" >"$root/etc/scsitune/trusted-keys/site.pem"

# 7. apt remove: the conffiles stay, the hook too, without scsitune: it
#    still warns (the payload's modules stay) and still exits 0.
logged "$out/purge.log" in_chroot "$root" apt remove -y scsitune && ok || fail "apt remove scsitune failed"
[ -x "$root/etc/kernel/postinst.d/scsitune-payload" ] && [ ! -e "$root/usr/sbin/scsitune" ] && ok ||
	fail "after apt remove: the hook is not there or /usr/sbin/scsitune is"
kernel_hooks hook-removed 6.1.0-99-amd64
grep -q 'WARNING: kernel 6\.1\.0-99-amd64 is installed without a scsitune payload' "$out/hook-removed.out" && ok ||
	fail "the kernel hook, package removed: no warning: $(head -3 "$out/hook-removed.out")"
kernel_hooks hook-removed-same 6.1.0-57-amd64
[ ! -s "$out/hook-removed-same.out" ] && ok || fail "the kernel hook, package removed, the payload's kernel: not silent"
rm -r "$root/lib/modules/6.1.0-57-amd64"
rmdir "$root/lib/modules" 2>/dev/null || true

# 8. apt purge: the package's files go, the edited conffile and the hook too.
logged "$out/purge.log" in_chroot "$root" apt purge -y scsitune scsitune-fleet && ok || fail "apt purge scsitune scsitune-fleet failed"
[ -e "$root/etc/kernel/postinst.d/scsitune-payload" ] && fail "purge left /etc/kernel/postinst.d/scsitune-payload" || ok
in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' scsitune 2>/dev/null | grep '^[ri]' >/dev/null &&
	fail "dpkg still knows scsitune after purge ($(in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}' scsitune))" || ok
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
compare "$out/files-before" "$out/files-after" && ok || fail "apt purge left something behind or changed something (above)"
# Control: a file left in a package directory is seen.
{ cat "$out/files-after"; echo 'f 644 root:root 1 0 ./usr/share/scsitune/leftover -> '; } >"$out/files-control"
compare "$out/files-before" "$out/files-control" >/dev/null && fail "control: the comparison missed a planted leftover" || ok
[ -f "$root/etc/scsitune/trusted-keys/site.pem" ] && ok || fail "purge removed the user's key"
[ -e "$root/etc/scsitune/scsitune.conf" ] && fail "purge left /etc/scsitune/scsitune.conf" || ok
find "$root" -xdev -name '*scsitune*' ! -path "$root/etc/scsitune*" ! -path "$root/var/lib/scsitune*" \
	! -path "$root/srv/*" ! -path "$root/root/pkg*" ! -path "$root/var/lib/dpkg/*" ! -path "$root/var/cache/apt/*" \
	! -path "$root/var/log/*" | sed 's/^/  left: /' | grep . && fail "files named *scsitune* left after purge" || ok
nothing_mounted "$root" "at the end"
[ $status -eq 0 ] && echo "ok: installed with its dependencies, detect/apply/verify/revert/report ran, purged without a trace"
