#!/usr/bin/env python3
"""Scenario "detect", host side: compare what scsitune detect said inside
the guest with what the guest kernel said (truth.txt), and replay the
guest's own capture with --sysroot on this side.

    detect.check.py RESULTS_DIR SCSITUNE

Prints one line per check (ok / FAIL / note) and exits 1 if any failed.
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile

results, scsitune = sys.argv[1], sys.argv[2]
failures = []


def ok(msg):
    print(f"ok    {msg}")


def fail(msg):
    failures.append(msg)
    print(f"FAIL  {msg}")


def note(msg):
    print(f"note  {msg}")


def check(cond, msg):
    (ok if cond else fail)(msg)
    return cond


def cpulist(text):
    """Kernel cpu lists: '0-3,8', '0, 2' (mq cpu_list), '' -> sorted ints."""
    cpus = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def read(name):
    with open(os.path.join(results, name)) as f:
        return f.read()


# --- truth.txt ----------------------------------------------------------------
hosts = {}        # hostN -> (proc_name, device path)
hostpci = {}      # hostN -> BDF
pci = {}          # BDF -> (numa_node, local cpus)
msi = {}          # BDF -> {irq: type}
mq = {}           # disk -> (hctl, {q: cpus})
flags = {}        # disk -> flags text
probe = {}        # irq -> (BDF, result, before)
for line in read("truth.txt").splitlines():
    w = line.split(" ")
    if w[0] == "host":
        hosts[w[1]] = (w[2], w[3])
    elif w[0] == "hostpci":
        hostpci[w[1]] = w[2]
    elif w[0] == "pci":
        kv = dict(x.split("=", 1) for x in w[2:])
        pci[w[1]] = (int(kv["numa_node"]), cpulist(kv["local_cpulist"]))
    elif w[0] == "msi":
        msi.setdefault(w[1], {})[int(w[2])] = w[3]
    elif w[0] == "mq":
        mq.setdefault(w[1], (w[2], {}))[1][int(w[3])] = cpulist(" ".join(w[4:]))
    elif w[0] == "flags":
        flags[w[1]] = " ".join(w[3:])
    elif w[0] == "probe":
        kv = dict(x.split("=", 1) for x in w[4:] if "=" in x)
        probe[int(w[1])] = (w[2], w[3], kv.get("before"))

# --- live detect ------------------------------------------------------------
check(read("live.rc").strip() == "0", "detect -o json exited 0 in the guest")
err = read("live.err").strip()
check(err == "", f"detect -o json wrote nothing to stderr ({err!r})")
check(read("live-txt.rc").strip() == "0", "detect (text) exited 0 in the guest")
live = json.loads(read("live.json"))
check(live["schema_version"] == 2, "schema_version 2")
schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../schema/detect.schema.json")


def validate(doc, what):
    try:
        import jsonschema
    except ImportError:
        note(f"python3-jsonschema missing: {what} not validated against the schema")
        return
    with open(schema_path) as f:
        schema = json.load(f)
    errs = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
    for e in errs[:5]:
        print(f"      {what}: {list(e.path)}: {e.message}")
    check(not errs, f"{what} validates against schema/detect.schema.json")


validate(live, "live detect JSON")
check(live["source"] == {"sysroot": False, "udev": "libudev"}, f"source is live: {live['source']}")
check(live["numa"]["policy_available"] is True,
      f"libnuma was loaded in the guest: policy_available={live['numa']['policy_available']}")
check(live["numa"]["node_count"] == 2 and [n["cpus"] for n in live["numa"]["nodes"]] == [[0, 1], [2, 3]],
      "two NUMA nodes, cpus 0-1 and 2-3")

# every SCSI host, on the right adapter
seen = {}
for hba in live["hbas"]:
    for sh in hba["scsi_hosts"]:
        seen[f"host{sh['host_no']}"] = (sh["proc_name"], hba)
check(sorted(seen) == sorted(hosts),
      f"detect lists every SCSI host: detect {sorted(seen)}, kernel {sorted(hosts)}")
check(sorted(p for p, _ in hosts.values()) == ["megaraid_sas", "scsi_debug", "virtio_scsi"],
      f"the guest has virtio_scsi, megaraid_sas and scsi_debug hosts: {sorted(p for p, _ in hosts.values())}")
for h, (proc, path) in sorted(hosts.items()):
    if h not in seen:
        continue
    dproc, hba = seen[h]
    check(dproc == proc, f"{h}: proc_name {dproc} (kernel {proc})")
    check(hba["pci_address"] == hostpci.get(h),
          f"{h}: pci_address {hba['pci_address']} (kernel: first pci ancestor {hostpci.get(h)})")
    if h not in hostpci:
        check(path.startswith(hba["sysfs_path"] + "/"), f"{h}: sysfs_path {hba['sysfs_path']} is above {path}")
check(live["summary"]["scsi_host_count"] == len(hosts), f"summary.scsi_host_count {live['summary']['scsi_host_count']}")
check(live["summary"]["disk_count"] == len(mq), f"summary.disk_count {live['summary']['disk_count']} (kernel {len(mq)})")

# locality
by_proc = {proc: hba for proc, hba in seen.values()}
for bdf, (node, cpus) in sorted(pci.items()):
    hba = next((x for x in live["hbas"] if x["pci_address"] == bdf), None)
    if not check(hba is not None, f"{bdf}: an HBA in detect"):
        continue
    check(hba["numa_node"] == node and hba["local_cpus"] == cpus,
          f"{bdf}: numa_node {hba['numa_node']} local_cpus {hba['local_cpus']} (kernel {node}, {cpus})")
    check(hba["numa_local_known"] == (node >= 0), f"{bdf}: numa_local_known {hba['numa_local_known']}")
v = by_proc.get("virtio_scsi")
if v:
    check(v["numa_node"] == 1 and v["numa_local_known"] is True and v["local_cpus"] == [2, 3],
          "virtio-scsi behind the node-1 expander: numa_node 1, local cpus [2, 3]")
m = by_proc.get("megaraid_sas")
if m:
    check(m["numa_node"] == -1 and m["numa_local_known"] is False,
          "megasas on the root bus: numa_node -1, numa_local_known false")
s = by_proc.get("scsi_debug")
if s:
    check(s["pci_address"] is None and s["numa_local_known"] is False,
          f"scsi_debug: no PCI function, no locality (numa_node {s['numa_node']})")

# IRQs: the set per HBA, and managed <=> the write-back failed with EIO
for bdf, irqs in sorted(msi.items()):
    hba = next((x for x in live["hbas"] if x["pci_address"] == bdf), None)
    if hba is None:
        continue
    got = sorted(i["irq"] for i in hba["irqs"])
    check(got == sorted(irqs), f"{bdf}: IRQs {got} (kernel msi_irqs {sorted(irqs)})")
    for i in hba["irqs"]:
        n = i["irq"]
        if n not in probe:
            fail(f"IRQ {n} ({i['name']}): not probed")
            continue
        _, res, before = probe[n]
        check(i["msi_type"] == irqs.get(n), f"IRQ {n} ({i['name']}): msi_type {i['msi_type']} (kernel {irqs.get(n)})")
        check(i["affinity"] == cpulist(before), f"IRQ {n} ({i['name']}): affinity {i['affinity']} (kernel {before})")
        rule = i["managed_rule"]
        if i["managed"] is None:
            note(f"IRQ {n} ({i['name']}): managed null ({rule}); write-back gave {res}")
        elif i["managed"]:
            check(res == "errno:5", f"IRQ {n} ({i['name']}): managed, write-back gave {res} (want EIO) [{rule}]")
        else:
            check(res == "ok", f"IRQ {n} ({i['name']}): not managed, write-back gave {res} (want ok) [{rule}]")

# hctx -> CPU map equals every disk's mq/*/cpu_list; the IRQ it names serves those CPUs
disks = {}
for hba in live["hbas"]:
    for sh in hba["scsi_hosts"]:
        for d in sh["disks"]:
            disks[d["name"]] = (sh, hba, d)
for disk, (hctl, queues) in sorted(mq.items()):
    if not check(disk in disks, f"{disk} ({hctl}): in detect"):
        continue
    sh, hba, d = disks[disk]
    check(d["hctl"] == hctl, f"{disk}: hctl {d['hctl']} (kernel {hctl})")
    dmap = {h["hctx"]: h["cpus"] for h in sh["hctx_map"]}
    check(dmap == queues, f"{disk}: hctx_map {dmap} equals mq/*/cpu_list {queues}")
    check(d["queue"]["nr_hw_queues"] == len(queues), f"{disk}: queue.nr_hw_queues {d['queue']['nr_hw_queues']}")
    if disk in flags:
        shared = "TAG_HCTX_SHARED" in flags[disk]
        check(sh["host_tagset"] == shared,
              f"host{sh['host_no']}: host_tagset {sh['host_tagset']} (debugfs {disk} hctx0 flags: {flags[disk]})")
for hba in live["hbas"]:
    irqs = {i["irq"]: i for i in hba["irqs"]}
    for sh in hba["scsi_hosts"]:
        for h in sh["hctx_map"]:
            if h["irq"] is None:
                continue
            i = irqs.get(h["irq"])
            if not check(i is not None, f"host{sh['host_no']} hctx {h['hctx']}: irq {h['irq']} is one of the HBA's"):
                continue
            check(i["hctx"] == h["hctx"], f"IRQ {h['irq']}: hctx {i['hctx']} (hctx_map says {h['hctx']})")
            before = probe.get(h["irq"], (None, None, None))[2]
            check(before is not None and cpulist(before) == h["cpus"],
                  f"host{sh['host_no']} hctx {h['hctx']}: IRQ {h['irq']} affinity {before} equals cpus {h['cpus']}")


# --- the guest's capture, replayed here ----------------------------------------
def strip(doc):
    doc = json.loads(json.dumps(doc))
    doc.pop("source")
    doc["numa"].pop("policy_available")
    # Where keyring membership came from: KEYCTL_READ live, the capture's
    # keyrings file in the replay (checked below); what it says must agree.
    doc["kernel"]["module_trust"].pop("membership")
    for hba in doc["hbas"]:
        for i in hba["irqs"]:
            i.pop("count")
    return doc


def diff(a, b, path=""):
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff(a.get(k), b.get(k), f"{path}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        out = []
        for n, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, f"{path}[{n}]")
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


check(read("capture.rc").strip() == "0", f"capture-host.sh ran in the guest: {read('capture.err').strip()}")
with tempfile.TemporaryDirectory() as tmp:
    with tarfile.open(os.path.join(results, "capture.tar.xz")) as t:
        if hasattr(tarfile, "tar_filter"):
            t.extractall(tmp, filter="tar")
        else:
            t.extractall(tmp)
    r = subprocess.run([scsitune, "--sysroot", tmp, "detect", "-o", "json"], capture_output=True, text=True)
    check(r.returncode == 0, f"scsitune --sysroot CAPTURE detect exited {r.returncode}")
    if r.stderr.strip():
        note(f"--sysroot stderr: {r.stderr.strip()}")
    replay = json.loads(r.stdout)
validate(replay, "--sysroot replay JSON")
check(replay["source"] == {"sysroot": True, "udev": "udev-db"}, f"replay source {replay['source']}")
lt, rt = live["kernel"]["module_trust"], replay["kernel"]["module_trust"]
check(lt["membership"] == "keyctl" and rt["membership"] == "capture",
      f"keyring membership: live from keyctl ({lt['membership']!r}: {lt['membership_error']!r}), "
      f"the replay from capture-host.sh's keyctl rlist ({rt['membership']!r}: {rt['membership_error']!r})")
check(any(k["name"] == ".builtin_trusted_keys" and k["present"] and k["trusted_for_modules"] is True for k in lt["keyrings"]),
      "live: Debian's kernel has .builtin_trusted_keys, trusted for modules")
d1 = diff(strip(live), strip(replay))
for line in d1:
    print(f"      live vs replay {line}")
check(not d1, "the guest's capture replayed with --sysroot equals live detect "
      "(ignoring source, numa.policy_available, IRQ counts)")
d2 = diff(strip(live), strip(json.loads(read("live2.json"))))
for line in d2:
    print(f"      live vs live2 {line}")
check(not d2, "live detect is stable across the capture")
d3 = diff(strip(live), strip(json.loads(read("after-probe.json"))))
for line in d3:
    print(f"      live vs after-probe {line}")
check(not d3, "the write-back probes changed nothing detect reports")

if failures:
    print(f"detect.check.py: {len(failures)} check(s) failed")
    sys.exit(1)
print("detect.check.py: all checks passed")
