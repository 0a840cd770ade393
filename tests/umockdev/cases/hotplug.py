# SPDX-License-Identifier: GPL-2.0-or-later
"""hotplug: a second session on the recording without the devices under
end_device-2:1: sdb is gone, sda keeps its key, the host's queue map is unchanged.
"""
import os

from umockdev_lib import RECORDING, SDA_WWN, SDB_STANZAS, check, log, result, session


def run(scsitune, workdir, guards):
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
