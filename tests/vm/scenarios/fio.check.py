#!/usr/bin/env python3
"""Scenario "fio", host side: fio ran inside the guest on scsi_debug, its JSON
is whole, both jobs read, fio's reads equal the block layer's completed +
merged reads, and the SCSI device counted one command per request the block
layer completed (iorequest_cnt and iodone_cnt).

    fio.check.py RESULTS_DIR SCSITUNE
"""
import json
import os
import subprocess
import sys

from vmcheck import check, failures, finish, read, results

scsitune = sys.argv[2]


rc = read("fio.rc").strip()
check(rc == "0", f"fio exited {rc} in the guest ({read('fio.err').strip()[:200]})")
try:
    doc = json.loads(read("fio.json"))
except (OSError, ValueError) as e:
    check(False, f"fio.json is one JSON document: {e}")
    sys.exit(1)
jobs = doc.get("jobs", [])
check(doc.get("fio version", "").startswith("fio-3"), f"fio version {doc.get('fio version')}")
check(len(jobs) == 2, f"two jobs reported (got {len(jobs)})")
total = sum(j["read"]["total_ios"] for j in jobs)
check(all(j["read"]["iops"] > 0 and j["error"] == 0 for j in jobs), "every job read with no error")
check(total > 0, f"{total} reads completed")

disk = dict(line.split(" ", 1) for line in read("disk.txt").splitlines())
before = int(disk["before_iorequest_cnt"], 16)
after = int(disk["after_iorequest_cnt"], 16)
done = int(disk["after_iodone_cnt"], 16) - int(disk["before_iodone_cnt"], 16)
# Block layer stat (Documentation/block/stat.rst): reads completed, reads
# merged, ..., writes completed (field 5). Merged reads become one command.
b = [int(x) for x in disk["before_stat"].split()]
a = [int(x) for x in disk["after_stat"].split()]
reads, merged, writes = a[0] - b[0], a[1] - b[1], a[4] - b[4]
check(reads + merged == total, f"block layer: {reads} reads + {merged} merged = {total} fio reads")
check(after - before == reads + writes,
      f"iorequest_cnt grew by {after - before} = {reads + writes} requests the block layer completed")
check(done == after - before, f"iodone_cnt grew as much as iorequest_cnt ({done})")

# The host-side tool ingests the guest's fio output.
p = subprocess.run([scsitune, "report", os.path.join(results, "fio.json"), "-o", "json"],
                   capture_output=True, text=True)
check(p.returncode == 0, f"scsitune report ingests the guest's fio JSON (exit {p.returncode}: {p.stderr.strip()[:200]})")

finish("fio.check.py")
