#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check a fleet view (scsitune report --query -o json) against what each host
says itself and against the statistics recomputed here.

Usage: check-view.py VIEW.json [--status HOST=STATUS]... [--same OTHER.json]
                     [--cohorts N] [HOST=COMPARE.json]...
  HOST=COMPARE.json  that host's own `scsitune report --compare baseline -o json`
                     on its tuned runs: the view's numbers for HOST must equal it
                     (reference and current avg, min, max, spread, runs, the
                     per-run KIOPS, the change), to the three decimals both print
  --status H=S       host H is compared, apart or missing in the view
  --same OTHER.json  OTHER (another API's view of the same data) has the same
                     hosts, selection, counts and cohorts
  --cohorts N        the view has N cohorts
The selection (every compared host's runs pooled) and each cohort are
recomputed from the hosts' runs: avg, min, max, spread, sample stddev, CoV.
"""
import json
import statistics
import sys

args = sys.argv[1:]
view = json.load(open(args.pop(0)))
errors = []
hosts = {h["host"]: h for h in view["hosts"]}


def near(a, b, what):
    if a is None or b is None:
        if a != b:
            errors.append("%s: %r != %r" % (what, a, b))
        return
    # Within 0.0011, nothing more: a second test, round(a, 1) == round(b, 1),
    # failed for 9.05 (the service's) and 9.049589079 (the host's), 0.0004
    # apart on either side of a rounding boundary (vm/fleet-host, 2026-12-03).
    if abs(a - b) > 0.0011:
        errors.append("%s: %r != %r" % (what, a, b))


def stats(values):
    n = len(values)
    avg = sum(values) / n
    mx, mn = max(values), min(values)
    sd = statistics.stdev(values) if n > 1 else None
    return {"runs": n, "avg_kiops": avg, "min_kiops": mn, "max_kiops": mx,
            "spread_pct": (mx - mn) / mx * 100 if mx else 0,
            "stddev_kiops": sd, "cov_pct": sd / avg * 100 if sd is not None and avg else None}


def same_stats(got, want, what):
    for k in ("runs", "avg_kiops", "min_kiops", "max_kiops", "spread_pct", "stddev_kiops", "cov_pct"):
        if k in want:
            near(got[k], want[k], "%s.%s" % (what, k))


i = 0
while i < len(args):
    a = args[i]
    if a == "--status":
        h, st = args[i + 1].split("=", 1)
        got = hosts.get(h, {}).get("status")
        if got != st:
            errors.append("%s: status %s, want %s (%s)" % (h, got, st, hosts.get(h, {}).get("reason")))
        i += 2
    elif a == "--same":
        other = json.load(open(args[i + 1]))
        for k in ("hosts", "selection", "counts", "cohorts"):
            if view[k] != other[k]:
                errors.append("%s differs from %s's" % (k, args[i + 1]))
        i += 2
    elif a == "--cohorts":
        if len(view["cohorts"]) != int(args[i + 1]):
            errors.append("%d cohorts, want %s" % (len(view["cohorts"]), args[i + 1]))
        i += 2
    else:
        h, path = a.split("=", 1)
        local = json.load(open(path))
        v = hosts.get(h)
        if not v or not v["current"] or not v["reference"]:
            errors.append("%s: not in the view with both sides" % h)
        else:
            c = local["compare"]
            for side, mine in (("reference", c["reference"]), ("current", c["current"])):
                same_stats(v[side]["summary"], mine, "%s %s" % (h, side))
            near(v["compare"]["avg_change_pct"], c["avg_change_pct"], h + " avg change")
            near(v["compare"]["spread_change_points"], c["spread_change_points"], h + " spread change")
            got_runs = [r["kiops"] for r in v["current"]["runs"]]
            want_runs = [r["kiops"] for r in local["runs"]]
            if len(got_runs) != len(want_runs) or any(abs(x - y) > 0.0011 for x, y in zip(got_runs, want_runs)):
                errors.append("%s: per-run KIOPS %s, the host's own %s" % (h, got_runs, want_runs))
            same_stats(v["current"]["summary"], local["summary"], h + " current summary")
        i += 1

# The selection and the cohorts, recomputed from the hosts' runs.
compared = [h for h in view["hosts"] if h["status"] == "compared"]
if view["selection"]["hosts"] != len(compared):
    errors.append("selection.hosts %d, %d compared" % (view["selection"]["hosts"], len(compared)))
for side in ("reference", "current"):
    runs = [r["kiops"] for h in compared if h[side] for r in h[side]["runs"]]
    if runs:
        same_stats(view["selection"][side], stats(runs), "selection " + side)
for c in view["cohorts"]:
    members = [h for h in compared if h["cohort"] == c["cohort"]]
    if len(members) != c["hosts"]:
        errors.append("cohort %d: %d hosts, %d say so" % (c["cohort"], c["hosts"], len(members)))
    for h in members:
        f = h["current"]["facts"]
        key = (f["kernel"], f["payload"], f["profile_digest"] or f["profile"], f["firmware"])
        if key != (c["kernel"], c["payload"], c["profile_digest"] or c["profile"], c["firmware"]):
            errors.append("cohort %d holds %s of another kernel/payload/profile/firmware" % (c["cohort"], h["host"]))
    runs = [r["kiops"] for h in members for r in h["current"]["runs"]]
    if runs:
        same_stats(c["current"], stats(runs), "cohort %d current" % c["cohort"])
apart = [h["host"] for h in view["hosts"] if h["status"] != "compared"]
if errors:
    print("\n".join(errors[:30]))
    sys.exit(1)
print("%d hosts (%d compared, apart or missing: %s), selection and %d cohort(s) recomputed: equal"
      % (len(view["hosts"]), len(compared), ", ".join(apart) or "none", len(view["cohorts"])))
