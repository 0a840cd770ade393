#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
The umockdev tier: `scsitune detect` on its LIVE path (libudev enumeration and
udev properties, plain open() of /sys and /proc) against a fake mpi3mr host.

    umockdev-detect.py --scsitune BUILD/scsitune --case CASE [--workdir DIR]

CASE is one of
  detect          detect -o json / -o text under the testbed; checks the model
  sysroot-agrees  the same testbed read with --sysroot (udev db files instead of
                  libudev) gives the same JSON, except `source`
  no-host-reads   strace of detect: every /sys, /proc, /run/udev, /lib/modules
                  access went into the testbed or onto a guard tmpfs
  hotplug         a second session without the disk on phy 1: the disk is gone,
                  the other keeps its key and the host its queue map
  all             all of the above

How the fake host is made (README.md has the whole story):
  mpi3mr-host.umockdev   umockdev recording of /sys/devices (P:/E:/A:/L: stanzas),
                         loaded by `umockdev-run -d`
  mpi3mr-host.overlay/   what umockdev cannot record: proc/ and sys/ files copied
                         into $UMOCKDEV_DIR before scsitune runs, and lib/modules/
                         put on the /lib/modules guard tmpfs
Everything runs in a private mount namespace (unshare --mount) in which /sys,
/run/udev and /lib/modules are empty tmpfs mounts, so a read that escapes
umockdev's LD_PRELOAD cannot reach the build host's files.

Exit status: 0 pass, 1 fail (including umockdev-run not installed: a tier that
cannot run fails and says why, it is never counted as a pass).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDING = os.path.join(HERE, "mpi3mr-host.umockdev")
OVERLAY = os.path.join(HERE, "mpi3mr-host.overlay")
NS_ENV = "SCSITUNE_UMOCKDEV_NAMESPACE"
CASES = ["detect", "sysroot-agrees", "no-host-reads", "hotplug"]

# The fake host, as the recording and overlay describe it.
PCI = "0000:17:00.0"
RELEASE = "6.1.0-57-amd64"
SDA_WWN = "0x5000c500d5e6f7a8"
SDB_PATH = "pci-0000:17:00.0-sas-phy1-lun-0"
SDB_STANZAS = "/end_device-2:1/"  # every device under the second SAS end device

# Source name of the guard tmpfs mounts; setup_guards() checks it in mountinfo.
GUARD_SOURCE = "scsitune-test"


class Failure(Exception):
    pass


def log(msg=""):
    print(msg, flush=True)


def check(cond, what):
    """One named assertion; prints it, raises on failure."""
    if not cond:
        raise Failure(what)
    log("  ok   " + what)


# --------------------------------------------------------------------------
# Namespace and guards


def namespace_preflight():
    """unshare(1) if a private mount namespace can be made here, else None (after saying why)."""
    unshare = shutil.which("unshare")
    if not unshare:
        log("FAIL: unshare(1) (util-linux) not found; it is needed for the private mount namespace.")
        return None
    probe = subprocess.run([unshare, "--mount", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        log("FAIL: cannot create a private mount namespace (unshare --mount): %s\n"
            "      Without it /lib/modules and /run/udev of this machine would be visible to "
            "scsitune; the test refuses to run rather than skip." % probe.stderr.strip())
        return None
    return unshare


def reexec_in_namespace(unshare, argv):
    env = dict(os.environ, **{NS_ENV: "1"})
    return subprocess.run([unshare, "--mount", "--propagation", "private", "--",
                           sys.executable, os.path.abspath(__file__)] + argv, env=env).returncode


def mount_tmpfs(path):
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=16m", GUARD_SOURCE, path], check=True)


def mount_tmpfs_creating(path, scratch):
    """tmpfs on path; if path does not exist (no /lib/modules in a container), first
    lay a throwaway overlay over its parent so the mount point can be made without
    touching the host's filesystem."""
    if os.path.isdir(path):
        mount_tmpfs(path)
        return
    parent = os.path.realpath(os.path.dirname(path))
    upper = os.path.join(scratch, "overlay-" + parent.strip("/").replace("/", "-"))
    os.makedirs(upper)
    mount_tmpfs(upper)
    os.makedirs(upper + "/u")
    os.makedirs(upper + "/w")
    subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                    "lowerdir=%s,upperdir=%s/u,workdir=%s/w" % (parent, upper, upper), parent], check=True)
    os.mkdir(os.path.join(parent, os.path.basename(path)))
    mount_tmpfs(path)


def mountinfo():
    """mount point -> (fstype, source) of the topmost mount, from the namespace's view."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.split(" - ", 1)
            point = pre.split()[4].replace("\\040", " ")
            fstype, source = post.split()[:2]
            mounts[point] = (fstype, source)
    return mounts


def setup_guards(scratch):
    """Returns the guarded path prefixes."""
    guards = []
    # /sys: umockdev redirects every /sys path that goes through libc's exported
    # functions, but not glibc's internal opens: sysconf(_SC_NPROCESSORS_CONF), called
    # from libnuma's constructor, reads /sys/devices/system/cpu/possible past the
    # preload. The guard holds only those CPU files, copied from the fixture.
    mount_tmpfs("/sys")
    guards.append("/sys")
    cpu = "/sys/devices/system/cpu"
    os.makedirs(cpu)
    for name in ("possible", "present", "online"):
        shutil.copyfile(os.path.join(OVERLAY, "sys/devices/system/cpu", name), os.path.join(cpu, name))
    # /run/udev: umockdev 0.17 does not redirect the udev database; libudev would
    # read the host's /run/udev/data/b8:0 for the fake sda.
    if os.path.isdir("/run/udev"):
        mount_tmpfs("/run/udev")
        guards.append("/run/udev")
    elif os.path.isdir("/run"):
        mount_tmpfs("/run")
        guards.append("/run")
    else:
        raise Failure("neither /run/udev nor /run exists: cannot guard the udev database path")
    # /lib/modules: not redirected by umockdev at all (payload state lives there).
    mount_tmpfs_creating("/lib/modules", scratch)
    guards.append("/lib/modules")
    shutil.copytree(os.path.join(OVERLAY, "lib/modules"), "/lib/modules", dirs_exist_ok=True, symlinks=True)

    mounts = mountinfo()
    log("guards (private mount namespace):")
    for g in guards:
        real = os.path.realpath(g)
        check(mounts.get(real) == ("tmpfs", GUARD_SOURCE),
              "%s is the %s tmpfs (mountinfo: %s)" % (g, GUARD_SOURCE, mounts.get(real)))
    return guards


# --------------------------------------------------------------------------
# Inside umockdev-run


def inner(outdir, steps, scsitune):
    """Runs as the program under `umockdev-run`: completes the testbed, runs scsitune."""
    tb = os.environ.get("UMOCKDEV_DIR")
    preload = os.environ.get("LD_PRELOAD", "")
    if not tb or "umockdev" not in preload:
        print("inner: not under umockdev-run (UMOCKDEV_DIR=%r LD_PRELOAD=%r)" % (tb, preload), file=sys.stderr)
        return 1
    with open(os.path.join(outdir, "umockdev-dir"), "w") as f:
        f.write(tb + "\n")
    # What umockdev-record cannot hold: /proc files (served from $UMOCKDEV_DIR/proc
    # when present, else from the real /proc) and non-device /sys files.
    for top in ("proc", "sys"):
        shutil.copytree(os.path.join(OVERLAY, top), os.path.join(tb, top), dirs_exist_ok=True, symlinks=True)

    def run(name, args, env=None, wrap=()):
        with open(os.path.join(outdir, name + ".out"), "w") as out, \
             open(os.path.join(outdir, name + ".err"), "w") as err:
            rc = subprocess.run(list(wrap) + [scsitune] + args, stdout=out, stderr=err,
                                cwd=outdir, env=env).returncode
        with open(os.path.join(outdir, name + ".rc"), "w") as f:
            f.write("%d\n" % rc)

    for step in steps:
        if step == "json":
            run("json", ["detect", "-o", "json"])
        elif step == "text":
            run("text", ["detect", "-o", "text"])
        elif step == "strace":
            # strace itself runs without the preload; scsitune gets it back via -E, so
            # the log shows the paths after umockdev rewrote them.
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            run("strace", ["detect", "-o", "json"], env=env,
                wrap=[shutil.which("strace"), "-f", "-y", "-qq", "-e", "trace=%file",
                      "-E", "LD_PRELOAD=" + preload, "-o", os.path.join(outdir, "strace.log")])
        elif step == "snapshot":
            # sys/ and proc/ only: ioctl/ holds umockdev's sockets
            for top in ("sys", "proc"):
                shutil.copytree(os.path.join(tb, top), os.path.join(outdir, "testbed", top), symlinks=True)
    return 0


def session(scsitune, workdir, name, steps, recording=RECORDING):
    """One umockdev-run session; returns its output directory."""
    outdir = os.path.join(workdir, name)
    os.makedirs(outdir)
    env = dict(os.environ, TMPDIR=workdir)  # the testbed lives in the scratch dir
    env.pop("UMOCKDEV_DIR", None)
    cmd = ["umockdev-run", "-d", recording, "--", sys.executable, os.path.abspath(__file__),
           "--scsitune", scsitune, "--inner", outdir, "--steps", ",".join(steps)]
    r = subprocess.run(cmd, env=env, cwd=outdir)
    if r.returncode != 0:
        raise Failure("umockdev-run session %s exited %d" % (name, r.returncode))
    return outdir


def result(outdir, name, want_json=True):
    def read(ext):
        with open(os.path.join(outdir, "%s.%s" % (name, ext))) as f:
            return f.read()
    rc, out, err = int(read("rc")), read("out"), read("err")
    if rc != 0 or err.strip():
        log("---- scsitune stderr (%s) ----\n%s----" % (name, err))
    check(rc == 0, "detect (%s) exits 0" % name)
    check(err.strip() == "", "detect (%s) prints no warnings: every file it wanted was in the testbed" % name)
    return json.loads(out) if want_json else out


# --------------------------------------------------------------------------
# Expected values straight from the recording


def recording_stanzas(path=RECORDING):
    stanzas, cur = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("P: "):
                cur = {"P": line[3:], "E": {}, "A": {}, "L": {}}
                stanzas.append(cur)
            elif len(line) > 3 and line[1:3] == ": " and cur is not None and line[0] in "EAL":
                k, _, v = line[3:].partition("=")
                cur[line[0]][k] = v
    return stanzas


def parse_cpu_list(s):
    cpus = []
    for part in re.split(r"[,\s]+", s.strip()):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def overlay_file(rel):
    with open(os.path.join(OVERLAY, rel)) as f:
        return f.read().strip()


# --------------------------------------------------------------------------
# Cases


def assert_model(doc, text=None):
    st = recording_stanzas()
    sda = next(s for s in st if s["P"].endswith("/block/sda"))
    pci = next(s for s in st if s["P"].endswith("/" + PCI))
    shost = next(s for s in st if s["P"].endswith("/scsi_host/host2"))
    mq = {int(k.split("/")[1]): parse_cpu_list(v) for k, v in sda["A"].items()
          if re.fullmatch(r"mq/\d+/cpu_list", k)}

    log("source and host-wide facts:")
    check(doc["source"]["udev"] == "libudev", "source.udev == libudev (the live path, not --sysroot)")
    check(doc["source"]["sysroot"] is False, "source.sysroot == false")
    k = doc["kernel"]
    check(k["release"] == RELEASE, "kernel.release %s comes from the testbed's proc/sys/kernel/osrelease" % RELEASE)
    check(k["hostname"] == overlay_file("proc/sys/kernel/hostname"), "kernel.hostname from the testbed")
    check(doc["cpus"]["online"] == parse_cpu_list(overlay_file("sys/devices/system/cpu/online")),
          "cpus.online from the testbed (8 CPUs)")
    check([n["cpus"] for n in doc["numa"]["nodes"]] == [[0, 1, 2, 3], [4, 5, 6, 7]],
          "two NUMA nodes from the testbed's sys/devices/system/node")
    mods = {m["name"]: m for m in doc["payload"]["modules"]}
    check(mods["scsi_mod"]["installed_path"] == "/lib/modules/%s/updates/scsitune/scsi_mod.ko" % RELEASE,
          "payload scsi_mod found on the /lib/modules guard tmpfs")
    check(mods["target_core_mod"]["state"] == "not-loaded", "target_core_mod not loaded (no sys/module dir)")

    log("HBA (PCI function, libudev properties):")
    check(len(doc["hbas"]) == 1, "exactly one HBA")
    h = doc["hbas"][0]
    check(h["pci_address"] == PCI, "pci_address %s" % PCI)
    check(h["kind"] == "mpi3mr" and h["driver"] == "mpi3mr", "kind and driver mpi3mr")
    check((h["vendor_id"], h["device_id"], h["pci_id"]) == ("1000", "00a5", "1000:00a5"),
          "vendor:device 1000:00a5, as lspci writes it")
    check(h["numa_node"] == int(pci["A"]["numa_node"]) == 1, "numa_node 1")
    check(h["local_cpus"] == parse_cpu_list(pci["A"]["local_cpulist"]), "local_cpus as recorded (4-7)")
    check(h["model"] == pci["E"]["ID_MODEL_FROM_DATABASE"],
          "model from udev property ID_MODEL_FROM_DATABASE (%s)" % h["model"])
    check(h["driver_version"] == "8.2.0.3.0", "driver_version from sys/module/mpi3mr/version")
    check(h["firmware"] == shost["A"]["version_fw"], "firmware from version_fw")

    log("SCSI host (scsi_host class device found by udev enumeration):")
    check(len(h["scsi_hosts"]) == 1, "one SCSI host on the HBA")
    s = h["scsi_hosts"][0]
    check(s["host_no"] == 2 and s["proc_name"] == "mpi3mr", "host2, proc_name mpi3mr")
    check(s["unique_id"] == 0, "unique_id 0 (the K in mpi3mrK-msixM)")
    check(s["host_tagset"] is True, "host_tagset true")
    check((s["can_queue"], s["cmd_per_lun"], s["nr_hw_queues"]) == (8128, 128, 4), "can_queue/cmd_per_lun/nr_hw_queues")
    check(s["adapter_state_name"] == "operational", "adp_state 1 = operational")
    check([x["hctx"] for x in s["hctx_map"]] == sorted(mq), "hctx_map has hctx %s" % sorted(mq))
    for x in s["hctx_map"]:
        check(x["cpus"] == mq[x["hctx"]], "hctx %d cpus %s == sda mq/%d/cpu_list" % (x["hctx"], x["cpus"], x["hctx"]))
        check(x["irq"] == 151 + x["hctx"], "hctx %d served by IRQ %d (mpi3mr0-msix%d)" % (x["hctx"], 151 + x["hctx"], x["hctx"] + 1))

    log("disks (block enumeration, ID_WWN / ID_PATH keys from libudev):")
    disks = {d["name"]: d for d in s["disks"]}
    check(sorted(disks) == ["sda", "sdb"], "disks sda and sdb; partition sda1 and loop0 are not disks")
    a, b = disks["sda"], disks["sdb"]
    check(a["hctl"] == "2:0:0:0" and b["hctl"] == "2:0:1:0", "H:C:T:L through port-2:N/end_device-2:N")
    check(a["key"] == "wwn-" + SDA_WWN and a["key_source"] == "ID_WWN_WITH_EXTENSION", "sda key %s from ID_WWN_WITH_EXTENSION" % a["key"])
    check(a["id_path"] == sda["E"]["ID_PATH"], "sda id_path from ID_PATH")
    check(b["key"] == "path-" + SDB_PATH and b["key_source"] == "ID_PATH", "sdb key %s from ID_PATH (no WWN)" % b["key"])
    check(b["wwn"] is None, "sdb has no wwn")
    check(a["model"] == "XS3840LE70084" and a["vendor"] == "SEAGATE", "sda vendor/model trimmed")
    check(a["size_bytes"] == int(sda["A"]["size"]) * 512, "sda size in bytes")
    check(a["queue"]["scheduler"] == "mq-deadline", "sda scheduler mq-deadline")
    check(a["queue"]["nr_hw_queues"] == len(mq), "sda hw_queues == number of mq/ dirs")
    check(a["counters"]["iorequest_cnt"] == 0x1f3a, "sda iorequest_cnt 0x1f3a")

    log("IRQs (msi_irqs/ of the PCI function, /proc/interrupts and /proc/irq from the testbed):")
    irqs = {q["vector"]: q for q in h["irqs"]}
    check(sorted(irqs) == [0, 1, 2, 3, 4], "vectors 0-4 (IRQs 150-154)")
    check(irqs[0]["managed"] is False and irqs[0]["hctx"] is None, "vector 0 (admin queue) not managed, no hctx")
    check(irqs[0]["name"] == "mpi3mr0-msix0", "vector 0 named mpi3mr0-msix0")
    check(irqs[1]["managed"] is True and irqs[1]["hctx"] == 0, "vector 1 managed, serves hctx 0")
    for v in range(1, 5):
        q = irqs[v]
        check(q["managed"] is True and q["hctx"] == v - 1 and q["affinity"] == mq[v - 1],
              "vector %d managed, hctx %d, affinity %s == mq cpu_list" % (v, v - 1, q["affinity"]))
        check(q["effective_affinity"] == parse_cpu_list(overlay_file("proc/irq/%d/effective_affinity_list" % q["irq"])),
              "vector %d effective affinity from the testbed's /proc/irq/%d" % (v, q["irq"]))

    if text is not None:
        log("text output:")
        for needle in ("HBA " + PCI + "  mpi3mr", "IRQ locality: movable", "Fusion-MPT 24GSAS/PCIe SAS40xx",
                       "host2  mpi3mr", "wwn-" + SDA_WWN, "path-" + SDB_PATH):
            check(needle in text, "text names %r" % needle)


def case_detect(scsitune, workdir):
    out = session(scsitune, workdir, "detect", ["json", "text"])
    assert_model(result(out, "json"), result(out, "text", want_json=False))


def make_sysroot(testbed, root):
    """The testbed as a --sysroot tree: sys/ and proc/ as they are; the udev
    properties umockdev keeps in each device's uevent file become udev database
    files run/udev/data/<id>, the form udevd writes and --sysroot reads."""
    shutil.copytree(os.path.join(testbed, "sys"), os.path.join(root, "sys"), symlinks=True)
    shutil.copytree(os.path.join(testbed, "proc"), os.path.join(root, "proc"), symlinks=True)
    shutil.copytree(os.path.join(OVERLAY, "lib"), os.path.join(root, "lib"), symlinks=True)
    db = os.path.join(root, "run/udev/data")
    os.makedirs(db)
    n = 0
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "sys/devices")):
        if "uevent" not in filenames or not os.path.islink(os.path.join(dirpath, "subsystem")):
            continue
        subsystem = os.path.basename(os.readlink(os.path.join(dirpath, "subsystem")))
        with open(os.path.join(dirpath, "uevent")) as f:
            props = [l for l in f.read().splitlines() if "=" in l]
        if os.path.exists(os.path.join(dirpath, "dev")):
            with open(os.path.join(dirpath, "dev")) as f:
                dbid = ("b" if subsystem == "block" else "c") + f.read().strip()
        else:
            dbid = "+%s:%s" % (subsystem, os.path.basename(dirpath))
        with open(os.path.join(db, dbid), "w") as f:
            f.write("".join("E:%s\n" % p for p in props))
        n += 1
    return n


def diff_json(a, b, path=""):
    if type(a) is not type(b):
        return ["%s: %r != %r" % (path or "/", a, b)]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append("%s/%s: only in %s" % (path, k, "live" if k in a else "sysroot"))
            else:
                out += diff_json(a[k], b[k], "%s/%s" % (path, k))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return ["%s: %d items != %d items" % (path, len(a), len(b))]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff_json(x, y, "%s/%d" % (path, i))]
    return [] if a == b else ["%s: %r != %r" % (path, a, b)]


def case_sysroot_agrees(scsitune, workdir):
    out = session(scsitune, workdir, "live", ["json", "snapshot"])
    live = result(out, "json")
    root = os.path.join(workdir, "sysroot")
    n = make_sysroot(os.path.join(out, "testbed"), root)
    log("sysroot: %s (%d udev database files from the testbed's uevent properties)" % (root, n))
    with open(os.path.join(workdir, "sysroot.out"), "w") as o, open(os.path.join(workdir, "sysroot.err"), "w") as e:
        rc = subprocess.run([scsitune, "--sysroot", root, "detect", "-o", "json"], stdout=o, stderr=e).returncode
    with open(os.path.join(workdir, "sysroot.rc"), "w") as f:
        f.write("%d\n" % rc)
    sysroot = result(workdir, "sysroot")

    log("live (libudev) vs --sysroot (udev database):")
    check(live["source"] == {"sysroot": False, "udev": "libudev"}, "live source is libudev")
    check(sysroot["source"] == {"sysroot": True, "udev": "udev-db"}, "sysroot source is the udev db")
    # Not comparable by design: which device source was used, and whether the
    # running kernel has memory policy (libnuma, live only; unknown under --sysroot).
    for doc in (live, sysroot):
        del doc["source"]
        doc["numa"].pop("policy_available")
    check(sysroot["numa"] is not None and live["summary"]["disk_count"] == 2, "both runs see the fake host")
    diffs = diff_json(live, sysroot)
    for d in diffs:
        log("       differs: " + d)
    check(not diffs, "JSON identical apart from source and numa.policy_available")


# Accesses outside the testbed that are expected, with the reason. Everything
# else under /sys, /proc, /run/udev or /lib/modules fails the test.
ALLOWED_OUTSIDE = [
    (r"/proc/(self|thread-self|\d+)/fd(/\d+)?",
     "readlink of the process's own fds (umockdev resolves dirfd-relative paths this way; "
     "so does libudev): describes this process, not the host"),
    (r"/sys/devices/system/cpu/(possible|present|online)",
     "glibc's sysconf(_SC_NPROCESSORS_CONF), called from libnuma's constructor, opens it with "
     "an internal open that LD_PRELOAD cannot see; served by the /sys guard tmpfs holding the "
     "fixture's copy"),
    (r"/run/udev(/.*)?",
     "libudev's udev database lookups: umockdev 0.17 does not redirect /run/udev; served by the "
     "empty guard tmpfs, so properties come from the testbed's uevent files only"),
    (r"/run",
     "parent of the udev database path, on the guard tmpfs"),
    (r"/lib/modules(/.*)?",
     "payload state under /lib/modules/<release>/updates: umockdev does not redirect it; served "
     "by the guard tmpfs holding the fixture's lib/modules"),
]
WATCHED = ("/sys", "/proc", "/run", "/lib/modules")

SYSCALL_RE = re.compile(r"^\d+\s+(\w+)\((.*)$")
FD_ARG_RE = re.compile(r"^(\d+|AT_FDCWD)(?:<([^>]*)>)?, \"((?:[^\"\\]|\\.)*)\"")
PATH_ARG_RE = re.compile(r"^\"((?:[^\"\\]|\\.)*)\"")


def traced_paths(log_path, cwd):
    """(syscall, path) for every path a traced syscall named, made absolute with
    strace's -y fd annotations for *at() calls. A relative path whose directory
    strace could not name comes back as None."""
    out = []
    with open(log_path) as f:
        for line in f:
            m = SYSCALL_RE.match(line)
            if not m:
                continue
            call, args = m.groups()
            fm = FD_ARG_RE.match(args)
            if fm:
                fd, base, rel = fm.groups()
                if rel.startswith("/"):
                    out.append((call, rel))
                elif base is None and fd == "AT_FDCWD":
                    out.append((call, os.path.normpath(os.path.join(cwd, rel))))
                elif base is None:
                    out.append((call + "(fd %s, %r)" % (fd, rel), None))
                else:  # "" with AT_EMPTY_PATH names the fd itself
                    out.append((call, os.path.normpath(os.path.join(base, rel)) if rel else base))
                continue
            pm = PATH_ARG_RE.match(args)
            if pm:
                out.append((call, pm.group(1) if pm.group(1).startswith("/") else
                            os.path.normpath(os.path.join(cwd, pm.group(1)))))
    return out


def case_no_host_reads(scsitune, workdir, guards):
    if not shutil.which("strace"):
        raise Failure("strace not found: this check needs it (apt-get install strace)")
    out = session(scsitune, workdir, "strace", ["strace"])
    with open(os.path.join(out, "umockdev-dir")) as f:
        tb = os.path.realpath(f.read().strip())
    result(out, "strace")
    paths = traced_paths(os.path.join(out, "strace.log"), out)
    unknown = [c for c, p in paths if p is None]
    check(not unknown, "strace named the directory of every relative path %s" % (unknown[:3] or ""))
    check(len(paths) > 50, "strace saw %d path arguments" % len(paths))
    in_tb = [p for _, p in paths if p == tb or p.startswith(tb + "/")]
    check(any(p.startswith(tb + "/sys/class/scsi_host") for p in in_tb) and
          any(p.startswith(tb + "/proc/interrupts") for p in in_tb) and
          any(p.startswith(tb + "/proc/irq/") for p in in_tb),
          "%d accesses went into $UMOCKDEV_DIR (sys/class/scsi_host, proc/interrupts, proc/irq/...)" % len(in_tb))

    seen, bad = {}, []
    for call, p in paths:
        if p == tb or p.startswith(tb + "/"):
            continue
        if not any(p == w or p.startswith(w + "/") for w in WATCHED):
            continue
        rule = next((why for rx, why in ALLOWED_OUTSIDE if re.fullmatch(rx, p)), None)
        if rule is None:
            bad.append("%s(%s)" % (call, p))
        else:
            seen.setdefault(rule, set()).add(p)
    for why, ps in seen.items():
        ex = sorted(ps)
        log("  note %d path(s) outside the testbed, allowed: %s\n         e.g. %s" % (len(ex), why, ", ".join(ex[:3])))
    for b in bad:
        log("       escaped: " + b)
    check(not bad, "no other access under %s outside $UMOCKDEV_DIR" % ", ".join(WATCHED))
    # The allowed /sys, /run and /lib/modules accesses all lie on a guard checked above.
    outside = sorted({p for ps in seen.values() for p in ps if not p.startswith("/proc/")})
    check(all(any(p == g or p.startswith(g + "/") for g in guards) or
              (p == "/run" and "/run/udev" in guards) for p in outside),
          "the %d allowed /sys, /run and /lib/modules paths are all on a guard tmpfs" % len(outside))


def case_hotplug(scsitune, workdir):
    with open(RECORDING) as f:
        stanzas = f.read().strip("\n").split("\n\n")
    kept = [s for s in stanzas if SDB_STANZAS not in s.split("\n", 1)[0]]
    check(len(kept) < len(stanzas), "recording without the %d device(s) under %s" % (len(stanzas) - len(kept), SDB_STANZAS))
    removed = os.path.join(workdir, "without-sdb.umockdev")
    with open(removed, "w") as f:
        f.write("\n\n".join(kept) + "\n")
    before = result(session(scsitune, workdir, "before", ["json"]), "json")
    after = result(session(scsitune, workdir, "after", ["json"], recording=removed), "json")
    hb, ha = before["hbas"][0]["scsi_hosts"][0], after["hbas"][0]["scsi_hosts"][0]
    log("disk removed between two runs:")
    check([d["name"] for d in hb["disks"]] == ["sda", "sdb"], "before: sda and sdb")
    check([d["name"] for d in ha["disks"]] == ["sda"], "after: only sda")
    check(after["summary"]["disk_count"] == 1, "summary.disk_count 2 -> 1")
    check(ha["disks"][0]["key"] == hb["disks"][0]["key"] == "wwn-" + SDA_WWN, "sda keeps its key")
    check(ha["hctx_map"] == hb["hctx_map"], "host queue map unchanged")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scsitune", required=True)
    ap.add_argument("--case", choices=CASES + ["all"], default="all")
    ap.add_argument("--workdir", help="scratch directory (emptied first, kept afterwards); default: a temporary one, removed")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    ap.add_argument("--steps", help=argparse.SUPPRESS)
    args = ap.parse_args()
    scsitune = os.path.abspath(args.scsitune)

    if args.inner:
        return inner(args.inner, args.steps.split(","), scsitune)

    if not shutil.which("umockdev-run"):
        log("FAIL: umockdev-run not found (Debian: apt-get install umockdev; scripts/install-deps --test does)")
        return 1
    if not os.access(scsitune, os.X_OK):
        log("FAIL: %s is not an executable" % scsitune)
        return 1
    if os.environ.get(NS_ENV) != "1":
        if os.geteuid() != 0:
            log("FAIL: this test needs root: it runs scsitune in a private mount namespace with "
                "tmpfs over /sys, /run/udev and /lib/modules so that nothing can read the real ones "
                "(umockdev does not redirect /lib/modules or /run/udev, and /proc only file by file).")
            return 1
        unshare = namespace_preflight()
        if not unshare:
            return 1
        # Outside the namespace: make the scratch directory here and remove it here,
        # once the namespace (and its mounts inside the scratch directory) is gone.
        if args.workdir:
            workdir = os.path.abspath(args.workdir)
            shutil.rmtree(workdir, ignore_errors=True)
            os.makedirs(workdir)
        else:
            workdir = tempfile.mkdtemp(prefix="scsitune-umockdev-")
        argv = [a for a in sys.argv[1:]]
        if not args.workdir:
            argv += ["--workdir", workdir]
        rc = reexec_in_namespace(unshare, argv)
        if rc == 0 and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        elif rc != 0:
            log("(outputs kept in %s)" % workdir)
        return rc

    workdir = args.workdir
    ver = subprocess.run(["umockdev-run", "--version"], capture_output=True, text=True).stdout.strip()
    log("scsitune: %s\nrecording: %s\numockdev: %s\nworkdir: %s" % (scsitune, RECORDING, ver, workdir))
    try:
        guards = setup_guards(workdir)
        cases = CASES if args.case == "all" else [args.case]
        for c in cases:
            log("\n== %s" % c)
            if c == "detect":
                case_detect(scsitune, workdir)
            elif c == "sysroot-agrees":
                case_sysroot_agrees(scsitune, workdir)
            elif c == "no-host-reads":
                case_no_host_reads(scsitune, workdir, guards)
            elif c == "hotplug":
                case_hotplug(scsitune, workdir)
    except (Failure, subprocess.CalledProcessError, OSError) as e:
        log("FAIL: %s" % e)
        return 1
    log("\nPASS: %s" % ", ".join(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
