#!/usr/bin/env python3
# snap-tree.py ROOT [--irqs]: one SHA-256 of what apply changes and revert puts
# back on a bench tree: every disk's queue attributes and, with --irqs, every
# IRQ's smp_affinity_list and etc/default/irqbalance. Python, not find: a find
# over the 1.5M-inode tree takes 10 s, these reads well under one.
import hashlib
import os
import sys

root = sys.argv[1]
h = hashlib.sha256()
for d in sorted(os.listdir(f"{root}/sys/block")):
    for a in ("scheduler", "nr_requests", "rq_affinity", "nomerges", "add_random", "read_ahead_kb"):
        with open(f"{root}/sys/block/{d}/queue/{a}", "rb") as f:
            h.update(f"{d}/{a}=".encode() + f.read())
if "--irqs" in sys.argv[2:]:
    for i in sorted(os.listdir(f"{root}/proc/irq")):
        p = f"{root}/proc/irq/{i}/smp_affinity_list"
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f"{i}=".encode() + f.read())
    with open(f"{root}/etc/default/irqbalance", "rb") as f:
        h.update(f.read())
print(h.hexdigest())
