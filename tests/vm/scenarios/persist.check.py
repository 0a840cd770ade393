#!/usr/bin/env python3
"""Scenario "persist", host side: apply --persist proven across real reboots
of the systemd-booted Debian image (tests/vm/rootfs, persist.stage.sh).

    persist.check.py RESULTS_DIR SCSITUNE

Asserts, against what the guest kernel, udev and systemd reported:
  boot 1  the dry run plans queue rows for the data disk and both scsi_debug
          disks (not the rotational root disk), IRQ rows for the virtio-scsi
          HBA behind the node-1 bridge, a not-settable scsi_debug dsense row,
          and the four persist rows (udev rules, boot unit, its enabling link,
          modprobe.d); apply exits 0 with every row applied/already/skipped,
          verify exits 0; the rules file has one rule per tuned disk matched
          by its WWN or ID_PATH with the profile's attributes, scheduler
          first; the unit's ExecStart names the installed binary, which
          exists; udevadm test of each tuned disk applies the rules file's
          ATTR writes (and of the root disk, none); systemd-analyze verify
          of the unit exits 0 and says nothing about it; systemctl says
          enabled;
  boot 2  every tuned disk has the profile's values after the reboot, every
          pinned IRQ its CPU; the boot unit ran (active, success, exit 0)
          after udev settled and before irqbalance started, found the disks
          already tuned (by the udev rules: its output says "already" for
          every disk row) and journaled in /run/scsitune; dsense is 1
          (modprobe.d); verify exits 0; the scsi_debug host removed and added
          again (same H:C:T:L and WWN) has its disks tuned by udev alone,
          verify 0; a second, new host's disks keep the kernel's values
          (no rule names them: verify exits 2 naming them and the rules
          file); revert (with it gone) exits 0 and removes
          the rules, unit, link and modprobe.d file, puts every tuned disk
          value back to boot 1's kernel values and the irqbalance file back
          byte for byte;
  boot 3  no unit (is-enabled fails), no /run/scsitune, no persist file;
          every disk value equals boot 1's kernel values; dsense 0; verify
          without a journal exits 1 (not applied), verify --profile exits 2
          (the profile's values are not in effect);
  every   boot reached "running" with no failed unit.
"""
import json
import re

from vmcheck import check, doc, finish, rc, read

TUNED_ATTRS = ["scheduler", "rq_affinity", "nomerges", "add_random", "read_ahead_kb"]
WANT = {"scheduler": "none", "rq_affinity": "2", "nomerges": "2", "add_random": "0", "read_ahead_kb": "16"}
RULES = "/etc/udev/rules.d/90-scsitune.rules"
UNIT = "/etc/systemd/system/scsitune-apply.service"
WANTS = "/etc/systemd/system/multi-user.target.wants/scsitune-apply.service"
MODPROBE = "/etc/modprobe.d/scsitune.conf"



def err(name):
    return read(name + ".err").strip()[-400:]


def sel(v):
    return v[v.index("[") + 1:v.index("]")] if "[" in v else v


def values(name):
    """{hctl: {"name":, attr: value, "wwn":, "idpath":}}, {irq: (name, aff, eff)}, dsense"""
    disks, irqs, dsense = {}, {}, None
    for line in read(name).splitlines():
        f = line.split(" ")
        if f[0] == "disk" and len(f) >= 5:
            d = disks.setdefault(f[1], {"name": f[2]})
            d[f[3]] = sel(" ".join(f[4:]))
        elif f[0] in ("wwn", "idpath") and len(f) >= 3:
            disks.setdefault(f[1], {"name": f[2]})[f[0]] = " ".join(f[3:])
        elif f[0] == "irq" and len(f) >= 4:
            irqs[int(f[1])] = (f[2], f[3], f[4] if len(f) > 4 else "")
        elif f[0] == "param" and len(f) == 3:
            dsense = f[2]
    return disks, irqs, dsense


def files(name):
    return {m.group(2): m.group(1) for m in re.finditer(r"^(file|link|absent) (\S+)", read(name), re.M)}


def show(name):
    return dict(line.split("=", 1) for line in read(name).splitlines() if "=" in line)


# ---- every boot --------------------------------------------------------------
boots = int(read("boots").strip() or 0)
check(boots == 3 and read("finished").split() == ["3", "0"], f"three boots, the last one finished its stage: boots {boots}, finished {read('finished').strip()!r}")
for n in range(1, boots + 1):
    st, failed = read(f"boot-{n}.state").strip(), read(f"boot-{n}.failed").strip()
    check(st == "running" and not failed, f"boot {n}: systemd says {st!r}, failed units: {failed or 'none'}")

# ---- boot 1 ------------------------------------------------------------------
before, before_irq, dsense0 = values("before.txt")
applied, applied_irq, _ = values("applied.txt")
check(len(before) == 4, f"boot 1: four disks (root, data, two scsi_debug): {sorted(before)}")
root = [h for h, d in before.items() if d.get("rotational") == "1"]
check(len(root) == 1, f"boot 1: one rotational disk (the root disk): {root}")
plan = doc("plan") or {}
rows = plan.get("changes", [])
check(rc("plan") == "0" and rows, f"apply --persist --dry-run exited {rc('plan')} with {len(rows)} rows ({err('plan')})")
by_dev = {}
for r in rows:
    if r["class"] == "queue":
        by_dev.setdefault(r["device"], set()).add(r["setting"])
tuned = {h for h, d in before.items() if d.get("rotational") == "0"}
tuned_names = {before[h]["name"] for h in tuned}
check(len(tuned) == 3 and set(by_dev) == tuned_names,
      f"the plan tunes the three non-rotational disks {sorted(tuned_names)}, not the root disk: {sorted(by_dev)}")
check(all({"queue/" + a for a in TUNED_ATTRS} <= s for s in by_dev.values()),
      "each tuned disk gets scheduler, rq_affinity, nomerges, add_random and read_ahead_kb rows")
irq_rows = [r for r in rows if r["object"].startswith("irq:")]
pinned_plan = {int(r["object"][4:]): r["desired"] for r in irq_rows if r["state"] in ("change", "already")}
check(len(pinned_plan) == 3 and all(v in ("2", "3") for v in pinned_plan.values()),
      f"the plan pins the virtio-scsi HBA's movable IRQs to node 1's CPUs 2-3: {pinned_plan}")
check(any(r["state"] == "not-settable" for r in irq_rows), "the plan skips the kernel-managed request IRQs (not-settable)")
mod = [r for r in rows if r["object"] == "module:scsi_debug" and r["setting"] == "parameters/dsense"]
check(mod and mod[0]["state"] == "not-settable" and mod[0]["desired"] == "1", f"the plan has dsense=1 as a load-time parameter: {mod}")
persist = {r["object"]: r for r in rows if r["class"] == "persist"}
check(set(persist) == {"persist:udev-rules", "persist:boot-unit", "persist:boot-unit-enable", "persist:modprobe"}
      and all(r["state"] == "change" for r in persist.values()),
      f"the plan has the four persist rows to create: {sorted((k, r['state']) for k, r in persist.items())}")

apply = doc("apply") or {}
res = [c["result"] for c in apply.get("changes", []) if c["result"] != "not-applicable"]
check(rc("apply") == "0" and res and set(res) <= {"applied", "already", "skipped"},
      f"apply --persist exited {rc('apply')}, results {sorted(set(res))} ({err('apply')})")
def not_ok(name):
    """verify's rows that are not ok: what a nonzero exit was about."""
    return [(s["object"], s["setting"], s["state"], s["actual"], s["expected"])
            for s in (doc(name) or {}).get("settings", []) if s["state"] not in ("in-effect", "not-applicable", "not-settable")]


check(rc("verify1") == "0", f"verify right after apply exits {rc('verify1')} ({err('verify1')}) {not_ok('verify1')}")
for h in tuned:
    check(all(applied[h][a] == WANT[a] for a in TUNED_ATTRS), f"boot 1: {h} took the profile's values: {applied[h]}")
for i, cpu in pinned_plan.items():
    check(applied_irq.get(i, ("", ""))[1] == cpu, f"boot 1: IRQ {i} pinned to CPU {cpu}: {applied_irq.get(i)}")

fa = files("files-applied.ls")
check(files("files-before.ls") == {p: "absent" for p in (RULES, UNIT, WANTS, MODPROBE, "/run/scsitune/journal.json")},
      "before apply: no persist file")
check(fa.get(RULES) == "file" and fa.get(UNIT) == "file" and fa.get(MODPROBE) == "file" and fa.get(WANTS) == "link",
      f"apply --persist wrote the rules, the unit, its link and modprobe.d: {fa}")
check(f"link {WANTS} -> {UNIT}" in read("files-applied.ls"), "the unit is enabled by a link to it in multi-user.target.wants")
rules = [line for line in read("persist.90-scsitune.rules").splitlines() if line and not line.startswith("#")]
check(len(rules) == 3, f"one udev rule per tuned disk: {len(rules)}")
check(not re.search(r"\bsd[a-z]+\b", read("persist.90-scsitune.rules")),
      "the rules file names no sdX (kernel names change between boots; verify compares the text)")
for h in tuned:
    d = before[h]
    key = f'ENV{{ID_WWN_WITH_EXTENSION}}=="{d["wwn"]}"' if d.get("wwn") else f'ENV{{ID_PATH}}=="{d.get("idpath")}"'
    mine = [r for r in rules if key in r]
    ok = len(mine) == 1 and mine[0].startswith('ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ')
    attrs = re.findall(r'ATTR\{queue/(\w+)\}="([^"]*)"', mine[0]) if ok else []
    check(ok and attrs and attrs[0] == ("scheduler", "none") and dict(attrs) == {a: WANT[a] for a in dict(attrs)}
          and set(dict(attrs)) >= {"scheduler", "rq_affinity", "nomerges", "read_ahead_kb"},
          f"{h} ({d['name']}): one rule matched by {key}, scheduler first, the profile's values: {attrs}")
unit = read("persist.scsitune-apply.service")
# A profile named from the installed directory stays its name (the installed profile, as upgraded);
# --profile-dir only for another directory.
m = re.search(r'^ExecStart="([^"]+)" apply --profile "([^"]+)"( --profile-dir "[^"]+")? --state-dir /run/scsitune$', unit, re.M)
check(m and m.group(1) == "/usr/local/sbin/scsitune" and "/usr/local/sbin/scsitune" in read("bin.ls") and m.group(2) == "vm-persist"
      and not m.group(3),
      f"the unit runs the installed binary on the same profile: {m.group(0) if m else unit!r}")
check(read("persist.scsitune.conf").splitlines()[-1:] == ["options scsi_debug dsense=1"], "modprobe.d: options scsi_debug dsense=1")
for h, d in before.items():
    out = read(f"udevadm-test-{d['name']}.txt")
    writes = dict(re.findall(r"90-scsitune\.rules:\d+ ATTR '[^']*/queue/(\w+)' writing '([^']*)'", out))
    if h in tuned:
        check(rc(f"udevadm-test-{d['name']}") == "0" and writes and all(WANT[a] == v for a, v in writes.items())
              and set(writes) >= {"scheduler", "rq_affinity", "nomerges", "read_ahead_kb"},
              f"udevadm test {d['name']}: 90-scsitune.rules writes {writes}")
    else:
        check(rc(f"udevadm-test-{d['name']}") == "0" and "udev" in out and not writes,
              f"udevadm test {d['name']} (the root disk): no write from 90-scsitune.rules")
av = read("analyze-verify.txt")
check(rc("analyze-verify") == "0" and "scsitune-apply" not in av,
      f"systemd-analyze verify of the unit exits {rc('analyze-verify')}: {av.strip()[:300] or 'no complaint'}")
check(read("unit-enabled-1.txt").strip() == "enabled", f"systemctl is-enabled: {read('unit-enabled-1.txt').strip()}")

# ---- boot 2 ------------------------------------------------------------------
b2, b2_irq, dsense2 = values("boot2.txt")
for h in tuned:
    check(h in b2 and all(b2[h][a] == WANT[a] for a in TUNED_ATTRS), f"boot 2: {h} has the profile's values after the reboot: {b2.get(h)}")
check(root and root[0] in b2 and all(b2[root[0]][a] == before[root[0]][a] for a in TUNED_ATTRS),
      "boot 2: the root disk (no rule) has the kernel's values")
for i, cpu in pinned_plan.items():
    name = applied_irq.get(i, ("?",))[0]
    now = [v for v in b2_irq.values() if v[0] == name]
    check(now and now[0][1] == cpu, f"boot 2: {name} pinned to CPU {cpu} again: {now}")
us = show("unit-show.txt")
check(us.get("ActiveState") == "active" and us.get("Result") == "success" and us.get("ExecMainStatus") == "0",
      f"the boot unit ran and succeeded: {us}")
t_unit = int(us.get("ActiveEnterTimestampMonotonic", "0") or 0)
t_settle = int(show("settle-show.txt").get("ActiveEnterTimestampMonotonic", "0") or 0)
t_irqb = int(show("irqbalance-show.txt").get("ExecMainStartTimestampMonotonic", "0") or 0)
check(0 < t_settle <= t_unit <= t_irqb, f"order: udev settled ({t_settle}), the unit done ({t_unit}), irqbalance started ({t_irqb}) (µs)")
uo = read("unit-output.txt")
# The unit's text lists what it changed (the rest is counted): no disk setting, as udev's
# rules wrote them first (5 settings x 3 disks already right), and the IRQs again.
m = re.search(r"^Applied (\d+) of (\d+); 0 failed, (\d+) already right", uo, re.M)
disk_changes = [line for line in uo.splitlines()
                if re.match(r"applied ", line) and re.search(r"\b(scheduler|rq_affinity|nomerges|add_random|read_ahead_kb) ", line)]
check(m and int(m.group(3)) >= 3 * len(TUNED_ATTRS) and not disk_changes,
      f"the unit found every disk setting already right (udev applied the rules first): {m and m.group(0)}, disk changes {disk_changes}")
unit_irqs = {int(i) for i in re.findall(r"^applied +\S+ +irq:(\d+) +smp_affinity_list", uo, re.M)}
check(unit_irqs == set(pinned_plan), f"the unit pinned the IRQs again (new boot, irqbalance not yet started): {sorted(unit_irqs)}")
bj = doc("boot-journal")
check(bj and bj.get("profile_path", "").endswith("vm-persist") and files("files-boot2.ls").get("/run/scsitune/journal.json") == "file",
      "the unit journaled in /run/scsitune")
check(dsense2 == "1" and dsense0 == "0", f"dsense: {dsense0} before, {dsense2} after the reboot (modprobe.d)")
check(rc("verify2") == "0", f"boot 2: verify exits {rc('verify2')} ({err('verify2')}) {not_ok('verify2')}")
ban = re.findall(r"--banirq=(\d+)", read("irqbalance.boot2"))
check(sorted(int(b) for b in ban) == sorted(pinned_plan), f"boot 2: irqbalance's file bans the pinned IRQs: {ban}")

hb, ha = read("hotadd-host-before.txt").split(), read("hotadd-host-after.txt").split()
removed, _, _ = values("hotadd-removed.txt")
hot, _, _ = values("hotadd.txt")
sd = {h for h in tuned if h.split(":")[0] == hb[0][4:]} if hb else set()
check(len(sd) == 2 and not (sd & set(removed)), f"hot-add: {hb} removed with its disks {sorted(sd)}")
check(ha == hb, f"hot-add: the host came back as {ha} (the same number)")
for h in sd:
    check(h in hot and hot[h].get("wwn") == before[h].get("wwn") and all(hot[h][a] == WANT[a] for a in TUNED_ATTRS),
          f"hot-add: {h} (WWN {hot.get(h, {}).get('wwn')}) tuned by the udev rule: {hot.get(h)}")
check(rc("verify-hotadd") == "0", f"hot-add: verify exits {rc('verify-hotadd')} {not_ok('verify-hotadd')}")
new, _, _ = values("hotadd-new.txt")
fresh = set(new) - set(before)
check(len(fresh) == 2 and all(new[h][a] == before[sorted(sd)[0]][a] for h in fresh for a in TUNED_ATTRS),
      f"a new host's disks {sorted(fresh)} keep the kernel's values (no rule names them)")
vn = doc("verify-new") or {}
drift = {(s["object"], s["device"]) for s in vn.get("settings", []) if s["state"] == "drifted"}
check(rc("verify-new") == "2" and {new[h]["name"] for h in fresh} <= {d for _, d in drift} and any(o == "persist:udev-rules" for o, _ in drift),
      f"verify with them exits {rc('verify-new')}: drifted {sorted(drift)}")

rv = doc("revert") or {}
check(rc("revert") == "0" and rv.get("complete") is True, f"revert exits {rc('revert')}, complete {rv.get('complete')} ({err('revert')})")
fr = files("files-reverted.ls")
check(all(fr.get(p) == "absent" for p in (RULES, UNIT, WANTS, MODPROBE)), f"revert removed the rules, the unit, its link and modprobe.d: {fr}")
rev, _, _ = values("reverted.txt")
# The boot-1 journal's IRQ entries are of an earlier boot (boot_id): not written (IRQ N may be another's now).
rv_irq = [c["result"] for c in rv.get("changes", []) if c["object"].startswith("irq:")]
check(rv_irq and set(rv_irq) == {"earlier-boot"},
      f"revert in boot 2: the IRQs pinned in boot 1 are earlier-boot, not written: {rv_irq}")
rb = doc("revert-boot") or {}
rb_irq = {c["object"]: c["result"] for c in rb.get("changes", []) if c["object"].startswith("irq:")}
check(rc("revert-boot") == "0" and rb.get("complete") is True and rb_irq and set(rb_irq.values()) == {"restored"},
      f"revert --state-dir /run/scsitune restores the boot unit's IRQ pins: exit {rc('revert-boot')}, {rb_irq} ({err('revert-boot')})")
# Kernel names can change at the reboot (the data disk was sdb at apply, may be sda now):
# revert restores each disk entry on the disk with its key, under its name now.
now_name = {("wwn-" + d["wwn"]) if d.get("wwn") else ("path-" + d.get("idpath", "")): d["name"] for d in rev.values()}
# (JSON paths are absolute: /sys/block/NAME/...)
disk_rows = [(c["object"], c["path"].split("/")[3]) for c in rv.get("changes", []) if c["path"].startswith("/sys/block/")]
moved = sorted((o, n) for o, n in disk_rows if now_name.get(o) != n)
renamed = sorted(h for h in tuned if b2.get(h, {}).get("name") != applied.get(h, {}).get("name"))
check(len({o for o, _ in disk_rows}) == len(tuned) and not moved,
      f"revert wrote each disk under its name now (renamed at the reboot: {renamed or 'none'}): {moved or 'every path matches its key'}")
for h in tuned:
    check(h in rev and all(rev[h][a] == before[h][a] for a in TUNED_ATTRS), f"revert: {h} back to the kernel's values {[(a, rev.get(h, {}).get(a)) for a in TUNED_ATTRS]}")
check(read("irqbalance.reverted") == read("irqbalance.before"), "revert: /etc/default/irqbalance byte-identical to before apply")

# ---- boot 3 ------------------------------------------------------------------
b3, _, dsense3 = values("boot3.txt")
check(set(b3) == set(before), f"boot 3: the same disks: {sorted(b3)}")
for h in before:
    check(h in b3 and all(b3[h][a] == before[h][a] for a in TUNED_ATTRS + ["nr_requests"]),
          f"boot 3: {h} has the kernel's values: {[(a, b3.get(h, {}).get(a)) for a in TUNED_ATTRS + ['nr_requests']]}")
check(dsense3 == "0", f"boot 3: dsense {dsense3} (no modprobe.d option)")
f3 = files("files-boot3.ls")
check(all(v == "absent" for v in f3.values()), f"boot 3: no persist file, no /run/scsitune journal: {f3}")
check(rc("unit-enabled-3") != "0", f"boot 3: systemctl is-enabled scsitune-apply: {read('unit-enabled-3.txt').strip()}")
check(read("irqbalance.boot3") == read("irqbalance.before"), "boot 3: /etc/default/irqbalance as before apply")
check(rc("verify-none") == "1" and "journal" in err("verify-none"), f"boot 3: verify exits {rc('verify-none')}: {err('verify-none')}")
vp = doc("verify-profile") or {}
drift3 = {s["device"] for s in vp.get("settings", []) if s["state"] == "drifted" and s["device"]}
check(rc("verify-profile") == "2" and {b3[h]["name"] for h in tuned if h in b3} <= drift3,
      f"boot 3: verify --profile exits {rc('verify-profile')}, the tuned disks drifted: {sorted(drift3)}")

finish("persist")
