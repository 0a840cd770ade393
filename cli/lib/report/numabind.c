/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnuma for `report --run`, live system only: loaded with dlopen() (its
 * constructor reads /sys when the library is loaded, so it is not linked;
 * detect/numa-live.c does the same for detect's facts).
 */
#include <dlfcn.h>
#include <errno.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "core/cpuset.h"
#include "core/macro.h"
#include "report/fiorun.h"

/* `report --run`: the fio child's binding. Loaded in the parent, called in the child. */
struct stune_numa_binder {
	void *h;
	__typeof__(numa_run_on_node) *run_on_node;
	__typeof__(numa_set_preferred) *set_preferred;
	__typeof__(numa_node_to_cpus) *node_to_cpus;
	__typeof__(numa_allocate_cpumask) *allocate_cpumask;
	__typeof__(numa_bitmask_free) *bitmask_free;
	__typeof__(numa_bitmask_isbitset) *isbitset;
	__typeof__(numa_num_possible_cpus) *num_possible_cpus;
};

void stune_numa_binder_free(struct stune_numa_binder *b)
{
	if (!b)
		return;
	if (b->h)
		dlclose(b->h);
	free(b);
}

int stune_numa_binder_open(struct stune_numa_binder **out, char **err)
{
	_cleanup_(stune_numa_binder_freep) struct stune_numa_binder *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->h = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!b->h) {
		*err = strdup(dlerror());
		return -ENOENT;
	}
	__typeof__(numa_available) *available = (__typeof__(numa_available) *)dlsym(b->h, "numa_available");
#define SYM(f, n) b->f = (__typeof__(b->f))dlsym(b->h, n)
	SYM(run_on_node, "numa_run_on_node");
	SYM(set_preferred, "numa_set_preferred");
	SYM(node_to_cpus, "numa_node_to_cpus");
	SYM(allocate_cpumask, "numa_allocate_cpumask");
	SYM(bitmask_free, "numa_bitmask_free");
	SYM(isbitset, "numa_bitmask_isbitset");
	SYM(num_possible_cpus, "numa_num_possible_cpus");
#undef SYM
	if (!available || !b->run_on_node || !b->set_preferred || !b->node_to_cpus || !b->allocate_cpumask ||
	    !b->bitmask_free || !b->isbitset || !b->num_possible_cpus) {
		*err = strdup("libnuma.so.1 lacks numa_run_on_node or its helpers");
		return -ENOENT;
	}
	if (available() < 0) {
		*err = strdup("numa_available() < 0: the kernel has no NUMA policy support");
		return -ENOSYS;
	}
	*out = steal_pointer(&b);
	return 0;
}

int stune_numa_binder_node_cpus(struct stune_numa_binder *b, int node, char **cpulist)
{
	struct bitmask *m = b->allocate_cpumask();
	if (!m)
		return -ENOMEM;
	if (b->node_to_cpus(node, m) < 0) {
		int r = negative_errno();
		b->bitmask_free(m);
		return r;
	}
	struct stune_cpuset s = {0};
	int r = 0, n = b->num_possible_cpus();
	for (int c = 0; c < n && r == 0; c++)
		if (b->isbitset(m, (unsigned)c))
			r = stune_cpuset_set(&s, (unsigned)c);
	b->bitmask_free(m);
	if (r == 0)
		r = stune_cpuset_format(&s, cpulist);
	stune_cpuset_clear(&s);
	return r;
}

int stune_numa_bind_self(struct stune_numa_binder *b, int node)
{
	errno = 0;
	if (b->run_on_node(node) < 0)
		return negative_errno();
	b->set_preferred(node);
	return 0;
}
