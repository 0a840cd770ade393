#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make-fleet.py TEMPLATE URL HOSTS SEED: HOSTS hosts made from one real upload.

TEMPLATE is VictoriaMetrics' /api/v1/export of one host's series (JSON lines,
as `scsitune report --upload` left them: 6 baseline and 6 tuned runs). Each
new host (stor-f00000 ...) gets every series with its host label renamed and
its measured values varied: the whole host by a factor in [0.8, 1.2] (hosts
differ), each run (its `file` label) by one in [0.98, 1.02] (runs differ), the
counts (jobs, errors) as they were. Timestamps stay: each host its own series.
The lines go to URL (/api/v1/import) in batches of 200 hosts, streamed, never
all in memory. Prints the number of series lines sent.
"""
import json
import random
import sys
import urllib.request

COUNTS = {"scsitune_fio_jobs", "scsitune_fio_errors"}


def main():
    template, url, hosts, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    lines = [json.loads(l) for l in open(template) if l.strip()]
    if not lines:
        sys.exit("make-fleet.py: %s: no series" % template)
    old = {d["metric"]["host"] for d in lines}
    if len(old) != 1:
        sys.exit("make-fleet.py: %s: not one host's series (%s)" % (template, sorted(old)))
    files = sorted({d["metric"].get("file", "") for d in lines})
    rnd = random.Random(seed)
    sent = 0
    batch = []

    def flush():
        nonlocal batch
        if not batch:
            return
        body = ("\n".join(batch) + "\n").encode()
        req = urllib.request.Request(url, data=body, method="POST")
        with urllib.request.urlopen(req, timeout=300) as r:
            if r.status not in (200, 204):
                sys.exit("make-fleet.py: %s answered %d" % (url, r.status))
        batch = []

    for i in range(hosts):
        name = "stor-f%05d" % i
        host_factor = rnd.uniform(0.8, 1.2)
        run_factor = {f: rnd.uniform(0.98, 1.02) for f in files}
        for d in lines:
            m = dict(d["metric"])
            m["host"] = name
            k = 1.0 if m["__name__"] in COUNTS else host_factor * run_factor[m.get("file", "")]
            vals = [v * k if isinstance(v, (int, float)) and k != 1.0 else v for v in d["values"]]
            batch.append(json.dumps({"metric": m, "values": vals, "timestamps": d["timestamps"]},
                                    separators=(",", ":")))
            sent += 1
        if (i + 1) % 200 == 0:
            flush()
    flush()
    print(sent)


if __name__ == "__main__":
    main()
