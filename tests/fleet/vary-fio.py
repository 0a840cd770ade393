#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Make one fio run's output from a recorded real one: every job's IOPS,
bandwidth, bytes and I/O count scaled by FACTOR, and the start time set to
START_MS (timestamp, timestamp_ms, time). Everything else (latencies, job
options, fio version, the json+ histograms) is the recorded file's, byte for
byte in meaning: a host's varied run still goes through the same parser.

Usage: vary-fio.py TEMPLATE OUT FACTOR START_MS
"""
import json
import sys
import time

template, out, factor, start_ms = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(template))
doc["timestamp_ms"] = start_ms
doc["timestamp"] = start_ms // 1000
doc["time"] = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(start_ms // 1000))
for job in doc["jobs"]:
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
