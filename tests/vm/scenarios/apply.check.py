#!/usr/bin/env python3
"""Scenario "apply", host side: apply --profile numa, verify and revert on
the guest kernel's real sysfs and /proc/irq, with Debian's irqbalance.

    apply.check.py RESULTS_DIR SCSITUNE

Asserts, against what the guest kernel itself reported (before.txt etc.):
  - apply exits 0, every written row applied; the kernel reads back each
    desired value; a scheduler switch reset nr_requests (the kernel's doing,
    recorded in the journal, not written by apply);
  - IRQs the plan pins: the kernel took the CPU (smp_affinity_list; the
    effective CPU is the new one, or the old one while the move waits for
    the vector's next interrupt); kernel-managed IRQs: never written, unchanged;
  - verify exits 0 right after apply;
  - /etc/default/irqbalance got --banirq=N for exactly the pinned IRQs, and
    irqbalance started with the file's options left every pin in place
    (verify still 0);
  - revert exits 0: every disk and IRQ value is the kernel's own again
    (before.txt), the irqbalance file byte-identical;
  - control: without the bans irqbalance moves pinned IRQs and verify exits 2
    naming them (so the bans are what kept them).
"""
import json
import sys

from vmcheck import check, failures, finish, read, results


def doc(name):
    try:
        return json.loads(read(name + ".json"))
    except ValueError:
        return None


def values(name):
    """disk: {(sdX, attr): value}; irq: {N: (affinity, effective)}"""
    disks, irqs = {}, {}
    for line in read(name).splitlines():
        f = line.split(" ")
        if f[0] == "disk" and len(f) >= 3:
            disks[(f[1], f[2])] = " ".join(f[3:])
        elif f[0] == "irq" and len(f) >= 3:
            irqs[int(f[1])] = (f[2], f[3] if len(f) > 3 else "")
    return disks, irqs


def selected(sched):
    return sched[sched.index("[") + 1:sched.index("]")] if "[" in sched else sched


def rc(name):
    return read(name + ".rc").strip()


def err(name):
    return read(name + ".err").strip()[-400:]


before_d, before_i = values("before.txt")
applied_d, applied_i = values("applied.txt")
balanced_d, balanced_i = values("balanced.txt")
reverted_d, reverted_i = values("reverted.txt")
control_d, control_i = values("control.txt")
check(before_d and before_i, f"the guest's values were read ({len(before_d)} disk, {len(before_i)} IRQ)")

detect = doc("detect") or {}
managed = {q["irq"] for h in detect.get("hbas", []) for q in h.get("irqs", []) if q.get("managed") is True}
check(managed, f"detect marks kernel-managed IRQs: {sorted(managed)}")

plan = doc("plan")
apply = doc("apply")
if not check(rc("apply") == "0" and apply, f"apply exited {rc('apply')} ({err('apply')})"):
    sys.exit(1)
rows = [c for c in apply["changes"] if c["result"] not in ("not-applicable",)]
written = [c for c in apply["changes"] if c["result"] == "applied"]
check(all(c["result"] in ("applied", "already", "skipped") for c in rows),
      "every row applied, already right or skipped: " +
      str(sorted({c["result"] for c in rows})))

# Disks: each written value is what the kernel reads back.
sched_changed = []
for c in written:
    if c["path"].startswith("/sys/block/"):
        dev, attr = c["path"].split("/")[3], c["path"].split("/")[-1]
        got = applied_d.get((dev, attr))
        want = c["desired"]
        ok = got is not None and (selected(got) == want if attr == "scheduler" else got == want)
        check(ok, f"{dev} {attr}: kernel reads {got!r} after apply, desired {want!r}")
        if attr == "scheduler":
            sched_changed.append(dev)
check(sched_changed, f"apply switched a disk's scheduler on the real kernel: {sched_changed}")
for dev in sched_changed:
    b, a = before_d.get((dev, "nr_requests")), applied_d.get((dev, "nr_requests"))
    check(b != a, f"{dev}: the scheduler switch made the kernel reset nr_requests ({b} -> {a})")

# IRQs: pins taken by the kernel; managed ones untouched.
pinned = {}
for c in written:
    if c["path"].startswith("/proc/irq/"):
        n = int(c["path"].split("/")[3])
        pinned[n] = c["desired"]
        aff, eff = applied_i.get(n, ("?", "?"))
        # x86 without interrupt remapping moves an MSI at its next interrupt
        # (the move is left pending in irq context, kernel/irq/migration.c):
        # an idle vector keeps its old effective CPU until it fires.
        check(aff == c["desired"] and eff in (c["desired"], before_i.get(n, ("", ""))[1]),
              f"irq {n} ({c['device']}): affinity {aff}, effective {eff} (before {before_i.get(n)}), "
              f"desired {c['desired']}")
check(pinned, f"apply pinned movable IRQs of the node-1 HBA: {pinned}")
check(not (set(pinned) & managed), "no managed IRQ was written")
skipped_managed = {int(c["object"][4:]) for c in apply["changes"]
                   if c["object"].startswith("irq:") and c["result"] == "skipped"}
check(managed <= skipped_managed, f"every managed IRQ is a skipped row ({sorted(managed - skipped_managed)} missing)")
for n in sorted(managed):
    check(before_i.get(n) == applied_i.get(n) == balanced_i.get(n) == reverted_i.get(n),
          f"managed irq {n}: affinity unchanged throughout {before_i.get(n)}")

v = doc("verify")
check(rc("verify") == "0" and v and v["summary"]["drifted"] == 0, f"verify after apply: exit {rc('verify')}")

# irqbalance: the bans in the file, and irqbalance leaves the pins alone.
bans = " ".join(f"--banirq={n}" for n in sorted(pinned))
ib_applied = read("irqbalance.applied")
ib_rows = [c for c in apply["changes"] if c["object"] == "irqbalance"]
check(ib_rows and ib_rows[0]["result"] == "applied", f"irqbalance row applied: {ib_rows}")
active = [l for l in ib_applied.splitlines() if l.startswith("IRQBALANCE_ARGS=")]
check(len(active) == 1 and all(f"--banirq={n}" in active[0] for n in pinned),
      f"/etc/default/irqbalance: {active} bans {bans}")
log = read("irqbalance.log")
check("== irqbalance" in log, "irqbalance ran in the guest")
for n, want in sorted(pinned.items()):
    check(balanced_i.get(n, ("?",))[0] == want, f"irq {n}: still {want} after irqbalance with the bans "
          f"(now {balanced_i.get(n)})")
vb = doc("verify-balanced")
check(rc("verify-balanced") == "0" and vb, f"verify after irqbalance with the bans: exit {rc('verify-balanced')}")

# revert: the kernel's own values again.
check(rc("revert") == "0", f"revert exited {rc('revert')} ({err('revert')})")
diff = {k: (before_d[k], reverted_d.get(k)) for k in before_d if reverted_d.get(k) != before_d[k]}
check(not diff, f"every disk value is the kernel's default again {diff}")
idiff = {n: (before_i[n], reverted_i.get(n)) for n in set(pinned) | managed if reverted_i.get(n) != before_i.get(n)}
check(not idiff, f"every pinned and managed IRQ as before {idiff}")
check(read("irqbalance.reverted") == read("irqbalance.before") != "", "/etc/default/irqbalance byte-identical after revert")

# control: no bans, irqbalance takes the pins back, verify sees the drift.
moved = {n: control_i.get(n) for n, want in pinned.items() if control_i.get(n, ("?",))[0] != want}
check(rc("control-apply") == "0", f"control: apply exited {rc('control-apply')}")
check(moved, f"control: irqbalance without the bans moved pinned IRQs {moved}")
cv = doc("control-verify")
drifted = {s["object"] for s in (cv or {}).get("settings", []) if s["state"] == "drifted"}
check(rc("control-verify") == "2" and all(f"irq:{n}" in drifted for n in moved),
      f"control: verify exits 2 naming the moved IRQs ({rc('control-verify')}, {sorted(drifted)})")
check(rc("control-revert") == "0", f"control: revert --force exited {rc('control-revert')}")

print(read("timing.txt").strip())
finish("apply.check.py")
