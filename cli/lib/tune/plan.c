/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stune_plan_build: a pure function of the host model and the profile.
 * Kernel facts behind each decision: ../shared/reference/kernel.md §2 (IRQs)
 * and §3 (block queue and scsi_device attributes); the states and notes are
 * documented in scsitune-apply(8).
 */
#include "tune/plan.h"
#include "tune/internal.h"
#include "detect/irqbalance.h"
#include "core/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *stune_change_state_name(enum stune_change_state s)
{
	switch (s) {
	case STUNE_CHANGE:
		return "change";
	case STUNE_ALREADY:
		return "already";
	case STUNE_NOT_SETTABLE:
		return "not-settable";
	case STUNE_NOT_APPLICABLE:
		return "not-applicable";
	}
	return "?";
}

void stune_plan_count(const struct stune_plan *plan, size_t counts[4])
{
	for (int i = 0; i < 4; i++)
		counts[i] = 0;
	for (size_t i = 0; i < plan->n_changes; i++)
		counts[plan->changes[i].state]++;
}

void stune_plan_free(struct stune_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_changes; i++) {
		struct stune_change *c = &plan->changes[i];
		free(c->object);
		free(c->device);
		free(c->setting);
		free(c->path);
		free(c->current);
		free(c->desired);
		free(c->note);
	}
	free(plan->changes);
	for (size_t i = 0; i < plan->n_hbas; i++)
		free(plan->hbas[i].why);
	free(plan->hbas);
	free(plan);
}

static char *num_str(struct stune_num n)
{
	return n.set ? stune_strdupf("%lld", (long long)n.v) : NULL;
}

/* A change under construction; strings are taken over (may be NULL). */
struct draft {
	enum stune_object_kind kind;
	enum stune_profile_section cls;
	const char *object, *device;
	size_t index;
	const char *setting;
	char *path, *current, *desired, *note;
	enum stune_change_state state;
	const struct stune_profile_value *source;
};

static int add(struct stune_plan *plan, struct draft *d)
{
	int r = 0;
	if (plan->n_changes >= plan->cap_changes) {
		size_t cap = plan->cap_changes ? 2 * plan->cap_changes : 64;
		struct stune_change *n = realloc(plan->changes, cap * sizeof(*n));
		if (!n) {
			r = -ENOMEM;
			goto out;
		}
		plan->changes = n;
		plan->cap_changes = cap;
	}
	struct stune_change *c = &plan->changes[plan->n_changes];
	*c = (struct stune_change){
	    .kind = d->kind,
	    .cls = d->cls,
	    .index = d->index,
	    .state = d->state,
	    .source = d->source,
	    .path = steal_pointer(&d->path),
	    .current = steal_pointer(&d->current),
	    .desired = steal_pointer(&d->desired),
	    .note = steal_pointer(&d->note),
	};
	c->object = strdup(d->object);
	c->device = d->device ? strdup(d->device) : NULL;
	c->setting = strdup(d->setting);
	plan->n_changes++;
	if (!c->object || !c->setting || (d->device && !c->device) || !c->path)
		r = -ENOMEM;
out:
	free(d->path);
	free(d->current);
	free(d->desired);
	free(d->note);
	return r;
}

/* ---- selection ---- */

static const struct stune_hba *disk_hba(const struct stune_topology *t, const struct stune_disk *d)
{
	if (d->host >= t->n_hosts)
		return NULL;
	size_t h = t->hosts[d->host].hba;
	return h < t->n_hbas ? &t->hbas[h] : NULL;
}

static const struct stune_host *disk_host(const struct stune_topology *t, const struct stune_disk *d)
{
	return d->host < t->n_hosts ? &t->hosts[d->host] : NULL;
}

/* match_driver's words: the SCSI or the PCI function's driver; "*" is any. */
static bool driver_in(const char *words, const struct stune_hba *h)
{
	if (stune_word_in(words, "*"))
		return true;
	return h && ((h->driver && stune_word_in(words, h->driver)) ||
		     (h->pci_driver && stune_word_in(words, h->pci_driver)));
}

static bool match_driver(const struct stune_profile_rule *r, const struct stune_hba *h)
{
	const struct stune_profile_value *m = stune_profile_rule_match(r, "match_driver");
	return !m || driver_in(m->value, h);
}

/*
 * Is h in the profile's scope ([hba] match_driver / match_pci; a profile
 * without them is refused at load)? why (may be NULL) gets the reason, for
 * people: which key took it or left it out, and where that key was set.
 */
static bool hba_scope(const struct stune_profile *p, const struct stune_hba *h, char **why)
{
	bool in = false, seen = false;
	_cleanup_free_ char *text = NULL;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct stune_profile_rule *r = &p->rules[i];
		if (r->cls != STUNE_SECTION_HBA)
			continue;
		const struct stune_profile_value *md = stune_profile_rule_match(r, "match_driver"),
						 *mp = stune_profile_rule_match(r, "match_pci");
		if (!md && !mp)
			continue;
		seen = true;
		_cleanup_free_ char *drv = NULL;
		if (h && h->driver && h->pci_driver && strcmp(h->driver, h->pci_driver))
			drv = stune_strdupf("driver %s (PCI function: %s)", h->driver, h->pci_driver);
		else
			drv = stune_strdupf("driver %s", h && h->driver	      ? h->driver
							 : h && h->pci_driver ? h->pci_driver
									      : "unknown");
		const char *addr = h && h->pci_address ? h->pci_address : NULL;
		/* One [hba] rule (the section takes no label); included files override it key by key. */
		in = true;
		free(text);
		text = NULL;
		if (md && !driver_in(md->value, h)) {
			in = false;
			text = stune_strdupf("%s: not in match_driver = %s (%s:%u)", drv ? drv : "driver", md->value,
					     md->file, md->line);
		} else if (mp && (!addr || !stune_word_in(mp->value, addr))) {
			in = false;
			text = addr ? stune_strdupf("%s: not in match_pci = %s (%s:%u)", addr, mp->value, mp->file,
						    mp->line)
				    : stune_strdupf("no PCI address: match_pci = %s (%s:%u) cannot take it", mp->value,
						    mp->file, mp->line);
		} else if (md && mp)
			text = stune_strdupf("%s in match_driver (%s:%u), %s in match_pci (%s:%u)",
					     drv ? drv : "driver", md->file, md->line, addr, mp->file, mp->line);
		else if (md && stune_word_in(md->value, "*"))
			text = stune_strdupf("match_driver = * (%s:%u): every HBA", md->file, md->line);
		else if (md)
			text = stune_strdupf("%s in match_driver (%s:%u)", drv ? drv : "driver", md->file, md->line);
		else
			text = stune_strdupf("%s in match_pci (%s:%u)", addr, mp->file, mp->line);
	}
	if (!seen) {
		in = false;
		text = strdup("the profile names no HBA ([hba] match_driver or match_pci)");
	}
	if (why)
		*why = steal_pointer(&text);
	return in;
}

static bool hba_selected(const struct stune_profile *p, const struct stune_hba *h)
{
	return hba_scope(p, h, NULL);
}

static bool match_disk(const struct stune_profile_rule *r, const struct stune_disk *d, const struct stune_hba *h)
{
	if (!match_driver(r, h))
		return false;
	const struct stune_profile_value *m = stune_profile_rule_match(r, "match_rotational");
	if (m && (!d->rotational.set || d->rotational.v != strtol(m->value, NULL, 10)))
		return false;
	return true;
}

/* The value in effect for one object: the last matching rule that sets key. */
static const struct stune_profile_value *disk_value(const struct stune_profile *p, enum stune_profile_section cls,
						    const struct stune_disk *d, const struct stune_hba *h,
						    const char *key)
{
	const struct stune_profile_value *v = NULL;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct stune_profile_rule *r = &p->rules[i];
		if (r->cls != cls || !match_disk(r, d, h))
			continue;
		const struct stune_profile_value *x = stune_profile_rule_get(r, key);
		if (x)
			v = x;
	}
	return v;
}

/* ---- disks ---- */

/* The kernel's default scheduler: elevator.c:636-646. NULL when it cannot be told. */
static const char *default_scheduler(const struct stune_disk *d, const struct stune_host *host)
{
	if (d->nr_hw_queues.set && d->nr_hw_queues.v == 1)
		return "mq-deadline";
	if (host && host->host_tagset == STUNE_YES)
		return "mq-deadline";
	if (d->nr_hw_queues.set && host && host->host_tagset == STUNE_NO)
		return "none";
	return NULL;
}

static bool scheduler_listed(const struct stune_disk *d, const char *s)
{
	if (!d->schedulers)
		return true; /* unknown: let the kernel say */
	for (char **p = d->schedulers; *p; p++)
		if (!strcmp(*p, s))
			return true;
	return false;
}

static int plan_number(struct stune_plan *plan, struct draft *dr, struct stune_num cur, const char *desired)
{
	dr->current = num_str(cur);
	dr->desired = strdup(desired);
	if (!cur.set) {
		dr->state = STUNE_NOT_APPLICABLE;
		dr->note = stune_strdupf("%s could not be read here (no such attribute, or not a number): not written",
					 dr->setting);
	} else
		dr->state = cur.v == strtoll(desired, NULL, 10) ? STUNE_ALREADY : STUNE_CHANGE;
	return add(plan, dr);
}

/* Where one disk's setting goes: the disk, its SCSI host, the plan's object name, the disk's index. */
struct disk_at {
	const struct stune_disk *d;
	const struct stune_host *host;
	const char *object;
	size_t di;
};

/* The scheduler comes first: switching it resets nr_requests (blk-mq-sched.c). *final_sched
 * becomes the scheduler the queue has after apply. */
static int plan_scheduler(struct stune_plan *plan, const struct disk_at *at, const struct stune_profile_value *v,
			  const char **final_sched)
{
	const struct stune_disk *d = at->d;
	const struct stune_host *host = at->host;
	struct draft dr = {STUNE_OBJ_DISK, STUNE_SECTION_QUEUE, at->object, d->name, at->di, "queue/scheduler"};
	dr.source = v;
	dr.path = stune_strdupf("sys/block/%s/queue/scheduler", d->name);
	dr.current = d->scheduler ? strdup(d->scheduler) : NULL;
	const char *want = v->value;
	if (!strcmp(want, "kernel-default"))
		want = default_scheduler(d, host);
	if (!want) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.note = strdup("the kernel's default depends on shared host tags, unknown for this host");
	} else {
		dr.desired = strdup(want);
		*final_sched = want;
		if (!d->scheduler) {
			dr.state = STUNE_NOT_APPLICABLE;
			dr.note = strdup("queue/scheduler could not be read here: not written");
		} else if (!strcmp(d->scheduler, want))
			dr.state = STUNE_ALREADY;
		else if (strcmp(want, "none") && d->schedulers && d->schedulers[0] && !d->schedulers[1]) {
			dr.state = STUNE_NOT_APPLICABLE;
			dr.note = strdup("this queue offers no I/O scheduler (BLK_MQ_F_NO_SCHED): a write "
					 "would be ignored");
		} else {
			dr.state = STUNE_CHANGE;
			if (!scheduler_listed(d, want))
				dr.note = stune_strdupf("%s is not loaded yet: the write makes the kernel load "
							"%s-iosched, and fails with EINVAL if it cannot",
							want, want);
		}
	}
	return add(plan, &dr);
}

static int plan_nr_requests(struct stune_plan *plan, const struct disk_at *at, const struct stune_profile_value *v,
			    const char *final_sched)
{
	const struct stune_disk *d = at->d;
	const struct stune_host *host = at->host;
	struct draft dr = {STUNE_OBJ_DISK, STUNE_SECTION_QUEUE, at->object, d->name, at->di, "queue/nr_requests"};
	dr.source = v;
	dr.path = stune_strdupf("sys/block/%s/queue/nr_requests", d->name);
	long long want = -1;
	bool none = final_sched && !strcmp(final_sched, "none");
	bool can_queue = host && host->can_queue.set && host->can_queue.v > 0;
	if (!strcmp(v->value, "kernel-default")) {
		/* none: the tag depth; a scheduler: 2 * min(depth, 128) (blk-mq-sched.c:568-577). */
		if (final_sched && can_queue)
			want = none ? host->can_queue.v : 2 * (host->can_queue.v < 128 ? host->can_queue.v : 128);
	} else
		want = strtoll(v->value, NULL, 10);
	dr.current = num_str(d->nr_requests);
	if (want < 0) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.note = strdup("the kernel's default depends on the scheduler and the host's can_queue, "
				 "unknown here");
	} else {
		dr.desired = stune_strdupf("%lld", want);
		if (!d->nr_requests.set) {
			dr.state = STUNE_NOT_APPLICABLE;
			dr.note = strdup("queue/nr_requests could not be read here: not written");
		} else if (d->nr_requests.v == want)
			dr.state = STUNE_ALREADY;
		else if (none && can_queue && want > host->can_queue.v) {
			dr.state = STUNE_NOT_APPLICABLE;
			dr.note =
			    stune_strdupf("with scheduler none nr_requests cannot exceed the tag depth (%lld): the "
					  "kernel answers EINVAL",
					  (long long)host->can_queue.v);
		} else {
			dr.state = STUNE_CHANGE;
			if (none && host && host->host_tagset == STUNE_YES)
				dr.note = strdup("shared host tags and no scheduler: this write resizes the "
						 "tag space of every disk on the HBA");
		}
	}
	return add(plan, &dr);
}

static int plan_io_poll(struct stune_plan *plan, const struct disk_at *at, const struct stune_profile_value *v)
{
	const struct stune_disk *d = at->d;
	struct draft dr = {STUNE_OBJ_DISK, STUNE_SECTION_QUEUE, at->object, d->name, at->di, "queue/io_poll"};
	dr.source = v;
	dr.path = stune_strdupf("sys/block/%s/queue/io_poll", d->name);
	dr.current = num_str(d->io_poll);
	dr.desired = strdup(v->value);
	if (!d->io_poll.set) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.note = strdup("queue/io_poll could not be read here");
	} else if (d->io_poll.v == strtoll(v->value, NULL, 10))
		dr.state = STUNE_ALREADY;
	else if (d->io_poll.v == 0) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.note = strdup("no poll queues: polling comes from the driver (e.g. mpi3mr poll_queues=), "
				 "the sysfs write is refused");
	} else {
		dr.state = STUNE_NOT_SETTABLE;
		dr.note = strdup("the kernel ignores writes to io_poll; poll queues are a driver parameter "
				 "([module:NAME])");
	}
	return add(plan, &dr);
}

static int plan_queue_depth(struct stune_plan *plan, const struct disk_at *at, const struct stune_profile_value *v)
{
	const struct stune_disk *d = at->d;
	const struct stune_host *host = at->host;
	struct draft dr = {STUNE_OBJ_DISK, STUNE_SECTION_SCSI_DEVICE, at->object, d->name,
			   at->di,	   "device/queue_depth"};
	dr.source = v;
	dr.path = stune_strdupf("sys/block/%s/device/queue_depth", d->name);
	long long want = strtoll(v->value, NULL, 10);
	if (host && host->can_queue.set && want > host->can_queue.v) {
		dr.current = num_str(d->queue_depth);
		dr.desired = strdup(v->value);
		dr.state = STUNE_NOT_APPLICABLE;
		dr.note = stune_strdupf("queue_depth must be at most the host's can_queue (%lld): the kernel answers "
					"EINVAL",
					(long long)host->can_queue.v);
		return add(plan, &dr);
	}
	return plan_number(plan, &dr, d->queue_depth, v->value);
}

static int plan_disk(struct stune_plan *plan, const struct stune_topology *t, const struct stune_profile *p, size_t di)
{
	const struct stune_disk *d = &t->disks[di];
	const struct stune_hba *h = disk_hba(t, d);
	const struct disk_at at = {d, disk_host(t, d), d->key ? d->key : d->name, di};
	const struct stune_profile_value *v;
	const char *final_sched = d->scheduler;
	int r;

	if ((v = disk_value(p, STUNE_SECTION_QUEUE, d, h, "scheduler")) &&
	    (r = plan_scheduler(plan, &at, v, &final_sched)) < 0)
		return r;
	if ((v = disk_value(p, STUNE_SECTION_QUEUE, d, h, "nr_requests")) &&
	    (r = plan_nr_requests(plan, &at, v, final_sched)) < 0)
		return r;

	static const char *const numeric[] = {"rq_affinity", "nomerges", "read_ahead_kb", "add_random"};
	const struct stune_num cur[] = {d->rq_affinity, d->nomerges, d->read_ahead_kb, d->add_random};
	for (size_t i = 0; i < ELEMENTSOF(numeric); i++) {
		v = disk_value(p, STUNE_SECTION_QUEUE, d, h, numeric[i]);
		if (!v)
			continue;
		_cleanup_free_ char *setting = stune_strdupf("queue/%s", numeric[i]);
		if (!setting)
			return -ENOMEM;
		struct draft dr = {STUNE_OBJ_DISK, STUNE_SECTION_QUEUE, at.object, d->name, di, setting};
		dr.source = v;
		dr.path = stune_strdupf("sys/block/%s/queue/%s", d->name, numeric[i]);
		size_t before = plan->n_changes;
		if ((r = plan_number(plan, &dr, cur[i], v->value)) < 0)
			return r;
		struct stune_change *c = &plan->changes[before];
		if (!strcmp(numeric[i], "add_random") && c->state == STUNE_CHANGE)
			c->note = strdup("sd sets add_random again on every revalidate (rescan, resize): only "
					 "--persist keeps it");
	}

	if ((v = disk_value(p, STUNE_SECTION_QUEUE, d, h, "io_poll")) && (r = plan_io_poll(plan, &at, v)) < 0)
		return r;
	if ((v = disk_value(p, STUNE_SECTION_SCSI_DEVICE, d, h, "queue_depth")) &&
	    (r = plan_queue_depth(plan, &at, v)) < 0)
		return r;
	return 0;
}

/* ---- IRQs ---- */

static const struct stune_node *find_node(const struct stune_topology *t, int64_t id)
{
	for (size_t i = 0; i < t->numa.n_nodes; i++)
		if (t->numa.nodes[i].id == id)
			return &t->numa.nodes[i];
	return NULL;
}

static const struct stune_profile_value *irq_policy(const struct stune_profile *p, const struct stune_hba *h)
{
	const struct stune_profile_value *v = NULL;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct stune_profile_rule *r = &p->rules[i];
		if (r->cls != STUNE_SECTION_IRQ || !match_driver(r, h))
			continue;
		const struct stune_profile_value *x = stune_profile_rule_get(r, "affinity");
		if (x)
			v = x;
	}
	return v;
}

static char *cpus_str(const struct stune_cpuset *s)
{
	char *out = NULL;
	if (!s->valid || stune_cpuset_format(s, &out) < 0)
		return NULL;
	return out;
}

/* Per HBA: does the profile set rq_affinity=2 on one of its disks? One pass over the disks for all HBAs. */
static bool *hbas_rq2(const struct stune_profile *p, const struct stune_topology *t)
{
	bool *rq2 = calloc(t->n_hbas ? t->n_hbas : 1, sizeof(*rq2));
	if (!rq2)
		return NULL;
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		const struct stune_hba *h = disk_hba(t, d);
		if (!h || rq2[h - t->hbas])
			continue;
		const struct stune_profile_value *v = disk_value(p, STUNE_SECTION_QUEUE, d, h, "rq_affinity");
		rq2[h - t->hbas] = v && !strcmp(v->value, "2");
	}
	return rq2;
}

/* What the profile does for the disks of a host whose IRQs cannot be moved (rq2: hbas_rq2 for h). */
static char *managed_note(const struct stune_hba *h, const struct stune_irq *q, bool rq2)
{
	_cleanup_free_ char *node = NULL;
	if (h->numa_node.set && h->numa_node.v >= 0)
		node = stune_strdupf("bind the workload to node %lld (report --run does)", (long long)h->numa_node.v);
	_cleanup_free_ char *hctx = q->hctx.set ? stune_strdupf(", serves hctx %lld", (long long)q->hctx.v) : NULL;
	const char *rq = rq2 ? "rq_affinity=2 (this profile) completes each request on the CPU that submitted it" : "";
	return stune_strdupf("the kernel manages it (%s)%s: a write fails with EIO; instead: %s%s%s",
			     q->managed_rule ? q->managed_rule : "driver rule", hctx ? hctx : "", rq,
			     rq2 && node ? "; " : "", node ? node : (rq2 ? "" : "nothing to do from user space"));
}

/*
 * The CPUs of the HBA's node that are online (cpus), else why the HBA's IRQs
 * are left in place (no_node). The host's CPUs when cpu/online is
 * unreadable: the present ones, else the possible ones (a node's cpulist
 * alone may name CPUs the host does not have).
 */
static int hba_local_cpus(const struct stune_topology *t, const struct stune_hba *h, struct stune_cpuset *cpus,
			  const char **no_node)
{
	int r;
	const struct stune_node *node = NULL;
	const struct stune_cpuset *host = t->cpus.online.valid	   ? &t->cpus.online
					  : t->cpus.present.valid  ? &t->cpus.present
					  : t->cpus.possible.valid ? &t->cpus.possible
								   : NULL;
	if (!host)
		*no_node = "the host's CPUs are unknown (cpu/online, present and possible unreadable): IRQ left in "
			   "place";
	else if (!h->numa_node.set && h->pci_address)
		*no_node =
		    "the HBA's NUMA node is unknown (numa_node unreadable or out of range): no CPU is local to it, "
		    "IRQ left in place";
	else if (!h->numa_node.set)
		*no_node = "the HBA's NUMA node is unknown (no PCI function): no CPU is local to it, IRQ left in place";
	else if (h->numa_node.v < 0)
		*no_node = "the HBA's numa_node is -1: the firmware gives no locality, so no node is local to it; "
			   "IRQ left in place (the kernel's default mask or irqbalance decides)";
	else if (!(node = find_node(t, h->numa_node.v)) || !node->cpus.valid)
		*no_node = "the HBA's node is not among the online nodes: IRQ left in place";
	else {
		for (int cpu = stune_cpuset_next(&node->cpus, 0); cpu >= 0;
		     cpu = stune_cpuset_next(&node->cpus, (unsigned)cpu + 1)) {
			if (!stune_cpuset_has(host, (unsigned)cpu))
				continue;
			if ((r = stune_cpuset_set(cpus, (unsigned)cpu)) < 0) {
				stune_cpuset_clear(cpus);
				return r;
			}
		}
		if (stune_cpuset_count(cpus) == 0)
			*no_node = "no CPU of the HBA's node is online: IRQ left in place";
	}
	return 0;
}

static int plan_hba_irqs(struct stune_plan *plan, const struct stune_topology *t, const struct stune_profile *p,
			 size_t hi, const bool *rq2, size_t *n_pinned)
{
	const struct stune_hba *h = &t->hbas[hi];
	const struct stune_profile_value *v = irq_policy(p, h);
	int r;

	if (!v || !strcmp(v->value, "keep") || !h->n_irqs)
		return 0;
	bool spread = !strcmp(v->value, "node-local-spread");

	/* The CPUs of the HBA's node that are online, or why there are none. */
	struct stune_cpuset cpus = {0};
	const char *no_node = NULL;
	if ((r = hba_local_cpus(t, h, &cpus, &no_node)) < 0)
		return r;

	size_t k = 0, ncpu = stune_cpuset_count(&cpus);
	r = 0;
	for (size_t j = 0; j < h->n_irqs && r >= 0; j++) {
		size_t qi = h->irqs[j];
		if (qi >= t->n_irqs)
			continue;
		const struct stune_irq *q = &t->irqs[qi];
		_cleanup_free_ char *object = stune_strdupf("irq:%u", q->irq);
		_cleanup_free_ char *device =
		    stune_strdupf("%s %s", q->name ? q->name : "-", h->pci_address ? h->pci_address : "-");
		if (!object || !device) {
			r = -ENOMEM;
			break;
		}
		struct draft dr = {STUNE_OBJ_IRQ, STUNE_SECTION_IRQ, object, device, qi, "smp_affinity_list"};
		dr.source = v;
		dr.path = stune_strdupf("proc/irq/%u/smp_affinity_list", q->irq);
		dr.current = cpus_str(&q->affinity);
		if (q->managed == STUNE_YES) {
			dr.state = STUNE_NOT_SETTABLE;
			dr.note = managed_note(h, q, rq2[hi]);
		} else if (q->managed == STUNE_UNKNOWN) {
			dr.state = STUNE_NOT_SETTABLE;
			dr.note = stune_strdupf(
			    "not classified (%s): scsitune writes only IRQs it knows the kernel does not manage",
			    q->managed_rule ? q->managed_rule : "no rule");
		} else if (no_node) {
			dr.state = STUNE_NOT_APPLICABLE;
			dr.note = strdup(no_node);
		} else {
			struct stune_cpuset want = {0};
			if (spread) {
				/* The k-th movable IRQ of the HBA goes to the k-th CPU of the node. */
				size_t target = k++ % ncpu;
				int cpu = stune_cpuset_next(&cpus, 0);
				while (target-- > 0)
					cpu = stune_cpuset_next(&cpus, (unsigned)cpu + 1);
				r = stune_cpuset_set(&want, (unsigned)cpu);
			} else
				r = stune_cpuset_copy(&want, &cpus);
			want.valid = true;
			if (r >= 0) {
				dr.desired = cpus_str(&want);
				if (!q->affinity.valid) {
					dr.state = STUNE_NOT_APPLICABLE;
					dr.note = strdup("smp_affinity_list could not be read here: not written");
				} else {
					/* By meaning: the sets, not their spelling (list vs mask). */
					dr.state =
					    stune_cpuset_equal(&q->affinity, &want) ? STUNE_ALREADY : STUNE_CHANGE;
					(*n_pinned)++;
				}
			}
			stune_cpuset_clear(&want);
		}
		int r2 = add(plan, &dr);
		if (r >= 0)
			r = r2;
	}
	stune_cpuset_clear(&cpus);
	return r;
}

/* ---- irqbalance, modules ---- */

/* The last word of IRQBALANCE_ARGS when it is one of irqbalance's options that take a value
 * and that value is missing ("--banirq" at the end): a ban appended after it would be read
 * as that option's value. NULL when the options end cleanly. Points into args. */
static const char *irqbalance_dangling(const char *args, size_t *len)
{
	static const char *const with_value[] = {"-i", "--banirq",	 "-h", "--hintpolicy",	 "-p", "--powerthresh",
						 "-c", "--deepestcache", "-l", "--policyscript", "-s", "--pid",
						 "-m", "--banmod",	 "-t", "--interval",	 "-e", "--migrateval"};
	if (!args)
		return NULL;
	size_t n = strlen(args);
	while (n && strchr(" \t", args[n - 1]))
		n--;
	size_t b = n;
	while (b && !strchr(" \t", args[b - 1]))
		b--;
	for (size_t i = 0; i < ELEMENTSOF(with_value); i++)
		if (n - b == strlen(with_value[i]) && !strncmp(args + b, with_value[i], n - b)) {
			*len = n - b;
			return args + b;
		}
	return NULL;
}

static int plan_irqbalance(struct stune_plan *plan, const struct stune_topology *t, const struct stune_profile *p,
			   size_t first_irq_change)
{
	const struct stune_profile_value *v = NULL;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].cls == STUNE_SECTION_IRQBALANCE) {
			const struct stune_profile_value *x = stune_profile_rule_get(&p->rules[i], "ban_pinned");
			if (x)
				v = x;
		}
	if (!v || strcmp(v->value, "yes"))
		return 0;
	const struct stune_irqbalance *ib = &t->irqbalance;
	/* The bans the pinned IRQs need, and those the current args lack (grown in place: linear in IRQs). */
	_cleanup_free_ char *all = NULL, *missing = NULL;
	size_t all_len = 0, missing_len = 0;
	_cleanup_fclose_ FILE *fa = open_memstream(&all, &all_len);
	_cleanup_fclose_ FILE *fm = open_memstream(&missing, &missing_len);
	if (!fa || !fm)
		return -ENOMEM;
	_cleanup_free_ unsigned *banned = NULL;
	size_t n_banned = 0;
	if (stune_irqbalance_banned(ib->args, &banned, &n_banned) < 0)
		return -ENOMEM;
	for (size_t i = first_irq_change; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		if (c->kind != STUNE_OBJ_IRQ || (c->state != STUNE_CHANGE && c->state != STUNE_ALREADY))
			continue;
		unsigned irq = (unsigned)strtoul(c->object + 4, NULL, 10);
		fprintf(fa, "%s--banirq=%u", ftell(fa) ? " " : "", irq);
		if (!stune_irqbalance_banned_has(banned, n_banned, irq))
			fprintf(fm, "%s--banirq=%u", ftell(fm) ? " " : "", irq);
	}
	bool any_all = ftell(fa) > 0, any_missing = ftell(fm) > 0;
	int ca = fclose(fa), cm = fclose(fm);
	fa = fm = NULL;
	if (ca != 0 || cm != 0)
		return -ENOMEM;
	if (!any_all) {
		free(all);
		all = NULL;
	}
	if (!any_missing) {
		free(missing);
		missing = NULL;
	}
	if (!all)
		return 0;
	struct draft dr = {STUNE_OBJ_IRQBALANCE, STUNE_SECTION_IRQBALANCE, "irqbalance", NULL, 0, STUNE_IRQBALANCE_VAR};
	dr.source = v;
	dr.path = strdup(STUNE_IRQBALANCE_DEFAULTS);
	dr.current = strdup(ib->args ? ib->args : "");
	const char *dangling;
	size_t dangling_len = 0;
	if (!ib->defaults) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.desired = steal_pointer(&all);
		dr.note = ib->pid ? stune_strdupf("irqbalance runs (pid %ld) but there is no /%s to keep it off the "
						  "pinned IRQs: start it with these options by hand",
						  ib->pid, STUNE_IRQBALANCE_DEFAULTS)
				  : stune_strdupf("no /%s: irqbalance (Debian's package) is not installed here",
						  STUNE_IRQBALANCE_DEFAULTS);
	} else if (ib->args_err) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.desired = steal_pointer(&all);
		dr.note = ib->args_err == -EINVAL
			      ? stune_strdupf("%s in /%s is not a plain value (a $, ` or quote inside): add the bans "
					      "to it by hand",
					      STUNE_IRQBALANCE_VAR, STUNE_IRQBALANCE_DEFAULTS)
			      : stune_strdupf("/%s cannot be read (%s): not written", STUNE_IRQBALANCE_DEFAULTS,
					      strerror(-ib->args_err));
	} else if (!missing) {
		dr.state = STUNE_ALREADY;
		dr.desired = strdup(dr.current);
	} else if ((dangling = irqbalance_dangling(ib->args, &dangling_len))) {
		dr.state = STUNE_NOT_APPLICABLE;
		dr.desired = steal_pointer(&all);
		dr.note = stune_strdupf("%s in /%s ends in %.*s without its value (a ban appended would become it): "
					"complete it, then apply again",
					STUNE_IRQBALANCE_VAR, STUNE_IRQBALANCE_DEFAULTS, (int)dangling_len, dangling);
	} else {
		dr.state = STUNE_CHANGE;
		dr.desired =
		    stune_strdupf("%s%s%s", ib->args ? ib->args : "", ib->args && *ib->args ? " " : "", missing);
		dr.note = !ib->pid	? strdup("irqbalance is not running: it reads the bans when it starts")
			  : ib->systemd ? stune_strdupf("irqbalance (pid %ld) is restarted (systemctl try-restart) to "
							"read the bans",
							ib->pid)
					: stune_strdupf("irqbalance (pid %ld) runs outside systemd: restart it for the "
							"bans to take effect",
							ib->pid);
	}
	return add(plan, &dr);
}

static int plan_modules(struct stune_plan *plan, const struct stune_topology *t, const struct stune_profile *p)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct stune_profile_rule *rule = &p->rules[i];
		if (rule->cls != STUNE_SECTION_MODULE)
			continue;
		bool used = false;
		for (size_t h = 0; h < t->n_hbas; h++) {
			const struct stune_hba *hb = &t->hbas[h];
			if (hba_selected(p, hb) && ((hb->driver && !strcmp(hb->driver, rule->label)) ||
						    (hb->pci_driver && !strcmp(hb->pci_driver, rule->label))))
				used = true;
		}
		_cleanup_free_ char *object = stune_strdupf("module:%s", rule->label);
		if (!object)
			return -ENOMEM;
		for (size_t j = 0; j < rule->n_settings; j++) {
			const struct stune_profile_value *v = &rule->settings[j];
			_cleanup_free_ char *setting = stune_strdupf("parameters/%s", v->key);
			if (!setting)
				return -ENOMEM;
			struct draft dr = {STUNE_OBJ_MODULE, STUNE_SECTION_MODULE, object, NULL, 0, setting};
			dr.source = v;
			dr.path = stune_strdupf("sys/module/%s/parameters/%s", rule->label, v->key);
			dr.desired = strdup(v->value);
			if (!used) {
				dr.state = STUNE_NOT_APPLICABLE;
				dr.note = stune_strdupf("no HBA here uses %s", rule->label);
			} else {
				dr.state = STUNE_NOT_SETTABLE;
				dr.note = strdup("a load-time parameter: it takes effect through modprobe.d (apply "
						 "--persist) and a module reload or reboot, and needs the initramfs "
						 "updated for a boot disk's HBA");
			}
			int r = add(plan, &dr);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int stune_plan_add_row(struct stune_plan *plan, enum stune_object_kind kind, const char *object, const char *setting,
		       const char *path, const char *current, const char *desired, enum stune_change_state state,
		       const char *note)
{
	struct draft dr = {kind, 0, object, NULL, 0, setting};
	dr.state = state;
	if (!(dr.path = strdup(path)) || (current && !(dr.current = strdup(current))) ||
	    (desired && !(dr.desired = strdup(desired))) || (note && !(dr.note = strdup(note)))) {
		free(dr.path);
		free(dr.current);
		free(dr.desired);
		return -ENOMEM;
	}
	return add(plan, &dr);
}

unsigned stune_plan_disk_attrs(const struct stune_profile *p)
{
	static const struct {
		enum stune_profile_section cls;
		const char *key;
		enum stune_disk_raw raw;
	} keys[] = {
	    {STUNE_SECTION_QUEUE, "nr_requests", STUNE_RAW_NR_REQUESTS},
	    {STUNE_SECTION_QUEUE, "rq_affinity", STUNE_RAW_RQ_AFFINITY},
	    {STUNE_SECTION_QUEUE, "nomerges", STUNE_RAW_NOMERGES},
	    {STUNE_SECTION_QUEUE, "read_ahead_kb", STUNE_RAW_READ_AHEAD_KB},
	    {STUNE_SECTION_QUEUE, "add_random", STUNE_RAW_ADD_RANDOM},
	    {STUNE_SECTION_QUEUE, "io_poll", STUNE_RAW_IO_POLL},
	    {STUNE_SECTION_SCSI_DEVICE, "queue_depth", STUNE_RAW_QUEUE_DEPTH},
	    /* A scheduler switch resets nr_requests: apply journals its old value. */
	    {STUNE_SECTION_QUEUE, "scheduler", STUNE_RAW_NR_REQUESTS},
	};
	unsigned attrs = 1u << STUNE_RAW_SCHEDULER;
	for (size_t i = 0; i < p->n_rules; i++)
		for (size_t k = 0; k < ELEMENTSOF(keys); k++)
			if (p->rules[i].cls == keys[k].cls && stune_profile_rule_get(&p->rules[i], keys[k].key))
				attrs |= 1u << keys[k].raw;
	return attrs;
}

int stune_plan_build(const struct stune_topology *t, const struct stune_profile *p, struct stune_plan **out)
{
	_cleanup_(stune_plan_freep) struct stune_plan *plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->profile = p;
	plan->topology = t;
	int r;

	/* The scope first: per HBA, in or out, and why (the plan shows it). */
	if (t->n_hbas && !(plan->hbas = calloc(t->n_hbas, sizeof(*plan->hbas))))
		return -ENOMEM;
	for (size_t i = 0; i < t->n_hbas; i++) {
		struct stune_plan_hba *s = &plan->hbas[plan->n_hbas++];
		s->index = i;
		s->in_scope = hba_scope(p, &t->hbas[i], &s->why);
		if (!s->why)
			return -ENOMEM;
	}

	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_hba *h = disk_hba(t, &t->disks[i]);
		if (h && !hba_selected(p, h))
			continue;
		if (!h && !hba_selected(p, NULL))
			continue;
		if ((r = plan_disk(plan, t, p, i)) < 0)
			return r;
	}
	size_t first_irq = plan->n_changes, n_pinned = 0;
	_cleanup_free_ bool *rq2 = hbas_rq2(p, t);
	if (!rq2)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_hbas; i++) {
		if (!hba_selected(p, &t->hbas[i]))
			continue;
		if ((r = plan_hba_irqs(plan, t, p, i, rq2, &n_pinned)) < 0)
			return r;
	}
	if (n_pinned && (r = plan_irqbalance(plan, t, p, first_irq)) < 0)
		return r;
	if ((r = plan_modules(plan, t, p)) < 0)
		return r;
	*out = steal_pointer(&plan);
	return 0;
}

static int key_cmp(const char *ao, const char *as, const char *bo, const char *bs)
{
	int c = strcmp(ao, bo);
	return c ? c : strcmp(as, bs);
}

static int row_cmp(const void *a, const void *b)
{
	const struct stune_change *x = *(const struct stune_change *const *)a,
				  *y = *(const struct stune_change *const *)b;
	int c = key_cmp(x->object, x->setting, y->object, y->setting);
	/* Equal keys keep plan order (the first row wins a lookup). */
	return c ? c : (x < y ? -1 : x > y);
}

int stune_plan_index_build(const struct stune_plan *plan, struct stune_plan_index *idx)
{
	idx->n = plan->n_changes;
	if (!(idx->rows = calloc(idx->n ? idx->n : 1, sizeof(*idx->rows))))
		return -ENOMEM;
	for (size_t i = 0; i < idx->n; i++)
		idx->rows[i] = &plan->changes[i];
	qsort(idx->rows, idx->n, sizeof(*idx->rows), row_cmp);
	return 0;
}

const struct stune_change *stune_plan_index_find(const struct stune_plan_index *idx, const char *object,
						 const char *setting)
{
	size_t lo = 0, hi = idx->n;
	while (lo < hi) { /* the first row not below the key */
		size_t mid = lo + (hi - lo) / 2;
		if (key_cmp(idx->rows[mid]->object, idx->rows[mid]->setting, object, setting) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < idx->n && !key_cmp(idx->rows[lo]->object, idx->rows[lo]->setting, object, setting))
		return idx->rows[lo];
	return NULL;
}

void stune_plan_index_free(struct stune_plan_index *idx)
{
	free(idx->rows);
	idx->rows = NULL;
	idx->n = 0;
}

static bool parse_ll(const char *s, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	while (*end == ' ' || *end == '\n')
		end++;
	return !errno && end != s && !*end;
}

bool stune_change_in_effect(const struct stune_change *c, const char *raw)
{
	if (!raw || !c->desired)
		return false;
	if (c->kind == STUNE_OBJ_PERSIST) /* a whole file, or a symlink's target */
		return !strcmp(raw, c->desired);
	if (c->kind == STUNE_OBJ_IRQBALANCE) { /* raw: the whole defaults file */
		_cleanup_free_ char *args = NULL;
		return stune_irqbalance_args(raw, &args) == 0 && args && !strcmp(args, c->desired);
	}
	if (c->kind == STUNE_OBJ_IRQ) {
		struct stune_cpuset a = {0}, b = {0};
		bool eq = stune_cpuset_parse_list(&a, raw) >= 0 && stune_cpuset_parse_list(&b, c->desired) >= 0 &&
			  stune_cpuset_equal(&a, &b);
		stune_cpuset_clear(&a);
		stune_cpuset_clear(&b);
		return eq;
	}
	const char *lb = strchr(raw, '['), *rb = lb ? strchr(lb, ']') : NULL;
	if (lb && rb) /* "mq-deadline [none]": the selected one */
		return (size_t)(rb - lb - 1) == strlen(c->desired) &&
		       !strncmp(lb + 1, c->desired, (size_t)(rb - lb - 1));
	long long x, y;
	if (parse_ll(raw, &x) && parse_ll(c->desired, &y))
		return x == y;
	size_t n = strcspn(raw, "\n");
	return n == strlen(c->desired) && !strncmp(raw, c->desired, n);
}

const char *stune_change_display(const struct stune_change *c, bool desired, char *buf, size_t len)
{
	const char *v = desired ? c->desired : c->current;
	if (c->kind != STUNE_OBJ_PERSIST)
		return v;
	if (!v)
		return desired ? NULL : "absent";
	if (!strcmp(c->setting, "symlink"))
		return v;
	if (!desired && c->desired && strcmp(v, c->desired))
		return "other content";
	size_t lines = 1;
	for (const char *p = v; *p; p++)
		lines += *p == '\n';
	snprintf(buf, len, "%zu line%s", lines, lines == 1 ? "" : "s");
	return buf;
}
