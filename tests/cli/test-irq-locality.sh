#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# IRQ locality per HBA, text and JSON, on the fixture trees:
#  - dual-socket-mpi3mr: the node-1 HBA's admin vector (IRQ 147, the one it
#    may move) is on node-0 CPUs: flagged remote; its 16 managed vectors are
#    spread by the kernel, 8 per node; the node-0 HBA's admin vector is local;
#  - vm-virtio-scsi: numa_node -1: no locality known, nothing to place;
#  - offline-cpus: managed vectors on offline CPUs are counted apart.
# Usage: test-irq-locality.sh SCSITUNE FIXTURES
set -uo pipefail
bin=$1 fixtures=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-irqloc.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
for n in dual-socket-mpi3mr vm-virtio-scsi offline-cpus; do
	mkdir "$work/$n"
	tar -xJf "$fixtures/$n.tar.xz" -C "$work/$n"
	"$bin" --sysroot "$work/$n" detect -o json >"$work/$n.json" 2>/dev/null || fail "$n: detect -o json exited $?"
	"$bin" --sysroot "$work/$n" detect >"$work/$n.txt" 2>/dev/null || fail "$n: detect exited $?"
done

python3 - "$work" <<'PY' || fail "JSON irq_locality"
import json, sys
w = sys.argv[1]
h = {x["pci_address"]: x["irq_locality"] for x in json.load(open(w + "/dual-socket-mpi3mr.json"))["hbas"]}
b1 = h["0000:b1:00.0"]
assert b1["hba_node"] == 1, b1
assert [(m["irq"], m["placement"], m["affinity_nodes"]) for m in b1["movable"]] == [(147, "remote", [0])], b1["movable"]
assert b1["movable_count"] == 1 and b1["movable_not_local_count"] == 1, b1
assert b1["managed_count"] == 16 and b1["managed_nodes"] == [{"node": 0, "count": 8}, {"node": 1, "count": 8}], b1
s17 = h["0000:17:00.0"]
assert [(m["irq"], m["placement"]) for m in s17["movable"]] == [(130, "local")] and s17["movable_not_local_count"] == 0, s17
assert h["0000:00:14.0"]["unclassified_count"] == 1 and h["0000:00:14.0"]["movable"] == [], h["0000:00:14.0"]
v = json.load(open(w + "/vm-virtio-scsi.json"))["hbas"][0]["irq_locality"]
assert v["hba_node"] is None and {m["placement"] for m in v["movable"]} == {"unknown"} and v["movable_count"] == 3, v
assert v["managed_count"] == 4 and v["managed_nodes"] == [{"node": 0, "count": 4}], v
o = json.load(open(w + "/offline-cpus.json"))["hbas"][0]["irq_locality"]
assert {"node": None, "count": 4} in o["managed_nodes"] and sum(x["count"] for x in o["managed_nodes"]) == o["managed_count"], o
PY

# Text: one line per HBA, the remote vector flagged and the managed spread said to be the kernel's.
t=$(tr '\n' ' ' <"$work/dual-socket-mpi3mr.txt" | tr -s ' ')
grep -q "IRQ locality: movable 1, 1 REMOTE: irq 147 on node 0, the HBA on node 1 (a profile can move it); managed 16, placed by the kernel one per CPU group (not movable): node 0 8, node 1 8" <<<"$t" ||
	fail "dual-socket text: no locality line flagging IRQ 147: $(grep -A2 'IRQ locality' "$work/dual-socket-mpi3mr.txt")"
grep -q "IRQ locality: movable 1, local (node 0); managed 16" <<<"$t" || fail "dual-socket text: the node-0 HBA's vector is not said to be local"
grep -q "IRQ locality: movable 3, no locality known (numa_node -1)" <(tr '\n' ' ' <"$work/vm-virtio-scsi.txt" | tr -s ' ') ||
	fail "vm-virtio-scsi text: no 'no locality known'"
[ "$(grep -c 'IRQ locality:' "$work/dual-socket-mpi3mr.txt")" = 4 ] || fail "dual-socket text: not one locality line per HBA"
[ "$status" -eq 0 ] && echo "ok: IRQ locality per HBA in text and JSON"
exit "$status"
