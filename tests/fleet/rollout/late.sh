# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# fleet/rollout/late (sourced by test-rollout.sh), fleet A's f1 alone. The
# gate asks again while the service holds no point of the phases yet (a
# first wave's case: report --query exits 1) or fails for a moment, and
# passes once the points show: the role's gate alone (tests/fleet/gate-late.yml)
# against the stub service's /late/ answers, which go by the number of
# requests, not by time (3 x 503: one ask; an empty answer: one ask; then h1's
# sets). scsitune_gate_wait (600) only bounds it. The role before this check
# took the first exit 1 as the answer and failed closed.
take_port stub_port || { fail "no free port (stub)"; return; }
# The stub is the fleet's only service here (the gate's URL is given with -e).
vm=http://127.0.0.1:$stub_port
A=$T/A
fleet_hosts=(f1)
make_fleet "$A" a && inventory "$A"
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
# Each RETRYING line says plainly that it is the wait, not a failure.
said = re.findall(r"FAILED - RETRYING: \[f1 -> localhost\]: The gate: [^\n]*\(a RETRYING line here is the wait for the service to show the wave's sets, not a failure\)", text)
assert len(said) == 2, "the RETRYING lines do not say they are the wait: %r" % re.findall(r"FAILED - RETRYING[^\n]*", text)
assert re.search(r"wave 1 \(1 host\(s\)\): gate kiops>=\+5% over h1: passed", text), "not passed"
asks = [json.loads(l)["path"] for l in open(sys.argv[2])]
# 3 tries (503), the empty answer and the look a year back it makes, then the sets.
assert asks == ["/late/api/v1/export"] * 6, asks
mark = json.load(open(sys.argv[3]))
assert mark["judged"]["tuned"]["set"] == "20261201T100000Z" and mark["wave_hosts"] == ["h1"], mark
print("2 retries (3 x 503, then no point), 6 requests, passed on h1's sets, marked")
PY
