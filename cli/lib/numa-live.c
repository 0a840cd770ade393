/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnuma, live system only. libnuma reads the real /sys and asks the real
 * kernel (get_mempolicy), so it answers for the running host and never for a
 * --sysroot tree: this file is the only place that calls it, and only when
 * the root is live.
 */
#include <numa.h>

#include "ctx.h"
#include "topology.h"

int stune_scan_numa_live(struct stune_ctx *ctx, struct stune_topology *t)
{
	if (!stune_root_is_live(ctx->root))
		return 0;
	/* Whether memory policy (numa_run_on_node, membind) works for `report --run`. */
	t->numa.policy_available = numa_available() < 0 ? STUNE_NO : STUNE_YES;
	return 0;
}
