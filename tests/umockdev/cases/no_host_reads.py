# SPDX-License-Identifier: GPL-2.0-or-later
"""no-host-reads: `detect` under strace -f -y in a session: every path under /sys,
/proc, /run or /lib/modules lies in $UMOCKDEV_DIR or is one of ALLOWED_OUTSIDE,
and those allowed ones (but /proc/self/fd) lie on a guard tmpfs.
"""
import os
import re
import shutil

from umockdev_lib import Failure, check, log, result, session


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


def run(scsitune, workdir, guards):
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
