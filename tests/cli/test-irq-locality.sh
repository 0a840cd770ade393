#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# IRQ locality per HBA, text and JSON, on the fixture trees:
#  - dual-socket-mpi3mr: the node-1 HBA's admin vector (IRQ 147, the one it
#    may move) is on node-0 CPUs: flagged remote; its 16 managed vectors are
#    spread by the kernel, 8 per node; the node-0 HBA's admin vector is local;
#  - vm-virtio-scsi: numa_node -1: no locality known, nothing to place;
#  - offline-cpus: managed vectors on offline CPUs are counted apart;
#  - spans (a copy of dual-socket-mpi3mr): the node-1 HBA's vector allowed on
#    nodes 0-1 but served on node 1 (CPU 8) is not REMOTE; the AHCI
#    controller's allowed on 0-1 and served on node 1 is REMOTE, with no
#    profile offered; the host line names the HBA and the command.
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
# The issue's dual-socket host: affinity on both nodes, effective on one.
cp -a "$work/dual-socket-mpi3mr" "$work/spans"
set_irq() { # IRQ AFFINITY-LIST AFFINITY-MASK EFFECTIVE-LIST EFFECTIVE-MASK
	printf '%s\n' "$2" >"$work/spans/proc/irq/$1/smp_affinity_list"
	printf '%s\n' "$3" >"$work/spans/proc/irq/$1/smp_affinity"
	printf '%s\n' "$4" >"$work/spans/proc/irq/$1/effective_affinity_list"
	printf '%s\n' "$5" >"$work/spans/proc/irq/$1/effective_affinity"
}
set_irq 147 0-15 ffff 8 0100
set_irq 129 0-15 ffff 9 0200
"$bin" --sysroot "$work/spans" detect >"$work/spans.txt" 2>/dev/null || fail "spans: detect exited $?"
"$bin" --sysroot "$work/spans" detect -o json >"$work/spans.json" 2>/dev/null || fail "spans: detect -o json exited $?"

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
assert b1["movable_served_remote_count"] == 1 and b1["movable"][0]["served"] == "remote", b1
assert json.load(open(w + "/dual-socket-mpi3mr.json"))["summary"]["irq_remote_hbas"] == ["0000:b1:00.0"]
sp = json.load(open(w + "/spans.json"))
hs = {x["pci_address"]: x["irq_locality"] for x in sp["hbas"]}
m = hs["0000:b1:00.0"]["movable"][0]
assert (m["placement"], m["served"], m["affinity_nodes"], m["effective_nodes"]) == ("spans-nodes", "local", [0, 1], [1]), m
assert hs["0000:b1:00.0"]["movable_served_remote_count"] == 0 and hs["0000:b1:00.0"]["movable_not_local_count"] == 1
a = hs["0000:00:17.0"]["movable"][0]
assert (a["placement"], a["served"]) == ("spans-nodes", "remote"), a
assert sp["summary"]["irq_remote_hbas"] == ["0000:00:17.0"], sp["summary"]
PY

# Text: one line per HBA, the remote vector flagged and the managed spread said to be the kernel's.
t=$(tr '\n' ' ' <"$work/dual-socket-mpi3mr.txt" | tr -s ' ')
grep -q "IRQ locality: movable 1, 1 REMOTE: irq 147 on node 0, the HBA on node 1 (apply --profile numa pins it); managed 16, placed by the kernel one per CPU group (not movable): node 0 8, node 1 8" <<<"$t" ||
	fail "dual-socket text: no locality line flagging IRQ 147: $(grep -A2 'IRQ locality' "$work/dual-socket-mpi3mr.txt")"
grep -q "IRQ locality: movable 1, local (node 0); managed 16" <<<"$t" || fail "dual-socket text: the node-0 HBA's vector is not said to be local"
grep -q "IRQ locality: movable 3, no locality known (numa_node -1)" <(tr '\n' ' ' <"$work/vm-virtio-scsi.txt" | tr -s ' ') ||
	fail "vm-virtio-scsi text: no 'no locality known'"
[ "$(grep -c 'IRQ locality:' "$work/dual-socket-mpi3mr.txt")" = 4 ] || fail "dual-socket text: not one locality line per HBA"
# The command repeats --sysroot, so that it can be pasted; a long path breaks it with " \".
[ "$(sed -z 's/ \\\n */ /g' "$work/dual-socket-mpi3mr.txt" | grep -A2 '^IRQs:')" = "IRQs:      1 HBA serves a movable vector off its node: 0000:b1:00.0
           to see the fix:
           scsitune --sysroot $work/dual-socket-mpi3mr apply --profile numa --dry-run" ] ||
	fail "dual-socket text: no host line naming the HBA and the command: $(grep -A3 '^IRQs:' "$work/dual-socket-mpi3mr.txt")"
grep -q "^IRQs:" "$work/vm-virtio-scsi.txt" && fail "vm-virtio-scsi text: an IRQs line with no locality known"
ts=$(tr '\n' ' ' <"$work/spans.txt" | tr -s ' ')
grep -q "IRQ locality: movable 1, 1 served on node 1, allowed elsewhere: irq 147 on nodes 0-1 (apply --profile numa pins it); managed 16" <<<"$ts" ||
	fail "spans text: the node-1 HBA's vector, served locally, not said so: $(grep -A2 'IRQ locality' "$work/spans.txt")"
grep -q "REMOTE: irq 147" <<<"$ts" && fail "spans text: IRQ 147, served on its HBA's node, called REMOTE"
grep -q "IRQ locality: movable 1, 1 REMOTE: irq 129 on node 1, the HBA on node 0 (no shipped profile tunes this HBA)" <<<"$ts" ||
	fail "spans text: the AHCI vector served off its node not REMOTE, or a profile offered: $(grep -A2 'IRQ locality' "$work/spans.txt")"
grep -qx "IRQs:      1 HBA serves a movable vector off its node: 0000:00:17.0" "$work/spans.txt" &&
	grep -qx "           no shipped profile tunes these HBAs (scsitune-profile(5))" "$work/spans.txt" ||
	fail "spans text: host line: $(grep -A1 '^IRQs:' "$work/spans.txt")"
[ "$status" -eq 0 ] && echo "ok: IRQ locality per HBA in text and JSON"
exit "$status"
