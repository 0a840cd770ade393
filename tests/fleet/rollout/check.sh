# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# fleet/rollout/check (sourced by test-rollout.sh): fleet A's eight hosts,
# ansible-playbook --check: each eligible host's plan shown, f8 (no HBA)
# skipped, every tree hashes as before and every state directory stays empty.
# Check mode asks no service (no gate; tasks/check.yml): the inventory's
# service URL is a port nothing listens on.
take_port vm_port || { fail "no free port (fleet A, check)"; return; }
vm=http://127.0.0.1:$vm_port
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
