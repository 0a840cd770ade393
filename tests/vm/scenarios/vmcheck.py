"""What the scenarios' host-side checks share: RESULTS_DIR (sys.argv[1]),
check() that prints ok/FAIL and keeps the failures, read() of a result file
("" when the guest did not write it), finish() with the summary and exit code;
for the rootfs stages' run helper (rootfs/lib.sh): doc() of NAME.json (None
when not JSON) and rc() of NAME.rc.
"""
import json
import os
import sys

results = sys.argv[1]
failures = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        failures.append(msg)
    return cond


def read(name):
    try:
        with open(os.path.join(results, name)) as f:
            return f.read()
    except OSError:
        return ""


def doc(name):
    try:
        return json.loads(read(name + ".json"))
    except ValueError:
        return None


def rc(name):
    return read(name + ".rc").strip()


def finish(name):
    if failures:
        print(f"{name}: {len(failures)} check(s) failed")
        sys.exit(1)
    print(f"{name}: all checks passed")
    sys.exit(0)
