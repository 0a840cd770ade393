/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HBA interrupts. An IRQ belongs to an HBA by PCI function: the function's
 * msi_irqs/ directory, cross-checked with the function encoded in the
 * /proc/interrupts hwirq; never by name alone. Whether the kernel manages an
 * IRQ's affinity has no sysfs flag on Debian 6.1 (no GENERIC_IRQ_DEBUGFS), so
 * it follows from how each driver allocates its vectors (the rules below,
 * from the 6.1 driver sources; see docs/architecture.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/interrupts.h"
#include "detect/gather.h"

static int add_irq(struct stune_topology *t, size_t hba, unsigned irq, struct stune_irq **out)
{
	if (stune_grow(&t->irqs, t->n_irqs, sizeof(*t->irqs)) < 0 ||
	    stune_grow(&t->hbas[hba].irqs, t->hbas[hba].n_irqs, sizeof(*t->hbas[hba].irqs)) < 0)
		return -ENOMEM;
	struct stune_irq *q = &t->irqs[t->n_irqs];
	*q = (struct stune_irq){.irq = irq, .hba = hba};
	t->hbas[hba].irqs[t->hbas[hba].n_irqs++] = t->n_irqs++;
	*out = q;
	return 0;
}

static bool driver_is(const struct stune_hba *h, const char *name)
{
	return h->driver && !strcmp(h->driver, name);
}

/* The one module parameter a driver's rule depends on, read once per HBA. */
static struct stune_num rule_param(struct stune_ctx *ctx, const struct stune_hba *h)
{
	struct stune_num v = {0};
	if (driver_is(h, "mpi3mr"))
		stune_attr_num(ctx, &v, STUNE_ATTR_OPTIONAL, "sys/module/mpi3mr/parameters/poll_queues");
	else if (driver_is(h, "megaraid_sas") || driver_is(h, "mpt3sas"))
		stune_attr_num(ctx, &v, STUNE_ATTR_OPTIONAL, "sys/module/%s/parameters/smp_affinity_enable", h->driver);
	return v;
}

/*
 * Managed-affinity rule and served hardware queue for vector v of nvec.
 * param: rule_param() of the HBA.
 */
static void classify(const struct stune_hba *h, struct stune_num param, struct stune_irq *q, unsigned nvec)
{
	if (q->msi_type && !strcmp(q->msi_type, "intx")) {
		q->managed = STUNE_NO;
		q->managed_rule = "legacy INTx line: never managed (may be shared)";
		return;
	}
	if (!q->vector.set) {
		q->managed_rule = "vector index unknown";
		return;
	}
	/* A bus controller between the function and the host (USB): its IRQs, shared. */
	if (h->pci_driver && h->driver && strcmp(h->pci_driver, h->driver) != 0 && !driver_is(h, "virtio_scsi")) {
		q->managed_rule = "IRQ of the bus controller's own driver (pci_driver), shared with its other devices";
		return;
	}
	unsigned v = (unsigned)q->vector.v;

	if (driver_is(h, "mpi3mr")) {
		/* mpi3mr_setup_isr: pre_vectors = 1 (admin), post_vectors = poll queues. */
		unsigned poll = param.set && param.v > 0 && nvec >= 3 ? (unsigned)param.v : 0;
		if (poll > nvec - 2)
			poll = nvec - 2;
		if (nvec <= 1) {
			q->managed = STUNE_NO;
			q->managed_rule = "mpi3mr single vector (kdump/setup path): allocated without PCI_IRQ_AFFINITY";
		} else if (v == 0) {
			q->managed = STUNE_NO;
			q->managed_rule = "mpi3mr admin reply queue (msix0) is a pre_vector: not managed";
		} else if (v >= nvec - poll) {
			q->managed = STUNE_NO;
			q->managed_rule = "mpi3mr poll-queue vector (post_vectors): not managed";
		} else {
			q->managed = STUNE_YES;
			q->managed_rule = "mpi3mr operational reply queue: PCI_IRQ_AFFINITY spread, kernel-managed";
			q->hctx = STUNE_NUM(v - 1); /* blk_mq_pci_map_queues offset 1 */
		}
		return;
	}
	if (driver_is(h, "virtio_scsi")) {
		/* vp_find_vqs_msix: vector 0 config; control, event are pre_vectors; requests spread. */
		if (nvec >= 4 && v >= 3) {
			q->managed = STUNE_YES;
			q->managed_rule = "virtio-scsi request queue: PCI_IRQ_AFFINITY spread, kernel-managed";
			q->hctx = STUNE_NUM(v - 3);
		} else {
			q->managed = STUNE_NO;
			q->managed_rule = nvec >= 4 ? "virtio config/control/event vector: not managed"
						    : "virtio shared vectors (too few MSI-X): not managed";
		}
		return;
	}
	if (driver_is(h, "megaraid_sas") || driver_is(h, "mpt3sas")) {
		const struct stune_num aff = param;
		if (nvec <= 1) {
			q->managed = STUNE_NO;
			q->managed_rule = "single vector: a pre_vector or allocated without PCI_IRQ_AFFINITY";
		} else if (aff.set && aff.v == 0) {
			q->managed = STUNE_NO;
			q->managed_rule = "smp_affinity_enable=0: allocated without PCI_IRQ_AFFINITY";
		} else {
			q->managed_rule = "depends on the adapter's pre_vectors (performance mode): not derivable";
		}
		return;
	}
	if (driver_is(h, "ahci")) {
		q->managed = STUNE_NO;
		q->managed_rule = "ahci allocates MSI vectors without PCI_IRQ_AFFINITY";
		return;
	}
	q->managed_rule = "no structural rule for this driver";
}

static int scan_hba_irqs(struct stune_ctx *ctx, struct stune_topology *t, size_t hi, const struct stune_interrupts *it)
{
	struct stune_hba *h = &t->hbas[hi];
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *dir = NULL;
	struct dirent *de;
	int r;

	if (asprintf(&dir, "%s/msi_irqs", h->sysfs_path) < 0)
		return -ENOMEM;
	r = stune_root_opendir(ctx->root, dir, &d);
	if (r == 0) {
		while ((de = readdir(d))) {
			unsigned irq;
			char tail;
			if (sscanf(de->d_name, "%u%c", &irq, &tail) != 1)
				continue;
			struct stune_irq *q;
			if ((r = add_irq(t, hi, irq, &q)) < 0)
				return r;
			stune_attr_str(ctx, &q->msi_type, 0, "%s/%u", dir, irq);
		}
	} else if (r != -ENOENT) {
		stune_warn_path(ctx, dir, "cannot list: %s", strerror(-r));
	} else if (it) {
		/* No msi_irqs/ (old capture): the function encoded in hwirq still says. */
		for (size_t i = 0; i < it->n_lines; i++) {
			char bdf[16];
			unsigned idx;
			if (stune_irq_line_pci(&it->lines[i], bdf, &idx) == 0 && !strcmp(bdf, h->pci_address)) {
				struct stune_irq *q;
				if ((r = add_irq(t, hi, it->lines[i].irq, &q)) < 0)
					return r;
			}
		}
	}
	h = &t->hbas[hi];
	if (h->n_irqs == 0) {
		/* Legacy INTx: the function's irq attribute, if it has one. */
		struct stune_num line = {0};
		if (stune_attr_num(ctx, &line, STUNE_ATTR_OPTIONAL, "%s/irq", h->sysfs_path) == 0 && line.v > 0) {
			struct stune_irq *q;
			if ((r = add_irq(t, hi, (unsigned)line.v, &q)) < 0)
				return r;
			if (!(q->msi_type = strdup("intx")))
				return -ENOMEM;
		}
	}
	return 0;
}

static int irq_cmp(const void *a, const void *b)
{
	const struct stune_irq *x = a, *y = b;
	if (x->hba != y->hba)
		return x->hba < y->hba ? -1 : 1;
	return (x->irq > y->irq) - (x->irq < y->irq);
}

/* A total order of CPU sets that agrees with stune_cpuset_equal (trailing zero words do not count). */
static int cpuset_cmp(const struct stune_cpuset *a, const struct stune_cpuset *b)
{
	if (a->valid != b->valid)
		return a->valid ? 1 : -1;
	size_t n = a->nwords > b->nwords ? a->nwords : b->nwords;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nwords ? a->bits[i] : 0;
		uint64_t y = i < b->nwords ? b->bits[i] : 0;
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

/* One host's hctx by CPU set (then position): an IRQ's hctx by mask in O(log n). */
struct hctx_index {
	const struct stune_host *host;
	size_t *by_cpus;
};

static int by_cpus_cmp(const void *a, const void *b, void *data)
{
	const struct stune_hctx *hc = data;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = cpuset_cmp(&hc[x].cpus, &hc[y].cpus);
	return c ? c : (x > y) - (x < y);
}

static int hctx_index_for(struct hctx_index *hx, const struct stune_host *host)
{
	if (hx->host == host)
		return 0;
	free(hx->by_cpus);
	*hx = (struct hctx_index){.host = host};
	if (!host->n_hctx)
		return 0;
	if (!(hx->by_cpus = malloc(host->n_hctx * sizeof(*hx->by_cpus))))
		return -ENOMEM;
	for (size_t k = 0; k < host->n_hctx; k++)
		hx->by_cpus[k] = k;
	qsort_r(hx->by_cpus, host->n_hctx, sizeof(*hx->by_cpus), by_cpus_cmp, host->hctx);
	return 0;
}

/* The last hctx (by position) whose CPU set equals cpus, or -1. */
static ssize_t hctx_by_cpus(const struct hctx_index *hx, const struct stune_cpuset *cpus)
{
	const struct stune_host *host = hx->host;
	size_t lo = 0, hi = host->n_hctx;
	while (lo < hi) { /* past the last one not above cpus */
		size_t mid = lo + (hi - lo) / 2;
		if (cpuset_cmp(&host->hctx[hx->by_cpus[mid]].cpus, cpus) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || cpuset_cmp(&host->hctx[hx->by_cpus[lo - 1]].cpus, cpus) != 0)
		return -1;
	return (ssize_t)hx->by_cpus[lo - 1];
}

/* The first hctx whose id is not below id (host->hctx is sorted by id). */
static size_t hctx_first_id(const struct stune_host *host, unsigned id)
{
	size_t lo = 0, hi = host->n_hctx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (host->hctx[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int stune_scan_irqs(struct stune_ctx *ctx, struct stune_topology *t)
{
	_cleanup_free_ char *text = NULL;
	struct stune_interrupts it = {0};
	struct hctx_index hx = {0};
	bool have_it = false;
	int r = 0;

	if (stune_attr_str(ctx, &text, 0, "proc/interrupts") == 0) {
		unsigned bad = 0;
		if (stune_interrupts_parse(text, &it, &bad) == 0)
			have_it = true;
		else
			stune_warn_path(ctx, "proc/interrupts", "malformed at line %u, IRQ names and counts unknown",
					bad);
	}

	for (size_t hi = 0; hi < t->n_hbas; hi++)
		if (t->hbas[hi].pci_address && (r = scan_hba_irqs(ctx, t, hi, have_it ? &it : NULL)) < 0)
			goto out;
	if (t->n_irqs) /* qsort wants a non-NULL base even for 0 items */
		qsort(t->irqs, t->n_irqs, sizeof(*t->irqs), irq_cmp);
	for (size_t hi = 0; hi < t->n_hbas; hi++)
		t->hbas[hi].n_irqs = 0;

	for (size_t i = 0; i < t->n_irqs; i++) {
		struct stune_irq *q = &t->irqs[i];
		struct stune_hba *h = &t->hbas[q->hba];
		h->irqs[h->n_irqs++] = i;

		const struct stune_irq_line *l = have_it ? stune_interrupts_find(&it, q->irq) : NULL;
		if (l) {
			if (!(q->name = strdup(l->name)) || !(q->chip = strdup(l->chip))) {
				r = -ENOMEM;
				goto out;
			}
			q->count = STUNE_NUM((int64_t)l->count);
			char bdf[16];
			unsigned idx;
			if (stune_irq_line_pci(l, bdf, &idx) == 0) {
				if (strcmp(bdf, h->pci_address) == 0)
					q->vector = STUNE_NUM(idx);
				else
					stune_warn_path(ctx, "proc/interrupts",
							"IRQ %u is listed in %s/msi_irqs but its hwirq encodes %s",
							q->irq, h->pci_address, bdf);
			}
		} else if (have_it) {
			stune_warn_path(ctx, "proc/interrupts", "IRQ %u of %s is not listed", q->irq, h->pci_address);
		}
		stune_attr_cpulist(ctx, &q->affinity, 0, "proc/irq/%u/smp_affinity_list", q->irq);
		stune_attr_cpulist(ctx, &q->effective, STUNE_ATTR_OPTIONAL, "proc/irq/%u/effective_affinity_list",
				   q->irq);
	}

	/* Classify per HBA, now that each HBA's vector count is known. */
	struct stune_num param = {0};
	for (size_t i = 0; i < t->n_irqs; i++) {
		struct stune_irq *q = &t->irqs[i];
		const struct stune_hba *h = &t->hbas[q->hba];
		if (i == 0 || q->hba != t->irqs[i - 1].hba)
			param = rule_param(ctx, h);
		classify(h, param, q, (unsigned)h->n_irqs);
		/* Other drivers: a managed IRQ serves the hctx with the same CPU mask (the last such). */
		if (q->managed == STUNE_YES && !q->hctx.set && h->n_hosts == 1) {
			const struct stune_host *host = &t->hosts[h->hosts[0]];
			if ((r = hctx_index_for(&hx, host)) < 0)
				goto out;
			ssize_t k = hctx_by_cpus(&hx, &q->affinity);
			if (k >= 0)
				q->hctx = STUNE_NUM(host->hctx[k].id);
		}
		/* Link the host's hctx back to its IRQ (hctx are sorted by id). */
		if (q->hctx.set && h->n_hosts == 1) {
			struct stune_host *host = &t->hosts[h->hosts[0]];
			for (size_t k = hctx_first_id(host, (unsigned)q->hctx.v);
			     k < host->n_hctx && host->hctx[k].id == (unsigned)q->hctx.v; k++)
				host->hctx[k].irq = STUNE_NUM(q->irq);
		}
	}
out:
	free(hx.by_cpus);
	stune_interrupts_clear(&it);
	return r;
}
