# SPDX-License-Identifier: GPL-2.0-or-later
"""
What the cases of umockdev-detect.py share: the fake host's constants, check(),
the private mount namespace and its guard tmpfs mounts, umockdev-run sessions
(inner() runs inside them, as umockdev-detect.py --inner) and their results, and
the expected values read straight from the recording and the overlay.
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDING = os.path.join(HERE, "mpi3mr-host.umockdev")
OVERLAY = os.path.join(HERE, "mpi3mr-host.overlay")
NS_ENV = "SCSITUNE_UMOCKDEV_NAMESPACE"
DRIVER = os.path.join(HERE, "umockdev-detect.py")  # re-run in the namespace and as the inner program

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


_checks = 0


def checks_made():
    """How many check() calls have passed (the driver fails a case that made none)."""
    return _checks


def check(cond, what):
    """One named assertion; prints it, raises on failure."""
    global _checks
    if not cond:
        raise Failure(what)
    _checks += 1
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
                           sys.executable, DRIVER] + argv, env=env).returncode


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
    cmd = ["umockdev-run", "-d", recording, "--", sys.executable, DRIVER,
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
