#!/usr/bin/env python3
"""Scenario "report", host side: report --run in the 2-node guest bound fio to
node 1 (CPUs 2-3) for the virtio-scsi disk behind the node-1 expander bridge,
left it unbound for the megasas disk (numa_node -1), and the result sets
carry the runs and the HBA's provenance.

    report.check.py RESULTS_DIR SCSITUNE
"""
import json
import sys

from vmcheck import check, failures, finish, read, results


print(read("disks.txt").strip())
rc = read("node1.rc").strip()
if check(rc == "0", f"report --run on the virtio disk exited {rc} ({read('node1.err').strip()[-300:]})"):
    d = json.loads(read("node1.json"))
    check(len(d["runs"]) == 2 and all(r["iops"] > 0 for r in d["runs"]), "2 runs with IOPS > 0")
    p = d["provenance"]
    check(p["hba"] is not None and p["hba"]["numa_node"] == 1, f"HBA behind the pxb, numa_node 1: {p['hba']}")
    b = p["numa_binding"]
    check(b["node"] == 1 and b["cpus"] == "2-3", f"bound to node 1, CPUs 2-3: {b}")
    check("binding fio to NUMA node 1 (CPUs 2-3) with libnuma numa_run_on_node" in read("node1.err"),
          "-v says so")
    log = read("fio-node1.log").split("\n")[:-1]
    check(len(log) == 2, f"fio started twice ({len(log)})")
    for line in log:
        cpus, _, mems = line.partition(" ")
        check(cpus == "2-3", f"fio's Cpus_allowed_list is {cpus} (node 1: 2-3)")
rc = read("nolocal.rc").strip()
if check(rc == "0", f"report --run on the megasas disk exited {rc} ({read('nolocal.err').strip()[-300:]})"):
    p = json.loads(read("nolocal.json"))["provenance"]
    check(p["hba"] is not None and p["hba"]["numa_node"] == -1, f"megasas HBA, numa_node -1: {p['hba']}")
    check(p["numa_binding"]["node"] is None, "not bound")
    check("no locality: the HBA's numa_node is -1: not bound" in read("nolocal.err"), "says: no locality")
    log = read("fio-nolocal.log").split("\n")[:-1]
    check(len(log) == 1 and log[0].split(" ")[0] == "0-3", f"fio may run on every CPU (0-3): {log}")

finish("report.check.py")
