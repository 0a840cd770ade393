#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""fleet/query: the gate's change tests in a fleet view (-o json of
--gate 'kiops>=+5%,kiops<=+10%'), each held to an independent count: U's
p-value by enumerating every split of the runs between the two sides, the
estimate as the median of the pairwise ratios (no code shared with
stats/rank.c).

Usage: check-gate-tests.py VIEW.json
"""
import itertools, json, math, statistics, sys
v = json.load(open(sys.argv[1]))
runs = {h["host"]: ([r["kiops"] for r in h["reference"]["runs"]], [r["kiops"] for r in h["current"]["runs"]])
        for h in v["hosts"]}
above, below = v["gate"]["conditions"][0], v["gate"]["conditions"][1]
assert above["test"] == {"method": "mann-whitney-u", "units": "runs", "confidence_pct": 95, "direction": "above"}
assert below["test"]["direction"] == "below" and not below["passed"] and above["passed"], (above, below)
def p_value(ref, cur, d):
    # P(U >= u): every way to split the pooled log-values into the two sides, counted (no formula shared);
    # a tie (a ratio of exactly 1 + d) counts 1/2, and its half is counted down (scsitune-report(8)).
    x = [math.log(r) + math.log1p(d) for r in ref] + [math.log(c) for c in cur]
    def u(cs, rs):
        return sum(1 if c - r > 1e-9 else 0.5 if c - r > -1e-9 else 0 for c in cs for r in rs)
    seen = math.floor(u(x[len(ref):], x[:len(ref)]))
    splits = list(itertools.combinations(range(len(x)), len(cur)))
    hits = sum(u([x[i] for i in s], [x[i] for i in range(len(x)) if i not in s]) >= seen for s in splits)
    return hits / len(splits)
for cond, d in ((above, 0.05), (below, 0.10)):
    assert len(cond["tests"]) == 3
    for t in cond["tests"]:
        ref, cur = runs[t["host"]]
        est = statistics.median(c / r for c in cur for r in ref) - 1
        assert abs(t["estimate_pct"] - 100 * est) < 0.01, (t, est)
        if cond is above:
            p = p_value(ref, cur, d)
            assert t["bound"] == "lower" and t["bound_pct"] < t["estimate_pct"], t
        else:
            p = p_value(cur, ref, 1 / (1 + d) - 1)  # cur below ref x (1 + d): ref above cur / (1 + d)
            assert t["bound"] == "upper", t
        assert abs(t["reached_pct"] - 100 * (1 - p)) < 0.01, (t, p)
        assert (t["verdict"] == "shown") == (p <= 0.05 + 1e-12), t
        assert t["reference_runs"] == len(ref) and t["current_runs"] == len(cur) and t["hosts"] is None
print("6 tests, U's p and the median ratio equal the brute-force ones")
