#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fleet tier: the Ansible rollout (fleet/ansible/rollout.yml and its role) run
# for real with Debian's ansible-playbook against local hosts (local
# connection), each a copy of a captured tree (tests/fixtures: dual-socket,
# four-node and offline-cpus mpi3mr hosts, one without an HBA) with its own
# state directory, its fio results varied per host from a recorded real fio
# output and ingested (scsitune_fio_files), and a real VictoriaMetrics on
# 127.0.0.1 as the central service (started and stopped here).
#
# Fleet A, eight hosts, the default waves [1, 10%, 25%, 100%] = 1, 1, 2, 4:
#   check    --check (one wave of all eight): each eligible host's plan
#            (apply --dry-run), every tree byte-identical afterwards, no
#            state written;
#   (1)      all good: every wave's gate passes and marks its hosts, every
#            host verifies, the fleet view's numbers equal each host's own
#            report --compare;
#   (5)      the whole play again: zero changes, no new point;
#   late     the gate alone (gate-late.yml) against a stub service that fails
#            (503) at the first ask and holds no point of the phases at the
#            second (report --query exits 1 for both): asked again, passed at
#            the third; by request count, not by time.
# Fleet B, five hosts, waves [1, 1, 2, 100%] (scsitune_serial with -e):
#   (2)      the canary's tuned results worse than its baseline: the play stops
#            after wave 1, the canary is reverted (its tree hashes as before),
#            no other host is touched;
#   (4)      its results fixed and rerun: the central service goes down during
#            wave 2: the gate asks again until scsitune_gate_wait (20 s here)
#            is spent and fails closed, the rollout stops with wave 2
#            applied and its results in the spool; the service back, a rerun
#            resumes (wave 1 not redone, the spool sent, wave 2 judged) and
#            completes with one copy of every run;
#   (3)      in that rerun a host of wave 3 drifts after apply: verify fails,
#            it is reverted (revert --force: tree as before) and reported,
#            counted against the failure budget (50 %, not exceeded), and the
#            wave's gate decides on the other host;
#   stale    the gate alone (gate-stale.yml) on an answer that never shows the
#            host's recorded set: asked until scsitune_gate_wait is spent,
#            then it fails closed naming the set and how often it asked.
# What a test judges in a service it wrote to is read once the service shows
# it (asked again up to a deadline; VictoriaMetrics flushed first), ports
# come from take_port (tests/service/common.sh), and no wait is a fixed sleep.
# The two fleets run at the same time (each its own VictoriaMetrics; fleet B's
# with the server's default search flags, -search.latencyOffset=30s): each
# rollout is a chain of small waves, mostly waiting, so side by side they
# take the wall time of the longer one. Each ansible-playbook run is bounded
# (timeout 1200 s).
# Fails (never skips) when ansible-playbook or victoria-metrics is missing.
# Usage: test-rollout.sh SCSITUNE SRCDIR
set -uo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
# The interpreter itself, not a version manager's shim (pyenv's costs about
# 0.5 s of CPU per call in bash scripts; the test calls python3 often).
py=$("${PYTHON3:-python3}" -c 'import sys; print(sys.executable)') || exit 1
# shellcheck source=tests/fleet/lib.sh
. "$src/tests/fleet/lib.sh"
need ansible-playbook victoria-metrics curl timeout
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-fleet-rollout.XXXXXX")
# The fleets' subshells and their servers (pids in $T/*.pid) go with this script.
cleanup_all() {
	local f
	fleet_cleanup
	for f in "$T"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	if [ -n "${SCSITUNE_KEEP_TMP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
}
trap cleanup_all EXIT
trap "exit 143" TERM INT
started=$(date +%s)
export SCSITUNE_CONFIG=$T/no-such-scsitune.conf
# Ansible's own files stay in the temp dir: no ~/.ansible, no /etc/ansible.
cat >"$T/ansible.cfg" <<CFG
[defaults]
forks = 10
# The controller polls its workers every 1 ms by default: on 2 cores that CPU is theirs.
internal_poll_interval = 0.05
local_tmp = $T/ansible-tmp
remote_tmp = $T/ansible-tmp
retry_files_enabled = False
display_skipped_hosts = False
nocolor = True
interpreter_python = /usr/bin/python3
[connection]
pipelining = True
CFG
export ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_HOME=$T/ansible-home ANSIBLE_NOCOLOR=1
# Each module runs as python3 reading its ~130 KB program on stdin
# (pipelining); with PYTHONUNBUFFERED set (as in some CI images) Python reads
# it one byte per read(2): about 0.2 s more CPU per module run.
unset PYTHONUNBUFFERED
playbook=$src/fleet/ansible/rollout.yml
rollout() { "$py" "$src/tests/fleet/check-rollout.py" "$@"; }

hosts=(f1 f2 f3 f4 f5 f6 f7 f8) # fleet A; fleet B: the first five (fleet_hosts)
declare -A fixture=([f1]=dual-socket-mpi3mr [f2]=dual-socket-mpi3mr [f3]=four-node [f4]=dual-socket-mpi3mr
	[f5]=offline-cpus [f6]=dual-socket-mpi3mr [f7]=four-node [f8]=no-hba)
now=$(now_ms)
# make_fleet DIR NAME: the hosts of ${fleet_hosts[@]} (host names NAME-f1 ...: each fleet
# its own in the one service), their trees' snapshots, their fio results
# (baseline around 45 KIOPS, tuned 10-20 % more; each host its own numbers).
make_fleet() {
	local d=$1 name=$2 h i=0 b1 b2 b3 t1 t2 t3
	for h in "${fleet_hosts[@]}"; do
		i=$((i + 1))
		make_host "$d/$h" "${fixture[$h]}" "$name-$h" || { fail "make_host $h"; return 1; }
		# the host's scale s = 1 + i/50: baseline s*(1.0, 0.9, 0.95), tuned s*(1.15, 1.12, 1.18)
		read -r b1 b2 b3 t1 t2 t3 < <(awk -v s="$(awk -v i="$i" 'BEGIN { print 1 + i / 50 }')" \
			'BEGIN { printf "%.6g %.6g %.6g %.6g %.6g %.6g\n", s, s * 0.9, s * 0.95, s * 1.15, s * 1.12, s * 1.18 }')
		make_fio "$d/$h/fio" baseline $((now - 3 * 3600000)) "$b1" "$b2" "$b3" &&
			make_fio "$d/$h/fio" tuned $((now - 2 * 3600000)) "$t1" "$t2" "$t3" ||
			{ fail "make_fio $h"; return 1; }
		snap "$d/$h/root" >"$d/$h.snap"
	done
}
# inventory DIR [HOST=TUNED_PREFIX]...: DIR/inventory.yml (tuned-runK.json unless a prefix is given).
inventory() {
	local d=$1 h k
	shift
	declare -A prefix=()
	for k in "$@"; do prefix[${k%%=*}]=${k#*=}; done
	{
		echo "scsitune:"
		echo "  hosts:"
		for h in "${fleet_hosts[@]}"; do
			local p=${prefix[$h]:-tuned}
			cat <<HOST
    $h:
      scsitune_sysroot: $d/$h/root
      scsitune_state_dir: $d/$h/state
      scsitune_fio_files:
        baseline: [$d/$h/fio/baseline-run1.json, $d/$h/fio/baseline-run2.json, $d/$h/fio/baseline-run3.json]
        tuned: [$d/$h/fio/$p-run1.json, $d/$h/fio/$p-run2.json, $d/$h/fio/$p-run3.json]
HOST
		done
		cat <<VARS
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    scsitune_bin: $bin
    scsitune_query_bin: $bin
    scsitune_profile_dir: $src/profiles
    scsitune_upload_url: $vm/write
    scsitune_query_url: $vm
    scsitune_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
    scsitune_query_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
    fleet_test_python: $py
    fleet_test_dir: $src/tests/fleet
VARS
	} >"$d/inventory.yml"
}
# play NAME WANT_RC DIR [ansible-playbook args]: the output in $T/NAME.log.
play() {
	local name=$1 want=$2 d=$3 rc=0 t0
	shift 3
	t0=$(date +%s)
	timeout 1200 ansible-playbook -i "$d/inventory.yml" "$playbook" "$@" >"$T/$name.log" 2>&1 || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -eq "$want" ]; then
		pass "$name: ansible-playbook exit $rc ($(($(date +%s) - t0)) s)"
	else
		fail "$name: ansible-playbook exit $rc, want $want"
		grep -E 'fatal|FAILED|ERROR|WARNING' "$T/$name.log" | head -20
	fi
	rollout waves "$T/$name.log" | sed 's/^/       /'
}
same_tree() { # DIR HOST: the host's tree hashes as its snapshot
	[ "$(snap "$1/$2/root")" = "$(cat "$1/$2.snap")" ]
}
untouched() { # DIR HOST...: trees as before, state directories empty
	local d=$1 h
	shift
	for h in "$@"; do
		same_tree "$d" "$h" || { echo "$h: the tree changed"; return 1; }
		[ -z "$(ls -A "$d/$h/state")" ] || { echo "$h: state $(ls -A "$d/$h/state")"; return 1; }
	done
	echo "untouched: $*"
}
st() { "$bin" --sysroot "$1/$2/root" "${@:3}"; }
verified() { # DIR HOST...: apply's journal there, scsitune verify exit 0, the rollout mark
	local d=$1 h
	shift
	for h in "$@"; do
		st "$d" "$h" verify --state-dir "$d/$h/state" >/dev/null 2>&1 || { echo "$h: verify failed"; return 1; }
		[ "$(stat -c %a "$d/$h/state/rollout-gate.json" 2>&1)" = 640 ] || { echo "$h: no rollout mark of mode 0640"; return 1; }
		"$py" -c 'import json, sys; json.load(open(sys.argv[1]))["judged"]["tuned"]["set"]' "$d/$h/state/rollout-gate.json" ||
			{ echo "$h: the rollout mark does not name the tuned set judged"; return 1; }
	done
	echo "verified and marked: $*"
}
check() { # NAME COMMAND...
	checks=$((checks + 1))
	local name=$1
	shift
	local out=$T/check-$BASHPID.out
	if "$@" >"$out" 2>&1; then pass "$name: $(tail -1 "$out")"; else fail "$name:"; sed 's/^/  /' "$out" | head -20; fi
}
waves_are() { # LOG PATTERN...: the wave summaries match, in order
	local log=$1 i=0 p
	shift
	mapfile -t got < <(rollout waves "$log")
	for p in "$@"; do
		[[ ${got[$i]:-} =~ $p ]] || { echo "wave $((i + 1)): '${got[$i]:-none}' does not match /$p/"; return 1; }
		i=$((i + 1))
	done
	[ "${#got[@]}" -eq "$#" ] || { echo "${#got[@]} wave summaries, want $#"; return 1; }
	echo "${#got[@]} waves as expected"
}

# ===== Fleet A =====
fleet_A() {
take_port vm_port || { fail "no free port (fleet A)"; return; }
vm=http://127.0.0.1:$vm_port
start_vm vmA "$vm_port" || { fail "VictoriaMetrics (fleet A) not ready"; return; }
A=$T/A
fleet_hosts=("${hosts[@]}")
make_fleet "$A" a && inventory "$A"
eligible=(f1 f2 f3 f4 f5 f6 f7)

# --check: the plans, nothing written. One wave of all eight hosts: check
# mode has no gate, so waves change nothing in it but the wall time.
play check 0 "$A" --check -e '{"scsitune_serial": ["100%"]}'
check "check mode: every eligible host's plan shown" "$py" - "$T/check.log" "${eligible[@]}" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for h in sys.argv[2:]:
    m = re.search(r'"%s \(a-%s\): profile numa: (\d+) setting\(s\) to change' % (h, h), text)
    assert m and int(m.group(1)) > 0, h
    assert re.search(r'"queue/scheduler: mq-deadline -> none"|"wwn-\S+ queue/scheduler: mq-deadline -> none"', text), "a change line"
assert "f8 (a-f8) skipped: no mpi3mr HBA" in text
print("plans for %s; f8 skipped" % ", ".join(sys.argv[2:]))
PY
check "check mode: nothing written" untouched "$A" "${hosts[@]}"

# (1) All good.
play all-good 0 "$A"
check "(1) every wave's gate passed" waves_are "$T/all-good.log" \
	'^wave 1 \(1 host\(s\)\): gate .* over a-f1: passed' '^wave 2 \(1 host\(s\)\): gate .* over a-f2: passed' \
	'^wave 3 \(2 host\(s\)\): gate .* over a-f3, a-f4: passed' \
	'^wave 4 \(3 host\(s\)\): gate .* over a-f5, a-f6, a-f7: passed'
check "(1) every eligible host verifies" verified "$A" "${eligible[@]}"
check "(1) the host without an HBA untouched" untouched "$A" f8
views=()
for h in "${eligible[@]}"; do
	"$bin" report --compare baseline --state-dir "$A/$h/state" -o json "$A/$h"/fio/tuned-run*.json >"$T/own-$h.json" 2>/dev/null ||
		fail "$h: its own report --compare"
	views+=("a-$h=$T/own-$h.json" --status "a-$h=compared")
done
# (the gates saw every set; asked until the view holds all 7 x 6 runs all the same)
query_shows "$vm" 42 --hosts a-f1,a-f2,a-f3,a-f4,a-f5,a-f6,a-f7 || fail "fleet view: not 42 points"
"$bin" report --query "$vm" --phase tuned --compare baseline --hosts a-f1,a-f2,a-f3,a-f4,a-f5,a-f6,a-f7 -o json \
	>"$T/fleet-A.json" 2>"$T/fleet-A.err" ||
	fail "fleet view: $(cat "$T/fleet-A.err")"
check "(1) the fleet view's numbers = each host's own report --compare" \
	"$py" "$src/tests/fleet/check-view.py" "$T/fleet-A.json" "${views[@]}"
rollout points "$vm" 42 >"$T/points-A1.json"

# (5) The whole play again: nothing changes.
play second-run 0 "$A"
recapA=$(rollout recap "$T/second-run.log")
check "(5) second run: zero changes, nothing failed" "$py" -c '
import json, sys
r = json.loads(sys.argv[1])
assert sorted(r) == ["f%d" % i for i in range(1, 9)], sorted(r)
bad = {h: c for h, c in r.items() if c["changed"] or c["failed"] or c.get("unreachable")}
assert not bad, bad
print("8 hosts, changed=0 failed=0 on each")' "$recapA"
check "(5) second run: waves judged nothing new" waves_are "$T/second-run.log" \
	'^wave 1 .*nothing to judge.*already rolled out: f1' '^wave 2 .*nothing to judge' '^wave 3 .*nothing to judge' \
	'^wave 4 .*nothing to judge'
rollout points "$vm" 42 >"$T/points-A2.json"
check "(5) second run: no new point" cmp "$T/points-A1.json" "$T/points-A2.json"

# The gate asks again while the service holds no point of the phases yet (a
# first wave's case: report --query exits 1) or fails for a moment, and
# passes once the points show: the role's gate alone (tests/fleet/gate-late.yml)
# against the stub service's /late/ answers, which go by the number of
# requests, not by time (3 x 503: one ask; an empty answer: one ask; then h1's
# sets). scsitune_gate_wait (600) only bounds it. The role before this check
# took the first exit 1 as the answer and failed closed.
take_port stub_port || { fail "no free port (stub)"; return; }
"$py" "$src/tests/fleet/stub-service.py" "$stub_port" "$T/stub-late.log" &
fleet_pids[stub]=$!
wait_port "$stub_port" || fail "the stub service not ready"
mkdir -p "$T/late-state"
playbook=$src/tests/fleet/gate-late.yml ANSIBLE_ROLES_PATH=$src/fleet/ansible/roles play late 0 "$A" -l f1 -e \
	"{\"scsitune_query_url\": \"http://127.0.0.1:$stub_port/late/api/v1/export\", \"scsitune_gate\": \"kiops>=+5%\",
	  \"scsitune_gate_wait\": 600, \"scsitune_state_dir\": \"$T/late-state\"}"
stop_server stub
check "no point yet: asked again on exit 1 (503, then no point), passed once the points show" \
	"$py" - "$T/late.log" "$T/stub-late.log" "$T/late-state/rollout-gate.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
retries = len(re.findall(r"FAILED - RETRYING: \[f1 -> localhost\]: The gate", text))
assert retries == 2, "%d retries, want 2 (a 503 ask, a no-point ask)" % retries
assert re.search(r"wave 1 \(1 host\(s\)\): gate kiops>=\+5% over h1: passed", text), "not passed"
asks = [json.loads(l)["path"] for l in open(sys.argv[2])]
assert asks == ["/late/api/v1/export"] * 5, asks
mark = json.load(open(sys.argv[3]))
assert mark["judged"]["tuned"]["set"] == "20261201T100000Z" and mark["wave_hosts"] == ["h1"], mark
print("2 retries (3 x 503, then no point), 5 requests, passed on h1's sets, marked")
PY
}

# ===== Fleet B =====
# Six hosts, in waves of 1, 1, 2 and the rest (scsitune_serial from -e):
# f1 | f2 | f3 f4 | f5. (Wave 4 shows the play going on after wave 3's failed
# host: one host does that.)
fleet_B() {
take_port vm_port || { fail "no free port (fleet B)"; return; }
vm=http://127.0.0.1:$vm_port
vm_search_flags='' start_vm vmB "$vm_port" || { fail "VictoriaMetrics (fleet B) not ready"; return; }
B=$T/B
fleet_hosts=(f1 f2 f3 f4 f5)
Bserial=(-e '{"scsitune_serial": [1, 1, 2, "100%"]}')
# The test hook (kill the service, drift a host) only in the plays that use
# it: each task, even skipped, costs Ansible a process per host.
hook="{\"scsitune_after_apply_tasks\": \"$src/tests/fleet/hooks/after-apply.yml\"}"
# The service-down gate's deadline: long enough to ask a few times (an ask
# with the service down takes its 3 tries, about 5 s), shorter than the
# default 60 s, whose asks prove nothing more.
down_wait=20
make_fleet "$B" b
# The canary's tuned runs worse than its baseline (-20 %); later, fixed ones.
make_fio "$B/f1/fio" worse $((now - 5 * 1800000)) 0.8 0.82 0.79 &&
	make_fio "$B/f1/fio" fixed $((now - 3600000)) 1.2 1.18 1.21 || fail "make_fio f1"
inventory "$B" f1=worse

# (2) The canary gets worse: stop after wave 1, canary reverted, nobody else touched.
play canary-worse 2 "$B" "${Bserial[@]}"
check "(2) wave 1's gate failed on the canary" waves_are "$T/canary-worse.log" \
	'^wave 1 \(1 host\(s\)\): gate .* over b-f1: FAILED \|   scsitune: gate failed: kiops>=\+5% \(b-f1 -[0-9.]+ %\)'
check "(2) the rollout stopped, said why" grep -q "wave 1: the gate failed (.*); this wave's hosts (f1) were reverted, earlier waves are left as they are; rollout stopped" "$T/canary-worse.log"
check "(2) the canary reverted: no journal left" sh -c "[ ! -e '$B/f1/state/journal.json' ] && echo 'no journal'"
check "(2) the canary's tree hashes as before" same_tree "$B" f1
check "(2) no other host touched" untouched "$B" f2 f3 f4 f5

# (4) Fixed and rerun; the central service goes down during wave 2 (after f2's apply).
inventory "$B" f1=fixed
play service-down 2 "$B" "${Bserial[@]}" -e "$hook" -e "{\"fleet_test_kill_on\": \"f2\", \"fleet_test_kill_pid\": ${fleet_pids[vmB]}, \"fleet_test_kill_url\": \"$vm/health\",
	\"scsitune_gate_wait\": $down_wait}"
stop_server vmB
check "(4) wave 1 passed, wave 2's gate failed closed" waves_are "$T/service-down.log" \
	'^wave 1 .* over b-f1: passed' \
	'^wave 2 .* over b-f2: not evaluated \(fails closed\) \|   scsitune: query .*(refused|connect).* \|   upload pending, kept in the spool: f2: '
check "(4) the gate asked again until scsitune_gate_wait was spent" "$py" - "$T/service-down.log" "$down_wait" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
wait = int(sys.argv[2])
m = re.search(r"wave 2: the gate could not be evaluated \(scsitune: query [^\n]*the gate is not passed[^\n]*"
              r"; asked (\d+) times? in (\d+) s\): it fails", text)
assert m, "no '; asked N times in S s' in wave 2's reason"
retries = len(re.findall(r"FAILED - RETRYING: \[f2 -> localhost\]: The gate", text))
assert int(m.group(1)) == retries + 1 and int(m.group(2)) >= wait, (m.group(0), retries, wait)
print("asked %s times in %s s (scsitune_gate_wait %d)" % (m.group(1), m.group(2), wait))
PY
check "(4) the rollout stopped, wave 2 held" grep -q "wave 2: the gate could not be evaluated (.*): it fails closed; rollout stopped, this wave's hosts (f2) are left applied and unjudged" "$T/service-down.log"
check "(4) f2 applied, unjudged, its tuned runs in the spool" sh -c "[ -f '$B/f2/state/journal.json' ] && [ ! -e '$B/f2/state/rollout-gate.json' ] && [ \$(ls '$B/f2/state/spool' | wc -l) -eq 1 ] && echo 'journal, no mark, 1 batch spooled'"
check "(4) waves 3-4 not touched" untouched "$B" f3 f4 f5

# The service back; (4) the rerun resumes, and (3) f4 drifts after apply in wave 3.
vm_search_flags='' start_vm vmB "$vm_port" || fail "VictoriaMetrics restart"
play resume 2 "$B" "${Bserial[@]}" -e "$hook" -e '{"fleet_test_drift": ["f4"], "scsitune_max_fail_percentage": 50}'
check "(4)(3) the rerun: wave 1 as it was, wave 2 judged, f4 failed in wave 3, wave 4 passed" waves_are "$T/resume.log" \
	'^wave 1 .*nothing to judge .*already rolled out: f1' \
	'^wave 2 .* over b-f2: passed' \
	'^wave 3 .* over b-f3: passed .*failed a step, reverted: f4: verify: 1 setting\(s\) drifted from profile numa' \
	'^wave 4 .* over b-f5: passed'
check "(4) f2's spool sent and empty, every spool empty" sh -c "[ -z \"\$(find '$B' -path '*/state/spool/*' -type f)\" ] && echo 'no batch left'"
rollout points "$vm" 30 >"$T/points-B.json"
check "(4) one copy of every run in the service" "$py" - "$T/points-B.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
b = {k: v for k, v in p.items() if k.startswith("b-f")}
dups = {k: v for k, v in b.items() if len(v) != len(set(v))}
assert not dups, dups
per = {}
for k, v in b.items():
    host, phase, _ = k.split()
    per.setdefault((host, phase), []).append(len(v))
# f1: its worse tuned set and the fixed one; every other set: 3 runs.
assert per[("b-f1", "tuned")] == [3, 3], per[("b-f1", "tuned")]
assert all(n == [3] for (h, ph), n in per.items() if (h, ph) != ("b-f1", "tuned")), per
assert ("b-f2", "tuned") in per and ("b-f4", "tuned") not in per, sorted(per)
print("%d sets, 3 runs each, no duplicate sample; f2's spooled runs arrived" % len(b))
PY
check "(3) f4 reverted: its tree as before" same_tree "$B" f4
check "(3) f4 reported failed, counted, the play went on" "$py" -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["f4"]["failed"] == 1 and r["f4"]["rescued"] == 1, r["f4"]
assert all(r[h]["failed"] == 0 for h in r if h != "f4"), r
print("f4 failed=1 rescued=1; the others failed=0")' "$(rollout recap "$T/resume.log")"
check "(4)(3) every other eligible host verifies and is marked" verified "$B" f1 f2 f3 f5

# The gate never judges an answer that does not show what the wave uploaded:
# the role's gate alone, for b-f1 recorded as having uploaded a tuned set the
# service never got; it asks again (2 s apart, scsitune_gate_wait 4 s) and
# fails closed; nothing is reverted.
bset=$(basename "$(find "$B/f1/state/reports/baseline" -name '*.json' | sort | tail -1)" .json)
playbook=$src/tests/fleet/gate-stale.yml ANSIBLE_ROLES_PATH=$src/fleet/ansible/roles play stale 2 "$B" \
	-e "{\"fleet_test_baseline_set\": \"$bset\", \"scsitune_gate_wait\": 4}" -l f1
check "stale answer: asked until scsitune_gate_wait was spent, then failed closed, naming the set it did not see" "$py" - "$T/stale.log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# How many asks fit in 4 s depends on the machine's speed (beside stress-ng
# the first ask, with Ansible's own start of the task, can take the 4 s: one
# ask, "asked 1 time in 8 s"; the asking again itself is the /late/ check of
# fleet A); that the count it gives is the asks made, and the 4 s, do not.
retries = len(re.findall(r"FAILED - RETRYING: \[f1 -> localhost\]: The gate", text))
assert re.search(r"over b-f1: not evaluated \(fails closed\)", text), "no fail-closed summary"
m = re.search(r"the service does not show what this wave uploaded \(asked (\d+) times? in (\d+) s\): "
              r"b-f1 tuned set 20991231T000000Z \(3 runs\), the service shows \d{8}T\d{6}Z \(3 runs\)", text)
assert m, "no reason"
assert int(m.group(1)) == retries + 1 and int(m.group(2)) >= 4, m.group(0)
assert re.search(r"wave 1: the gate could not be evaluated .*: it fails\s+closed", text), "the play did not stop"
assert "Revert (scsitune revert" not in text, "something was reverted"
print("%d retries, not judged, failed closed, nothing reverted" % retries)
PY
check "stale answer: f1 still applied and marked" verified "$B" f1
}

# Both fleets at once, each in a subshell with its own counters and output.
run_fleet() { # NAME
	local t0
	t0=$(date +%s)
	trap fleet_cleanup EXIT
	trap "exit 143" TERM INT
	"fleet_$1"
	echo "fleet $1: $checks checks, $fails failed, $(($(date +%s) - t0)) s"
	echo "$checks $fails" >"$T/fleet-$1.count"
}
run_fleet A >"$T/fleet-A.out" 2>&1 &
echo $! >"$T/fleet-A-shell.pid"
run_fleet B >"$T/fleet-B.out" 2>&1 &
echo $! >"$T/fleet-B-shell.pid"
wait
for f in A B; do
	echo "===== fleet $f ====="
	cat "$T/fleet-$f.out"
	if [ -f "$T/fleet-$f.count" ]; then
		read -r c n <"$T/fleet-$f.count"
		checks=$((checks + c)) fails=$((fails + n))
	else
		fail "fleet $f did not finish"
	fi
done
echo "fleet/rollout: $checks checks, $fails failed, $(($(date +%s) - started)) s"
[ "$fails" -eq 0 ]
