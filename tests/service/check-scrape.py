#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-scrape.py VM_URL JOB PROM_FILE VERIFY_JSON|-: exit 0 when VictoriaMetrics
(scraping node_exporter's textfile collector, job JOB) answers /api/v1/query with
what PROM_FILE (scsitune metrics --textfile's file) says for this scrape (its
scsitune_last_check_timestamp_seconds, so an older scrape never counts), the
textfile collector read it without error, and the profile and settings families
equal verify -o json's state and summary (VERIFY_JSON "-": nothing applied:
none-applied, every count 0). Exit 1 with the reason on stdout otherwise (the
caller asks again up to a deadline)."""
import json
import re
import sys
import urllib.parse
import urllib.request

url, job, prom_file, verify_file = sys.argv[1:5]


def query(q):
    body = urllib.parse.urlencode({"query": q}).encode()
    with urllib.request.urlopen(url + "/api/v1/query", body, timeout=5) as r:
        d = json.load(r)
    assert d["status"] == "success", d
    return [(s["metric"], float(s["value"][1])) for s in d["data"]["result"]]


def main():
    text = open(prom_file).read()
    want_t = float(re.search(r'^scsitune_last_check_timestamp_seconds\{check="profile"\} (\S+)$', text, re.M).group(1))
    got_t = query('scsitune_last_check_timestamp_seconds{job="%s",check="profile"}' % job)
    if len(got_t) != 1 or abs(got_t[0][1] - want_t) > 1e-3:
        return "this file's scrape not shown yet: %s, want %s" % (got_t, want_t)
    err = query('node_textfile_scrape_error{job="%s"}' % job)
    if [v for _, v in err] != [0.0]:
        return "node_textfile_scrape_error: %s" % err
    if verify_file == "-":
        want_state, want = "none-applied", {s: 0 for s in
                                            ("in-effect", "drifted", "profile-changed", "not-applicable",
                                             "not-settable")}
    else:
        v = json.load(open(verify_file))
        s = v["summary"]
        want_state = v["state"]
        want = {"in-effect": s["in_effect"], "drifted": s["drifted"], "profile-changed": s["profile_changed"],
                "not-applicable": s["not_applicable"], "not-settable": s["not_settable"]}
    got = {m["state"]: int(v) for m, v in query('scsitune_verify_settings{job="%s"}' % job)}
    if got != want:
        return "scsitune_verify_settings %s, verify says %s" % (got, want)
    # the series scraped in the last 2 s (the scrape interval is 1 s): a state the host left is gone
    info = query('last_over_time(scsitune_profile_info{job="%s"}[2s])' % job)
    states = sorted(m["state"] for m, _ in info)
    if states != [want_state]:
        return "scsitune_profile_info states %s, verify says %s" % (states, want_state)
    # every sample of the file is in the service with its value
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        name_labels, value = line.rsplit(" ", 1)
        name, _, labels = name_labels.partition("{")
        sel = '%s{job="%s"%s}' % (name, job, ("," + labels[:-1]) if labels else "")
        got = query(sel)
        if len(got) != 1 or not (got[0][1] == float(value) or (value == "NaN" and got[0][1] != got[0][1])):
            return "%s: %s in the service, %s in the file" % (sel, got, value)
    return None


why = main()
if why:
    print(why)
    sys.exit(1)
print("the service shows the file's %s" % prom_file)
