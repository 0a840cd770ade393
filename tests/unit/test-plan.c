/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The profile parser and the plan engine, without files: a host model built
 * in C, profiles from strings, assertions on the plan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tune/persist.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "tap.h"

static struct stune_cpuset cpus(const char *list)
{
	struct stune_cpuset s = {0};
	if (stune_cpuset_parse_list(&s, list) < 0)
		abort();
	return s;
}

/* Two nodes (0-3, 4-7); mpi3mr on node 1; megaraid_sas with numa_node -1. */
struct host_model {
	struct stune_topology t;
	struct stune_node nodes[2];
	struct stune_hba hbas[2];
	struct stune_host hosts[2];
	struct stune_irq irqs[5];
	struct stune_disk disks[3];
	size_t hba0_irqs[3], hba1_irqs[2];
	char *scheds[3];
};

static void model_init(struct host_model *m)
{
	memset(m, 0, sizeof(*m));
	struct stune_topology *t = &m->t;
	t->cpus.online = cpus("0-7");
	m->nodes[0] = (struct stune_node){.id = 0, .cpus = cpus("0-3")};
	m->nodes[1] = (struct stune_node){.id = 1, .cpus = cpus("4-7")};
	t->numa.nodes = m->nodes;
	t->numa.n_nodes = 2;

	m->hba0_irqs[0] = 0, m->hba0_irqs[1] = 1, m->hba0_irqs[2] = 2;
	m->hba1_irqs[0] = 3, m->hba1_irqs[1] = 4;
	m->hbas[0] = (struct stune_hba){.pci_address = "0000:41:00.0",
					.kind = STUNE_HBA_MPI3MR,
					.driver = "mpi3mr",
					.pci_driver = "mpi3mr",
					.numa_node = STUNE_NUM(1),
					.irqs = m->hba0_irqs,
					.n_irqs = 3};
	m->hbas[1] = (struct stune_hba){.pci_address = "0000:02:00.0",
					.driver = "megaraid_sas",
					.pci_driver = "megaraid_sas",
					.numa_node = STUNE_NUM(-1),
					.irqs = m->hba1_irqs,
					.n_irqs = 2};
	t->hbas = m->hbas;
	t->n_hbas = 2;
	m->hosts[0] =
	    (struct stune_host){.host_no = 0, .hba = 0, .can_queue = STUNE_NUM(4000), .host_tagset = STUNE_YES};
	m->hosts[1] = (struct stune_host){.host_no = 1, .hba = 1, .can_queue = STUNE_NUM(100), .host_tagset = STUNE_NO};
	t->hosts = m->hosts;
	t->n_hosts = 2;

	/* mpi3mr: msix0 (admin, not managed, on all CPUs), msix1 managed, msix9 poll (not managed, already
	 * on CPU 5, which is where spreading puts the second movable IRQ). */
	m->irqs[0] = (struct stune_irq){.irq = 40,
					.hba = 0,
					.vector = STUNE_NUM(0),
					.name = "mpi3mr0-msix0",
					.affinity = cpus("0-7"),
					.managed = STUNE_NO};
	m->irqs[1] = (struct stune_irq){.irq = 41,
					.hba = 0,
					.vector = STUNE_NUM(1),
					.name = "mpi3mr0-msix1",
					.affinity = cpus("0"),
					.managed = STUNE_YES,
					.managed_rule = "mpi3mr operational vector",
					.hctx = STUNE_NUM(0)};
	m->irqs[2] = (struct stune_irq){.irq = 42,
					.hba = 0,
					.vector = STUNE_NUM(9),
					.name = "mpi3mr0-msix9",
					.affinity = cpus("5"),
					.managed = STUNE_NO};
	m->irqs[3] =
	    (struct stune_irq){.irq = 50, .hba = 1, .name = "megasas", .affinity = cpus("0-7"), .managed = STUNE_NO};
	m->irqs[4] = (struct stune_irq){.irq = 51,
					.hba = 1,
					.name = "megasas1",
					.affinity = cpus("0-7"),
					.managed = STUNE_UNKNOWN,
					.managed_rule = "unclassified"};
	t->irqs = m->irqs;
	t->n_irqs = 5;

	m->scheds[0] = "mq-deadline", m->scheds[1] = "none", m->scheds[2] = NULL;
	/* sda: SSD on mpi3mr, kernel defaults. */
	m->disks[0] = (struct stune_disk){.name = "sda",
					  .key = "wwn-0x5000000000000001",
					  .host = 0,
					  .rotational = STUNE_NUM(0),
					  .scheduler = "mq-deadline",
					  .schedulers = m->scheds,
					  .nr_requests = STUNE_NUM(256),
					  .rq_affinity = STUNE_NUM(1),
					  .nomerges = STUNE_NUM(0),
					  .read_ahead_kb = STUNE_NUM(128),
					  .add_random = STUNE_NUM(0),
					  .io_poll = STUNE_NUM(0),
					  .queue_depth = STUNE_NUM(64),
					  .nr_hw_queues = STUNE_NUM(8)};
	/* sdb: SSD on mpi3mr, already tuned; rq_affinity unreadable. */
	m->disks[1] = m->disks[0];
	m->disks[1].name = "sdb";
	m->disks[1].key = "wwn-0x5000000000000002";
	m->disks[1].scheduler = "none";
	m->disks[1].nomerges = STUNE_NUM(2);
	m->disks[1].read_ahead_kb = STUNE_NUM(16);
	m->disks[1].rq_affinity = (struct stune_num){0};
	/* sdc: spinning disk on megaraid_sas, single queue. */
	m->disks[2] = m->disks[0];
	m->disks[2].name = "sdc";
	m->disks[2].key = "path-pci-0000:02:00.0-scsi-0:0:0:0";
	m->disks[2].host = 1;
	m->disks[2].rotational = STUNE_NUM(1);
	m->disks[2].nr_hw_queues = STUNE_NUM(1);
	m->disks[2].scheduler = "none";
	t->disks = m->disks;
	t->n_disks = 3;
}

static void model_free(struct host_model *m)
{
	stune_cpuset_clear(&m->t.cpus.online);
	for (int i = 0; i < 2; i++)
		stune_cpuset_clear(&m->nodes[i].cpus);
	for (int i = 0; i < 5; i++)
		stune_cpuset_clear(&m->irqs[i].affinity);
}

static const struct stune_change *find(const struct stune_plan *p, const char *object, const char *setting)
{
	for (size_t i = 0; i < p->n_changes; i++)
		if (!strcmp(p->changes[i].object, object) && !strcmp(p->changes[i].setting, setting))
			return &p->changes[i];
	return NULL;
}

static int load(const char *text, struct stune_profile **p, char **err)
{
	return stune_profile_load_string("t", text, NULL, p, err);
}

/* Error text for a bad profile, or NULL if it loaded. */
static char *bad(const char *text)
{
	struct stune_profile *p = NULL;
	char *err = NULL;
	if (load(text, &p, &err) == 0) {
		stune_profile_free(p);
		return NULL;
	}
	CHECK(p == NULL);
	return err;
}

#define CHECK_BAD(text, msg)          \
	do {                          \
		char *_e = bad(text); \
		CHECK_STR(_e, msg);   \
		free(_e);             \
	} while (0)

CASE(profile_parse, "a profile: its rules in order, each value with its line, the comments above as why, labels "
		    "and classes")
{
	struct stune_profile *p = NULL;
	char *err = NULL;

	CHECK(load("# top\n\n[queue]\n# why one\n# why two\nscheduler = none ; inline\nrq_affinity=2\n"
		   "[queue:hdd]\nmatch_rotational = 1\nscheduler = mq-deadline\n[module:mpi3mr]\npoll_queues = 2\n"
		   "[hba]\nmatch_driver = *\n",
		   &p, &err) == 0);
	CHECK(err == NULL);
	CHECK(p && p->n_rules == 4);
	if (p && p->n_rules == 4) {
		const struct stune_profile_value *v = stune_profile_rule_get(&p->rules[0], "scheduler");
		CHECK(v && !strcmp(v->value, "none") && v->line == 6);
		CHECK_STR(v ? v->why : NULL, "why one why two");
		CHECK_STR(v ? v->file : NULL, "t");
		v = stune_profile_rule_get(&p->rules[0], "rq_affinity");
		CHECK(v && v->why == NULL && v->line == 7);
		CHECK_STR(p->rules[1].label, "hdd");
		CHECK(stune_profile_rule_match(&p->rules[1], "match_rotational") != NULL);
		CHECK(p->rules[2].cls == STUNE_SECTION_MODULE);
		CHECK_STR(p->rules[2].label, "mpi3mr");
	}
	stune_profile_free(p);
	free(err);
}

CASE(profile_bad_values, "unknown keys, bad values (with what is expected), a key set twice, a bad parameter name: "
			 "refused at their line")
{
	CHECK_BAD("[queue]\nschedular = none\n", "t:2: unknown key 'schedular' in [queue]");
	CHECK_BAD("[queue]\n\nrq_affinity = 3\n", "t:3: bad value '3' for rq_affinity in [queue] (expected 0, 1 or 2)");
	CHECK_BAD("[queue]\nnr_requests = 2\n",
		  "t:2: bad value '2' for nr_requests in [queue] (expected a number from 4 to 2048, or "
		  "kernel-default)");
	CHECK_BAD("[irq]\naffinity = everywhere\n",
		  "t:2: bad value 'everywhere' for affinity in [irq] (expected keep, node-local or "
		  "node-local-spread)");
	CHECK_BAD("[queue]\nscheduler = none\nscheduler = none\n",
		  "t:3: 'scheduler' set twice in [queue] (first at line 2)");
	CHECK_BAD("[module:mpi3mr]\npoll queues = 1\n", "t:2: bad parameter name 'poll queues' in [module:mpi3mr]");
}

CASE(profile_bad_structure, "unknown or bad sections, a key outside one, syntax errors, misplaced includes, a line "
			    "too long: refused at their line, the first error winning")
{
	CHECK_BAD("[disk]\nscheduler = none\n", "t:2: unknown section [disk]");
	CHECK_BAD("[module]\nx = 1\n", "t:2: bad section name [module]");
	CHECK_BAD("scheduler = none\n", "t:1: key 'scheduler' outside a section (only include= may come first)");
	CHECK_BAD("[queue\nscheduler = none\n", "t:1: syntax error: expected [section] or key = value");
	CHECK_BAD("include = numa\n", "t:1: include 'numa': no profile directory to look in");
	CHECK_BAD("[queue]\ninclude = numa\n", "t:2: include= must come before the first section");
	/* The first error wins, even when a later line is a syntax error. */
	CHECK_BAD("[queue]\nfoo = 1\n[bad\n", "t:2: unknown key 'foo' in [queue]");
	CHECK_BAD("[queue]\nrq_affinity = 1\n[bad\nfoo = 1\n", "t:3: syntax error: expected [section] or key = value");
	char longline[400];
	memset(longline, 'a', sizeof(longline));
	memcpy(longline, "[queue]\n", 8);
	longline[sizeof(longline) - 1] = '\0';
	char *e = bad(longline);
	CHECK(e && strstr(e, "t:2: line too long"));
	free(e);
}

CASE(profile_no_scope, "a profile without an [hba] scope is refused, with the fix in the message")
{
	/* No scope: refused, with the fix in the message (a profile never tunes every HBA by default). */
	CHECK_BAD("[queue]\nnomerges = 2\n",
		  "t: no [hba] scope: say which HBAs the profile tunes, e.g. '[hba]' and 'match_driver = mpi3mr' "
		  "('match_driver = *' for every HBA)");
	CHECK_BAD("[hba]\n[irq]\naffinity = node-local\n",
		  "t: no [hba] scope: say which HBAs the profile tunes, e.g. '[hba]' and 'match_driver = mpi3mr' "
		  "('match_driver = *' for every HBA)");
}

static const char numa_like[] = "[hba]\n"
				"match_driver = *\n"
				"[queue]\n"
				"match_rotational = 0\n"
				"scheduler = none\n"
				"rq_affinity = 2\n"
				"nomerges = 2\n"
				"read_ahead_kb = 16\n"
				"add_random = 0\n"
				"io_poll = 1\n"
				"[scsi_device]\n"
				"match_driver = mpi3mr\n"
				"queue_depth = 5000\n"
				"[irq]\n"
				"affinity = node-local-spread\n"
				"[irqbalance]\n"
				"ban_pinned = yes\n"
				"[module:mpi3mr]\n"
				"poll_queues = 2\n"
				"[module:mpt3sas]\n"
				"smp_affinity_enable = 0\n";

/* The host model, a profile and the plan built from them. */
struct fixture {
	struct host_model m;
	struct stune_profile *p;
	struct stune_plan *plan;
	char *err;
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	model_init(&f->m);
}

/* Load the profile (the first time) and build the plan anew from the model as it is now: whether there is one
 * (checked). */
static bool fixture_plan(struct fixture *f, const char *profile)
{
	if (!f->p && profile)
		CHECK(load(profile, &f->p, &f->err) == 0);
	stune_plan_free(f->plan);
	f->plan = NULL;
	CHECK(f->p && stune_plan_build(&f->m.t, f->p, &f->plan) == 0);
	return f->plan != NULL;
}

static void fixture_free(struct fixture *f)
{
	stune_plan_free(f->plan);
	stune_profile_free(f->p);
	free(f->err);
	free(f->m.t.irqbalance.args);
	model_free(&f->m);
}

/* The irqbalance row of numa_like's plan with Debian's file holding ARGS; NULL if none (the plan in f). */
static const struct stune_change *irqbalance_row(struct fixture *f, const char *args)
{
	f->m.t.irqbalance.defaults = true;
	free(f->m.t.irqbalance.args);
	f->m.t.irqbalance.args = strdup(args);
	fixture_plan(f, numa_like);
	return f->plan ? find(f->plan, "irqbalance", "IRQBALANCE_ARGS") : NULL;
}

CASE(plan_defaults_change, "a disk at kernel defaults: changes, values compared by meaning; io_poll without poll "
			   "queues and queue_depth above can_queue not applicable")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	if (fixture_plan(&f, numa_like)) {
		/* sda: kernel defaults → changes; values compare by meaning. */
		c = find(f.plan, "wwn-0x5000000000000001", "queue/scheduler");
		CHECK(c && c->state == STUNE_CHANGE);
		CHECK_STR(c ? c->current : NULL, "mq-deadline");
		CHECK_STR(c ? c->desired : NULL, "none");
		CHECK_STR(c ? c->path : NULL, "sys/block/sda/queue/scheduler");
		CHECK(c && c->source && c->source->line == 5);
		c = find(f.plan, "wwn-0x5000000000000001", "queue/rq_affinity");
		CHECK(c && c->state == STUNE_CHANGE);
		c = find(f.plan, "wwn-0x5000000000000001", "queue/add_random");
		CHECK(c && c->state == STUNE_ALREADY);
		/* io_poll=1 without poll queues: not applicable. */
		c = find(f.plan, "wwn-0x5000000000000001", "queue/io_poll");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->note && strstr(c->note, "poll"));
		/* queue_depth above can_queue (4000): the kernel would say EINVAL. */
		c = find(f.plan, "wwn-0x5000000000000001", "device/queue_depth");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE);
	}
	fixture_free(&f);
}

CASE(plan_already_untouched, "a disk already right: already; an unreadable attribute not applicable; a rotational "
			     "disk outside the rule untouched")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	if (fixture_plan(&f, numa_like)) {
		/* sdb: already right → ALREADY; unreadable attribute → NOT_APPLICABLE. */
		c = find(f.plan, "wwn-0x5000000000000002", "queue/scheduler");
		CHECK(c && c->state == STUNE_ALREADY);
		c = find(f.plan, "wwn-0x5000000000000002", "queue/nomerges");
		CHECK(c && c->state == STUNE_ALREADY);
		c = find(f.plan, "wwn-0x5000000000000002", "queue/read_ahead_kb");
		CHECK(c && c->state == STUNE_ALREADY);
		c = find(f.plan, "wwn-0x5000000000000002", "queue/rq_affinity");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->current == NULL);

		/* sdc: rotational, so [queue] (match_rotational = 0) does not touch it; not mpi3mr either. */
		CHECK(find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "queue/scheduler") == NULL);
		CHECK(find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "device/queue_depth") == NULL);
	}
	fixture_free(&f);
}

CASE(plan_irqs, "IRQs: managed ones not settable (the note says what instead), movable ones spread over the node, "
		"none placed without locality or when unclassified")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	if (fixture_plan(&f, numa_like)) {
		/* IRQs: managed → NOT_SETTABLE, never a desired value, and the note says what instead. */
		c = find(f.plan, "irq:41", "smp_affinity_list");
		CHECK(c && c->state == STUNE_NOT_SETTABLE && c->desired == NULL);
		CHECK(c && c->note && strstr(c->note, "EIO") && strstr(c->note, "rq_affinity=2") &&
		      strstr(c->note, "node 1"));
		CHECK_STR(c ? c->current : NULL, "0");
		/* Movable IRQs spread over node 1's CPUs in turn: msix0 → 4, msix9 → 5 (already there). */
		c = find(f.plan, "irq:40", "smp_affinity_list");
		CHECK(c && c->state == STUNE_CHANGE);
		CHECK_STR(c ? c->desired : NULL, "4");
		CHECK_STR(c ? c->current : NULL, "0-7");
		CHECK_STR(c ? c->path : NULL, "proc/irq/40/smp_affinity_list");
		c = find(f.plan, "irq:42", "smp_affinity_list");
		CHECK(c && c->state == STUNE_ALREADY);
		/* numa_node -1: no node-local placement. */
		c = find(f.plan, "irq:50", "smp_affinity_list");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->desired == NULL && c->note && strstr(c->note, "-1"));
		/* Unclassified: not written. */
		c = find(f.plan, "irq:51", "smp_affinity_list");
		CHECK(c && c->state == STUNE_NOT_SETTABLE);
	}
	fixture_free(&f);
}

CASE(plan_modules_counts, "irqbalance without its file and driver parameters: not applicable or not settable; the "
			  "counts add up to the rows")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	if (fixture_plan(&f, numa_like)) {
		/* irqbalance: banned from the IRQs the plan places (changed or already there);
		 * no /etc/default/irqbalance here: not applicable, the bans in desired. */
		c = find(f.plan, "irqbalance", "IRQBALANCE_ARGS");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->note && strstr(c->note, "not installed"));
		CHECK_STR(c ? c->desired : NULL, "--banirq=40 --banirq=42");

		/* Driver parameters: load-time, not settable at runtime; not applicable without the driver. */
		c = find(f.plan, "module:mpi3mr", "parameters/poll_queues");
		CHECK(c && c->state == STUNE_NOT_SETTABLE);
		c = find(f.plan, "module:mpt3sas", "parameters/smp_affinity_enable");
		CHECK(c && c->state == STUNE_NOT_APPLICABLE);

		size_t counts[4];
		stune_plan_count(f.plan, counts);
		CHECK(counts[STUNE_CHANGE] + counts[STUNE_ALREADY] + counts[STUNE_NOT_SETTABLE] +
			  counts[STUNE_NOT_APPLICABLE] ==
		      f.plan->n_changes);
	}
	fixture_free(&f);
}

CASE(irqbalance_append, "with Debian's file: the missing bans appended to the site's options, in effect once there")
{
	struct fixture f;
	fixture_init(&f);
	/* With Debian's file: the missing bans are appended to the site's options... */
	const struct stune_change *c = irqbalance_row(&f, "--hintpolicy=ignore --banirq=42");
	CHECK(c && c->state == STUNE_CHANGE && c->note && strstr(c->note, "not running"));
	CHECK_STR(c ? c->current : NULL, "--hintpolicy=ignore --banirq=42");
	CHECK_STR(c ? c->desired : NULL, "--hintpolicy=ignore --banirq=42 --banirq=40");
	CHECK(c && stune_change_in_effect(c, "# x\nIRQBALANCE_ARGS=\"--hintpolicy=ignore --banirq=42 --banirq=40\""));
	CHECK(c && !stune_change_in_effect(c, "IRQBALANCE_ARGS=\"--hintpolicy=ignore --banirq=42\""));
	fixture_free(&f);
}

CASE(irqbalance_already_restart, "with Debian's file: all bans there (either spelling) is already; running under "
				 "systemd, the note says it is restarted")
{
	struct fixture f;
	fixture_init(&f);
	/* ...all there: in effect; running under systemd: the note says it is restarted. */
	const struct stune_change *c = irqbalance_row(&f, "-i 40 --banirq 42");
	CHECK(c && c->state == STUNE_ALREADY);
	f.m.t.irqbalance.pid = 812;
	f.m.t.irqbalance.systemd = true;
	c = irqbalance_row(&f, "--foreground");
	CHECK(c && c->state == STUNE_CHANGE && c->note && strstr(c->note, "pid 812") && strstr(c->note, "restarted"));
	fixture_free(&f);
}

CASE(irqbalance_dangling_option, "with Debian's file: options ending in one that takes a value, without it, are "
				 "not touched (the note says why); a look-alike option is")
{
	struct fixture f;
	fixture_init(&f);
	/* Running under systemd, as when fuzz-irqbalance found it. */
	f.m.t.irqbalance.pid = 812;
	f.m.t.irqbalance.systemd = true;
	/* Options ending in one that takes a value, without it: a ban appended would be its value
	 * (found by fuzz-irqbalance): not touched, the note says why. */
	const struct stune_change *c = irqbalance_row(&f, "--hintpolicy=ignore --banirq ");
	CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->note &&
	      strstr(c->note, "ends in --banirq without its value"));
	CHECK_STR(c ? c->current : NULL, "--hintpolicy=ignore --banirq ");
	c = irqbalance_row(&f, "--foreground -i");
	CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->note && strstr(c->note, "ends in -i without"));
	c = irqbalance_row(&f, "--foreground --oneshot-ish-banirq");
	CHECK(c && c->state == STUNE_CHANGE);
	fixture_free(&f);
}

CASE(irqbalance_not_plain, "with Debian's file: a value systemd would not expand the way a shell does is not touched")
{
	struct fixture f;
	fixture_init(&f);
	/* A value systemd would not expand the way a shell does: not touched. */
	f.m.t.irqbalance.pid = 812;
	f.m.t.irqbalance.systemd = true;
	f.m.t.irqbalance.args_err = -EINVAL;
	const struct stune_change *c = irqbalance_row(&f, "--foreground --oneshot-ish-banirq");
	CHECK(c && c->state == STUNE_NOT_APPLICABLE && c->note && strstr(c->note, "not a plain value"));
	fixture_free(&f);
}

CASE(kernel_default, "kernel-default: the scheduler and nr_requests computed per disk from shared tags and queue "
		     "count, the scheduler first")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	/* kernel-default: computed per disk from shared tags and queue count. */
	if (fixture_plan(&f, "[hba]\nmatch_driver = megaraid_sas mpi3mr\n[queue]\nscheduler = kernel-default\n"
			     "nr_requests = kernel-default\n")) {
		/* sda: shared tags → mq-deadline (already); nr_requests 2 * min(4000, 128). */
		c = find(f.plan, "wwn-0x5000000000000001", "queue/scheduler");
		CHECK(c && c->state == STUNE_ALREADY);
		c = find(f.plan, "wwn-0x5000000000000001", "queue/nr_requests");
		CHECK_STR(c ? c->desired : NULL, "256");
		CHECK(c && c->state == STUNE_ALREADY);
		/* sdb: none → mq-deadline, and nr_requests follows the new scheduler. */
		c = find(f.plan, "wwn-0x5000000000000002", "queue/scheduler");
		CHECK(c && c->state == STUNE_CHANGE);
		CHECK_STR(c ? c->desired : NULL, "mq-deadline");
		CHECK(c && c + 1 == find(f.plan, "wwn-0x5000000000000002", "queue/nr_requests")); /* scheduler first */
		/* sdc: one hardware queue → mq-deadline; nr_requests 2 * min(100, 128). */
		c = find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "queue/scheduler");
		CHECK_STR(c ? c->desired : NULL, "mq-deadline");
		c = find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "queue/nr_requests");
		CHECK_STR(c ? c->desired : NULL, "200");
		CHECK(c && c->state == STUNE_CHANGE);
		/* No IRQ policy, no irqbalance rows. */
		CHECK(find(f.plan, "irq:40", "smp_affinity_list") == NULL);
		CHECK(find(f.plan, "irqbalance", "IRQBALANCE_ARGS") == NULL);
	}
	fixture_free(&f);
}

CASE(hba_scope_driver, "[hba] match_driver selects the HBAs, the plan says per HBA whether in scope and why; "
		       "node-local gives the whole node")
{
	struct fixture f;
	const struct stune_change *c;
	fixture_init(&f);
	/* [hba] selects: only mpi3mr; node-local gives the whole node. */
	if (fixture_plan(&f, "[hba]\nmatch_driver = mpi3mr\n[queue]\nnomerges = 1\n[irq]\naffinity = node-local\n")) {
		CHECK(find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "queue/nomerges") == NULL);
		CHECK(find(f.plan, "irq:50", "smp_affinity_list") == NULL);
		c = find(f.plan, "irq:40", "smp_affinity_list");
		CHECK_STR(c ? c->desired : NULL, "4-7");
		c = find(f.plan, "irq:42", "smp_affinity_list");
		CHECK(c && c->state == STUNE_CHANGE);
		/* The plan says per HBA whether it is in scope, and why. */
		CHECK(f.plan->n_hbas == 2);
		if (f.plan->n_hbas == 2) {
			CHECK(f.plan->hbas[0].index == 0 && f.plan->hbas[0].in_scope);
			CHECK_STR(f.plan->hbas[0].why, "driver mpi3mr in match_driver (t:2)");
			CHECK(f.plan->hbas[1].index == 1 && !f.plan->hbas[1].in_scope);
			CHECK_STR(f.plan->hbas[1].why, "driver megaraid_sas: not in match_driver = mpi3mr (t:2)");
		}
	}
	fixture_free(&f);
}

CASE(hba_scope_pci, "[hba] match_pci narrows the scope further, saying why an HBA is out")
{
	struct fixture f;
	fixture_init(&f);
	/* match_pci narrows it further; an HBA without a PCI address cannot match. */
	fixture_plan(&f, "[hba]\nmatch_driver = *\nmatch_pci = 0000:02:00.0\n[queue]\nnomerges = 1\n");
	CHECK(f.plan && f.plan->n_hbas == 2);
	if (f.plan && f.plan->n_hbas == 2) {
		CHECK(!f.plan->hbas[0].in_scope);
		CHECK_STR(f.plan->hbas[0].why, "0000:41:00.0: not in match_pci = 0000:02:00.0 (t:3)");
		CHECK(f.plan->hbas[1].in_scope);
		CHECK(find(f.plan, "wwn-0x5000000000000001", "queue/nomerges") == NULL);
		CHECK(find(f.plan, "path-pci-0000:02:00.0-scsi-0:0:0:0", "queue/nomerges") != NULL);
	}
	fixture_free(&f);
}

/* --persist's generators: udev rules per tuned disk, modprobe options, the boot unit. */

CASE(persist_udev, "--persist's udev rules: one per tuned disk with a stable key, named by the key, not the kernel "
		   "name")
{
	struct fixture f;
	char *text = NULL;
	fixture_init(&f);
	f.m.disks[0].key_source = "ID_WWN";
	f.m.disks[0].wwn = "0x5000000000000001";
	/* sdb keeps no stable key the rule could match on (no wwn, hctl): no rule. */
	if (fixture_plan(&f, numa_like)) {
		CHECK(stune_persist_udev_rules(f.plan, &f.m.t, &text) == 0 && text);
		CHECK(text && strstr(text, "\nACTION==\"add|change\", SUBSYSTEM==\"block\", ENV{DEVTYPE}==\"disk\", "
					   "ENV{ID_WWN}==\"0x5000000000000001\", ATTR{queue/scheduler}=\"none\", "
					   "ATTR{queue/rq_affinity}=\"2\""));
		CHECK(text && !strstr(text, "sdb") && !strstr(text, "sdc")); /* sdc: rotational, not tuned */
		CHECK(text && text[strlen(text) - 1] != '\n');
		/* No kernel name: sda's rule is named by its key (sdX names change between boots). */
		CHECK(text && !strstr(text, "sda") && strstr(text, "\n# wwn-0x5000000000000001\nACTION=="));
		free(text);
	}
	fixture_free(&f);
}

CASE(persist_udev_stable, "--persist's udev rules: the same disks under swapped names give the same text, the rules "
			  "in the order of their keys")
{
	struct fixture f;
	char *first = NULL, *second = NULL;
	fixture_init(&f);
	f.m.disks[0].key_source = "ID_WWN";
	f.m.disks[0].wwn = "0x5000000000000001";
	/* The same disks enumerated under swapped names (as after a reboot): the same text, the
	 * rules in the order of their keys. */
	f.m.disks[1].key_source = "ID_WWN";
	f.m.disks[1].wwn = "0x5000000000000002";
	f.m.disks[1].scheduler = "mq-deadline"; /* a row to write, so a rule */
	CHECK(fixture_plan(&f, numa_like) && stune_persist_udev_rules(f.plan, &f.m.t, &first) == 0);
	struct stune_disk swap = f.m.disks[0];
	f.m.disks[0] = f.m.disks[1];
	f.m.disks[1] = swap;
	f.m.disks[0].name = "sda";
	f.m.disks[1].name = "sdb";
	CHECK(fixture_plan(&f, numa_like) && stune_persist_udev_rules(f.plan, &f.m.t, &second) == 0);
	CHECK(first && second && !strcmp(first, second));
	CHECK(first && strstr(first, "0x5000000000000001") &&
	      strstr(first, "0x5000000000000001") < strstr(first, "0x5000000000000002"));
	free(first);
	free(second);
	fixture_free(&f);
}

CASE(persist_modprobe, "--persist's modprobe options: the parameters of the drivers there, none of those absent")
{
	struct fixture f;
	char *text = NULL;
	fixture_init(&f);
	fixture_plan(&f, numa_like);
	CHECK(f.plan && stune_persist_modprobe(f.plan, &text) == 0);
	CHECK(text && strstr(text, "\noptions mpi3mr poll_queues=2") && !strstr(text, "mpt3sas"));
	free(text);
	fixture_free(&f);
}

CASE(persist_unit, "--persist's boot unit: ExecStart quoted, the profile by path or installed name, before "
		   "irqbalance, after udev-settle with why; a quote in a path refused")
{
	char *text = NULL;
	CHECK(stune_persist_unit("/usr/sbin/scsitune", "/p/numa", "/p", &text) == 0);
	CHECK(text &&
	      strstr(text, "\nExecStart=\"/usr/sbin/scsitune\" apply --profile \"/p/numa\" --profile-dir \"/p\" "
			   "--state-dir /run/scsitune\n"));
	CHECK(text && strstr(text, "\nBefore=irqbalance.service\n") && strstr(text, "\nWantedBy=multi-user.target"));
	free(text);
	text = NULL;
	/* A profile named in the installed directory: its name, no --profile-dir; why udev-settle is said. */
	CHECK(stune_persist_unit("/usr/local/sbin/scsitune", "numa", NULL, &text) == 0);
	CHECK(text && strstr(text, "\nExecStart=\"/usr/local/sbin/scsitune\" apply --profile \"numa\" "
				   "--state-dir /run/scsitune\n"));
	CHECK(text && strstr(text, "\n# After systemd-udev-settle: ") &&
	      strstr(text, "\nAfter=systemd-udev-settle.service local-fs.target\n"));
	free(text);
	text = NULL;
	CHECK(stune_persist_unit("/usr/sbin/scsitune", "/p/a\"b", "/p", &text) == -EINVAL && !text);
	free(text);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
