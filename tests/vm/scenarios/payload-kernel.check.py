#!/usr/bin/env python3
"""Scenario "payload-kernel", host side: the payload's own kernel package
(patch B built in) carried by the bundle, installed with apt, booted,
verified against the bundle's build-id and removed, on the systemd-booted
Debian image (tests/vm/rootfs, payload-kernel.stage.sh).

    payload-kernel.check.py RESULTS_DIR SCSITUNE

Asserts:
  boot 1  Debian's kernel runs. install exits 0 with its kernel steps done
          (the .deb under /var/cache/scsitune, apt-get install); dpkg lists
          the package at the bundle's version, /boot has its vmlinuz and the
          initrd initramfs-tools made for it; /vmlinuz and /initrd.img still
          point at Debian's kernel (the boot default as Debian's tools left
          it); verify: kernel.package ok, kernel.running skipped (not the
          default). remove exits 0, the package is purged (dpkg, /boot).
          install --set-default exits 0: both links point at the payload's
          kernel; verify exits 2: kernel.running reboot-pending;
  boot 2  uname -r is the bundle's kernel release; verify (installed
          manifest, and with the bundle) exits 0: verdict loaded,
          kernel.running ok with the build-id of /sys/kernel/notes equal to
          the manifest's; both disks are there and a direct read of the data
          disk succeeds; remove exits 1 (the running kernel) and changes
          nothing; remove --force exits 0: links back to Debian's, purged;
  boot 3  Debian's kernel again; verify says not installed; no payload
          kernel package; the links as in boot 1; /var/cache/scsitune gone;
  every   boot reached "running" with no failed unit (the payload's kernel
          too: systemd, udev and Debian's initramfs on it).
"""
from vmcheck import check, doc, finish, rc, read




def link(doc, name):
    ls = [l for l in (doc or {}).get("links", []) if l["link"] == name]
    return ls[0] if ls else {}


def steps(doc, kind):
    return [s for s in (doc or {}).get("steps", []) if s.get("step") == kind]


for b in ("1", "2", "3"):
    check(read(f"boot-{b}.state").strip() == "running" and read(f"boot-{b}.failed").strip() == "",
          f"boot {b}: running, no failed unit ({read(f'boot-{b}.state').strip()}; {read(f'boot-{b}.failed').strip()[:120]})")

debian = read("uname-1.txt").strip()
i = doc("install-a")
kst = steps(i, "kernel")
check(rc("install-a") == "0" and i and i.get("result") == "installed", f"boot 1: install exits 0 ({rc('install-a')})")
check(len(kst) == 1 and kst[0]["state"] == "done", f"boot 1: the kernel step is done ({kst})")
target = (kst[0].get("note") or "") if kst else ""
deb = [s for s in steps(i, "file") if s["path"].startswith("/var/cache/scsitune/")]
check(len(deb) == 1 and deb[0]["state"] == "done" and deb[0]["path"].endswith(".deb"), f"boot 1: the .deb written under /var/cache/scsitune ({deb})")
check(not steps(i, "default"), "boot 1: no boot-link step without --set-default")
v = doc("verify-1a")
kp = link(v, "kernel.package")
pkg, ver = (kp.get("expected") or " ").split(" ", 1)
release = pkg[len("linux-image-"):]
check(pkg.startswith("linux-image-") and release.endswith("-scsitune") and release != debian,
      f"boot 1: the bundle's kernel is {pkg} {ver}, not Debian's {debian}")
check(read("pkgs-1a.txt").split()[:2] == [pkg, ver], f"boot 1: dpkg lists {pkg} {ver} installed ({read('pkgs-1a.txt').strip()})")
boot1a = read("boot-1a.txt").split()
check(f"vmlinuz-{release}" in boot1a and f"initrd.img-{release}" in boot1a,
      f"boot 1: /boot has vmlinuz-{release} and the initrd initramfs-tools made for it")
want_debian = f"/vmlinuz boot/vmlinuz-{debian}\n/initrd.img boot/initrd.img-{debian}\n"
check(read("links-1a.txt") == want_debian and read("links-1b.txt") == want_debian,
      f"boot 1: install left /vmlinuz and /initrd.img on Debian's kernel ({read('links-1b.txt').split()})")
check(kp.get("state") == "ok" and kp.get("actual") == f"{pkg} {ver}", f"boot 1: verify: kernel.package ok ({kp})")
kr = link(v, "kernel.running")
check(kr.get("state") == "not-checked" and "not running" in (kr.get("note") or ""), f"boot 1: verify: kernel.running not-checked, not the default ({kr.get('state')}: {kr.get('note')})")
r1 = doc("remove-1")
krm = [s for s in (r1 or {}).get("steps", []) if s.get("step") == "kernel"]
check(rc("remove-1") == "0" and krm and krm[0]["outcome"] == "removed", f"boot 1: remove exits 0, the package purged ({rc('remove-1')}, {krm})")
check(read("pkgs-1b.txt").strip() == "" and f"vmlinuz-{release}" not in read("boot-1b.txt").split(),
      f"boot 1: after remove dpkg lists no payload kernel, /boot has no vmlinuz-{release}")
i2 = doc("install-b")
dst = steps(i2, "default")
check(rc("install-b") == "0" and [s["state"] for s in dst] == ["done", "done"], f"boot 1: install --set-default exits 0, both links done ({rc('install-b')})")
check(read("links-1c.txt") == f"/vmlinuz boot/vmlinuz-{release}\n/initrd.img boot/initrd.img-{release}\n",
      f"boot 1: --set-default pointed both links at {release} ({read('links-1c.txt').split()})")
v = doc("verify-1b")
check(rc("verify-1b") == "2" and link(v, "kernel.running").get("state") == "reboot-pending",
      f"boot 1: verify exits 2, kernel.running reboot-pending ({rc('verify-1b')}, {link(v, 'kernel.running').get('state')})")

check(read("uname-2.txt").strip() == release, f"boot 2: the payload's kernel runs ({read('uname-2.txt').strip()})")
for name in ("verify-2", "verify-2-bundle"):
    v = doc(name)
    kr = link(v, "kernel.running")
    check(rc(name) == "0" and v and v.get("verdict") == "loaded", f"boot 2: {name} exits 0, loaded ({rc(name)}, {(v or {}).get('verdict')})")
    check(kr.get("state") == "ok" and kr.get("expected") and kr.get("actual") == kr.get("expected"),
          f"boot 2: {name}: the running build-id (/sys/kernel/notes) is the manifest's ({kr.get('actual')})")
check({"sda", "sdb"} <= set(read("block-2.txt").split()) and rc("dd-2") == "0", "boot 2: both disks, a direct read of sdb works")
check("kernel.running" in read("verify-2-text.json"), "boot 2: verify's text names kernel.running")
check(rc("remove-2a") == "1" and "running kernel" in read("remove-2a.err"), f"boot 2: remove refused: the running kernel ({read('remove-2a.err').strip()[:160]})")
check(read("pkgs-2a.txt").split()[:2] == [pkg, ver] and read("links-2a.txt") == read("links-1c.txt"), "boot 2: the refused remove changed nothing")
check(rc("remove-2b") == "0" and read("pkgs-2b.txt").strip() == "" and read("links-2b.txt") == want_debian,
      f"boot 2: remove --force: purged, links on Debian's kernel again ({rc('remove-2b')}, {read('links-2b.txt').split()})")

check(read("uname-3.txt").strip() == debian, f"boot 3: Debian's kernel again ({read('uname-3.txt').strip()})")
v = doc("verify-3")
check(rc("verify-3") == "2" and v and v.get("verdict") == "not-installed", f"boot 3: verify: not installed ({rc('verify-3')})")
check(read("pkgs-3.txt").strip() == "" and read("links-3.txt") == want_debian, "boot 3: no payload kernel package, the links as before")
check("No such file" in read("cache-3.txt"), f"boot 3: /var/cache/scsitune removed ({read('cache-3.txt').strip()})")

ms = {name: read(name + ".ms").strip() for name in ("install-a", "remove-1", "install-b", "verify-2", "remove-2b")}
print("bench: payload kernel on the real root (TCG guest): " + ", ".join(
    f"{n} {int(t) / 1000:.1f} s" if t.isdigit() else f"{n} ?" for n, t in ms.items()))
finish("payload-kernel")
