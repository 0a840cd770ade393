# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# fleet/rollout/failures (sourced by test-rollout.sh): fleet B, five hosts,
# waves [1, 1, 2, 100%], its VictoriaMetrics with the server's default search
# flags; one chain, each step on what the one before left: (2) the canary
# worse, (4) the service down in wave 2 and the resume, (3) a wave-3 host
# drifting in that rerun, then the gate on a stale answer (test-rollout.sh's
# header says what each proves).
# Six hosts, in waves of 1, 1, 2 and the rest (scsitune_serial from -e):
# f1 | f2 | f3 f4 | f5. (Wave 4 shows the play going on after wave 3's failed
# host: one host does that.)
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
	'^wave 1 \(1 host\(s\)\): gate .* over b-f1: FAILED \|   scsitune: gate failed: kiops>=\+5% \(b-f1 -[0-9.]+ %: not shown at 95 %: [0-9.]+ % reached \(3 and 3 runs\)\)'
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
