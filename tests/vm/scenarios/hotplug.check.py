#!/usr/bin/env python3
"""Scenario "hotplug", host side: detect run while scsi_debug hosts come and
go never crashed, always exited 0, and always printed a whole JSON document
that validates against the schema; after the churn it agrees with the kernel.

    hotplug.check.py RESULTS_DIR SCSITUNE
"""
import glob
import json
import os
import sys

from vmcheck import check, failures, finish, read, results


try:
    import jsonschema
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "../../../schema/detect.schema.json")) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
except ImportError:
    validator = None
    print("note  python3-jsonschema missing: JSON not validated against the schema")

churn = read("churn.count").strip() if os.path.exists(os.path.join(results, "churn.count")) else "?"
check(churn.isdigit() and int(churn) > 0, f"hosts were added and removed during the runs ({churn} rounds of +2/-2)")
runs = sorted(glob.glob(os.path.join(results, "runs", "*.rc")), key=lambda p: int(os.path.basename(p)[:-3]))
check(len(runs) == 40, f"40 detect runs ({len(runs)})")
warned = 0
hostcounts = []
for rc_path in runs:
    n = int(os.path.basename(rc_path)[:-3])
    rc = int(open(rc_path).read().strip() or -1)
    err = open(os.path.join(results, "runs", f"{n}.err")).read()
    if err.strip():
        warned += 1
        print(f"      run {n} stderr: {err.strip()[:300]!r}")
    if not check(rc == 0, f"run {n}: exit {rc}" + (" (killed by a signal)" if rc >= 128 else "")):
        continue
    if n % 2:
        try:
            doc = json.loads(read(f"runs/{n}.json"))
        except ValueError as e:
            check(False, f"run {n}: stdout is not one JSON document: {e}")
            continue
        if validator:
            errs = list(validator.iter_errors(doc))
            for e in errs[:3]:
                print(f"      run {n}: {list(e.path)}: {e.message}")
            check(not errs, f"run {n}: JSON validates")
        hostcounts.append(doc["summary"]["scsi_host_count"])
    else:
        check(read(f"runs/{n}.txt").startswith("Host:"), f"run {n}: text output whole")
print(f"note  {warned} of {len(runs)} runs warned on stderr; scsi_host_count seen: {sorted(set(hostcounts))}")

check(read("final.rc").strip() == "0", "final detect exited 0")
final = json.loads(read("final.json"))
kernel = sorted(line.split()[0] for line in read("hosts.txt").splitlines() if line.strip())
got = sorted(f"host{sh['host_no']}" for hba in final["hbas"] for sh in hba["scsi_hosts"])
check(got == kernel, f"after the churn detect lists the kernel's hosts: {got} (kernel {kernel})")
check(final["summary"]["disk_count"] == int(read("disks.txt").strip()),
      f"after the churn disk_count {final['summary']['disk_count']} (kernel {read('disks.txt').strip()})")
finish("hotplug.check.py")
