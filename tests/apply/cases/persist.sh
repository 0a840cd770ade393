# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case persist of run-apply.sh (sourced in a subshell on a fresh tree):
# apply --persist writes the udev rules, the boot unit and its link,
# modprobe.d; verify checks them, revert removes them.
# 6. --persist: a udev rule per tuned disk, the boot unit and its enabling
# link, modprobe.d for driver parameters; verify checks them; a hand edit is
# drift and revert leaves it; revert --force removes everything.
rules=$work/root/etc/udev/rules.d/90-scsitune.rules
unit=$work/root/etc/systemd/system/scsitune-apply.service
wants=$work/root/etc/systemd/system/multi-user.target.wants/scsitune-apply.service
mp=$work/root/etc/modprobe.d/scsitune.conf
printf 'include = %s\n[module:mpi3mr]\npoll_queues = 2\n' "$profile" >"$work/persist-profile"
before=$(snap)
src=$(cd "$(dirname "$0")/../.." && pwd)
run 0 "apply --persist --dry-run -o json" st apply --profile "$work/persist-profile" --profile-dir "$profiles" --persist --dry-run -o json
cp "$work/out" "$work/persist-plan.json"
"${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/plan.schema.json" "$work/persist-plan.json" >/dev/null ||
	fail "persist: the dry-run plan does not validate against schema/plan.schema.json"
grep -q '"class": "persist"' "$work/persist-plan.json" || fail "persist: no persist rows in the dry-run plan"
# The boot unit runs the installed scsitune (this build's $sbindir/scsitune): not
# installed in the root, its two rows are not applicable and say so.
installed=$(python3 -c 'import json,re,sys
d=json.load(open(sys.argv[1]))
u=[c for c in d["changes"] if c["object"]=="persist:boot-unit"][0]
assert u["state"]=="not-applicable" and "is not installed here" in u["note"] and "cmake --install" in u["note"], u
e=[c for c in d["changes"] if c["object"]=="persist:boot-unit-enable"][0]
assert e["state"]=="not-applicable", e
print(re.search(r"ExecStart=\"([^\"]+)\"", u["desired"]).group(1))' "$work/persist-plan.json") ||
	fail "persist: a boot unit planned though scsitune is not installed in the root"
# apply --persist itself refuses (exit 1, one line with the reason and the
# fix), before its first write: a --persist that persists nothing must not
# look like it worked.
before=$(snap)
run 1 "apply --persist, scsitune not installed: refused" st apply --profile "$profile" --profile-dir "$profiles" --persist \
	--state-dir "$work/refused-state"
grep -q "^scsitune: --persist: .* is not installed here (the boot unit runs it): install scsitune (cmake --install, or the package), then apply --persist again.*; nothing written (without --persist, apply tunes this boot only)$" "$work/err" &&
	[ "$(grep -cv '^\(==\|--\)[0-9]*\(==\|--\)' "$work/err")" -eq 1 ] ||
	fail "persist: the refusal is not one line with the reason and the fix: $(cat "$work/err")" # valgrind's lines aside (memcheck/)
# The lock is taken before the host is read (the state dir and its lock file exist); no journal.
[ "$(snap)" = "$before" ] && [ ! -e "$work/refused-state/journal.json" ] ||
	fail "persist: a refused apply --persist wrote something"
run 0 "dry-run --persist, scsitune not installed: a warning" st apply --profile "$profile" --profile-dir "$profiles" --persist --dry-run
grep -q "^scsitune: warning: --persist: .* is not installed here .*; apply --persist would refuse$" "$work/err" ||
	fail "persist: the dry run does not warn that apply --persist would refuse: $(cat "$work/err")"
# Installed (in the tree, as on the host the tree is): the unit is planned.
mkdir -p "$work/root$(dirname "${installed:-/usr/sbin/scsitune}")"
install -m 0755 /dev/null "$work/root${installed:-/usr/sbin/scsitune}"
before=$(snap)
run 0 "apply --persist" st apply --profile "$work/persist-profile" --profile-dir "$profiles" --state-dir "$state" --persist
n_disk=$(python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
print(len({e["object"] for e in j["changes"] if e["path"].startswith("sys/block/")}))' "$state/journal.json")
if [ "$n_disk" -gt 0 ]; then
	[ "$(grep -c '^ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", .*ATTR{queue/scheduler}="none"' "$rules")" = "$n_disk" ] ||
		fail "persist: not one udev rule per tuned disk ($n_disk): $(cat "$rules" 2>&1)"
fi
grep -qxF "ExecStart=\"$installed\" apply --profile \"$work/persist-profile\" --profile-dir \"$(readlink -f "$profiles")\" --state-dir /run/scsitune" "$unit" ||
	fail "persist: the boot unit does not apply the same profile with the installed scsitune: $(grep ExecStart "$unit" 2>&1)"
grep -q '^After=systemd-udev-settle.service' "$unit" && grep -q '^# After systemd-udev-settle: ' "$unit" ||
	fail "persist: the unit does not say why it waits for systemd-udev-settle"
[ "$(readlink "$wants")" = /etc/systemd/system/scsitune-apply.service ] || fail "persist: the unit is not enabled"
if [ "$name" = dual-socket-mpi3mr ]; then
	grep -qx 'options mpi3mr poll_queues=2' "$mp" || fail "persist: modprobe.d lacks the mpi3mr option: $(cat "$mp" 2>&1)"
fi
run 0 "verify after apply --persist (persist rows from the journal)" st verify --state-dir "$state" -v
jgrep -qE '^in-effect +- +persist:boot-unit-enable +symlink ' || fail "verify does not check the persist files"
echo '# local' >>"$unit"
run 2 "verify after a hand edit of the boot unit" st verify --state-dir "$state"
jgrep -qE '^drifted +- +persist:boot-unit +file other content \(expected [0-9]+ lines\)' || fail "verify does not name the edited boot unit"
run 1 "revert leaves the edited boot unit" st revert --state-dir "$state"
[ -f "$unit" ] && [ ! -e "$rules" ] && [ ! -L "$wants" ] || fail "revert: the edited unit should stay, the rest go"
run 0 "revert --force removes the edited unit too" st revert --force --state-dir "$state"
same_tree "apply --persist round trip"
# A profile given by name keeps its name in the unit (the installed profile at
# boot, as upgraded); --profile-dir only because it is not the installed one.
run 0 "apply --persist --dry-run with a named profile" st apply --profile numa --profile-dir "$profiles" --persist --dry-run -o json
python3 -c 'import json,sys
u=[c for c in json.load(open(sys.argv[1]))["changes"] if c["object"]=="persist:boot-unit"][0]["desired"]
want="ExecStart=\"%s\" apply --profile \"numa\" --profile-dir \"%s\" --state-dir /run/scsitune" % (sys.argv[2], sys.argv[3])
assert want in u.splitlines(), u' "$work/out" "$installed" "$(readlink -f "$profiles")" ||
	fail "persist: a named profile is not named in the boot unit"
rm "$work/root$installed"
before=$(snap)
# No udev here (no /etc/udev/rules.d): that row is not applicable, nothing created.
rmdir "$work/root/etc/udev/rules.d"
run 0 "dry-run --persist without /etc/udev/rules.d" st apply --profile "$profile" --profile-dir "$profiles" --persist --dry-run -v
jgrep -qE '^not-applicable +- +persist:udev-rules +file absent .*note: no /etc/udev/rules.d here' ||
	[ "$n_disk" -eq 0 ] || fail "persist: a missing /etc/udev/rules.d is not reported"
mkdir "$work/root/etc/udev/rules.d"
