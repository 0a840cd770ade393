/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "detect/topology.h"
#include "detect/gather.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"

void stune_disk_clear(struct stune_disk *d)
{
	free(d->name);
	free(d->hctl);
	free(d->devnum);
	free(d->key);
	free(d->wwn);
	free(d->id_path);
	free(d->serial);
	free(d->vendor);
	free(d->model);
	free(d->rev);
	free(d->scheduler);
	stune_strv_free(d->schedulers);
	free(d->state);
	for (size_t i = 0; i < _STUNE_RAW_MAX; i++)
		free(d->raw[i]);
	*d = (struct stune_disk){0};
}

const char *stune_disk_raw_value(const struct stune_disk *d, const char *setting)
{
	static const char *const names[_STUNE_RAW_MAX] = {
	    [STUNE_RAW_SCHEDULER] = "queue/scheduler",
	    [STUNE_RAW_NR_REQUESTS] = "queue/nr_requests",
	    [STUNE_RAW_RQ_AFFINITY] = "queue/rq_affinity",
	    [STUNE_RAW_NOMERGES] = "queue/nomerges",
	    [STUNE_RAW_READ_AHEAD_KB] = "queue/read_ahead_kb",
	    [STUNE_RAW_ADD_RANDOM] = "queue/add_random",
	    [STUNE_RAW_IO_POLL] = "queue/io_poll",
	    [STUNE_RAW_QUEUE_DEPTH] = "device/queue_depth",
	};
	for (size_t i = 0; i < _STUNE_RAW_MAX; i++)
		if (!strcmp(setting, names[i]))
			return d->raw[i];
	return NULL;
}

void stune_topology_free(struct stune_topology *t)
{
	if (!t)
		return;
	struct stune_kernel *k = &t->kernel;
	free(k->release);
	free(k->version);
	free(k->hostname);
	free(k->taint_flags);
	free(k->lockdown);
	stune_module_trust_free(k->trust);
	for (size_t i = 0; i < k->n_modules; i++) {
		struct stune_module *m = &k->modules[i];
		free(m->name);
		free(m->version);
		free(m->srcversion);
		free(m->taint);
		free(m->updates_path);
	}
	free(k->modules);
	free(t->irqbalance.args);

	stune_cpuset_clear(&t->cpus.possible);
	stune_cpuset_clear(&t->cpus.present);
	stune_cpuset_clear(&t->cpus.online);
	stune_cpuset_clear(&t->cpus.offline);
	stune_cpuset_clear(&t->numa.possible);
	stune_cpuset_clear(&t->numa.online);
	for (size_t i = 0; i < t->numa.n_nodes; i++) {
		stune_cpuset_clear(&t->numa.nodes[i].cpus);
		free(t->numa.nodes[i].distances);
	}
	free(t->numa.nodes);

	for (size_t i = 0; i < t->n_hbas; i++) {
		struct stune_hba *h = &t->hbas[i];
		free(h->sysfs_path);
		free(h->pci_address);
		free(h->vendor_name);
		free(h->model);
		free(h->driver);
		free(h->pci_driver);
		free(h->driver_version);
		free(h->firmware);
		stune_cpuset_clear(&h->local_cpus);
		free(h->hosts);
		free(h->irqs);
	}
	free(t->hbas);

	for (size_t i = 0; i < t->n_hosts; i++) {
		struct stune_host *h = &t->hosts[i];
		free(h->sysfs_path);
		free(h->proc_name);
		free(h->state);
		for (size_t k2 = 0; k2 < h->n_hctx; k2++)
			stune_cpuset_clear(&h->hctx[k2].cpus);
		free(h->hctx);
		free(h->disks);
	}
	free(t->hosts);

	for (size_t i = 0; i < t->n_irqs; i++) {
		struct stune_irq *q = &t->irqs[i];
		free(q->name);
		free(q->chip);
		free(q->msi_type);
		stune_cpuset_clear(&q->affinity);
		stune_cpuset_clear(&q->effective);
	}
	free(t->irqs);

	for (size_t i = 0; i < t->n_disks; i++)
		stune_disk_clear(&t->disks[i]);
	free(t->disks);
	free(t);
}

int stune_cpuset_nodes(const struct stune_topology *t, const struct stune_cpuset *cpus, struct stune_cpuset *nodes)
{
	nodes->valid = true;
	if (!cpus->valid)
		return 0;
	for (size_t i = 0; i < t->numa.n_nodes; i++) {
		const struct stune_node *n = &t->numa.nodes[i];
		if (n->id < 0 || !n->cpus.valid || stune_cpuset_has(nodes, (unsigned)n->id))
			continue;
		stune_cpuset_foreach (cpu, cpus)
			if (stune_cpuset_has(&n->cpus, (unsigned)cpu)) {
				int r = stune_cpuset_set(nodes, (unsigned)n->id);
				if (r < 0)
					return r;
				break;
			}
	}
	return 0;
}

enum stune_placement stune_irq_placement(const struct stune_topology *t, const struct stune_hba *h,
					 const struct stune_cpuset *cpus)
{
	if (!h->numa_node.set || h->numa_node.v < 0 || !cpus->valid)
		return STUNE_PLACE_UNKNOWN;
	struct stune_cpuset nodes = {0};
	if (stune_cpuset_nodes(t, cpus, &nodes) < 0) {
		stune_cpuset_clear(&nodes);
		return STUNE_PLACE_UNKNOWN;
	}
	size_t n = stune_cpuset_count(&nodes);
	bool on = stune_cpuset_has(&nodes, (unsigned)h->numa_node.v);
	stune_cpuset_clear(&nodes);
	if (n == 0)
		return STUNE_PLACE_UNKNOWN;
	return !on ? STUNE_PLACE_REMOTE : n == 1 ? STUNE_PLACE_LOCAL : STUNE_PLACE_SPANS;
}

enum stune_placement stune_irq_served(const struct stune_topology *t, const struct stune_hba *h,
				      const struct stune_irq *q)
{
	enum stune_placement served = stune_irq_placement(t, h, &q->effective);
	return served != STUNE_PLACE_UNKNOWN ? served : stune_irq_placement(t, h, &q->affinity);
}

const char *stune_placement_name(enum stune_placement p)
{
	switch (p) {
	case STUNE_PLACE_LOCAL:
		return "local";
	case STUNE_PLACE_REMOTE:
		return "remote";
	case STUNE_PLACE_SPANS:
		return "spans-nodes";
	case STUNE_PLACE_UNKNOWN:
		break;
	}
	return "unknown";
}
