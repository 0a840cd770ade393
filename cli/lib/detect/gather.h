/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The gatherers, one per area, private to detect/: only detect/scan.c calls
 * them. Each fills its part of t and returns 0 or -errno.
 */
#pragma once

#include "detect/topology.h"

struct stune_ctx;

int stune_scan_kernel(struct stune_ctx *ctx, struct stune_topology *t);	    /* kernel.c */
int stune_scan_cpus_numa(struct stune_ctx *ctx, struct stune_topology *t);  /* numa.c */
int stune_scan_hosts(struct stune_ctx *ctx, struct stune_topology *t);	    /* host.c */
int stune_scan_irqs(struct stune_ctx *ctx, struct stune_topology *t);	    /* irq.c */
int stune_scan_disks(struct stune_ctx *ctx, struct stune_topology *t);	    /* disk.c */
int stune_scan_irqbalance(struct stune_ctx *ctx, struct stune_topology *t); /* irqbalance.c */
/* Live only (numa-live.c): libnuma facts; a no-op under --sysroot. */
int stune_scan_numa_live(struct stune_ctx *ctx, struct stune_topology *t);

/* Free what one disk owns and zero it (topology.c; disk.c's workers). */
void stune_disk_clear(struct stune_disk *d);
