# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case earlier-boot of run-apply.sh (sourced in a subshell on a fresh tree):
# IRQ entries carry their boot id; revert in another boot writes none of them
# and restores the disks.
# 3c. IRQ numbers are each boot's: an IRQ entry carries the boot it was
# written in (proc/sys/kernel/random/boot_id), and revert in another boot
# writes none of them (N may be another device's IRQ now); the disks' are restored.
bootf=$work/root/proc/sys/kernel/random/boot_id
[ ! -e "$(dirname "$bootf")" ] || fail "the fixture has proc/sys/kernel/random: this test would remove it"
mkdir "$(dirname "$bootf")"
echo 6f1c3e0a-0000-4000-8000-000000000001 >"$bootf"
(cd "$work/root" && tar -cf "$work/irq-before.tar" proc/irq)
run 0 "apply in boot 1" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
n_irq=$(python3 -c 'import json,sys
c=[e for e in json.load(open(sys.argv[1]))["changes"] if e["object"].startswith("irq:")]
assert all(e.get("boot_id")=="6f1c3e0a-0000-4000-8000-000000000001" for e in c), c
print(len(c))' "$state/journal.json") || fail "an IRQ entry of the journal lacks this boot's id"
[ "$name" != dual-socket-mpi3mr ] || [ "${n_irq:-0}" -gt 0 ] || fail "dual-socket-mpi3mr: apply pinned no IRQ"
(cd "$work/root" && tar -cf "$work/irq-applied.tar" proc/irq)
echo 6f1c3e0a-0000-4000-8000-000000000002 >"$bootf"
run 0 "revert in boot 2" st revert --state-dir "$state" -v -o json
python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["changes"]
irq=[e["result"] for e in c if e["object"].startswith("irq:")]
assert irq==["earlier-boot"]*int(sys.argv[2]), irq
assert any(e["result"]=="restored" and e["path"].startswith("/sys/block/") for e in c), c' \
	"$work/out" "${n_irq:-0}" || fail "revert in another boot: IRQ entries not earlier-boot, or no disk restored: $(head -c 600 "$work/out")"
(cd "$work/root" && tar -cf "$work/irq-after.tar" proc/irq)
cmp -s "$work/irq-applied.tar" "$work/irq-after.tar" || fail "revert in another boot wrote an IRQ of the earlier boot"
[ ! -e "$state/journal.json" ] || fail "revert in another boot kept the journal (the IRQ entries are done)"
# Back to the tree of the snapshot: the IRQs as before apply, no boot id.
(cd "$work/root" && tar -xf "$work/irq-before.tar")
rm -r "$(dirname "$bootf")"
same_tree "revert in another boot (IRQs put back by hand)"
