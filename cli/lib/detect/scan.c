/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one place that runs the gatherers, in order. The model
 * (detect/topology.c) knows no gatherer; each gatherer fills its part of it.
 */
#include "detect/scan.h"

#include <errno.h>
#include <stdlib.h>

#include "core/ctx.h"
#include "detect/gather.h"

static int scan(struct stune_ctx *ctx, bool plan_scope, unsigned attrs, bool brief, struct stune_topology **out)
{
	_cleanup_(stune_topology_freep) struct stune_topology *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->udev_source = ctx->udev ? "libudev" : "udev-db";
	t->plan_scope = plan_scope;
	t->plan_attrs = plan_scope ? attrs : brief ? 0 : STUNE_RAW_ALL;
	t->brief = brief;
	/* Order matters: disks need hosts; IRQs need hosts' hctx maps. */
	if ((r = stune_scan_kernel(ctx, t)) < 0 || (r = stune_scan_cpus_numa(ctx, t)) < 0 ||
	    (r = stune_scan_numa_live(ctx, t)) < 0 || (r = stune_scan_hosts(ctx, t)) < 0 ||
	    (r = stune_scan_disks(ctx, t)) < 0 || (r = stune_scan_irqs(ctx, t)) < 0)
		return r;
	*out = steal_pointer(&t);
	return 0;
}

int stune_topology_scan(struct stune_ctx *ctx, struct stune_topology **out)
{
	return scan(ctx, false, STUNE_RAW_ALL, false, out);
}

int stune_topology_scan_brief(struct stune_ctx *ctx, struct stune_topology **out)
{
	return scan(ctx, false, 0, true, out);
}

int stune_topology_scan_for_plan(struct stune_ctx *ctx, struct stune_topology **out)
{
	return stune_topology_scan_for_plan_attrs(ctx, STUNE_RAW_ALL, out);
}

int stune_topology_scan_for_plan_attrs(struct stune_ctx *ctx, unsigned attrs, struct stune_topology **out)
{
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	int r = scan(ctx, true, attrs, false, &t);
	if (r < 0 || (r = stune_scan_irqbalance(ctx, t)) < 0)
		return r;
	*out = steal_pointer(&t);
	return 0;
}
