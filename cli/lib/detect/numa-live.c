/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnuma, live system only. libnuma reads the real /sys and asks the real
 * kernel (get_mempolicy), so it answers for the running host and never for a
 * --sysroot tree. Its constructor already reads /sys/devices/system/node and
 * /proc/self/status when the library is loaded, so it is not linked: it is
 * loaded here, when the root is live (and by report/numabind.c for the fio
 * child of `report --run`).
 */
#include <dlfcn.h>
#include <errno.h>
#include <numa.h>
#include <stdlib.h>

#include "core/ctx.h"
#include "detect/gather.h"

int stune_scan_numa_live(struct stune_ctx *ctx, struct stune_topology *t)
{
	if (!stune_root_is_live(ctx->root))
		return 0;
	void *h = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		stune_log(ctx, STUNE_LOG_INFO, NULL, "libnuma.so.1 not loadable: %s", dlerror());
		return 0;
	}
	__typeof__(numa_available) *available = (__typeof__(numa_available) *)dlsym(h, "numa_available");
	/* Whether memory policy (numa_run_on_node, membind) works for `report --run`. */
	if (available)
		t->numa.policy_available = available() < 0 ? STUNE_NO : STUNE_YES;
	dlclose(h);
	return 0;
}
