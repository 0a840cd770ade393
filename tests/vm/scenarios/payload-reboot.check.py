#!/usr/bin/env python3
"""Scenario "payload-reboot", host side: scsitune payload proven across real
reboots of the systemd-booted Debian image whose root disk is on virtio-scsi
(tests/vm/rootfs, payload-reboot.stage.sh).

    payload-reboot.check.py RESULTS_DIR SCSITUNE

Asserts:
  boot 1  stock: verify exits 2, not-installed; scsi_mod has no version file,
          its disks say iocounterbits 32; install aborted inside each
          journaled step (exit 134; the journal and the disk prove the step:
          mkdir, file staged, file renamed, depmod, initrd replaced, then
          remove aborted with the kept initrd half put back)
          and killed with kill -9 while update-initramfs ran: each time
          payload remove exits 0 (depmod only where the index changed) and
          /lib/modules/R, /boot and /etc/depmod.d hash as before (modes and
          contents); install exits 0:
          preflight passed, the initrd step done and the new initrd holds our
          scsi_mod.ko (checked by libarchive, by SHA-256), modprobe resolves
          both modules to updates/scsitune, scsi_mod needs a reboot; verify
          exits 2, reboot-pending, its initrd row ok;
  boot 2  verify exits 0, verdict loaded: version, srcversion, build-id and
          taint OE of scsi_mod loaded from Debian's initramfs are the
          bundle's, every SCSI disk says iocounterbits 64 (the root disk
          among them: root is on this HBA); the kernel logged scsi_mod's
          out-of-tree taint; modprobe target_core_mod loads ours (verify still
          0); detect says loaded; remove exits 0 (initrd restored, depmod index
          as before);
  boot 3  booted with lockdown=integrity (sig_enforce N: the refusal is
          lockdown's alone): stock again: scsi_mod without a version file,
          the srcversion of boot 1, iocounterbits 32, verify exits 2
          (not-installed); the tree hashes as in boot 1; install exits 1,
          refused in the signatures check naming lockdown, with the MOK way
          out; the tree unchanged (the refusal under sig_enforce, and the
          stock modules under it: vm/secure-boot);
  every   boot reached "running" with no failed unit.
"""
import json
import re

from vmcheck import check, doc, finish, rc, read



def links(doc, link, module=None):
    return [l for l in (doc or {}).get("links", []) if l["link"] == link and (module is None or l["module"] == module)]


def state_of(doc, link, module=None):
    ls = links(doc, link, module)
    return ls[0]["state"] if ls else None


def facts(name):
    out = {}
    for line in read(name).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out.setdefault(parts[0], {})[parts[1]] = parts[2]
        elif len(parts) == 2:
            out[parts[0]] = parts[1]
    return out


for b in range(1, 4):
    check(read(f"boot-{b}.state").strip() == "running", f"boot {b}: system running ({read(f'boot-{b}.state').strip()})")
    check(read(f"boot-{b}.failed").strip() == "", f"boot {b}: no failed unit")

# --- boot 1 ---------------------------------------------------------------------------
v = doc("verify-stock")
check(rc("verify-stock") == "2" and v and v["verdict"] == "not-installed", "boot 1: verify of the stock host: exit 2, not-installed")
f1 = facts("facts-1.txt")
check(f1.get("scsi_mod", {}).get("version") == "-", "boot 1: stock scsi_mod has no version file")
io1 = f1.get("iocounterbits", {})
check(len(io1) >= 2 and set(io1.values()) == {"32"}, f"boot 1: stock iocounterbits 32 on every SCSI disk ({io1})")
check(f1.get("root", "").startswith("/dev/sd"), f"boot 1: root is on a SCSI disk ({f1.get('root')})")
s1 = read("state-1.txt")
check(len(s1) > 1000 and "/boot/initrd.img-" in s1, "boot 1: the tree's state recorded")

def journal(name):
    try:
        return json.loads(read(name))
    except ValueError:
        return {}


def step_states(j, kind):
    return [st.get("state") for st in j.get("steps", []) if st.get("step") == kind]


initrd_before = re.search(r"^([0-9a-f]{64})  /boot/initrd\.img-\S+$", s1, re.M)
initrd_before = initrd_before.group(1) if initrd_before else None
check(initrd_before is not None, "boot 1: the stock initrd's SHA-256 is in the state")
# what each abort point is meant to hit, proved from the journal it left and the disk
kills = {
    "3": ("mkdir: updates/ made, not yet done",
          lambda j, d: step_states(j, "mkdir")[:2] == ["started", "pending"] and step_states(j, "file") == ["pending"] * 4),
    "13": ("file: files staged under their temporary names",
           lambda j, d: step_states(j, "file").count("started") >= 2 and ".scsi_mod.ko.scsitune-tmp" in d
           and "\nscsi_mod.ko\n" not in "\n" + d),
    "21": ("file: half of them renamed into place",
           lambda j, d: step_states(j, "file") == ["started"] * 4 and "\nscsi_mod.ko\n" in "\n" + d
           and ".scsitune.conf.scsitune-tmp" in d),
    "25": ("depmod: ran, not yet done",
           lambda j, d: step_states(j, "file") == ["done"] * 4 and step_states(j, "depmod") == ["started"]),
    "29": ("initrd: replaced by update-initramfs, not yet done",
           lambda j, d: step_states(j, "initramfs") == ["started"] and initrd_before is not None
           and initrd_before not in d and "/boot/initrd.img-" in d),
}
for n, (what, hit) in kills.items():
    check(rc(f"kill-{n}") == "134", f"boot 1: install aborted at point {n} (exit {rc(f'kill-{n}')})")
    j = journal(f"kill-{n}.journal.json")
    d = read(f"kill-{n}.disk")
    check(j.get("complete") is False and hit(j, d),
          f"boot 1: abort point {n} fell in the step it is for ({what}): journal "
          f"{[(st.get('step'), st.get('state')) for st in j.get('steps', [])]}, on disk {d.split()}")
    r = doc(f"remove-after-kill-{n}")
    check(rc(f"remove-after-kill-{n}") == "0" and r and r["complete"], f"boot 1: remove after the abort at {n}: exit 0, complete")
    check(read(f"state-kill-{n}.txt") == s1, f"boot 1: after abort at {n} + remove the tree hashes as before")
    dep = [st for st in (r or {}).get("steps", []) if st["step"] == "depmod"]
    # depmod only where the index is not the one from before install any more
    want = "ran" if n == "25" else "skipped"
    check(dep and dep[0]["outcome"] == want,
          f"boot 1: remove after the abort at {n}: depmod {want} ({dep and (dep[0]['outcome'], dep[0].get('note'))})")
# remove itself killed after the abort at 29, with the kept initrd written to its temporary name
check(rc("kill-remove") == "134", f"boot 1: remove aborted at its point 10 (exit {rc('kill-remove')})")
check(re.search(r"^\.initrd\.img-\S+\.scsitune-tmp$", read("kill-remove.disk"), re.M) is not None,
      f"boot 1: the killed remove left the kept initrd under its temporary name in /boot ({read('kill-remove.disk').split()})")
r = doc("remove-after-kill-29")
ird = [st for st in (r or {}).get("steps", []) if st["step"] == "initramfs"]
check(ird and ird[0]["outcome"] == "restored",
      f"boot 1: the second remove put the kept initrd back ({ird and (ird[0]['outcome'], ird[0].get('note'))})")
check(read("kill-initramfs.note").startswith("mkinitramfs running"), "boot 1: scsitune killed while mkinitramfs ran")
check(rc("kill-initramfs") == "137", f"boot 1: install killed with SIGKILL (exit {rc('kill-initramfs')})")
check(read("kill-initramfs.waits").strip() == "0",
      f"boot 1: no update-initramfs or mkinitramfs left after the group's kill ({read('kill-initramfs.waits').strip()} waits)")
try:
    kj = json.loads(read("kill-initramfs.journal.json"))
except ValueError:
    kj = {}
kst = [s.get("state") for s in kj.get("steps", []) if s.get("step") == "initramfs"]
check(kst == ["started"] and kj.get("complete") is False,
      f"boot 1: the killed install's journal: the initramfs step started, not complete ({kst})")
r = doc("remove-after-kill-initramfs")
check(rc("remove-after-kill-initramfs") == "0" and r and r["complete"], "boot 1: remove after the kill: exit 0, complete")
if r:
    ird = [s for s in r["steps"] if s["step"] == "initramfs"]
    # killed with its group while mkinitramfs ran: the initrd was never replaced, and
    # update-initramfs's backup link of it (INITRD.dpkg-bak) is what remove cleans up
    check(ird and ird[0]["outcome"] == "absent" and ".dpkg-bak" in (ird[0].get("note") or ""),
          f"boot 1: remove found the initrd from before install and removed update-initramfs's backup link "
          f"({ird and (ird[0]['outcome'], ird[0].get('note'))})")
check(read("state-kill-initramfs.txt") == s1, "boot 1: after kill -9 during update-initramfs + remove the tree hashes as before")

i = doc("install")
check(rc("install") == "0" and i and i["result"] == "installed", f"boot 1: install exits 0 ({rc('install')}): {read('install.err')[:300]}")
if i:
    check(i["preflight"]["passed"], "boot 1: preflight passed")
    kabi = [c for c in i["preflight"]["checks"] if c["check"] == "kabi"]
    check(kabi and all(c["passed"] for c in kabi), "boot 1: KABI against the image's own stock modules")
    steps = {s["step"] + (s["path"] or ""): s for s in i["steps"]}
    irs = [s for s in i["steps"] if s["step"] == "initramfs"]
    check(irs and irs[0]["state"] == "done" and irs[0]["old_sha256"] and irs[0]["sha256"] and irs[0]["old_sha256"] != irs[0]["sha256"],
          "boot 1: update-initramfs ran: the initrd changed, the old one kept")
    check(i["initrd"]["ok"] and "scsi_mod.ko: ours" in (i["initrd"]["note"] or ""),
          f"boot 1: the new initrd holds our scsi_mod.ko ({i['initrd']['note']})")
    res = {x["name"]: x for x in i["resolution"]}
    check(all(res[m]["resolves_to"] == f"updates/scsitune/{m}.ko" and res[m]["ours"] for m in ("scsi_mod", "target_core_mod")),
          "boot 1: modprobe resolves both modules to updates/scsitune (libkmod)")
    check(res["scsi_mod"]["needs"] == "reboot", f"boot 1: scsi_mod (root disk) needs a reboot ({res['scsi_mod']['needs']})")
check(re.search(r"^override scsi_mod \S+ updates/scsitune$", read("depmod.conf"), re.M) is not None
      and re.search(r"^\s*search", read("depmod.conf"), re.M) is None,
      "boot 1: depmod.d has override lines only")
v = doc("verify-1")
check(rc("verify-1") == "2" and v and v["verdict"] == "reboot-pending", f"boot 1: verify after install: exit 2, reboot-pending ({v and v['verdict']})")
check(state_of(v, "initrd", "scsi_mod") == "ok", "boot 1: verify: the initrd holds ours")
check(state_of(v, "loaded.srcversion", "scsi_mod") == "reboot-pending", "boot 1: verify: stock scsi_mod still in memory")

# --- boot 2 ----------------------------------------------------------------------------
v = doc("verify-2")
check(rc("verify-2") == "0" and v and v["verdict"] == "loaded", f"boot 2: verify exits 0, loaded ({rc('verify-2')}, {v and v['verdict']})")
for link in ("file", "depmod.d", "modprobe", "initrd", "loaded.version", "loaded.srcversion", "loaded.build-id", "loaded.taint", "iocounterbits"):
    check(state_of(v, link, "scsi_mod") == "ok", f"boot 2: scsi_mod {link} ok ({state_of(v, link, 'scsi_mod')})")
f2 = facts("facts-2.txt")
check(f2.get("scsi_mod", {}).get("version", "-").startswith("scsitune-"), f"boot 2: /sys/module/scsi_mod/version {f2.get('scsi_mod', {}).get('version')}")
check(f2.get("scsi_mod", {}).get("taint") == "OE", f"boot 2: scsi_mod taint {f2.get('scsi_mod', {}).get('taint')}")
io2 = f2.get("iocounterbits", {})
check(len(io2) >= 2 and set(io2.values()) == {"64"}, f"boot 2: iocounterbits 64 on every SCSI disk, the root disk's too ({io2})")
check("scsi_mod: loading out-of-tree module taints kernel" in read("facts-2.txt"), "boot 2: the kernel logged scsi_mod's out-of-tree taint")
check(rc("modprobe-target") == "0", f"boot 2: modprobe target_core_mod ({read('modprobe-target.err')[:200]})")
v = doc("verify-2b")
check(rc("verify-2b") == "0" and state_of(v, "loaded.srcversion", "target_core_mod") == "ok",
      "boot 2: target_core_mod loaded by modprobe is ours, verify 0")
d = doc("detect-2")
check(d and d["payload"]["verdict"] == "loaded", "boot 2: detect says the payload is loaded")
r = doc("remove")
check(rc("remove") == "0" and r and r["complete"], f"boot 2: remove exits 0 ({read('remove.err')[:200]})")
if r:
    check(r["depmod_index"]["same_as_before"], "boot 2: depmod's index as before install")
    ird = [s for s in r["steps"] if s["step"] == "initramfs"]
    check(ird and ird[0]["outcome"] == "restored", "boot 2: the initrd from before install put back")

# --- boot 3: stock again, under lockdown=integrity --------------------------------------------
v = doc("verify-3")
check(rc("verify-3") == "2" and v and v["verdict"] == "not-installed", "boot 3: verify after remove and reboot: not-installed")
f3 = facts("facts-3.txt")
check(f3.get("scsi_mod", {}).get("version") == "-", "boot 3: stock scsi_mod again (no version file)")
# Debian's in-tree scsi_mod has no srcversion file (no MODULE_VERSION, no
# CONFIG_MODULE_SRCVERSION_ALL): "-" in boot 1; the payload's has one (boot 2).
sv1, sv3 = f1.get("scsi_mod", {}).get("srcversion"), f3.get("scsi_mod", {}).get("srcversion")
sv2 = f2.get("scsi_mod", {}).get("srcversion")
check(sv1 is not None and sv3 == sv1 and sv2 not in (None, "-") and sv3 != sv2,
      f"boot 3: scsi_mod's srcversion as in boot 1 ({sv3}), not the payload's ({sv2})")
check(f3.get("scsi_mod", {}).get("taint") == f1.get("scsi_mod", {}).get("taint") == "",
      f"boot 3: scsi_mod untainted, as in boot 1 ({f3.get('scsi_mod', {}).get('taint')!r})")
check(set(f3.get("iocounterbits", {}).values()) == {"32"}, "boot 3: iocounterbits 32 again")
check(read("state-3.txt") == s1, "boot 3: /lib/modules, /boot and /etc/depmod.d hash as in boot 1")

# --- boot 3: the refusal by lockdown alone ----------------------------------------------
check("lockdown=integrity" in read("boot-3.cmdline").split(), f"boot 3: booted with lockdown=integrity ({read('boot-3.cmdline').strip()})")
line = [l for l in read("facts-3.txt").splitlines() if l.startswith("lockdown ")]
check(line and "[integrity]" in line[0].split()[1:], f"boot 3: {line[0] if line else 'lockdown not recorded'}")
check(f3.get("sig_enforce") == "N", f"boot 3: sig_enforce is N (the refusal is lockdown's: {f3.get('sig_enforce')})")
i = doc("install-3")
check(rc("install-3") == "1" and i and i["result"] == "refused", f"boot 3: install refused (exit {rc('install-3')})")
if i:
    sig = [c for c in i["preflight"]["checks"] if c["check"] == "signatures"]
    check(sig and not sig[0]["passed"] and "Machine Owner Key" in (sig[0]["why"] or "") and "lockdown" in (sig[0]["why"] or ""),
          f"boot 3: refused in the signatures check naming lockdown, with the MOK way out ({sig and sig[0]['why'][:160]})")
check(read("state-3.txt") == read("state-3b.txt") and read("state-3.txt"), "boot 3: the tree unchanged")

# --- figures (printed, never pass/fail): the commands' wall time on the guest's real root,
# an emulated (TCG) 4-vCPU machine: far slower than hardware, comparable only run to run
ms = {name: read(name + ".ms").strip() for name in ("verify-stock", "install", "verify-1", "verify-2", "remove")}
print("bench: payload on the real root (TCG guest): " + ", ".join(
    f"{name} {int(v) / 1000:.2f} s" if v.isdigit() else f"{name} ?" for name, v in ms.items()))

finish("payload-reboot")
