/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one renderer of the host model, for both text and JSON. It reads the
 * model only: no I/O besides output. Layout documented in
 * man/scsitune-detect.8.scd and schema/detect.schema.json.
 */
#include "render.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *adapter_state_name(struct stune_num s)
{
	/* include/uapi/scsi/scsi_bsg_mpi3mr.h MPI3MR_BSG_ADPSTATE_* */
	static const char *const names[] = {"unknown", "operational", "fault", "in_reset", "unrecoverable"};
	if (!s.set || s.v < 0 || s.v >= (int64_t)ELEMENTSOF(names))
		return NULL;
	return names[s.v];
}

static void render_kernel(struct out *o, const struct stune_topology *t)
{
	const struct stune_kernel *k = &t->kernel;

	out_obj_begin(o, "kernel");
	out_str(o, "hostname", "Host:      %s\n", k->hostname);
	out_str(o, "release", "Kernel:    %s", k->release);
	out_str(o, "version", NULL, k->version);
	out_num(o, "tainted", "  tainted %s", k->tainted);
	out_str(o, "taint_flags", k->taint_flags && *k->taint_flags ? " [%s]" : NULL, k->taint_flags);
	out_str(o, "lockdown", "  lockdown %s", k->lockdown);
	out_bool(o, "module_sig_enforce", "  module signatures enforced: %s\n", k->sig_enforce);
	out_obj_end(o);
}

static void render_payload(struct out *o, const struct stune_topology *t)
{
	const struct stune_kernel *k = &t->kernel;

	out_obj_begin(o, "payload");
	out_arr_begin(o, "modules");
	for (size_t i = 0; i < k->n_modules; i++) {
		const struct stune_module *m = &k->modules[i];
		out_obj_begin(o, NULL);
		out_text(o, i ? "           " : "Payload:   ");
		out_str(o, "name", "%-16s", m->name);
		const char *state = m->loaded ? "loaded" : m->builtin ? "built-in" : "not-loaded";
		out_str(o, "state", " %-10s", state);
		out_str(o, "version", "  version %s", m->version);
		out_str(o, "srcversion", NULL, m->srcversion);
		out_str(o, "taint", "  taint %s", m->taint);
		char installed[PATH_MAX];
		snprintf(installed, sizeof(installed), "/%s", m->updates_path ? m->updates_path : "");
		out_str(o, "installed_path", "  updates %s\n", m->updates_path ? installed : NULL);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_end(o);
}

static void render_cpus_numa(struct out *o, const struct stune_topology *t)
{
	const struct stune_cpus *c = &t->cpus;
	const struct stune_numa *n = &t->numa;

	out_obj_begin(o, "cpus");
	out_cpus(o, "online", "CPUs:      online %s", &c->online);
	out_int(o, "online_count", " (%s)", (long long)stune_cpuset_count(&c->online));
	out_cpus(o, "possible", "  possible %s", &c->possible);
	out_cpus(o, "present", NULL, &c->present);
	out_cpus(o, "offline", "  offline %s\n", &c->offline);
	out_obj_end(o);

	out_obj_begin(o, "numa");
	out_cpus(o, "possible_nodes", NULL, &n->possible);
	out_cpus(o, "online_nodes", NULL, &n->online);
	out_int(o, "node_count", "NUMA:      %s node(s)", (long long)n->n_nodes);
	out_bool(o, "policy_available", "  memory policy available: %s\n", n->policy_available);
	out_arr_begin(o, "nodes");
	for (size_t i = 0; i < n->n_nodes; i++) {
		const struct stune_node *nd = &n->nodes[i];
		out_obj_begin(o, NULL);
		out_int(o, "node", "  node %s", nd->id);
		out_cpus(o, "cpus", "  cpus %-12s", &nd->cpus);
		out_size(o, "mem_total_bytes", "  memory %-10s", nd->mem_total_bytes);
		out_text(o, "  distances");
		out_arr_begin(o, "distances");
		for (size_t j = 0; j < nd->n_distances; j++)
			out_num(o, NULL, " %s", nd->distances[j]);
		if (!nd->n_distances)
			out_text(o, " -");
		out_arr_end(o);
		out_text(o, "\n");
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_end(o);
}

static void render_disk(struct out *o, const struct stune_disk *d)
{
	out_obj_begin(o, NULL);
	out_str(o, "hctl", "      %-10s", d->hctl);
	out_str(o, "name", " %-6s", d->name);
	out_str(o, "devnum", NULL, d->devnum);
	out_str(o, "key", " %s", d->key);
	out_str(o, "key_source", NULL, d->key_source);
	out_str(o, "wwn", NULL, d->wwn);
	out_str(o, "id_path", NULL, d->id_path);
	out_str(o, "serial", NULL, d->serial);
	out_str(o, "vendor", "\n        %s", d->vendor);
	out_str(o, "model", " %s", d->model);
	out_str(o, "rev", " %s", d->rev);
	out_num(o, "scsi_type", NULL, d->scsi_type);
	out_size(o, "size_bytes", "  %s", d->size_bytes);
	out_bool(o, "rotational", "  rotational %s",
		 !d->rotational.set ? STUNE_UNKNOWN
		 : d->rotational.v  ? STUNE_YES
				    : STUNE_NO);
	out_str(o, "state", "  %s", d->state);
	out_num(o, "queue_depth", "  queue_depth %s", d->queue_depth);
	out_obj_begin(o, "queue");
	out_str(o, "scheduler", "\n        scheduler %s", d->scheduler);
	out_strv(o, "schedulers_available", NULL, d->schedulers);
	out_num(o, "nr_requests", "  nr_requests %s", d->nr_requests);
	out_num(o, "rq_affinity", "  rq_affinity %s", d->rq_affinity);
	out_num(o, "nomerges", "  nomerges %s", d->nomerges);
	out_num(o, "read_ahead_kb", "  read_ahead_kb %s", d->read_ahead_kb);
	out_num(o, "add_random", "  add_random %s", d->add_random);
	out_num(o, "io_poll", "  io_poll %s", d->io_poll);
	out_num(o, "nr_hw_queues", "  hw_queues %s", d->nr_hw_queues);
	out_obj_end(o);
	out_obj_begin(o, "counters");
	out_num(o, "iocounterbits", "\n        counters (%s-bit)", d->iocounterbits);
	out_num(o, "iorequest_cnt", ": requests %s", d->iorequest_cnt);
	out_num(o, "iodone_cnt", "  done %s", d->iodone_cnt);
	out_num(o, "ioerr_cnt", "  errors %s", d->ioerr_cnt);
	out_num(o, "iotmo_cnt", "  timeouts %s\n", d->iotmo_cnt);
	out_obj_end(o);
	out_obj_end(o);
}

static void render_host(struct out *o, const struct stune_topology *t, const struct stune_host *h)
{
	out_obj_begin(o, NULL);
	out_int(o, "host_no", "  host%s", h->host_no);
	out_str(o, "proc_name", "  %s", h->proc_name);
	out_num(o, "unique_id", "  unique_id %s", h->unique_id);
	out_str(o, "state", "  %s", h->state);
	out_num(o, "can_queue", "\n    can_queue %s", h->can_queue);
	out_num(o, "cmd_per_lun", "  cmd_per_lun %s", h->cmd_per_lun);
	out_num(o, "nr_hw_queues", "  nr_hw_queues %s", h->nr_hw_queues);
	out_num(o, "sg_tablesize", NULL, h->sg_tablesize);
	out_num(o, "host_busy", NULL, h->host_busy);
	out_bool(o, "host_tagset", "  shared host tags %s", h->host_tagset);
	out_str(o, "host_tagset_source", NULL, h->host_tagset_source);
	out_num(o, "adapter_state", NULL, h->adapter_state);
	if (h->adapter_state.set)
		out_str(o, "adapter_state_name", "  adapter %s", adapter_state_name(h->adapter_state));
	else
		out_str(o, "adapter_state_name", NULL, NULL);
	out_num(o, "fw_queue_depth", NULL, h->fw_queue_depth);
	out_num(o, "op_req_q_count", NULL, h->op_req_q_count);
	out_num(o, "reply_queue_count", NULL, h->reply_queue_count);
	out_text(o, "\n");

	out_arr_begin(o, "hctx_map");
	if (h->n_hctx)
		out_text(o, "    blk-mq hctx -> cpus (irq):");
	for (size_t i = 0; i < h->n_hctx; i++) {
		const struct stune_hctx *x = &h->hctx[i];
		out_obj_begin(o, NULL);
		out_int(o, "hctx", " %s", x->id);
		out_cpus(o, "cpus", "->%s", &x->cpus);
		out_num(o, "irq", "(%s)", x->irq);
		out_obj_end(o);
	}
	if (h->n_hctx)
		out_text(o, "\n");
	out_arr_end(o);

	out_text(o, "    disks: %zu\n", h->n_disks);
	out_arr_begin(o, "disks");
	for (size_t i = 0; i < h->n_disks; i++)
		render_disk(o, &t->disks[h->disks[i]]);
	out_arr_end(o);
	out_obj_end(o);
}

static void render_irq(struct out *o, const struct stune_irq *q)
{
	out_obj_begin(o, NULL);
	out_int(o, "irq", "  %11s", q->irq);
	out_num(o, "vector", " %6s", q->vector);
	out_str(o, "name", " %-20s", q->name);
	out_str(o, "chip", NULL, q->chip);
	out_str(o, "msi_type", NULL, q->msi_type);
	out_bool(o, "managed", " %-7s", q->managed);
	out_str(o, "managed_rule", NULL, q->managed_rule);
	out_cpus(o, "affinity", " %-12s", &q->affinity);
	out_cpus(o, "effective_affinity", " %-9s", &q->effective);
	out_num(o, "hctx", " %4s", q->hctx);
	out_num(o, "count", " %s\n", q->count);
	out_obj_end(o);
}

/* The node of a vector's CPUs for counting: where it fires (effective), else where it may. */
static int irq_node(const struct stune_topology *t, const struct stune_irq *q)
{
	const struct stune_cpuset *s =
	    q->effective.valid && stune_cpuset_count(&q->effective) ? &q->effective : &q->affinity;
	struct stune_cpuset nodes = {0};
	int node = -1;
	if (stune_cpuset_nodes(t, s, &nodes) == 0 && stune_cpuset_count(&nodes) == 1)
		node = stune_cpuset_next(&nodes, 0);
	stune_cpuset_clear(&nodes);
	return node;
}

static void render_nodes(struct out *o, const char *key, const struct stune_topology *t,
			 const struct stune_cpuset *cpus)
{
	struct stune_cpuset nodes = {0};
	if (stune_cpuset_nodes(t, cpus, &nodes) < 0 || !cpus->valid)
		nodes.valid = false;
	out_cpus(o, key, NULL, &nodes);
	stune_cpuset_clear(&nodes);
}

/*
 * IRQ locality, the first thing to read about an HBA: its movable vectors
 * (the ones a profile may place) and whether each is on the HBA's node, and
 * its managed vectors' spread over the nodes, which the kernel decides (one
 * per CPU group) and nobody should try to fix. One text line, one JSON object.
 */
static void render_irq_locality(struct out *o, const struct stune_topology *t, const struct stune_hba *h)
{
	size_t movable = 0, not_local = 0, unknown = 0, managed = 0, unclassified = 0;
	bool node_known = h->numa_node.set && h->numa_node.v >= 0;
	char *remote = NULL;
	size_t remote_len = 0;
	FILE *rm = open_memstream(&remote, &remote_len);

	out_obj_begin(o, "irq_locality");
	out_num(o, "hba_node", NULL, node_known ? h->numa_node : (struct stune_num){0});
	out_arr_begin(o, "movable");
	for (size_t i = 0; i < h->n_irqs; i++) {
		const struct stune_irq *q = &t->irqs[h->irqs[i]];
		if (q->managed == STUNE_YES)
			managed++;
		if (q->managed == STUNE_UNKNOWN)
			unclassified++;
		if (q->managed != STUNE_NO)
			continue;
		movable++;
		enum stune_placement pl = stune_irq_placement(t, h, &q->affinity);
		if (pl == STUNE_PLACE_UNKNOWN)
			unknown++;
		else if (pl != STUNE_PLACE_LOCAL) {
			struct stune_cpuset nodes = {0};
			_cleanup_free_ char *list = NULL;
			if (stune_cpuset_nodes(t, &q->affinity, &nodes) == 0 &&
			    stune_cpuset_format(&nodes, &list) == 0 && rm && not_local < 4)
				fprintf(rm, "%s%u on node%s %s", not_local ? ", " : "", q->irq,
					stune_cpuset_count(&nodes) > 1 ? "s" : "", list);
			stune_cpuset_clear(&nodes);
			not_local++;
		}
		out_obj_begin(o, NULL);
		out_int(o, "irq", NULL, q->irq);
		out_str(o, "name", NULL, q->name);
		render_nodes(o, "affinity_nodes", t, &q->affinity);
		render_nodes(o, "effective_nodes", t, &q->effective);
		out_str(o, "placement", NULL, stune_placement_name(pl));
		out_obj_end(o);
	}
	out_arr_end(o);
	if (rm) {
		if (not_local > 4)
			fprintf(rm, ", ...");
		fclose(rm);
	}
	out_int(o, "movable_count", NULL, (long long)movable);
	out_int(o, "movable_not_local_count", NULL, (long long)not_local);
	out_int(o, "managed_count", NULL, (long long)managed);

	/* Managed vectors per node, in node order (then those in no single node). */
	out_text(o, "  IRQ locality: ");
	if (h->n_irqs == 0)
		out_text(o, "no IRQ found for this HBA");
	else if (movable == 0)
		out_text(o, "no movable vector");
	else if (!node_known)
		out_text(o, "movable %zu, no locality known (numa_node %s): nothing to place them on", movable,
			 h->numa_node.set ? "-1" : "unknown, no PCI function");
	else if (not_local == 0 && unknown == 0)
		out_text(o, "movable %zu, on the HBA's node %lld", movable, (long long)h->numa_node.v);
	else if (not_local)
		out_text(o, "movable %zu, %zu NOT on the HBA's node %lld: %s (a profile can move %s)", movable,
			 not_local, (long long)h->numa_node.v, remote ? remote : "", not_local == 1 ? "it" : "them");
	else
		out_text(o, "movable %zu, %zu with an affinity that could not be read", movable, unknown);
	free(remote);
	out_arr_begin(o, "managed_nodes");
	if (managed)
		out_text(o, "; managed %zu, spread by the kernel over", managed);
	size_t shown = 0;
	for (size_t ni = 0; ni <= t->numa.n_nodes && managed; ni++) {
		int id = ni < t->numa.n_nodes ? t->numa.nodes[ni].id : -1;
		size_t n = 0;
		for (size_t i = 0; i < h->n_irqs; i++) {
			const struct stune_irq *q = &t->irqs[h->irqs[i]];
			n += q->managed == STUNE_YES && irq_node(t, q) == id;
		}
		if (!n)
			continue;
		out_obj_begin(o, NULL);
		out_num(o, "node", NULL, id >= 0 ? STUNE_NUM(id) : (struct stune_num){0});
		out_int(o, "count", NULL, (long long)n);
		out_obj_end(o);
		if (id >= 0)
			out_text(o, "%s node %d (%zu)", shown++ ? "," : "", id, n);
		else
			out_text(o, "%s CPUs offline or in no one node (%zu)", shown++ ? "," : "", n);
	}
	out_arr_end(o);
	if (managed)
		out_text(o, ": one per CPU group, not movable");
	out_int(o, "unclassified_count", NULL, (long long)unclassified);
	if (unclassified)
		out_text(o, "; %zu not classified (never written)", unclassified);
	out_text(o, "\n");
	out_obj_end(o);
}

static void render_hba(struct out *o, const struct stune_topology *t, const struct stune_hba *h)
{
	char sysfs_path[PATH_MAX];
	snprintf(sysfs_path, sizeof(sysfs_path), "/%s", h->sysfs_path);
	out_obj_begin(o, NULL);
	out_text(o, "\nHBA %s", h->pci_address ? h->pci_address : sysfs_path);
	out_str(o, "pci_address", NULL, h->pci_address);
	out_str(o, "sysfs_path", NULL, sysfs_path);
	out_str(o, "kind", "  [%s]", stune_hba_kind_name(h->kind));
	out_str(o, "vendor_name", h->vendor_name ? "  %s" : NULL, h->vendor_name);
	out_str(o, "model", h->model ? " %s" : NULL, h->model);
	/* Text: the PCI line only when there is a PCI function; JSON: always every key. */
	bool pci = h->pci_address != NULL;
	out_hex(o, "vendor_id", pci ? "\n  pci id %s" : NULL, h->vendor, 4);
	out_hex(o, "device_id", pci ? ":%s" : NULL, h->device, 4);
	out_hex(o, "subsystem_vendor_id", pci ? " subsystem %s" : NULL, h->subsystem_vendor, 4);
	out_hex(o, "subsystem_device_id", pci ? ":%s" : NULL, h->subsystem_device, 4);
	out_hex(o, "class", NULL, h->class_code, 6);
	out_hex(o, "revision", NULL, h->revision, 2);
	out_str(o, "driver", pci ? "  driver %s" : "\n  no PCI function  driver %s", h->driver);
	out_str(o, "driver_version", " %s", h->driver_version);
	bool other = h->pci_driver && h->driver && strcmp(h->pci_driver, h->driver) != 0;
	out_str(o, "pci_driver", other ? " (on %s)" : NULL, h->pci_driver);
	out_str(o, "firmware", h->firmware ? "  firmware %s" : NULL, h->firmware);
	out_text(o, "\n");
	/* numa_node -1 (NUMA_NO_NODE) and no PCI function both mean no locality. */
	bool local = h->numa_node.set && h->numa_node.v >= 0;
	out_num(o, "numa_node", pci ? "  numa node %s" : NULL, h->numa_node);
	out_bool(o, "numa_local_known", NULL, local ? STUNE_YES : STUNE_NO);
	if (!local)
		out_text(o, pci ? " (no locality known)" : "  numa node: no locality known");
	out_cpus(o, "local_cpus", pci ? "  local cpus %s\n" : "\n", &h->local_cpus);
	render_irq_locality(o, t, h);

	out_arr_begin(o, "scsi_hosts");
	for (size_t i = 0; i < h->n_hosts; i++)
		render_host(o, t, &t->hosts[h->hosts[i]]);
	out_arr_end(o);

	if (h->n_irqs)
		out_text(o, "  IRQs:   IRQ VECTOR NAME                 MANAGED AFFINITY     EFFECTIVE HCTX COUNT\n");
	out_arr_begin(o, "irqs");
	for (size_t i = 0; i < h->n_irqs; i++)
		render_irq(o, &t->irqs[h->irqs[i]]);
	out_arr_end(o);
	out_obj_end(o);
}

void render_topology(struct out *o, const struct stune_topology *t, const char *sysroot)
{
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_DETECT_SCHEMA_VERSION);
	out_obj_begin(o, "source");
	out_bool(o, "sysroot", NULL, sysroot ? STUNE_YES : STUNE_NO);
	out_str(o, "udev", NULL, t->udev_source);
	out_obj_end(o);
	render_kernel(o, t);
	render_payload(o, t);
	render_cpus_numa(o, t);

	size_t mpi3mr = 0;
	for (size_t i = 0; i < t->n_hbas; i++)
		mpi3mr += t->hbas[i].kind == STUNE_HBA_MPI3MR;
	out_obj_begin(o, "summary");
	out_int(o, "hba_count", "HBAs:      %s", (long long)t->n_hbas);
	out_int(o, "mpi3mr_count", " (%s mpi3mr)", (long long)mpi3mr);
	out_int(o, "scsi_host_count", "  SCSI hosts %s", (long long)t->n_hosts);
	out_int(o, "disk_count", "  disks %s\n", (long long)t->n_disks);
	out_obj_end(o);
	if (t->n_hosts == 0)
		out_text(o, "No SCSI host adapter found.\n");

	out_arr_begin(o, "hbas");
	for (size_t i = 0; i < t->n_hbas; i++)
		render_hba(o, t, &t->hbas[i]);
	out_arr_end(o);
	out_obj_end(o);
}
