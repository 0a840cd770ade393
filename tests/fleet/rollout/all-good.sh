# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# fleet/rollout/all-good (sourced by test-rollout.sh): fleet A's eight hosts
# and its VictoriaMetrics, the default waves 1, 1, 2, 4: (1) every wave's gate
# passes and marks its hosts, every host verifies, the host without an HBA is
# untouched, the fleet view equals each host's own report --compare; (5) the
# whole play again changes nothing and adds no point.
take_port vm_port || { fail "no free port (fleet A)"; return; }
vm=http://127.0.0.1:$vm_port
start_vm vmA "$vm_port" || { fail "VictoriaMetrics (fleet A) not ready"; return; }
A=$T/A
fleet_hosts=("${hosts[@]}")
make_fleet "$A" a && inventory "$A"
eligible=(f1 f2 f3 f4 f5 f6 f7)

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
