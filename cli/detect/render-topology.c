/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one renderer of the host model, for both text and JSON. It reads the
 * model only: no I/O besides output. Layout documented in
 * man/scsitune-detect.8.scd and schema/detect.schema.json.
 */
#include "render-topology.h"
#include "wrap.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "payload/state.h"

static const char *adapter_state_name(struct stune_num s)
{
	/* include/uapi/scsi/scsi_bsg_mpi3mr.h MPI3MR_BSG_ADPSTATE_* */
	static const char *const names[] = {"unknown", "operational", "fault", "in_reset", "unrecoverable"};
	if (!s.set || s.v < 0 || s.v >= (int64_t)ELEMENTSOF(names))
		return NULL;
	return names[s.v];
}

/* Text only (nothing in JSON, wherever the JSON stack is): a string through out.c's text path. */
static void txt_str(struct out *o, const char *tfmt, const char *v)
{
	if (!out_is_json(o))
		out_str(o, NULL, tfmt, v);
}

static void txt_num(struct out *o, const char *tfmt, struct stune_num v)
{
	if (!out_is_json(o))
		out_num(o, NULL, tfmt, v);
}

static void txt_cpus(struct out *o, const char *tfmt, const struct stune_cpuset *s)
{
	if (!out_is_json(o))
		out_cpus(o, NULL, tfmt, s);
}

static void txt_size(struct out *o, const char *tfmt, struct stune_num v)
{
	if (!out_is_json(o))
		out_size(o, NULL, tfmt, v);
}

/* The X.509 keys the kernel holds (JSON; text with -v: two lines each, its keyring and name, then its id). */
static void render_trust_keys(struct out *o, const struct stune_module_trust *mt, int verbose)
{
	out_arr_begin(o, "keys");
	for (size_t i = 0; i < mt->n_keys; i++) {
		const struct stune_kkey *k = &mt->keys[i];
		const struct stune_sys_keyring *kr = stune_kkey_keyring(mt, k);
		const struct stune_cert *c = k->cert != SIZE_MAX ? &mt->certs[k->cert] : NULL;
		out_obj_begin(o, NULL);
		out_str(o, "keyring", verbose ? "             %s" : NULL, kr ? kr->name : NULL);
		out_bool(o, "trusted_for_modules", NULL, k->trusted);
		out_str(o, "name", verbose ? "  " WRAP_HANG "%s" : NULL, k->name);
		txt_str(o, verbose ? " (%s)\n" : NULL,
			k->trusted == STUNE_YES	 ? "trusted"
			: k->trusted == STUNE_NO ? "not trusted"
						 : "trust unknown");
		out_str(o, "key_id_kind", verbose ? "               %s" : NULL, k->id_is_serial ? "serial" : "skid");
		out_str(o, "key_id", verbose ? " %s" : NULL, k->id);
		out_obj_begin(o, "certificate");
		out_str(o, "source", verbose && c ? "  certificate in %s" : NULL, c ? c->source : NULL);
		out_str(o, "issuer", NULL, c ? c->issuer_cn : NULL);
		out_str(o, "serial", verbose && c ? ", serial %s" : NULL, c ? c->serial : NULL);
		out_obj_end(o);
		if (verbose)
			out_text(o, "\n");
		out_obj_end(o);
	}
	out_arr_end(o);
}

/* The keyrings: JSON one object each; text "trusted: .builtin_trusted_keys 1, .machine 1; not: .platform 2". */
static void render_trust_keyrings(struct out *o, const struct stune_module_trust *mt)
{
	out_arr_begin(o, "keyrings");
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
		const struct stune_sys_keyring *kr = &mt->keyrings[i];
		out_obj_begin(o, NULL);
		out_str(o, "name", NULL, kr->name);
		out_bool(o, "present", NULL, kr->present ? STUNE_YES : STUNE_NO);
		out_bool(o, "trusted_for_modules", NULL, kr->present ? kr->trusted : STUNE_NO);
		out_num(o, "keys", NULL,
			kr->present && kr->members_known ? STUNE_NUM((int64_t)kr->n_keys) : (struct stune_num){0});
		out_obj_end(o);
	}
	out_arr_end(o);
	if (mt->keys_error) {
		out_text(o, "             keys unknown: " WRAP_HANG "%s\n", mt->keys_error);
		return;
	}
	if (!mt->members_source) {
		out_text(o, "             %zu X.509 key%s; which keyring holds each: " WRAP_HANG "unknown (%s)\n",
			 mt->n_keys, mt->n_keys == 1 ? "" : "s", mt->members_error ? mt->members_error : "not read");
		return;
	}
	/* Text: the keyrings that hold keys, those the verifier searches first (JSON: every one). */
	static const char *const label[] = {
	    [STUNE_YES] = "trusted: ", [STUNE_NO] = "not: ", [STUNE_UNKNOWN] = "unknown: "};
	size_t groups = 0;
	out_text(o, "             ");
	for (int want = STUNE_YES; want >= STUNE_UNKNOWN; want--) {
		size_t shown = 0;
		for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
			const struct stune_sys_keyring *kr = &mt->keyrings[i];
			if (!kr->present || (int)kr->trusted != want || (!kr->n_keys && want != STUNE_YES))
				continue;
			if (!kr->n_keys && mt->keyrings[i].trusted == STUNE_YES && i == STUNE_KEYRING_SECONDARY)
				continue; /* the verifier's own keyring holds links, rarely keys */
			out_text(o, "%s%s" WRAP_LIST "%s %zu",
				 shown	  ? ", "
				 : groups ? "; "
					  : "",
				 shown ? "" : label[want], kr->name, kr->n_keys);
			shown++;
		}
		groups += shown > 0;
	}
	if (!groups)
		out_text(o, "no system keyring in /proc/keys");
	out_text(o, "\n");
}

/* What the kernel trusts for modules: Secure Boot and the keyrings (kernel.module_trust). */
static void render_trust(struct out *o, const struct stune_module_trust *mt, int verbose)
{
	out_obj_begin(o, "module_trust");
	out_str(o, "boot", NULL, mt ? stune_boot_name(mt->boot) : NULL);
	enum stune_tristate sb = mt ? mt->secure_boot : STUNE_UNKNOWN;
	out_bool(o, "secure_boot", NULL, sb);
	txt_str(o, "Trust:     Secure Boot %s", sb == STUNE_YES ? "on" : sb == STUNE_NO ? "off" : "unknown");
	out_str(o, "secure_boot_source", NULL, mt ? mt->secure_boot_source : NULL);
	out_bool(o, "setup_mode", NULL, mt ? mt->setup_mode : STUNE_UNKNOWN);
	if (mt && mt->boot != STUNE_BOOT_UNKNOWN)
		out_text(o, " (%s%s)", mt->boot == STUNE_BOOT_UEFI ? "UEFI" : "BIOS boot",
			 mt->setup_mode == STUNE_YES ? ", setup mode" : "");
	else if (mt)
		out_text(o, " (" WRAP_HANG "%s)", mt->secure_boot_source);
	out_text(o, "\n");
	out_str(o, "verifier_keyring", NULL, mt ? mt->verifier : NULL);
	out_str(o, "keys_error", NULL, mt ? mt->keys_error : NULL);
	out_str(o, "membership", NULL, mt ? mt->members_source : NULL);
	out_str(o, "membership_error", NULL, mt ? mt->members_error : NULL);
	out_str(o, "certificates_error", NULL, mt ? mt->certs_error : NULL);
	out_int(o, "certificates", NULL, mt ? (long long)mt->n_certs : 0);
	if (mt) {
		render_trust_keyrings(o, mt);
		render_trust_keys(o, mt, verbose);
	} else { /* a plan's scan: not read (every key is always there) */
		out_arr_begin(o, "keyrings");
		out_arr_end(o);
		out_arr_begin(o, "keys");
		out_arr_end(o);
	}
	out_obj_end(o);
}

static void render_kernel(struct out *o, const struct stune_topology *t, int verbose)
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
	render_trust(o, k->trust, verbose);
	out_obj_end(o);
}

static void render_payload(struct out *o, const struct stune_topology *t, const struct stune_payload_status *ps)
{
	const struct stune_kernel *k = &t->kernel;

	out_obj_begin(o, "payload");
	/* payload verify's verdict, from its code (without the modprobe and initrd links). */
	out_str(o, "verdict", NULL, ps ? stune_payload_verdict_name(ps->verdict) : NULL);
	out_str(o, "payload_version", NULL, ps ? ps->payload_version : NULL);
	out_arr_begin(o, "modules");
	for (size_t i = 0; i < k->n_modules; i++) {
		const struct stune_module *m = &k->modules[i];
		out_obj_begin(o, NULL);
		out_text(o, i ? "           " : "Payload:   ");
		out_str(o, "name", "%s", m->name);
		const char *state = m->loaded ? "loaded" : m->builtin ? "built-in" : "not-loaded";
		out_str(o, "state", "  %s", state);
		out_str(o, "version", m->version ? "  version %s" : NULL, m->version);
		out_str(o, "srcversion", NULL, m->srcversion);
		out_str(o, "taint", m->taint && *m->taint ? "  taint %s" : NULL, m->taint);
		char installed[PATH_MAX];
		snprintf(installed, sizeof(installed), "/%s", m->updates_path ? m->updates_path : "");
		out_str(o, "installed_path", NULL, m->updates_path ? installed : NULL);
		/* payload verify's loaded.signer row for it: a signed module of ours is loaded */
		const char *signer = NULL;
		for (size_t l = 0; ps && l < ps->n; l++)
			if (!strcmp(ps->links[l].link, "loaded.signer") && ps->links[l].module &&
			    !strcmp(ps->links[l].module, m->name))
				signer = ps->links[l].actual ? ps->links[l].actual : "unknown";
		out_str(o, "signer", NULL, signer);
		/* Text: the path below lib/modules/RELEASE/ (updates/...), which is what tells payloads apart. */
		const char *rel = m->updates_path ? strstr(m->updates_path, "/updates/") : NULL;
		if (signer)
			out_text(o, "  signer %s", signer);
		if (m->updates_path)
			txt_str(o, "  installed %s\n", rel ? rel + 1 : m->updates_path);
		else
			out_text(o, "  not installed\n");
		out_obj_end(o);
	}
	out_arr_end(o);
	if (ps && ps->payload_version)
		out_text(o, "           scsitune payload %s: %s (scsitune payload verify)\n", ps->payload_version,
			 stune_payload_verdict_name(ps->verdict));
	else if (ps && ps->verdict == STUNE_PAYLOAD_NOT_INSTALLED)
		out_text(o, "           scsitune payload: not installed (no updates/scsitune/manifest.json)\n");
	else if (ps)
		out_text(o, "           scsitune payload: %s\n", stune_payload_verdict_name(ps->verdict));
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

/* Column widths of a host's disk table (text). */
struct disk_cols {
	int hctl, name, rot, size, model;
};

static int size_width(struct stune_num v)
{
	char buf[64];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	if (!m)
		return 1;
	struct out *tmp = out_new(OUT_TEXT, m);
	if (tmp) {
		out_size(tmp, NULL, "%s", v);
		out_free(tmp);
	}
	long n = ftell(m);
	fclose(m);
	return n > 0 ? (int)n : 1;
}

static int str_width(const char *s)
{
	return s && *s ? (int)strlen(s) : 1;
}

static const char *rot_word(struct stune_num r)
{
	return !r.set ? "-" : r.v ? "yes" : "no";
}

/* One row per disk: HCTL NAME ROT SIZE MODEL KEY; -v adds its identity, queue settings and counters. */
static void render_disk(struct out *o, const struct stune_disk *d, const struct disk_cols *w, int verbose)
{
	char f[32];
	out_obj_begin(o, NULL);
	snprintf(f, sizeof(f), "    %%-%ds", w->hctl);
	out_str(o, "hctl", f, d->hctl);
	snprintf(f, sizeof(f), "  %%-%ds", w->name);
	out_str(o, "name", f, d->name);
	snprintf(f, sizeof(f), "  %%-%ds", w->rot);
	txt_str(o, f, rot_word(d->rotational));
	snprintf(f, sizeof(f), "  %%-%ds", w->size);
	txt_size(o, f, d->size_bytes);
	snprintf(f, sizeof(f), "  %%-%ds", w->model);
	txt_str(o, f, d->model);
	out_str(o, "devnum", NULL, d->devnum);
	out_str(o, "key", "  %s\n", d->key);
	out_str(o, "key_source", NULL, d->key_source);
	out_str(o, "wwn", NULL, d->wwn);
	out_str(o, "id_path", NULL, d->id_path);
	out_str(o, "serial", NULL, d->serial);
	out_str(o, "vendor", verbose ? "      %s" : NULL, d->vendor);
	out_str(o, "model", verbose ? " %s" : NULL, d->model);
	out_str(o, "rev", verbose ? " %s" : NULL, d->rev);
	out_num(o, "scsi_type", NULL, d->scsi_type);
	out_size(o, "size_bytes", NULL, d->size_bytes);
	out_bool(o, "rotational", NULL, !d->rotational.set ? STUNE_UNKNOWN : d->rotational.v ? STUNE_YES : STUNE_NO);
	if (verbose) {
		txt_str(o, "  serial %s", d->serial);
		txt_str(o, "  devnum %s", d->devnum);
	}
	out_str(o, "state", verbose ? "  %s" : NULL, d->state);
	if (verbose) /* the queue's lines after the identity's: each within 80 columns */
		out_text(o, "\n");
	out_num(o, "queue_depth", verbose ? "      queue_depth %s" : NULL, d->queue_depth);
	out_obj_begin(o, "queue");
	out_str(o, "scheduler", verbose ? "  scheduler %s" : NULL, d->scheduler);
	out_strv(o, "schedulers_available", NULL, d->schedulers);
	out_num(o, "nr_requests", verbose ? "  nr_requests %s" : NULL, d->nr_requests);
	out_num(o, "rq_affinity", verbose ? "  rq_affinity %s\n" : NULL, d->rq_affinity);
	out_num(o, "nomerges", verbose ? "      nomerges %s" : NULL, d->nomerges);
	out_num(o, "read_ahead_kb", verbose ? "  read_ahead_kb %s" : NULL, d->read_ahead_kb);
	out_num(o, "add_random", verbose ? "  add_random %s" : NULL, d->add_random);
	out_num(o, "io_poll", verbose ? "  io_poll %s" : NULL, d->io_poll);
	out_num(o, "nr_hw_queues", verbose ? "  hw_queues %s\n" : NULL, d->nr_hw_queues);
	out_obj_end(o);
	out_obj_begin(o, "counters");
	out_num(o, "iocounterbits", verbose ? "      counters (%s-bit):" : NULL, d->iocounterbits);
	out_num(o, "iorequest_cnt", verbose ? " requests %s" : NULL, d->iorequest_cnt);
	out_num(o, "iodone_cnt", verbose ? "  done %s" : NULL, d->iodone_cnt);
	out_num(o, "ioerr_cnt", verbose ? "  errors %s" : NULL, d->ioerr_cnt);
	out_num(o, "iotmo_cnt", verbose ? "  timeouts %s\n" : NULL, d->iotmo_cnt);
	out_obj_end(o);
	out_obj_end(o);
}

static void render_host(struct out *o, const struct stune_topology *t, const struct stune_host *h, int verbose)
{
	out_obj_begin(o, NULL);
	out_int(o, "host_no", "  host%s", h->host_no);
	out_str(o, "proc_name", "  %s", h->proc_name);
	out_num(o, "unique_id", verbose ? "  unique_id %s" : NULL, h->unique_id);
	out_str(o, "state", "  %s", h->state);
	/* After the state, which it qualifies (JSON keeps its place below). */
	if (h->adapter_state.set)
		txt_str(o, "  adapter %s", adapter_state_name(h->adapter_state));
	out_num(o, "can_queue", "  can_queue %s", h->can_queue);
	out_num(o, "cmd_per_lun", "  cmd_per_lun %s", h->cmd_per_lun);
	out_num(o, "nr_hw_queues", "  hw_queues %s", h->nr_hw_queues);
	out_num(o, "sg_tablesize", NULL, h->sg_tablesize);
	out_num(o, "host_busy", NULL, h->host_busy);
	out_bool(o, "host_tagset", "  shared host tags %s", h->host_tagset);
	out_str(o, "host_tagset_source", NULL, h->host_tagset_source);
	out_num(o, "adapter_state", NULL, h->adapter_state);
	out_str(o, "adapter_state_name", NULL, h->adapter_state.set ? adapter_state_name(h->adapter_state) : NULL);
	out_num(o, "fw_queue_depth", NULL, h->fw_queue_depth);
	out_num(o, "op_req_q_count", NULL, h->op_req_q_count);
	out_num(o, "reply_queue_count", NULL, h->reply_queue_count);
	out_text(o, h->n_disks ? "\n" : "  no disks\n");

	/* -v: the blk-mq map, a list that wraps. */
	out_arr_begin(o, "hctx_map");
	if (h->n_hctx && verbose)
		out_text(o, "    hctx->cpus(irq): " WRAP_LIST);
	for (size_t i = 0; i < h->n_hctx; i++) {
		const struct stune_hctx *x = &h->hctx[i];
		out_obj_begin(o, NULL);
		out_int(o, "hctx", verbose ? (i ? " %s" : "%s") : NULL, x->id);
		out_cpus(o, "cpus", verbose ? "->%s" : NULL, &x->cpus);
		out_num(o, "irq", verbose ? "(%s)" : NULL, x->irq);
		out_obj_end(o);
	}
	if (h->n_hctx && verbose)
		out_text(o, "\n");
	out_arr_end(o);

	struct disk_cols w = {4, 4, 3, 4, 5};
	for (size_t i = 0; i < h->n_disks; i++) {
		const struct stune_disk *d = &t->disks[h->disks[i]];
		int n;
		if ((n = str_width(d->hctl)) > w.hctl)
			w.hctl = n;
		if ((n = str_width(d->name)) > w.name)
			w.name = n;
		if ((n = size_width(d->size_bytes)) > w.size)
			w.size = n;
		if ((n = str_width(d->model)) > w.model)
			w.model = n;
	}
	if (h->n_disks)
		out_text(o, "    %-*s  %-*s  %-*s  %-*s  %-*s  KEY\n", w.hctl, "HCTL", w.name, "NAME", w.rot, "ROT",
			 w.size, "SIZE", w.model, "MODEL");
	out_arr_begin(o, "disks");
	for (size_t i = 0; i < h->n_disks; i++)
		render_disk(o, &t->disks[h->disks[i]], &w, verbose);
	out_arr_end(o);
	out_obj_end(o);
}

/* IRQ table columns (text, -v). */
struct irq_cols {
	int name, aff, eff;
};

static int cpus_width(const struct stune_cpuset *s)
{
	_cleanup_free_ char *txt = NULL;
	if (!s->valid || stune_cpuset_format(s, &txt) < 0)
		return 1;
	return *txt ? (int)strlen(txt) : 4; /* "none" */
}

static void render_irq(struct out *o, const struct stune_irq *q, const struct irq_cols *w, int verbose)
{
	char f[32];
	out_obj_begin(o, NULL);
	out_int(o, "irq", verbose ? "    %5s" : NULL, q->irq);
	out_num(o, "vector", verbose ? "  %6s" : NULL, q->vector);
	snprintf(f, sizeof(f), "  %%-%ds", w->name);
	out_str(o, "name", verbose ? f : NULL, q->name);
	out_str(o, "chip", NULL, q->chip);
	out_str(o, "msi_type", NULL, q->msi_type);
	out_bool(o, "managed", verbose ? "  %-7s" : NULL, q->managed);
	out_str(o, "managed_rule", NULL, q->managed_rule);
	snprintf(f, sizeof(f), "  %%-%ds", w->aff);
	out_cpus(o, "affinity", verbose ? f : NULL, &q->affinity);
	snprintf(f, sizeof(f), "  %%-%ds", w->eff);
	out_cpus(o, "effective_affinity", verbose ? f : NULL, &q->effective);
	out_num(o, "hctx", verbose ? "  %4s" : NULL, q->hctx);
	out_num(o, "count", verbose ? "  %s\n" : NULL, q->count);
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

/* The HBA's managed vectors (managed of them) per node, in node order (then
 * those in no single node): the "managed_nodes" array, and its text. */
static void render_managed_nodes(struct out *o, const struct stune_topology *t, const struct stune_hba *h,
				 size_t managed)
{
	out_arr_begin(o, "managed_nodes");
	if (managed)
		out_text(o, "; managed %zu, placed by the kernel one per CPU group (not movable):", managed);
	size_t shown = 0;
	/* Each managed vector's node once (the last slot: offline or several nodes). */
	_cleanup_free_ size_t *per_node = managed ? calloc(t->numa.n_nodes + 1, sizeof(size_t)) : NULL;
	for (size_t i = 0; per_node && i < h->n_irqs; i++) {
		const struct stune_irq *q = &t->irqs[h->irqs[i]];
		if (q->managed != STUNE_YES)
			continue;
		int id = irq_node(t, q);
		size_t ni = 0;
		while (ni < t->numa.n_nodes && (id < 0 || t->numa.nodes[ni].id != id))
			ni++;
		per_node[ni]++;
	}
	for (size_t ni = 0; ni <= t->numa.n_nodes && per_node; ni++) {
		int id = ni < t->numa.n_nodes ? t->numa.nodes[ni].id : -1;
		size_t n = per_node[ni];
		if (!n)
			continue;
		out_obj_begin(o, NULL);
		out_num(o, "node", NULL, id >= 0 ? STUNE_NUM(id) : (struct stune_num){0});
		out_int(o, "count", NULL, (long long)n);
		out_obj_end(o);
		if (id >= 0)
			out_text(o, "%s node %d %zu", shown++ ? "," : "", id, n);
		else
			out_text(o, "%s offline or several nodes %zu", shown++ ? "," : "", n);
	}
	out_arr_end(o);
}

/*
 * IRQ locality, the first thing to read about an HBA: its movable vectors
 * (the ones a profile may place) and whether each is on the HBA's node, and
 * its managed vectors' spread over the nodes, which the kernel decides (one
 * per CPU group) and nobody should try to fix. One text line, one JSON object.
 */
/* "irq 147 on node 0" (at most 4, then ", ...") into f; the set is the vector's affinity or effective set. */
static void list_irq(FILE *f, size_t shown, const struct stune_topology *t, const struct stune_irq *q,
		     const struct stune_cpuset *set)
{
	if (!f || shown > 4)
		return;
	if (shown == 4) {
		fprintf(f, ", ...");
		return;
	}
	struct stune_cpuset nodes = {0};
	_cleanup_free_ char *list = NULL;
	if (stune_cpuset_nodes(t, set, &nodes) == 0 && stune_cpuset_format(&nodes, &list) == 0)
		fprintf(f, "%s%u on node%s %s", shown ? ", irq " : "irq ", q->irq,
			stune_cpuset_count(&nodes) > 1 ? "s" : "", list);
	stune_cpuset_clear(&nodes);
}

/*
 * Where an HBA's movable vectors are served. A vector is served where its
 * effective affinity is (the CPUs the interrupt fires on now); its affinity
 * says where it may move to (irqbalance, a CPU going offline). remote:
 * served off the HBA's node (effective set without a CPU there, or, unread,
 * an affinity without one). may_move: served on the node now, allowed
 * elsewhere. unsure: it may fire off the node (an effective set spanning
 * nodes, or an unread one with an affinity spanning them). unknown: no
 * affinity read. The lists name the vectors ("irq 147 on node 0, ...").
 */
struct irq_census {
	size_t movable, not_local, unknown, managed, unclassified;
	size_t remote, may_move, unsure;
	char *remote_list, *may_move_list, *unsure_list;
};

static void irq_census_done(struct irq_census *c)
{
	free(c->remote_list);
	free(c->may_move_list);
	free(c->unsure_list);
}

static void irq_census(const struct stune_topology *t, const struct stune_hba *h, struct irq_census *c)
{
	size_t l1 = 0, l2 = 0, l3 = 0;
	FILE *rm = open_memstream(&c->remote_list, &l1), *mm = open_memstream(&c->may_move_list, &l2),
	     *um = open_memstream(&c->unsure_list, &l3);
	for (size_t i = 0; i < h->n_irqs; i++) {
		const struct stune_irq *q = &t->irqs[h->irqs[i]];
		c->managed += q->managed == STUNE_YES;
		c->unclassified += q->managed == STUNE_UNKNOWN;
		if (q->managed != STUNE_NO)
			continue;
		c->movable++;
		enum stune_placement pl = stune_irq_placement(t, h, &q->affinity);
		enum stune_placement served = stune_irq_placement(t, h, &q->effective);
		if (pl == STUNE_PLACE_UNKNOWN)
			c->unknown++;
		else if (pl != STUNE_PLACE_LOCAL)
			c->not_local++;
		if (served == STUNE_PLACE_REMOTE || (served == STUNE_PLACE_UNKNOWN && pl == STUNE_PLACE_REMOTE))
			list_irq(rm, c->remote++, t, q, served == STUNE_PLACE_UNKNOWN ? &q->affinity : &q->effective);
		else if (served == STUNE_PLACE_SPANS || (served == STUNE_PLACE_UNKNOWN && pl == STUNE_PLACE_SPANS))
			list_irq(um, c->unsure++, t, q, served == STUNE_PLACE_UNKNOWN ? &q->affinity : &q->effective);
		else if (served == STUNE_PLACE_LOCAL && pl == STUNE_PLACE_SPANS)
			list_irq(mm, c->may_move++, t, q, &q->affinity);
	}
	if (rm)
		fclose(rm);
	if (mm)
		fclose(mm);
	if (um)
		fclose(um);
}

/* What would move an HBA's movable vectors: a shipped profile (numa's [hba] is match_driver = mpi3mr) or none. */
static const char *move_hint(const struct stune_hba *h, size_t n)
{
	if (h->kind == STUNE_HBA_MPI3MR)
		return n == 1 ? "apply --profile numa pins it" : "apply --profile numa pins them";
	return "no shipped profile tunes this HBA";
}

/*
 * IRQ locality, the first thing to read about an HBA: its movable vectors
 * (the ones a profile may place) and where each is served against the HBA's
 * node (irq_census), and its managed vectors' spread over the nodes, which
 * the kernel decides (one per CPU group) and nobody should try to fix. One
 * text line, one JSON object.
 */
static void render_irq_locality(struct out *o, const struct stune_topology *t, const struct stune_hba *h)
{
	struct irq_census c = {0};
	bool node_known = h->numa_node.set && h->numa_node.v >= 0;
	long long node = (long long)h->numa_node.v;

	irq_census(t, h, &c);
	out_obj_begin(o, "irq_locality");
	out_num(o, "hba_node", NULL, node_known ? h->numa_node : (struct stune_num){0});
	out_arr_begin(o, "movable");
	for (size_t i = 0; i < h->n_irqs; i++) {
		const struct stune_irq *q = &t->irqs[h->irqs[i]];
		if (q->managed != STUNE_NO)
			continue;
		out_obj_begin(o, NULL);
		out_int(o, "irq", NULL, q->irq);
		out_str(o, "name", NULL, q->name);
		render_nodes(o, "affinity_nodes", t, &q->affinity);
		render_nodes(o, "effective_nodes", t, &q->effective);
		out_str(o, "placement", NULL, stune_placement_name(stune_irq_placement(t, h, &q->affinity)));
		out_str(o, "served", NULL, stune_placement_name(stune_irq_placement(t, h, &q->effective)));
		out_obj_end(o);
	}
	out_arr_end(o);
	out_int(o, "movable_count", NULL, (long long)c.movable);
	out_int(o, "movable_not_local_count", NULL, (long long)c.not_local);
	out_int(o, "movable_served_remote_count", NULL, (long long)c.remote);
	out_int(o, "managed_count", NULL, (long long)c.managed);

	out_text(o, "  IRQ locality: ");
	if (h->n_irqs == 0)
		out_text(o, "no IRQ found for this HBA");
	else if (c.movable == 0)
		out_text(o, "no movable vector");
	else if (!node_known)
		out_text(o, "movable %zu, no locality known (numa_node %s): nothing to place %s on", c.movable,
			 h->numa_node.set ? "-1" : "unknown, no PCI function", c.movable == 1 ? "it" : "them");
	else if (c.remote + c.may_move + c.unsure + c.unknown == 0)
		out_text(o, "movable %zu, local (node %lld)", c.movable, node);
	else {
		out_text(o, "movable %zu", c.movable);
		if (c.remote)
			out_text(o, ", %zu REMOTE: %s, the HBA on node %lld", c.remote,
				 c.remote_list ? c.remote_list : "", node);
		if (c.unsure)
			out_text(o, ", %zu may be served off node %lld: %s", c.unsure, node,
				 c.unsure_list ? c.unsure_list : "");
		if (c.may_move)
			out_text(o, ", %zu served on node %lld, allowed elsewhere: %s", c.may_move, node,
				 c.may_move_list ? c.may_move_list : "");
		if (c.unknown)
			out_text(o, ", %zu with an affinity that could not be read", c.unknown);
		if (c.remote + c.unsure + c.may_move)
			out_text(o, " (%s)", move_hint(h, c.remote + c.unsure + c.may_move));
	}
	render_managed_nodes(o, t, h, c.managed);
	out_int(o, "unclassified_count", NULL, (long long)c.unclassified);
	if (c.unclassified)
		out_text(o, "; %zu not classified (never written)", c.unclassified);
	out_text(o, "\n");
	out_obj_end(o);
	irq_census_done(&c);
}

/*
 * The host's line about IRQs, under the HBA count: which HBAs serve a
 * movable vector off their node, and what to run. Nothing when none has a
 * known node or a movable vector. JSON: summary.irq_remote_hbas (PCI
 * addresses, in the order of "hbas").
 */
static void render_irq_summary(struct out *o, const struct stune_topology *t, const char *sysroot, size_t only)
{
	size_t off = 0, mpi3mr_off = 0, checked = 0;
	char *list = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&list, &len);
	out_arr_begin(o, "irq_remote_hbas");
	for (size_t i = 0; i < t->n_hbas; i++) {
		const struct stune_hba *h = &t->hbas[i];
		if (only != SIZE_MAX && only != i)
			continue;
		struct irq_census c = {0};
		irq_census(t, h, &c);
		if (c.movable && h->numa_node.set && h->numa_node.v >= 0)
			checked++;
		if (c.remote) {
			out_str(o, NULL, NULL, h->pci_address);
			if (f && off < 4)
				fprintf(f, "%s%s", off ? ", " : "", h->pci_address ? h->pci_address : "?");
			off++;
			mpi3mr_off += h->kind == STUNE_HBA_MPI3MR;
		}
		irq_census_done(&c);
	}
	out_arr_end(o);
	if (f)
		fclose(f);
	if (off) {
		out_text(o, "IRQs:      %zu HBA%s serve%s a movable vector off %s node: %s%s\n", off,
			 off == 1 ? "" : "s", off == 1 ? "s" : "", off == 1 ? "its" : "their", list ? list : "",
			 off > 4 ? ", ..." : "");
		if (!mpi3mr_off) {
			out_text(o, "           no shipped profile tunes these HBAs (scsitune-profile(5))\n");
		} else {
			/* The command as it is to be pasted: the same tree (--sysroot, quoted for the shell). */
			char *cmd = NULL;
			size_t clen = 0;
			FILE *c = open_memstream(&cmd, &clen);
			if (c) {
				fputs("scsitune ", c);
				if (sysroot) {
					fputs("--sysroot ", c);
					wrap_shell_word(c, sysroot);
					fputc(' ', c);
				}
				fputs("apply --profile numa --dry-run", c);
				if (fclose(c) != 0) {
					free(cmd);
					cmd = NULL;
				}
			}
			out_text(o, "           to see the fix:\n");
			out_str(o, NULL, "           " WRAP_SHELL "%s\n",
				cmd ? cmd : "scsitune apply --profile numa --dry-run");
			free(cmd);
		}
	} else if (checked)
		out_text(o, "IRQs:      every movable vector is served on its HBA's node\n");
	free(list);
}

/* v >> shift as width lower-case hex digits, in buf; NULL when unset. */
static const char *hexid(char *buf, size_t len, struct stune_num v, int width, int shift)
{
	if (!v.set || v.v < 0)
		return NULL;
	snprintf(buf, len, "%0*llx", width, (unsigned long long)v.v >> shift);
	return buf;
}

static void render_hba(struct out *o, const struct stune_topology *t, const struct stune_hba *h, int verbose)
{
	char sysfs_path[PATH_MAX];
	snprintf(sysfs_path, sizeof(sysfs_path), "/%s", h->sysfs_path);
	bool pci = h->pci_address != NULL;
	/* numa_node -1 (NUMA_NO_NODE) and no PCI function both mean no locality. */
	bool local = h->numa_node.set && h->numa_node.v >= 0;

	/* Text: the header line (address, driver, node), then IRQ locality, then identity. */
	out_obj_begin(o, NULL);
	out_text(o, "\n");
	txt_str(o, "HBA %s", pci ? h->pci_address : sysfs_path);
	txt_str(o, "  %s", h->driver);
	txt_str(o, h->driver_version ? " %s" : NULL, h->driver_version);
	bool other = h->pci_driver && h->driver && strcmp(h->pci_driver, h->driver) != 0;
	txt_str(o, other ? " (on %s)" : NULL, h->pci_driver);
	if (!pci)
		out_text(o, "  no PCI function: no locality known\n");
	else {
		txt_num(o, "  node %s", h->numa_node);
		if (!local)
			out_text(o, " (no locality known)");
		txt_cpus(o, "  local cpus %s\n", &h->local_cpus);
	}

	out_str(o, "pci_address", NULL, h->pci_address);
	out_str(o, "sysfs_path", NULL, sysfs_path);
	out_str(o, "kind", NULL, stune_hba_kind_name(h->kind));
	out_str(o, "vendor_name", NULL, h->vendor_name);
	out_str(o, "model", NULL, h->model);
	/* PCI IDs as lspci -n writes them: lower-case hex strings, "1000:00a5", class "0107". */
	char ven[24], dev[24], sven[24], sdev[24], id[64], sid[64], cls[24], pif[24], rev[24];
	const char *v = hexid(ven, sizeof(ven), h->vendor, 4, 0), *d = hexid(dev, sizeof(dev), h->device, 4, 0),
		   *sv = hexid(sven, sizeof(sven), h->subsystem_vendor, 4, 0),
		   *sd = hexid(sdev, sizeof(sdev), h->subsystem_device, 4, 0);
	snprintf(id, sizeof(id), "%s:%s", v ? v : "", d ? d : "");
	snprintf(sid, sizeof(sid), "%s:%s", sv ? sv : "", sd ? sd : "");
	out_str(o, "vendor_id", NULL, v);
	out_str(o, "device_id", NULL, d);
	out_str(o, "pci_id", NULL, v && d ? id : NULL);
	out_str(o, "subsystem_vendor_id", NULL, sv);
	out_str(o, "subsystem_device_id", NULL, sd);
	out_str(o, "subsystem_id", NULL, sv && sd ? sid : NULL);
	out_str(o, "class", NULL, hexid(cls, sizeof(cls), h->class_code, 4, 8));
	out_str(o, "prog_if", NULL,
		hexid(pif, sizeof(pif), h->class_code.set ? STUNE_NUM(h->class_code.v & 0xff) : h->class_code, 2, 0));
	out_str(o, "revision", NULL, hexid(rev, sizeof(rev), h->revision, 2, 0));
	out_str(o, "driver", NULL, h->driver);
	out_str(o, "driver_version", NULL, h->driver_version);
	out_str(o, "pci_driver", NULL, h->pci_driver);
	out_str(o, "firmware", NULL, h->firmware);
	out_num(o, "numa_node", NULL, h->numa_node);
	out_bool(o, "numa_local_known", NULL, local ? STUNE_YES : STUNE_NO);
	out_cpus(o, "local_cpus", NULL, &h->local_cpus);
	render_irq_locality(o, t, h);

	/* Identity: the hwdb names, the PCI IDs as lspci writes them, the firmware. */
	if (h->vendor_name || h->model) {
		txt_str(o, "  %s", h->vendor_name);
		txt_str(o, h->model ? " %s" : NULL, h->model);
		out_text(o, "\n");
	}
	if (pci) {
		out_hex(o, NULL, "  pci %s", h->vendor, 4);
		out_hex(o, NULL, ":%s", h->device, 4);
		out_hex(o, NULL, "  subsystem %s", h->subsystem_vendor, 4);
		out_hex(o, NULL, ":%s", h->subsystem_device, 4);
		txt_str(o, h->firmware ? "  firmware %s" : NULL, h->firmware);
		out_text(o, "\n");
	}

	out_arr_begin(o, "scsi_hosts");
	for (size_t i = 0; i < h->n_hosts; i++)
		render_host(o, t, &t->hosts[h->hosts[i]], verbose);
	out_arr_end(o);

	struct irq_cols w = {4, 8, 9};
	for (size_t i = 0; i < h->n_irqs && verbose; i++) {
		const struct stune_irq *q = &t->irqs[h->irqs[i]];
		int n;
		if ((n = str_width(q->name)) > w.name)
			w.name = n;
		if ((n = cpus_width(&q->affinity)) > w.aff)
			w.aff = n;
		if ((n = cpus_width(&q->effective)) > w.eff)
			w.eff = n;
	}
	if (h->n_irqs && verbose)
		out_text(o, "    %5s  %6s  %-*s  %-7s  %-*s  %-*s  %4s  %s\n", "IRQ", "VECTOR", w.name, "NAME",
			 "MANAGED", w.aff, "AFFINITY", w.eff, "EFFECTIVE", "HCTX", "COUNT");
	out_arr_begin(o, "irqs");
	for (size_t i = 0; i < h->n_irqs; i++)
		render_irq(o, &t->irqs[h->irqs[i]], &w, verbose);
	out_arr_end(o);
	out_obj_end(o);
}

void render_topology(struct out *o, const struct stune_topology *t, const char *sysroot, int verbose, size_t only,
		     const struct stune_payload_status *payload)
{
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_DETECT_SCHEMA_VERSION);
	out_obj_begin(o, "source");
	out_bool(o, "sysroot", NULL, sysroot ? STUNE_YES : STUNE_NO);
	out_str(o, "udev", NULL, t->udev_source);
	out_obj_end(o);
	render_kernel(o, t, verbose);
	render_payload(o, t, payload);
	render_cpus_numa(o, t);

	size_t mpi3mr = 0;
	for (size_t i = 0; i < t->n_hbas; i++)
		mpi3mr += t->hbas[i].kind == STUNE_HBA_MPI3MR;
	out_obj_begin(o, "summary");
	out_int(o, "hba_count", "HBAs:      %s", (long long)t->n_hbas);
	out_int(o, "mpi3mr_count", " (%s mpi3mr)", (long long)mpi3mr);
	out_int(o, "scsi_host_count", "  SCSI hosts %s", (long long)t->n_hosts);
	out_int(o, "disk_count", "  disks %s\n", (long long)t->n_disks);
	render_irq_summary(o, t, sysroot, only);
	out_obj_end(o);
	if (t->n_hosts == 0)
		out_text(o, "No SCSI host adapter found.\n");

	out_arr_begin(o, "hbas");
	for (size_t i = 0; i < t->n_hbas; i++)
		if (only == SIZE_MAX || only == i)
			render_hba(o, t, &t->hbas[i], verbose);
	out_arr_end(o);
	out_obj_end(o);

	/* What -v would add, counted. */
	size_t irqs = 0, disks = 0;
	for (size_t i = 0; i < t->n_hbas; i++)
		if (only == SIZE_MAX || only == i) {
			irqs += t->hbas[i].n_irqs;
			for (size_t j = 0; j < t->hbas[i].n_hosts; j++)
				disks += t->hosts[t->hbas[i].hosts[j]].n_disks;
		}
	if (!verbose && disks)
		out_text(o, "\n-v: the queue settings and counters of the %zu disk%s, hctx maps%s", disks,
			 disks == 1 ? "" : "s", irqs ? ", " : ".\n");
	else if (!verbose && irqs)
		out_text(o, "\n-v: ");
	if (!verbose && irqs)
		out_text(o, "the %zu IRQ%s.\n", irqs, irqs == 1 ? "" : "s");
}
