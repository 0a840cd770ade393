# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# package/role (sourced by test-package.sh; reads OUT/debs and
# OUT/cache/bookworm.tar, made by package/build and package/chroot): the
# rollout role's package step (fleet/ansible/roles/scsitune_rollout/
# tasks/package.yml), as the scsitune-fleet package installs it under
# /usr/share/scsitune/ansible (its .deb unpacked here: this machine is the
# control node, and nothing is installed on it), run by ansible-playbook
# against a fresh chroot
# (community.general.chroot, Debian's ansible package): a host as the
# fleet has it (python3 and python3-apt, what Ansible's apt module runs
# with), scsitune not installed. --check first (nothing installed), then
# the real run (the package installed, its dependencies pulled, scsitune
# runs), then again (nothing changed).
need ansible-playbook dpkg-deb
arch=$(dpkg --print-architecture)
deb=$out/debs/scsitune_${version}_$arch.deb fleet=$out/debs/scsitune-fleet_${version}_all.deb
[ -f "$deb" ] && [ -f "$fleet" ] || die "no $deb or $(basename "$fleet") (package/build first)"
[ -f "$out/cache/bookworm.tar" ] || die "no $out/cache/bookworm.tar (package/chroot first)"
root=$out/role-root
fresh "$root" "$out"
work=$(mktemp -d)
trap 'rm -rf "$root" "$work"' EXIT
# The control node's copy: scsitune-fleet's files, as dpkg would install them.
dpkg-deb -x "$fleet" "$work/control" || die "dpkg-deb -x $(basename "$fleet") failed"
ansible=$work/control/usr/share/scsitune/ansible
[ -f "$ansible/rollout.yml" ] && [ -d "$ansible/roles/scsitune_rollout" ] && ok ||
	die "scsitune-fleet has no /usr/share/scsitune/ansible/rollout.yml and roles/scsitune_rollout"
# The installed playbook finds its role beside it (no roles path given; the
# tree's fleet/ansible is not on any default path).
(cd "$work" && env -u ANSIBLE_ROLES_PATH -u ANSIBLE_CONFIG ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP="$work/ansible-local" \
	ansible-playbook -i localhost, --syntax-check "$ansible/rollout.yml") >"$out/role-syntax.log" 2>&1 && ok ||
	fail "ansible-playbook --syntax-check /usr/share/scsitune/ansible/rollout.yml: $(tail -3 "$out/role-syntax.log" | tr '\n' ' ')"
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
# play NAME ARGS...: ansible-playbook into the chroot; its output in $out/role-NAME.log.
# (Not this shell's TMPDIR: the chroot connection hands the control node's
# environment to the modules it runs in the chroot, where that directory is
# not; a host reached by ssh never sees it.)
play() {
	local name=$1
	shift
	env -u TMPDIR ANSIBLE_ROLES_PATH="$ansible/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
		ANSIBLE_LOCAL_TEMP="$work/ansible-local" ANSIBLE_REMOTE_TEMP=/tmp/.ansible-tmp \
		ansible-playbook -i "$root," -c community.general.chroot \
		-e ansible_python_interpreter=/usr/bin/python3 -e "scsitune_deb=$deb" "$@" "$work/play.yml" \
		>"$out/role-$name.log" 2>&1
}
# recap NAME: the play recap's "changed=N failed=N" for the host
recap() { sed -n 's/.*: ok=[0-9]* *\(changed=[0-9]*\) .*\(failed=[0-9]*\).*/\1 \2/p' "$out/role-$1.log" | tail -1; }
installed() { in_chroot "$root" dpkg-query -W -f='${db:Status-Abbrev}${Version}' scsitune 2>/dev/null; }
play check --check && ok || fail "the package step in --check mode failed: $(tail -5 "$out/role-check.log" | tr '\n' ' ')"
[ -z "$(installed | grep '^ii')" ] && ok || fail "--check installed scsitune"
play install && ok || fail "the package step failed: $(grep -E 'FAILED|fatal|msg' "$out/role-install.log" | head -5 | tr '\n' ' ')"
[ "$(recap install)" = "changed=4 failed=0" ] && ok ||
	fail "first run: want changed=4 failed=0 (directory, copy, apt deb, libcurl4), got '$(recap install)'"
[ "$(installed)" = "ii $version" ] && ok || fail "after the role: scsitune is '$(installed)', want 'ii $version'"
[ "$(in_chroot "$root" scsitune --version)" = "scsitune $version" ] && ok || fail "scsitune --version in the host after the role"
for p in libnuma1 libjson-c5 libinih1 libcurl4; do
	in_chroot "$root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null && ok ||
		fail "$p not installed by the role (the package's Depends, and libcurl4 its Recommends)"
done
play again && ok || fail "the package step, second run, failed"
[ "$(recap again)" = "changed=0 failed=0" ] && ok || fail "second run: want changed=0 failed=0, got '$(recap again)'"
nothing_mounted "$root" "after the role"
[ $status -eq 0 ] && echo "ok: the role's package step from scsitune-fleet's /usr/share/scsitune/ansible (ansible-playbook, chroot connection): --check installs nothing, installs $version with its dependencies, a second run changes nothing"
