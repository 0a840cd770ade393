#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet tier, one real-kernel host: the rollout (fleet/ansible/rollout.yml)
# run by ansible-playbook over SSH against the vm tier's Debian 12 guest
# (tests/vm/rootfs: Debian's kernel, systemd, udev, under QEMU/TCG), booted
# by `run.sh --serve` with its sshd on a forwarded 127.0.0.1 port, and a real
# VictoriaMetrics on this machine's 127.0.0.1 (the guest reaches it as
# 10.0.2.2, QEMU's user network). Nothing of this machine is tuned: every
# scsitune call but the gate's runs in the guest.
#
# The canary wave, end to end, on one host:
#   1. detect, eligibility (its virtio-scsi HBA: scsitune_hba_drivers), the
#      payload's kernel release = the guest's;
#   2. baseline: report --run, real fio (3 runs) on the guest's 64 MiB data
#      disk (by its /dev/disk/by-id name), uploaded to the service;
#   3. apply --profile vm-fleet --payload: the signed bundle of patched
#      scsi_mod/target_core_mod for this kernel (payload/bundle) installed with
#      Debian's update-initramfs (the root disk is on virtio-scsi), then the
#      profile applied;
#   4. payload verify exits 2 (reboot pending): ansible.builtin.reboot, whose
#      test_command is payload verify: the guest really reboots (run.sh starts
#      QEMU again on the kernel and initrd the guest handed over) and is up
#      only once the payload's modules are the loaded ones; then apply again
#      (runtime settings do not survive a reboot);
#   5. verify exit 0; tuned: report --run --compare baseline, uploaded;
#   6. the wave's gate on this machine: report --query --gate over the
#      canary, against the service.
# Checked: the play's exit and recap, the wave's summary (gate passed over
# the guest), two boots (one reboot from outside), in the guest: payload
# verify 0, verify 0, the scsi_mod loaded is out of tree (taint O), fio
# ran on the data disk behind the node-1 virtio-scsi HBA (in the
# saved sets' provenance); the service's view of the host equals the host's
# own report --compare (tests/fleet/check-view.py). Then the whole play again:
# changed=0, nothing judged, no new point. Then the role's revert steps
# (tests/fleet/revert-host.yml: what the rollout runs for a host that failed
# a step or a gate): revert --force, payload remove, the reboot into the stock
# modules; checked: a third boot, payload verify says not installed, the
# loaded scsi_mod is Debian's (no taint), verify finds nothing applied.
# Then the guest is stopped (poweroff).
# Usage: test-vm-host.sh SCSITUNE SRCDIR OUTDIR BUNDLE_DIR
# Fails (never skips) when QEMU, ansible-playbook, victoria-metrics or ssh is
# missing. Wall time: tests/README.md.
set -uo pipefail
# Ansible refuses to run in a locale that is not UTF-8 ("Ansible requires
# the locale encoding to be UTF-8"): the tests choose theirs, whatever the
# caller's (a CI or a shell with LC_ALL=C).
export LC_ALL=C.UTF-8
[ $# -eq 4 ] || { echo "usage: test-vm-host.sh SCSITUNE SRCDIR OUTDIR BUNDLE_DIR" >&2; exit 64; }
bin=$(realpath "$1") src=$(realpath "$2") out=$3 bundle=$(realpath "$4")
py=${PYTHON3:-python3}
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need ansible-playbook victoria-metrics curl timeout ssh ssh-keygen qemu-system-x86_64
for f in payload.tar.zst payload.tar.zst.minisig fleet.pub; do
	[ -f "$bundle/$f" ] || { echo "FAIL: no $bundle/$f (the payload/bundle test makes it)"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-vm.XXXXXX")
runpid=
cleanup_all() {
	fleet_cleanup
	if [ -n "$runpid" ] && kill -0 "$runpid" 2>/dev/null; then
		# the guest still up: ask it to stop, then end QEMU
		touch "$out/share/in/stop" 2>/dev/null
		for _ in $(seq 1 60); do kill -0 "$runpid" 2>/dev/null || break; sleep 1; done
		pkill -P "$runpid" 2>/dev/null
		kill "$runpid" 2>/dev/null
		wait "$runpid" 2>/dev/null
	fi
	if [ -n "${SCSITUNE_KEEP_TMP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
}
trap cleanup_all EXIT
trap "exit 143" TERM INT
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf

# The guest's key for this run only; its host key is not checked (a new
# overlay of the image each run, nothing else listens on that port).
ssh-keygen -q -t ed25519 -N '' -C scsitune-vm-fleet -f "$T/id" || { echo "FAIL: ssh-keygen"; exit 1; }
take_port ssh_port && take_port vm_port || { echo "FAIL: no free port"; exit 1; }
vm=http://127.0.0.1:$vm_port
start_vm svc "$vm_port" || { echo "FAIL: VictoriaMetrics not ready"; exit 1; }

rm -rf "$out"
mkdir -p "$(dirname "$out")"
SCSITUNE_VM_SSH_PORT=$ssh_port SCSITUNE_VM_FILES="$T/id.pub $bundle/payload.tar.zst $bundle/payload.tar.zst.minisig $bundle/fleet.pub" \
	"$src/tests/vm/rootfs/run.sh" --serve "$bin" fleet-host "$out" >"$T/run.log" 2>&1 &
runpid=$!
# The first boot: the image (built once per build tree), QEMU, systemd, the stage.
i=0
until [ -s "$out/share/out/serving" ]; do
	if ! kill -0 "$runpid" 2>/dev/null || [ $i -ge 1200 ]; then
		echo "FAIL: the guest never served ($(elapsed)):"
		tail -n 40 "$T/run.log"
		exit 1
	fi
	sleep 1
	i=$((i + 1))
done
read -r _ data <"$out/share/out/serving"
release=$(cat "$out/release")
pass "guest up, sshd started ($(elapsed)); data disk $data, kernel $release"
gssh() { ssh -p "$ssh_port" -i "$T/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
	-o LogLevel=ERROR -o ConnectTimeout=20 root@127.0.0.1 "$@"; }
checks=$((checks + 1))
if gssh true; then pass "ssh root@127.0.0.1 -p $ssh_port"; else fail "ssh to the guest"; exit 1; fi

cat >"$T/ansible.cfg" <<CFG
[defaults]
local_tmp = $T/ansible-tmp
retry_files_enabled = False
nocolor = True
interpreter_python = /usr/bin/python3
host_key_checking = False
[ssh_connection]
pipelining = True
ssh_args = -o ControlMaster=auto -o ControlPersist=120s -o UserKnownHostsFile=/dev/null -o ServerAliveInterval=15
control_path_dir = $T/cp
CFG
export ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_HOME=$T/ansible-home ANSIBLE_NOCOLOR=1
cat >"$T/inventory.yml" <<INV
scsitune:
  hosts:
    vm1:
      ansible_host: 127.0.0.1
      ansible_port: $ssh_port
      ansible_user: root
      ansible_ssh_private_key_file: $T/id
      ansible_python_interpreter: /usr/bin/python3
  vars:
    scsitune_bin: /usr/local/sbin/scsitune
    scsitune_profile: vm-fleet
    scsitune_hba_drivers: [virtio_scsi]
    scsitune_payload: /vm/in/files/payload.tar.zst
    scsitune_payload_release: $release
    # 3 runs of 2 s each, random reads on the data disk (read-only: no --destructive)
    scsitune_run_args: [--device, $data, --runs, "3", --runtime, "2", --iodepth, "4"]
    # the guest's view of this machine's 127.0.0.1
    scsitune_upload_url: http://10.0.2.2:$vm_port/write
    scsitune_query_bin: $bin
    scsitune_query_url: $vm
    scsitune_query_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
    # TCG's IOPS say nothing about the tuning (tests/README.md): the gate
    # judges what a VM can answer, the host neither drifted nor missing
    scsitune_gate: drifted=0
    scsitune_reboot_timeout: 1500
INV
rollout() { "$py" "$src/tests/fleet/check-rollout.py" "$@"; }
play() { # NAME WANT_RC [args]
	local name=$1 want=$2 rc=0 t0
	shift 2
	t0=$(date +%s)
	timeout 2400 ansible-playbook -i "$T/inventory.yml" "$src/fleet/ansible/rollout.yml" \
		-e '{"scsitune_serial": [1]}' "$@" >"$T/$name.log" 2>&1 || rc=$?
	cp "$T/$name.log" "$out/$name.log"
	checks=$((checks + 1))
	if [ "$rc" -eq "$want" ]; then
		pass "$name: ansible-playbook exit $rc ($(($(date +%s) - t0)) s)"
	else
		fail "$name: ansible-playbook exit $rc, want $want ($out/$name.log)"
		grep -E -A3 'fatal|FAILED|ERROR' "$T/$name.log" | head -40
	fi
	rollout waves "$T/$name.log" | sed 's/^/       /'
}
check() { # NAME COMMAND...
	checks=$((checks + 1))
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then pass "$name: $(tail -1 "$T/check.out")"; else fail "$name:"; sed 's/^/  /' "$T/check.out" | head -20; fi
}

# ---- the canary wave --------------------------------------------------------
play canary 0
check "the canary wave's gate passed over the guest" "$py" - "$T/canary.log" <<'PY'
import re, subprocess, sys
log = open(sys.argv[1]).read()
m = re.search(r'"wave 1 \(1 host\(s\)\): gate [^"]* over scsitune-vm: passed', log)
assert m, "no passed gate over scsitune-vm in the play's output"
for task in ("Baseline", "Apply (apply --profile --payload)", "Reboot into the payload",
             "Apply again after the reboot", "Verify (scsitune verify -o json)", "Tuned (report --phase tuned --upload)"):
    m = re.search(r"TASK \[scsitune_rollout : %s[^\]]*\] \*+\n(\w+): \[vm1\]" % re.escape(task), log)
    assert m and m.group(1) in ("changed", "ok"), "%s: %s" % (task, m.group(1) if m else "not run")
print("baseline, apply --payload, reboot, apply again, verify, tuned ran; gate passed")
PY
recap=$(rollout recap "$T/canary.log")
check "the canary: no step failed" "$py" -c '
import json, sys
r = json.loads(sys.argv[1])["vm1"]
assert r["failed"] == 0 and r.get("unreachable", 0) == 0 and r.get("rescued", 0) == 0, r
assert r["changed"] > 0, r
print("vm1: %s" % r)' "$recap"
check "the guest rebooted once, from outside (Ansible's reboot)" "$py" -c '
import sys
boots = open(sys.argv[1] + "/share/out/boots").read().split()
ext = open(sys.argv[1] + "/external-reboots").read().split()
assert boots == ["2"], boots
assert ext == ["1"], ext
print("boot 2 now; boot 1 ended by a reboot no stage asked for")' "$out"
gssh "scsitune payload verify /vm/in/files/payload.tar.zst -o json" >"$T/pverify.json" 2>"$T/pverify.err"
prc=$?
gssh "scsitune verify --state-dir /var/lib/scsitune -o json" >"$T/verify.json" 2>"$T/verify.err"
vrc=$?
# the loaded scsi_mod's taint flags (O: out of tree, the payload's; Debian's own: none)
gssh 'echo "taint=$(cat /sys/module/scsi_mod/taint)"' >"$T/facts.txt" 2>&1
check "in the guest: payload verify 0 (the bundle's modules loaded), verify 0" "$py" - "$prc" "$vrc" "$T/pverify.json" "$T/verify.json" "$T/facts.txt" <<'PY'
import json, sys
prc, vrc = int(sys.argv[1]), int(sys.argv[2])
p = json.load(open(sys.argv[3]))
v = json.load(open(sys.argv[4]))
taint = open(sys.argv[5]).read().strip()
assert prc == 0 and p["verdict"] == "loaded", ("payload verify", prc, p.get("verdict"))
bad = [l for l in p["links"] if l["state"] != "ok"]
assert not bad, bad
assert any(l["link"] == "file" and l["module"] == "scsi_mod" for l in p["links"]), "no scsi_mod file link"
assert "O" in taint.split("=", 1)[1], ("the loaded scsi_mod is not out of tree", taint)
assert vrc == 0, ("verify", vrc, v.get("summary"))
print("payload verdict loaded, %d links ok; scsi_mod %s; verify: %s" % (len(p["links"]), taint, v["summary"]))
PY

# The host's own comparison, from its saved sets, against the service's view.
gssh 'set -e; cd /var/lib/scsitune; ls reports/tuned/*.json | tail -1' >"$T/tuned-set.txt" 2>&1
tset=$(tail -1 "$T/tuned-set.txt")
gssh "scsitune report --compare \$(ls /var/lib/scsitune/reports/baseline/*.json | tail -1) --state-dir /tmp/own-compare -o json \$(ls /var/lib/scsitune/runs/*-run*.json | tail -3)" \
	>"$T/own.json" 2>"$T/own.err" || fail "the guest's own report --compare: $(cat "$T/own.err")"
gssh "cat /var/lib/scsitune/$tset" >"$T/tuned-saved.json" 2>&1
check "fio ran on the data disk, behind the node-1 virtio-scsi HBA (provenance)" "$py" - "$T/tuned-saved.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
prov = d.get("provenance") or d.get("runs", [{}])[0].get("provenance", {})
hba = prov.get("hba") or {}
assert hba.get("driver") == "virtio_scsi" and hba.get("numa_node") == 1, hba
assert prov.get("host") == "scsitune-vm", prov.get("host")
print("saved tuned set: %d runs; provenance %s" % (len(d.get("runs", [])), {k: prov.get(k) for k in ("host", "hba", "numa_node", "kernel") if k in prov}))
PY
"$bin" report --query "$vm" --phase tuned --compare baseline --hosts scsitune-vm -o json >"$T/view.json" 2>"$T/view.err" ||
	fail "the fleet view: $(cat "$T/view.err")"
# (A few KIOPS under TCG: this check found that the saved baseline set kept
# each run's KIOPS to 3 decimals, moving the reference's spread and CoV in the
# third decimal; runs' kiops now have 12 significant digits.)
check "the service's view of the guest = its own report --compare" \
	"$py" "$src/tests/fleet/check-view.py" "$T/view.json" "scsitune-vm=$T/own.json" --status scsitune-vm=compared
rollout points "$vm" >"$T/points-1.json"

# ---- the whole play again ---------------------------------------------------
play second-run 0
check "second run: zero changes, nothing failed" "$py" -c '
import json, sys
r = json.loads(sys.argv[1])["vm1"]
assert r["changed"] == 0 and r["failed"] == 0 and r.get("unreachable", 0) == 0, r
print("vm1: changed=0 failed=0")' "$(rollout recap "$T/second-run.log")"
check "second run: nothing judged" "$py" -c '
import re, sys
assert re.search(r"wave 1 .*nothing to judge", open(sys.argv[1]).read()), "the wave judged something"
print("wave 1: nothing to judge")' "$T/second-run.log"
rollout points "$vm" >"$T/points-2.json"
check "second run: no new point" cmp "$T/points-1.json" "$T/points-2.json"

# ---- the role's revert steps (a failed host's or gate's) ---------------------
t0=$(date +%s)
checks=$((checks + 1))
rc=0
ANSIBLE_ROLES_PATH=$src/fleet/ansible/roles timeout 2400 ansible-playbook -i "$T/inventory.yml" \
	"$src/tests/fleet/revert-host.yml" >"$T/revert.log" 2>&1 || rc=$?
cp "$T/revert.log" "$out/revert.log"
if [ "$rc" -eq 0 ]; then pass "revert: ansible-playbook exit 0 ($(($(date +%s) - t0)) s)"; else
	fail "revert: ansible-playbook exit $rc ($out/revert.log)"
	grep -E -A3 'fatal|FAILED|ERROR' "$T/revert.log" | head -20
fi
prc=0 vrc=0
gssh "scsitune payload verify /vm/in/files/payload.tar.zst -o json" >"$T/pverify2.json" 2>"$T/pverify2.err" || prc=$?
gssh "scsitune verify --state-dir /var/lib/scsitune" >"$T/verify2.txt" 2>&1 || vrc=$?
gssh 'echo "taint=$(cat /sys/module/scsi_mod/taint)"' >"$T/taint2.txt" 2>&1
check "revert: the stock modules after a second reboot, nothing applied" "$py" - "$out" "$prc" "$T/pverify2.json" \
	"$vrc" "$T/verify2.txt" "$T/facts.txt" "$T/taint2.txt" "$(rollout recap "$T/revert.log")" <<'PY'
import json, sys
out, prc, pv, vrc, vtxt, facts, src2, recap = sys.argv[1:9]
r = json.loads(recap)["vm1"]
assert r["failed"] == 0 and r["changed"] >= 2, r
assert open(out + "/share/out/boots").read().split() == ["3"], "boots"
assert open(out + "/external-reboots").read().split() == ["1", "2"], "external reboots"
assert int(prc) == 2, ("payload verify after remove", prc)
p = json.load(open(pv))
assert p["verdict"] == "not-installed", p["verdict"]
v = open(vtxt).read()
assert "no apply changed this host with this state directory" in v, (vrc, v)
before, after = open(facts).read().strip(), open(src2).read().strip()
assert after == "taint=", ("the loaded scsi_mod is not Debian's", after)
print("boot 3: payload %s, scsi_mod %s (was %s); verify: %s" % (p["verdict"], after, before, v.strip().splitlines()[-1]))
PY

# ---- the guest stops ---------------------------------------------------------
touch "$out/share/in/stop"
rc=0
wait "$runpid" || rc=$?
runpid=
checks=$((checks + 1))
if [ "$rc" -eq 0 ]; then pass "the guest powered off; run.sh passed"; else
	fail "run.sh exited $rc"
	tail -n 40 "$T/run.log"
fi
sed -n 's/^/       /p' "$out/timing.txt" 2>/dev/null
echo "$checks checks, $fails failed ($(elapsed))"
[ "$fails" -eq 0 ]
