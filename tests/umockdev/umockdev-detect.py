#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
The umockdev tier: `scsitune detect` on its LIVE path (libudev enumeration and
udev properties, plain open() of /sys and /proc) against a fake mpi3mr host.

    umockdev-detect.py --scsitune BUILD/scsitune [--case CASE] [--workdir DIR]
    umockdev-detect.py --list

CASE is one of (each is cases/CASE.py, with _ for -; what they share is in
umockdev_lib.py; --list prints the names, one a line)
  detect          detect -o json / -o text under the testbed; checks the model
  sysroot-agrees  the same testbed read with --sysroot (udev db files instead of
                  libudev) gives the same JSON, except `source`
  no-host-reads   strace of detect: every /sys, /proc, /run/udev, /lib/modules
                  access went into the testbed or onto a guard tmpfs
  hotplug         a second session without the disk on phy 1: the disk is gone,
                  the other keeps its key and the host its queue map
  all             all of the above, in this order (the default)

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
cannot run fails and says why, it is never counted as a pass; and a case that
made no check), 64 an unknown CASE.
"""
import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (the tests run as root)
from umockdev_lib import (NS_ENV, RECORDING, Failure, checks_made, inner, log,  # noqa: E402
                          namespace_preflight, reexec_in_namespace, setup_guards)

CASES = ["detect", "sysroot-agrees", "no-host-reads", "hotplug"]


def run_case(name, scsitune, workdir, guards):
    """cases/NAME.py's run(); a case that made no check fails."""
    before = checks_made()
    importlib.import_module("cases." + name.replace("-", "_")).run(scsitune, workdir, guards)
    if checks_made() == before:
        raise Failure("case %s made no check" % name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scsitune")
    ap.add_argument("--case", default="all", help="one of --list, or all (the default)")
    ap.add_argument("--list", action="store_true", help="print the case names, one a line, and exit")
    ap.add_argument("--workdir", help="scratch directory (emptied first, kept afterwards); default: a temporary one, removed")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    ap.add_argument("--steps", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if args.case != "all" and args.case not in CASES:
        print("umockdev-detect.py: unknown case %r (--list names them)" % args.case, file=sys.stderr)
        return 64
    if not args.scsitune:
        ap.error("the following arguments are required: --scsitune")
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
            run_case(c, scsitune, workdir, guards)
    except (Failure, subprocess.CalledProcessError, OSError) as e:
        log("FAIL: %s" % e)
        return 1
    log("\nPASS: %s" % ", ".join(cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
