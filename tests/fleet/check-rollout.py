#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Read what a rollout left: ansible-playbook's output and the central service.

  check-rollout.py recap LOG
      the PLAY RECAP as JSON: {host: {"ok": N, "changed": N, "failed": N, ...}}
  check-rollout.py waves LOG
      the role's wave summaries ("wave N (...): ..." and their lines), one per line
  check-rollout.py points VM_URL [MIN]
      the samples of scsitune_fio_kiops in VictoriaMetrics, as JSON
      {"host phase set": [timestamps...]} (duplicates kept, to be counted),
      read after /internal/force_flush, and read again (0.2 s apart, for at
      most 60 s) until there are at least MIN samples (the points written
      last are searchable)
"""
import json
import re
import sys
import time
import urllib.parse
import urllib.request

what = sys.argv[1]
if what == "recap":
    recap, on = {}, False
    for line in open(sys.argv[2]):
        if line.startswith("PLAY RECAP"):
            on = True
            continue
        m = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip()) if on else None
        if m:
            recap[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
    print(json.dumps(recap, sort_keys=True))
elif what == "waves":
    text = open(sys.argv[2]).read()
    for block in re.findall(r'"msg": \[\n(.*?)\n    \]', text, re.S):
        lines = [json.loads(l.strip().rstrip(",")) for l in block.splitlines()]
        if lines and lines[0].startswith("wave "):
            print(" | ".join(lines).replace("\n", " / "))
elif what == "points":
    base = sys.argv[2]
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    urllib.request.urlopen(base + "/internal/force_flush", timeout=10).read()
    q = urllib.parse.urlencode({"match[]": "scsitune_fio_kiops", "start": "0", "end": "4102444800"})
    deadline = time.monotonic() + 60
    while True:
        out = {}
        with urllib.request.urlopen(base + "/api/v1/export?" + q, timeout=10) as r:
            for line in r.read().decode().splitlines():
                s = json.loads(line)
                m = s["metric"]
                key = "%s %s %s" % (m["host"], m["phase"], m.get("set", "-"))
                out.setdefault(key, []).extend(s["timestamps"])
        n = sum(len(v) for v in out.values())
        if n >= want:
            break
        if time.monotonic() > deadline:
            sys.exit("%s: %d samples of scsitune_fio_kiops after 60 s, want at least %d" % (base, n, want))
        time.sleep(0.2)
    print(json.dumps({k: sorted(v) for k, v in out.items()}, sort_keys=True))
else:
    sys.exit("usage: check-rollout.py recap|waves LOG | points VM_URL [MIN]")
