/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the host: every gatherer of detect/, run in order, into one
 * struct stune_topology (detect/topology.h).
 */
#pragma once

#include "detect/topology.h"

struct stune_ctx;

/* Upper bound of the per-disk scan's worker threads (SCSITUNE_THREADS). */
#define STUNE_MAX_SCAN_THREADS 64

int stune_topology_scan(struct stune_ctx *ctx, struct stune_topology **out);
/* What apply, verify and report plan against: the scan plus irqbalance's
 * state (etc/default/irqbalance, proc/N/comm), which detect does not read;
 * only what they use is read, and the disks' raw tunables are kept
 * (topology.plan_scope). */
int stune_topology_scan_for_plan(struct stune_ctx *ctx, struct stune_topology **out);
