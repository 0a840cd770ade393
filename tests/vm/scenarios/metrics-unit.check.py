#!/usr/bin/env python3
"""Scenario "metrics-unit", host side: scsitune-metrics.service and .timer
under the Debian 12 image's real systemd 252 (metrics-unit.stage.sh).

    metrics-unit.check.py RESULTS_DIR SCSITUNE

Asserts: apply of vm-persist exits 0 (verify then has a journal to read);
without /var/lib/prometheus/node-exporter the service is skipped, not failed
(ConditionResult=no, Result=success); in the service's sandbox (the probe
unit: the same file, ExecStart probe.sh) detect, verify, payload verify and
profile active exit as outside it, say nothing on stderr the plain run does
not, and print the same (verify's JSON and payload verify's and profile
active's text byte for byte, detect's JSON but for the I/O and interrupt
counters, which move between the runs); there /var/lib/scsitune and /etc are
read-only (EROFS, while the plain run writes both), /tmp writable (its own),
and the only capability is CAP_DAC_READ_SEARCH; the probe unit ends in
success; when this scsitune has the metrics command, the service ends in
success with exit 0 and leaves scsitune.prom, mode 0644, and no other file
(no temporary file left; `promtool check metrics` on it when promtool is
here); the timer is installed disabled and inactive, and enable --now makes
it enabled and active, triggering scsitune-metrics.service every 5 minutes
with 30 s of randomized delay; systemd-analyze security rates the service at
most 2.0.
"""
import json
import re
import shutil
import subprocess

from vmcheck import check, finish, rc, read


def props(name):
    return dict(line.split("=", 1) for line in read(name).splitlines() if "=" in line)


def rcs(d):
    return dict(line.split(" ", 1) for line in read(d + "/rc.txt").splitlines() if " " in line)


# What moves between two reads of a live host: the I/O and interrupt counters,
# and host_busy, the commands in flight at that instant (run 9 of 2026-12-05
# read 0 in the sandbox and 1 outside it, a second apart).
def strip_counters(x):
    if isinstance(x, dict):
        return {k: strip_counters(v) for k, v in x.items()
                if k not in ("count", "host_busy") and not k.endswith("_cnt")}
    if isinstance(x, list):
        return [strip_counters(v) for v in x]
    return x


check(rc("apply") == "0", f"apply --profile vm-persist exits 0 (got {rc('apply')!r}): {read('apply.txt')[:200]}")
nodir = props("nodir.txt")
check(nodir.get("ConditionResult") == "no" and nodir.get("Result") == "success",
      f"no textfile directory: the service is skipped, not failed ({nodir})")

box, plain = rcs("sandboxed"), rcs("plain")
check(bool(box) and bool(plain), f"the probe ran in the sandbox ({box}) and outside it ({plain})")
for k in ("detect", "verify", "payload", "profile"):
    check(k in box and box.get(k) == plain.get(k),
          f"{k}: exit {box.get(k)} in the sandbox, {plain.get(k)} outside")
    check(read(f"sandboxed/{k}.err") == read(f"plain/{k}.err"),
          f"{k}: the same stderr in the sandbox ({read(f'sandboxed/{k}.err')[:200]!r})")
check(box.get("detect") == "0" and box.get("verify") == "0", "detect and verify exit 0 in the sandbox")
check(read("sandboxed/verify.json") == read("plain/verify.json") and read("plain/verify.json"),
      "verify -o json: the same document in the sandbox (the journal read, the lock taken shared)")
for f in ("payload.txt", "profile.txt"):
    check(read("sandboxed/" + f) == read("plain/" + f), f"{f}: the same in the sandbox")
try:
    a = strip_counters(json.loads(read("sandboxed/detect.json")))
    b = strip_counters(json.loads(read("plain/detect.json")))
    check(a == b and a.get("hbas"), "detect -o json: the same host in the sandbox (counters and host_busy aside)")
except ValueError as e:
    check(False, f"detect -o json: not JSON ({e})")
for k in ("write-state", "write-etc"):
    check(box.get(k) != "0" and "Read-only file system" in read(f"sandboxed/{k}.err"),
          f"{k}: read-only in the sandbox ({read(f'sandboxed/{k}.err').strip()!r})")
    check(plain.get(k) == "0", f"{k}: writable outside it (the probe can tell)")
check(box.get("write-tmp") == "0", "/tmp is writable in the sandbox (PrivateTmp: its own)")
check(box.get("capeff") == "0000000000000004", f"the only capability is CAP_DAC_READ_SEARCH (CapEff {box.get('capeff')})")
probe = props("probe-unit.txt")
check(probe.get("Result") == "success", f"the probe unit ends in success ({probe})")

if read("has-metrics").strip() == "yes":
    run = props("run.txt")
    check(run.get("Result") == "success" and run.get("ExecMainStatus") == "0",
          f"scsitune-metrics.service ends in success, exit 0 ({run}): {read('journal.txt')[-400:]}")
    ls = [l.split() for l in read("dir.ls").splitlines()[1:]]
    files = [l[-1] for l in ls if l and l[0].startswith("-")]
    check(files == ["scsitune.prom"], f"the textfile directory holds scsitune.prom alone ({files})")
    check(any(l[0] == "-rw-r--r--" and l[-1] == "scsitune.prom" for l in ls if l),
          "scsitune.prom is 0644 (node_exporter reads it as user prometheus)")
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "metrics"], input=read("scsitune.prom"),
                           capture_output=True, text=True)
        check(p.returncode == 0, f"promtool check metrics on scsitune.prom: {p.stdout}{p.stderr}")
else:
    print("note: this scsitune has no metrics command: the service's own run is not checked")

timer = read("timer.txt")
check("installed disabled inactive" in timer, f"the timer is installed disabled and inactive: {timer[:200]!r}")
check("enabled enabled active" in timer, "systemctl enable --now: enabled and active")
check("Triggers=scsitune-metrics.service" in timer, "the timer triggers scsitune-metrics.service")
check(re.search(r"OnUnitActiveUSec=5min", timer) and re.search(r"OnBootUSec=2min", timer),
      "every 5 minutes, 2 minutes after boot")
check("RandomizedDelayUSec=30s" in timer, "30 s of randomized delay")
m = re.search(r"Overall exposure level for scsitune-metrics\.service: ([0-9.]+)", read("security.txt"))
check(m and float(m.group(1)) <= 2.0, f"systemd-analyze security: exposure {m.group(1) if m else '?'} (at most 2.0)")
finish("metrics-unit")
