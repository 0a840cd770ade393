/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the host: every gatherer of detect/, run in order, into one
 * struct stune_topology (detect/topology.h).
 */
#pragma once

#include "detect/topology.h"

struct stune_ctx;

#include "core/parallel.h" /* STUNE_MAX_SCAN_THREADS */
#include "core/root.h"	   /* struct stune_rdir */

int stune_topology_scan(struct stune_ctx *ctx, struct stune_topology **out);
/* The same for detect's default text: of each disk only what its row shows
 * (topology.brief); everything else as stune_topology_scan. */
int stune_topology_scan_brief(struct stune_ctx *ctx, struct stune_topology **out);
/* What apply, verify and report plan against: the scan plus irqbalance's
 * state (etc/default/irqbalance, proc/N/comm), which detect does not read;
 * only what they use is read, and the disks' raw tunables are kept
 * (topology.plan_scope). */
int stune_topology_scan_for_plan(struct stune_ctx *ctx, struct stune_topology **out);
/* The same, reading of the disks' tunables only those in attrs (1 << enum stune_disk_raw; the plan
 * says which: stune_plan_disk_attrs), and always rotational and the scheduler. */
int stune_topology_scan_for_plan_attrs(struct stune_ctx *ctx, unsigned attrs, struct stune_topology **out);

/*
 * The key the scan gives the block device sys/block/NAME now (wwn-..., path-...,
 * hctl-...: its WWN, else its ID_PATH, else H:C:T:L), read for that one disk:
 * its device link, dev and udev properties. -ENOENT: no such disk, or not SCSI.
 * sys_block: sys/block opened once by the caller (stune_root_dir_open_canonical)
 * for many names: the link is then one readlinkat and one open; NULL: resolved
 * from the root.
 */
int stune_disk_key_by_name(struct stune_ctx *ctx, const struct stune_rdir *sys_block, const char *name, char **key);
