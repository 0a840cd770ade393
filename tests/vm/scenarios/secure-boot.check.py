#!/usr/bin/env python3
"""Scenario "secure-boot", host side: the payload's signed modules under UEFI
Secure Boot, their key enrolled through shim's MokManager (secure-boot.stage.sh,
tests/vm/secure-boot.sh; tests/vm/README.md, "Scenario `secure-boot`").

    secure-boot.check.py RESULTS_DIR SCSITUNE

Asserts:
  every   boot reached "running" with no failed unit, booted by shim and GRUB
          (BOOT_IMAGE=/vmlinuz from the ESP), Secure Boot on: the SecureBoot
          variable 1, lockdown [integrity] (the kernel's log: because of
          Secure Boot), sig_enforce Y though not on the command line (Debian's
          kernel sets it under Secure Boot);
  boot 1  detect says Secure Boot on (UEFI), the fleet key in no keyring;
          install of the unsigned bundle refused in the signatures check
          (Secure Boot / lockdown named, the MOK way out), of the bundle
          signed by the key never enrolled refused in the trust check naming
          its signer ("scsitune vm other key"), the tree unchanged by either;
          enroll: the unsigned bundle refused (1), --status 2, staged (0,
          staged), again (0, pending, not staged twice), --status 3; MokNew
          lists the fleet certificate;
  boot 2  (after MokManager) the key in .machine (keyctl, the kernel's log,
          detect: trusted for modules), --status 0, enroll again 0 trusted
          and staged nothing, MokNew empty; install 0 (depmod, the new initrd
          holds ours), the preflight's trust rows name .machine; verify 2
          reboot-pending;
  boot 3  verify 0, loaded: scsi_mod's version, srcversion, build-id, taint
          (O, no E) and signer (in .machine) rows ok; /proc/sys/kernel/tainted
          without bit 13 (E), with bit 12 (O); the kernel logged no "module
          verification failed"; modprobe target_core_mod loads ours, verify
          still 0; remove 0;
  boot 4  verify 2, not installed; scsi_mod stock (no version file, boot 1's
          srcversion, iocounterbits 32); the tree hashes as in boot 1; the
          key still trusted (--status 0); the kernel bundle installed, its
          "boot" row passed (signer enrolled), /vmlinuz at its kernel;
  boot 5  the payload's kernel (uname -r the bundle's release) booted by
          shim and GRUB under Secure Boot: the SecureBoot variable 1,
          lockdown [integrity] because of Secure Boot; the fleet key in
          .builtin_trusted_keys (built in: payload/build --sign-cert) and in
          .machine (MokListRT); verify 0 with the running build-id the
          bundle's; modprobe scsi_debug (signed by payload/sign) loads, no E
          taint, no failed verification; remove refused while it runs (1),
          --force 0, /vmlinuz back at Debian's kernel.
Also in boot 1: the kernel bundle refused in its "boot" row (the image's
signer not enrolled), the tree unchanged.
"""
import re

from vmcheck import check, doc, finish, rc, read

# The fleet key: the published test key of tests/keys. The kernel names it by its CN alone: CN and O
# share their first 7 bytes (x509_fabricate_name).
FLEET = FLEET_CN = "scsitune TEST fleet key"
OTHER = "scsitune vm other key"


def facts(name):
    out = {}
    for line in read(name).splitlines():
        k, _, v = line.partition(" ")
        out.setdefault(k, []).append(v)
    return out


def one(f, key):
    return (f.get(key) or [""])[0]


def links(d, link, module=None):
    return [l for l in (d or {}).get("links", []) if l["link"] == link and (module is None or l["module"] == module)]


def state_of(d, link, module=None):
    ls = links(d, link, module)
    return ls[0]["state"] if ls else None


def preflight(d, name):
    return [c for c in ((d or {}).get("preflight") or {}).get("checks", []) if c["check"] == name]


def trust(d):
    """detect's kernel.module_trust."""
    return ((d or {}).get("kernel") or {}).get("module_trust") or {}


def key_in(t, cn):
    """Where detect says a key named cn is: [(keyring, trusted_for_modules)]."""
    return [(k.get("keyring"), k.get("trusted_for_modules")) for k in t.get("keys", []) if cn in (k.get("name") or "")]


for b in range(1, 5):
    check(read(f"boot-{b}.state").strip() == "running", f"boot {b}: system running ({read(f'boot-{b}.state').strip()})")
    check(read(f"boot-{b}.failed").strip() == "", f"boot {b}: no failed unit ({read(f'boot-{b}.failed').strip()})")
    check("BOOT_IMAGE=/vmlinuz" in read(f"boot-{b}.cmdline").split(),
          f"boot {b}: booted by GRUB from the ESP ({read(f'boot-{b}.cmdline').strip()})")
    f = facts(f"facts-{b}.txt")
    check(one(f, "secureboot-var").split()[-1:] == ["01"], f"boot {b}: the SecureBoot variable is 1 ({one(f, 'secureboot-var')})")
    check(one(f, "sb-state") == "SecureBoot enabled", f"boot {b}: mokutil --sb-state: {one(f, 'sb-state')}")
    check("[integrity]" in one(f, "lockdown").split(), f"boot {b}: lockdown {one(f, 'lockdown')}")
    # Debian's kernel turns module.sig_enforce on itself under Secure Boot (not on the command line)
    check(one(f, "sig_enforce") == "Y" and "module.sig_enforce=1" not in read(f"boot-{b}.cmdline"),
          f"boot {b}: sig_enforce {one(f, 'sig_enforce')}, set by the kernel under Secure Boot, not the command line")
    check(any("Kernel is locked down from EFI Secure Boot" in l for l in f.get("dmesg", [])),
          f"boot {b}: the kernel locked down because of Secure Boot")

def iobits(f):
    return {x.split()[0]: x.split()[-1] for x in f.get("iocounterbits", [])}


# --- boot 1 ------------------------------------------------------------------------------
f1 = facts("facts-1.txt")
check(len(iobits(f1)) >= 2 and set(iobits(f1).values()) == {"32"}, f"boot 1: stock iocounterbits 32 on every SCSI disk ({iobits(f1)})")
check(not any(FLEET in l for l in f1.get("keyctl", [])), "boot 1: the fleet key is in no keyring yet")
t = trust(doc("detect-1"))
check(rc("detect-1") == "0" and t.get("secure_boot") is True and t.get("boot") == "uefi",
      f"boot 1: detect: Secure Boot on, UEFI boot ({t.get('secure_boot')}, {t.get('boot')}, {t.get('secure_boot_source')})")
check(not key_in(t, FLEET), f"boot 1: detect lists no fleet key ({key_in(t, FLEET)})")
s1 = read("state-1.txt")
check(len(s1) > 1000 and "/boot/initrd.img-" in s1, "boot 1: the tree's state recorded")
i = doc("install-unsigned")
check(rc("install-unsigned") == "1" and i and i.get("result") == "refused",
      f"boot 1: install of the unsigned bundle refused (exit {rc('install-unsigned')}): {read('install-unsigned.err')[:200]}")
sig = preflight(i, "signatures")
check(sig and not sig[0]["passed"] and "unsigned" in (sig[0]["why"] or "") and "is on" in (sig[0]["why"] or ""),
      f"boot 1: refused in the signatures check, the enforcement named ({sig and sig[0]['why'][:160]})")
check(sig and "Machine Owner Key" in (sig[0]["why"] or ""), "boot 1: the refusal says the MOK way out")
check(read("state-1b.txt") == s1, "boot 1: the unsigned bundle's refusal changed nothing")
i = doc("install-other")
tr = [c for c in preflight(i, "trust") if not c["passed"]]
check(rc("install-other") == "1" and i and i.get("result") == "refused" and tr,
      f"boot 1: install of the bundle signed by a key not enrolled refused in the trust check (exit {rc('install-other')})")
check(tr and all(OTHER in (c["why"] or "") and "no keyring the kernel holds has that key" in (c["why"] or "") for c in tr),
      f"boot 1: the trust refusal names the signer '{OTHER}' ({tr and tr[0]['why'][:200]})")
check(preflight(i, "signatures") and all(c["passed"] for c in preflight(i, "signatures")),
      "boot 1: the other bundle passed the signatures check (signed)")
check(read("state-1c.txt") == s1, "boot 1: the other key's refusal changed nothing")
i = doc("install-kernel-1")
bt = preflight(i, "boot")
check(rc("install-kernel-1") == "1" and bt and not bt[0]["passed"] and bt[0]["actual"] == "signer not enrolled",
      f"boot 1: the kernel bundle refused in its boot row, the image's signer not enrolled ({rc('install-kernel-1')}, {bt})")
check(read("state-1d.txt") == s1, "boot 1: the kernel bundle's refusal changed nothing")
new1 = read("mok-new-1.txt")
check("CN=" + FLEET_CN in new1 and OTHER not in new1, "boot 1: MokNew holds the fleet certificate, not the other one")
check(rc("enroll-unsigned") == "1" and "unsigned" in read("enroll-unsigned.err"),
      f"boot 1: enroll of the unsigned bundle refused, exit 1 ({rc('enroll-unsigned')}: {(read('enroll-unsigned.err').splitlines() or [''])[0][:160]})")
e = doc("status-1a")
check(rc("status-1a") == "2" and e and e.get("state") == "absent",
      f"boot 1: enroll --status before staging: 2, absent ({rc('status-1a')}, {e and e.get('state')})")
e = doc("enroll-1")
check(rc("enroll-1") == "0" and e and e.get("staged") is True and e.get("state") == "pending",
      f"boot 1: enroll stages the key: exit 0, staged, pending ({rc('enroll-1')}, {e and (e.get('staged'), e.get('state'))}: {read('enroll-1.err')[:160]})")
check(e and (e.get("signer") or {}).get("name") == FLEET and e.get("secure_boot") is True and e.get("boot") == "uefi",
      f"boot 1: enroll names the fleet key, on a UEFI Secure Boot host ({e and (e.get('signer'), e.get('boot'), e.get('secure_boot'))})")
e = doc("enroll-1b")
check(rc("enroll-1b") == "0" and e and e.get("staged") is False and e.get("state") == "pending",
      f"boot 1: enroll again: exit 0, already pending, not staged twice ({rc('enroll-1b')}, {e and (e.get('staged'), e.get('state'))})")
e = doc("status-1b")
check(rc("status-1b") == "3" and e and e.get("state") == "pending" and e.get("pending") is True,
      f"boot 1: enroll --status after staging: 3, pending ({rc('status-1b')}, {e and e.get('state')})")
check(read("mok-vars-1.txt").count("MokNew") == 1 and "MokAuth" in read("mok-vars-1.txt"),
      f"boot 1: MokNew and MokAuth set ({read('mok-vars-1.txt').split()})")

# --- boot 2: after MokManager ------------------------------------------------------------
f2 = facts("facts-2.txt")
check(any(re.search(r"^keyctl \.machine .*asymmetric: " + re.escape(FLEET) + r": [0-9a-f]{40}$", "keyctl " + l)
          for l in f2.get("keyctl", [])), "boot 2: keyctl show %:.machine lists the fleet key")
check(any(f"Loaded X.509 cert '{FLEET}" in l for l in f2.get("dmesg", [])), "boot 2: the kernel loaded the fleet key from MokListRT")
check(not any(OTHER in l for l in f2.get("keyctl", [])), "boot 2: the other key is in no keyring")
e = doc("status-2")
check(rc("status-2") == "0" and e and e.get("state") == "trusted" and e.get("keyring") == ".machine" and e.get("enrolled") is True,
      f"boot 2: enroll --status: 0, trusted, in .machine, in MokListRT ({rc('status-2')}, {e and (e.get('state'), e.get('keyring'), e.get('enrolled'))}: {read('status-2.err')[:160]})")
e = doc("enroll-2")
check(rc("enroll-2") == "0" and e and e.get("state") == "trusted" and e.get("staged") is False,
      f"boot 2: enroll again: exit 0, trusted, nothing staged ({rc('enroll-2')}, {e and (e.get('staged'), e.get('state'))})")
check(read("mok-new-2.txt").strip() in ("", "MokNew is empty") or "CN=" not in read("mok-new-2.txt"),
      f"boot 2: nothing left in MokNew ({read('mok-new-2.txt')[:120]!r})")
t = trust(doc("detect-2"))
check(any(kr == ".machine" and tf is True for kr, tf in key_in(t, FLEET)),
      f"boot 2: detect: the fleet key in .machine, trusted for modules ({key_in(t, FLEET)})")
i = doc("install")
check(rc("install") == "0" and i and i.get("result") == "installed", f"boot 2: install of the signed bundle exits 0 ({rc('install')}): {read('install.err')[:300]}")
tr = preflight(i, "trust")
check(tr and all(c["passed"] and ".machine" in (c["why"] or "") for c in tr),
      f"boot 2: the preflight's trust rows pass, naming .machine ({[c['why'][:100] for c in tr]})")
if i:
    irs = [s for s in i["steps"] if s["step"] == "initramfs"]
    check(irs and irs[0]["state"] == "done", "boot 2: update-initramfs ran")
    check(i["initrd"]["ok"] and "scsi_mod.ko: ours" in (i["initrd"]["note"] or ""), f"boot 2: the new initrd holds our scsi_mod.ko ({i['initrd']['note']})")
v = doc("verify-2")
check(rc("verify-2") == "2" and v and v["verdict"] == "reboot-pending", f"boot 2: verify after install: 2, reboot-pending ({v and v['verdict']})")

# --- boot 3: the signed modules loaded ---------------------------------------------------
v = doc("verify-3")
check(rc("verify-3") == "0" and v and v["verdict"] == "loaded", f"boot 3: verify exits 0, loaded ({rc('verify-3')}, {v and v['verdict']})")
for link in ("loaded.version", "loaded.srcversion", "loaded.build-id", "loaded.taint", "loaded.signer"):
    check(state_of(v, link, "scsi_mod") == "ok", f"boot 3: verify: scsi_mod {link} ok ({state_of(v, link, 'scsi_mod')})")
sg = links(v, "loaded.signer", "scsi_mod")
check(sg and sg[0].get("actual") == "trusted: .machine" and FLEET in (sg[0].get("note") or ""),
      f"boot 3: verify: the signer, the fleet key, trusted in .machine ({sg and (sg[0].get('actual'), sg[0].get('note'))})")
tt = links(v, "loaded.taint", "scsi_mod")
check(tt and tt[0].get("actual") == tt[0].get("expected") == "O",
      f"boot 3: verify: scsi_mod's taint is O, expected O, no E ({tt and (tt[0].get('expected'), tt[0].get('actual'))})")
f3 = facts("facts-3.txt")
check(one(f3, "scsi_mod").startswith("version scsitune-"), f"boot 3: /sys/module/scsi_mod/version ({one(f3, 'scsi_mod')})")
check("taint O" in f3.get("scsi_mod", []), f"boot 3: scsi_mod's taint is O ({f3.get('scsi_mod')})")
check(len(iobits(f3)) >= 2 and set(iobits(f3).values()) == {"64"}, f"boot 3: iocounterbits 64 on every SCSI disk, the root disk's too ({iobits(f3)})")
tainted = one(f3, "tainted")
check(tainted.isdigit() and not int(tainted) & (1 << 13) and int(tainted) & (1 << 12),
      f"boot 3: /proc/sys/kernel/tainted {tainted}: bit 13 (E, unsigned module) clear, bit 12 (O) set")
check(not any("module verification failed" in l or "Key was rejected" in l for l in f3.get("dmesg", [])),
      "boot 3: the kernel logged no failed module verification")
check(any("scsi_mod: loading out-of-tree module" in l for l in f3.get("dmesg", [])), "boot 3: the kernel loaded our scsi_mod (out-of-tree taint logged)")
check(rc("modprobe-target") == "0", f"boot 3: modprobe target_core_mod ({read('modprobe-target.err')[:200]})")
f3b = facts("facts-3b.txt")
check("taint O" in f3b.get("target_core_mod", []) and one(f3b, "target_core_mod").startswith("version scsitune-"),
      f"boot 3: target_core_mod is ours, taint O ({f3b.get('target_core_mod')})")
tb = one(f3b, "tainted")
check(tb.isdigit() and not int(tb) & (1 << 13), f"boot 3: still no E after target_core_mod ({tb})")
v = doc("verify-3b")
check(rc("verify-3b") == "0" and state_of(v, "loaded.signer", "target_core_mod") == "ok",
      f"boot 3: verify with target_core_mod loaded: 0, its signer ok ({rc('verify-3b')}, {state_of(v, 'loaded.signer', 'target_core_mod')})")
r = doc("remove")
check(rc("remove") == "0" and r and r.get("complete"), f"boot 3: remove exits 0 ({read('remove.err')[:200]})")

# --- boot 4: Debian's modules again ------------------------------------------------------
v = doc("verify-4")
check(rc("verify-4") == "2" and v and v["verdict"] == "not-installed", f"boot 4: verify: 2, not-installed ({rc('verify-4')}, {v and v['verdict']})")
f4 = facts("facts-4.txt")
check(one(f4, "scsi_mod") == "version -", f"boot 4: stock scsi_mod (no version file: {one(f4, 'scsi_mod')})")
sv = [dict(x.split(" ", 1) for x in f.get("scsi_mod", []) if " " in x).get("srcversion") for f in (f1, f3, f4)]
check(sv[0] is not None and sv[2] == sv[0] and sv[1] not in (None, "-") and sv[2] != sv[1],
      f"boot 4: scsi_mod's srcversion as in boot 1 ({sv[2]}), not the payload's ({sv[1]})")
check(len(iobits(f4)) >= 2 and set(iobits(f4).values()) == {"32"}, f"boot 4: iocounterbits 32 again ({iobits(f4)})")
check(read("state-4.txt") == s1, "boot 4: /lib/modules, /boot and /etc/depmod.d as in boot 1")
check(rc("status-4") == "0", f"boot 4: the key still enrolled (enroll --status {rc('status-4')})")

i = doc("install-kernel")
bt = preflight(i, "boot")
check(rc("install-kernel") == "0" and bt and bt[0]["passed"] and bt[0]["actual"] == "signer enrolled",
      f"boot 4: the kernel bundle installed, its boot row passed ({rc('install-kernel')}, {bt}): {read('install-kernel.err')[:300]}")
krel = read("uname-5.txt").strip()
check(re.fullmatch(r"6\.1\.[0-9]+-scsitune", krel) and read("vmlinuz-4.txt").strip() == f"boot/vmlinuz-{krel}",
      f"boot 4: /vmlinuz at the payload's kernel ({read('vmlinuz-4.txt').strip()}), which boot 5 runs ({krel})")

# --- boot 5: the payload's kernel through shim -------------------------------------------
check(read("boot-5.state").strip() == "running", f"boot 5: system running ({read('boot-5.state').strip()})")
check(read("boot-5.failed").strip() == "", f"boot 5: no failed unit ({read('boot-5.failed').strip()})")
check("BOOT_IMAGE=/vmlinuz" in read("boot-5.cmdline").split(), f"boot 5: booted by GRUB from the ESP ({read('boot-5.cmdline').strip()})")
f5 = facts("facts-5.txt")
check(one(f5, "secureboot-var").split()[-1:] == ["01"], f"boot 5: the SecureBoot variable is 1 ({one(f5, 'secureboot-var')})")
check("[integrity]" in one(f5, "lockdown").split(), f"boot 5: lockdown {one(f5, 'lockdown')}")
check(any("Kernel is locked down from EFI Secure Boot" in l for l in f5.get("dmesg", [])),
      "boot 5: the payload's kernel locked down because of Secure Boot")
for kr in (".builtin_trusted_keys", ".machine"):
    check(any(re.search(r"^keyctl " + re.escape(kr) + r" .*asymmetric: " + re.escape(FLEET) + r": [0-9a-f]{40}$", "keyctl " + l)
              for l in f5.get("keyctl", [])), f"boot 5: keyctl show %:{kr} lists the fleet key")
v = doc("verify-5")
check(rc("verify-5") == "0" and v and v.get("verdict") == "loaded" and state_of(v, "kernel.running") == "ok",
      f"boot 5: verify 0, loaded, the running build-id the bundle's ({rc('verify-5')}, {state_of(v, 'kernel.running')}, {v and v.get('verdict')})")
check(rc("modprobe-debug") == "0" and read("modules-5.txt").startswith("scsi_debug "),
      f"boot 5: modprobe scsi_debug under lockdown ({rc('modprobe-debug')}: {read('modprobe-debug.err')[:200]})")
f5b = facts("facts-5b.txt")
t5 = one(f5b, "tainted")
check(t5.isdigit() and not int(t5) & (1 << 13), f"boot 5: /proc/sys/kernel/tainted {t5}: no E after scsi_debug")
check(not any("module verification failed" in l or "Key was rejected" in l for l in f5b.get("dmesg", [])),
      "boot 5: the kernel logged no failed module verification")
check(rc("remove-5a") == "1", f"boot 5: remove refused while the payload's kernel runs ({rc('remove-5a')}: {read('remove-5a.err')[:160]})")
r = doc("remove-5b")
check(rc("remove-5b") == "0" and r and r.get("complete"), f"boot 5: remove --force 0 ({read('remove-5b.err')[:200]})")
check(read("vmlinuz-5.txt").strip().startswith("boot/vmlinuz-6.1.0-"), f"boot 5: /vmlinuz back at Debian's kernel ({read('vmlinuz-5.txt').strip()})")

ms = {name: read(name + ".ms").strip() for name in ("install", "verify-3", "remove")}
print("bench: payload under Secure Boot (TCG guest): " + ", ".join(
    f"{name} {int(x) / 1000:.2f} s" if x.isdigit() else f"{name} ?" for name, x in ms.items()))
finish("secure-boot")
