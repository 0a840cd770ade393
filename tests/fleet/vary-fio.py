#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Make fio run outputs from a recorded real one: every job's IOPS, bandwidth,
bytes and I/O count scaled by a factor, and the start time set (timestamp,
timestamp_ms, time). Everything else (latencies, job options, fio version,
the json+ histograms) is the recorded file's: a host's varied run still goes
through the same parser.

Usage: vary-fio.py TEMPLATE [OPTION=VALUE] OUT:FACTOR:START_MS...
  OPTION=VALUE: set that job option of every job (bs=8k: another job shape)
"""
import copy
import json
import sys
import time

args = sys.argv[1:]
template = json.load(open(args.pop(0)))
option = args.pop(0).split("=", 1) if args and "=" in args[0] and ":" not in args[0] else None
for spec in args:
    out, factor, start_ms = spec.rsplit(":", 2)
    factor, start_ms = float(factor), int(start_ms)
    doc = copy.deepcopy(template)
    doc["timestamp_ms"] = start_ms
    doc["timestamp"] = start_ms // 1000
    doc["time"] = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(start_ms // 1000))
    for job in doc["jobs"]:
        if option:
            job["job options"][option[0]] = option[1]
        for d in ("read", "write", "trim"):
            io = job.get(d)
            if not io:
                continue
            for k in ("iops", "iops_mean", "iops_min", "iops_max"):
                if k in io:
                    io[k] = io[k] * factor
            for k in ("bw", "bw_bytes", "io_bytes", "io_kbytes", "total_ios", "bw_min", "bw_max", "bw_mean"):
                if k in io:
                    io[k] = int(round(io[k] * factor))
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
