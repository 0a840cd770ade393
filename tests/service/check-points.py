#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Read the points of `scsitune report --upload` back from a server and compare
them with the report's own JSON document (scsitune report -o json): every tag,
every field, the timestamp, and exactly one copy of each run.

Usage: check-points.py vm|influx BASE_URL DOC.json PHASE [--user U:P] [--cacert FILE]
  vm:     BASE_URL of VictoriaMetrics (/internal/force_flush, /api/v1/export)
  influx: BASE_URL of InfluxDB 1.x, database scsitune (/query, epoch=ms)
Judged once every field of every point of the document shows: the server is
asked again, 0.2 s apart, for at most 60 s, while some are missing (a server
shows a point only some time after it took it: VictoriaMetrics once it has
flushed its buffers, which /internal/force_flush does at once).
"""
import base64
import json
import math
import os
import socket
import ssl
import sys
import time
import urllib.parse
import urllib.request

kind, base, doc_path, phase = sys.argv[1:5]
opts = sys.argv[5:]
user = opts[opts.index("--user") + 1] if "--user" in opts else None
cacert = opts[opts.index("--cacert") + 1] if "--cacert" in opts else None


def get(path, params):
    req = urllib.request.Request(base + path + "?" + urllib.parse.urlencode(params))
    if user:
        req.add_header("Authorization", "Basic " + base64.b64encode(user.encode()).decode())
    ctx = ssl.create_default_context(cafile=cacert) if cacert else None
    with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
        return r.read().decode()


def expected_points():
    doc = json.load(open(doc_path))
    points = {}
    # The set tag: the saved result set's name, from the earliest run's start (UTC).
    start = min(r["start_time_ms"] for r in doc["runs"] if r["start_time_ms"] > 0)
    set_name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(start // 1000))
    for run in doc["runs"]:
        opts = dict(run["global_options"])
        if run["jobs"]:
            opts.update(run["jobs"][0]["options"])
        tags = {"host": socket.gethostname(), "kernel": os.uname().release, "phase": phase,
                "fio_version": run["fio_version"], "file": os.path.basename(run["file"]),
                "output_format": run["output_format"], "set": set_name}
        for k in ("rw", "bs", "iodepth", "numjobs", "ioengine", "direct"):
            if opts.get(k):
                tags[k] = opts[k]
        fields = {"iops": run["iops"], "kiops": run["kiops"], "bw_kib_s": run["bw_kib_s"],
                  "jobs": run["job_count"], "errors": run["failed_jobs"]}
        for d in ("read", "write"):
            io = run[d]
            fields[d + "_iops"] = io["iops"]
            fields[d + "_bw_kib_s"] = io["bw_kib_s"]
            fields[d + "_io_bytes"] = io["io_bytes"]
            lat = io["clat_ns"]
            if lat["samples"] > 0:
                fields[d + "_clat_mean_ns"] = lat["mean"]
                for p in ("p50", "p99", "p99_9"):
                    if lat[p] is not None:
                        fields[d + "_clat_" + p + "_ns"] = lat[p]
        points[(tuple(sorted(tags.items())), run["start_time_ms"])] = fields
    return points


def close(a, b):
    # The JSON document rounds to 3 decimals; the server holds the full value.
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0011)


def got_vm():
    text = get("/api/v1/export", {"match[]": '{__name__=~"scsitune_fio_.*",phase="%s"}' % phase,
                                  "start": "0", "end": "4102444800"})
    points, copies = {}, []
    for line in text.splitlines():
        s = json.loads(line)
        m = dict(s["metric"])
        field = m.pop("__name__")[len("scsitune_fio_"):]
        for v, ts in zip(s["values"], s["timestamps"]):
            points.setdefault((tuple(sorted(m.items())), ts), {})
            copies.append(((tuple(sorted(m.items())), ts, field)))
            points[(tuple(sorted(m.items())), ts)][field] = v
    dup = len(copies) - len(set(copies))
    return points, dup


def got_influx():
    q = "SELECT * FROM scsitune_fio WHERE phase = '%s' GROUP BY *" % phase
    res = json.loads(get("/query", {"db": "scsitune", "epoch": "ms", "q": q}))["results"][0]
    if "error" in res:
        sys.exit("influx query: " + res["error"])
    points = {}
    for s in res.get("series", []):
        tags = tuple(sorted((k, v) for k, v in s["tags"].items() if v != ""))
        for row in s["values"]:
            rec = dict(zip(s["columns"], row))
            ts = rec.pop("time")
            if (tags, ts) in points:
                return points, 1
            points[(tags, ts)] = {k: v for k, v in rec.items() if v is not None}
    return points, 0


want = expected_points()
if kind == "vm":
    get("/internal/force_flush", {})
deadline = time.monotonic() + 60
while True:
    got, dup = got_vm() if kind == "vm" else got_influx()
    if all(k in got and set(w) <= set(got[k]) for k, w in want.items()) or time.monotonic() > deadline:
        break
    time.sleep(0.2)
errors = []
if dup:
    errors.append("%d duplicate samples" % dup)
for key in sorted(set(want) | set(got), key=str):
    if key not in got:
        errors.append("missing point %s" % (key,))
    elif key not in want:
        errors.append("unexpected point %s" % (key,))
    else:
        w, g = want[key], got[key]
        if set(w) != set(g):
            errors.append("%s: fields differ: want %s, got %s" % (dict(key[0])["file"], sorted(w), sorted(g)))
        for f in set(w) & set(g):
            if not close(float(w[f]), float(g[f])):
                errors.append("%s: %s = %r, want %r" % (dict(key[0])["file"], f, g[f], w[f]))
if errors:
    print("\n".join(errors[:20]))
    sys.exit(1)
print("%d points, %d fields each, tags and values equal, one copy each" % (len(want), len(next(iter(want.values())))))
