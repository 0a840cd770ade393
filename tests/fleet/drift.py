#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Drift one setting on a captured tree: the first queue/read_ahead_kb that
apply wrote (its journal says which file) gets another value, as if someone
or something changed it after apply. Usage: drift.py JOURNAL ROOT"""
import json
import os
import sys

journal, root = sys.argv[1], sys.argv[2]
for e in json.load(open(journal))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied":
        with open(os.path.join(root, e["path"].lstrip("/")), "w") as f:
            f.write("4096\n")
        print("drifted", e["path"])
        break
else:
    sys.exit("no applied queue/read_ahead_kb in " + journal)
