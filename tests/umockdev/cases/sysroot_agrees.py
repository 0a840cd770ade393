# SPDX-License-Identifier: GPL-2.0-or-later
"""sysroot-agrees: the testbed of a live session copied into a --sysroot tree,
each device's udev properties made into run/udev/data files; `detect -o json
--sysroot` of it equals the live (libudev) run's JSON apart from `source`,
numa.policy_available and kernel.module_trust.membership_error (both unknown:
the testbed's proc/keys is not this kernel's; the tree has no capture).
"""
import os
import shutil
import subprocess

from umockdev_lib import OVERLAY, check, log, result, session


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


def run(scsitune, workdir, guards):
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
    # Nor is keyring membership: live, it is KEYCTL_READ of this kernel's
    # keyrings, which the testbed's proc/keys (another machine's serials) does
    # not name, so detect must leave it unknown and say so (not read this
    # machine's keyrings); the tree has no scsitune-capture/keyrings.
    lt, st = live["kernel"]["module_trust"], sysroot["kernel"]["module_trust"]
    check(lt["membership"] is None and "proc/keys is not this kernel's" in (lt["membership_error"] or ""),
          "live: membership unknown, proc/keys not this kernel's (%r)" % lt["membership_error"])
    check(st["membership"] is None and "scsitune-capture/keyrings: not in the tree" in (st["membership_error"] or ""),
          "sysroot: membership unknown, no capture in the tree (%r)" % st["membership_error"])
    check(len(lt["keys"]) == 4 and lt["secure_boot"] is True,
          "live: the testbed's proc/keys (4 X.509 keys) and SecureBoot read (%d keys, secure_boot %r)"
          % (len(lt["keys"]), lt["secure_boot"]))
    del lt["membership_error"], st["membership_error"]
    check(sysroot["numa"] is not None and live["summary"]["disk_count"] == 2, "both runs see the fake host")
    diffs = diff_json(live, sysroot)
    for d in diffs:
        log("       differs: " + d)
    check(not diffs, "JSON identical apart from source, numa.policy_available and membership_error")
