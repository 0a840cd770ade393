# SPDX-License-Identifier: GPL-2.0-or-later
"""detect: `detect -o json` and `-o text` in one umockdev-run session under the
testbed, exit 0 and no warnings; the JSON is the fake host's model (kernel, CPUs,
nodes and payload from the testbed; the HBA, its SCSI host and queue map, the
disks and their keys, the IRQ vectors) and the text names its parts.
"""
import re

from umockdev_lib import (PCI, RELEASE, SDA_WWN, SDB_PATH, check, log, overlay_file,
                          parse_cpu_list, recording_stanzas, result, session)


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


def run(scsitune, workdir, guards):
    out = session(scsitune, workdir, "detect", ["json", "text"])
    assert_model(result(out, "json"), result(out, "text", want_json=False))
