/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune metrics: the host read as detect, verify, payload verify and
 * report read it (their engine calls), then written as Prometheus gauges.
 */
#include "gather.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect/scan.h"
#include "stats/stats.h"
#include "tune/plan.h"
#include "cli.h"
#include "plan-view.h"
#include "statedir.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

/* Seconds since the epoch, to the millisecond. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

void metrics_state_clear(struct metrics_state *m)
{
	free(m->state_dir);
	stune_journal_free(m->j);
	stune_plan_free(m->plan);
	free(m->states);
	stune_profile_free(m->p);
	free(m->digest);
	stune_topology_free(m->t);
	stune_payload_status_free(m->payload);
	stune_newest_sets_clear(&m->sets);
}

/* The journal as verify reads it: none is a state (nothing applied), a bad one an error. */
static int read_journal(struct metrics_state *m)
{
	const char *jfile = "journal.json";
	int r = stune_journal_load_named(m->state_dir, &m->j, &jfile);
	if (r == -ENOENT)
		return EXIT_OK;
	if (r < 0 || !m->j->profile_path) {
		error_msg("%s/%s: %s", m->state_dir, jfile,
			  r >= 0 ? "not a scsitune journal" : stune_journal_strerror(r));
		return EXIT_ERROR;
	}
	return cli_journal_check(m->state_dir, m->j);
}

/* The journal's profile planned against the host and counted as verify counts it. */
static int verify_profile(struct stune_ctx *ctx, struct metrics_state *m)
{
	const char *dir = m->profile_dir      ? m->profile_dir
			  : m->j->profile_dir ? m->j->profile_dir
					      : SCSITUNE_PROFILE_DIR;
	_cleanup_free_ char *err = NULL;
	int r = stune_profile_load(m->j->profile_path, dir, &m->p, &err);
	if (r < 0) {
		cli_profile_error(r, err, m->j->profile_path, dir);
		return EXIT_ERROR;
	}
	if (stune_profile_digest(m->p, &m->digest) < 0)
		m->digest = NULL;
	if (cli_plan(ctx, m->p, dir, m->j->persist, &m->t, &m->plan) < 0)
		return EXIT_ERROR;
	m->read_at[CHECK_HBA] = now_s();
	m->sum.profile_changed = m->j->digest && m->digest && strcmp(m->digest, m->j->digest);
	/* (each row's state kept: --per-disk counts them per disk) */
	m->states = calloc(m->plan->n_changes ? m->plan->n_changes : 1, sizeof(*m->states));
	if (!m->states || stune_verify_classify(m->plan, m->j, &m->sum, m->states) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

int metrics_read_profile(struct stune_ctx *ctx, struct metrics_state *m)
{
	if (cli_state_dir(ctx, m->state_opt, &m->state_dir) != EXIT_OK || read_journal(m) != EXIT_OK)
		return EXIT_ERROR;
	if (m->j) {
		if (verify_profile(ctx, m) != EXIT_OK)
			return EXIT_ERROR;
	} else {
		int r = stune_topology_scan(ctx, &m->t);
		if (r < 0) {
			error_msg("reading the host failed: %s", strerror(-r));
			return EXIT_ERROR;
		}
		m->read_at[CHECK_HBA] = now_s();
	}
	m->read_at[CHECK_PROFILE] = now_s();
	return EXIT_OK;
}

int metrics_read_payload(struct stune_ctx *ctx, struct metrics_state *m)
{
	/* payload verify's own call: its verdict word is the state. */
	int r = stune_payload_state(ctx, NULL, NULL, STUNE_PAYLOAD_STATUS_ALL, NULL, &m->payload);
	if (r < 0) {
		error_msg("payload verify: %s", strerror(-r));
		return EXIT_ERROR;
	}
	m->read_at[CHECK_PAYLOAD] = now_s();
	return EXIT_OK;
}

int metrics_read_reports(struct metrics_state *m)
{
	_cleanup_free_ char *err = NULL;
	int r = stune_resultset_newest(m->state_dir, &m->sets, &err);
	if (r < 0) {
		error_msg("%s", err ? err : strerror(-r));
		return EXIT_ERROR;
	}
	m->read_at[CHECK_REPORT] = now_s();
	return EXIT_OK;
}

/* --- the families ------------------------------------------------------------------ */

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The bundle's build-id of its first module (the installed manifest's), "" without one. */
static const char *payload_build_id(const struct stune_payload_status *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->links[i].link, "loaded.build-id") && s->links[i].expected)
			return s->links[i].expected;
	return "";
}

static const char *profile_state(const struct metrics_state *m)
{
	if (!m->j)
		return "none-applied";
	return m->sum.drifted ? "drifted" : m->sum.profile_changed_rows ? "profile-changed" : "in-effect";
}

static void write_state(struct stune_prom *w, const struct metrics_state *m)
{
	const struct stune_payload_status *s = m->payload;
	stune_prom_gauge(w, "scsitune_info", "scsitune's version.");
	stune_prom_sample(w, "scsitune_info", L("version", SCSITUNE_VERSION), 1);
	stune_prom_gauge(w, "scsitune_payload_info",
			 "The payload as scsitune payload verify sees it; state is its verdict.");
	stune_prom_sample(w, "scsitune_payload_info",
			  L("version", s->payload_version ? s->payload_version : "", "build_id", payload_build_id(s),
			    "state", stune_payload_verdict_name(s->verdict)),
			  1);
	stune_prom_gauge(w, "scsitune_profile_info",
			 "The profile of the last apply and its scsitune verify state (none-applied: no journal).");
	stune_prom_sample(w, "scsitune_profile_info",
			  L("name",
			    m->j && m->j->profile ? m->j->profile
			    : m->p		  ? m->p->name
						  : "",
			    "digest", m->j && m->j->digest ? m->j->digest : "", "state", profile_state(m)),
			  1);
	static const enum stune_vstate order[] = {STUNE_V_IN_EFFECT, STUNE_V_DRIFTED, STUNE_V_PROFILE_CHANGED,
						  STUNE_V_NOT_APPLICABLE, STUNE_V_NOT_SETTABLE};
	const size_t count[_STUNE_V_MAX] = {[STUNE_V_IN_EFFECT] = m->sum.in_effect,
					    [STUNE_V_DRIFTED] = m->sum.drifted,
					    [STUNE_V_PROFILE_CHANGED] = m->sum.profile_changed_rows,
					    [STUNE_V_NOT_SETTABLE] = m->sum.not_settable,
					    [STUNE_V_NOT_APPLICABLE] = m->sum.not_applicable};
	stune_prom_gauge(w, "scsitune_verify_settings", "Settings of the applied profile by scsitune verify state.");
	for (size_t i = 0; i < ELEMENTSOF(order); i++)
		stune_prom_sample(w, "scsitune_verify_settings", L("state", stune_vstate_name(order[i])),
				  (double)count[order[i]]);
}

/* The HBA's name as detect prints it: its PCI address, else "/" and its sysfs path. */
static const char *hba_name(const struct stune_hba *h, char *buf, size_t len)
{
	if (h->pci_address)
		return h->pci_address;
	snprintf(buf, len, "/%s", h->sysfs_path ? h->sysfs_path : "?");
	return buf;
}

static void write_hbas(struct stune_prom *w, const struct stune_topology *t)
{
	char buf[512], node[32];
	stune_prom_gauge(w, "scsitune_hba_info", "An HBA scsitune detect finds.");
	for (size_t i = 0; i < t->n_hbas; i++) {
		const struct stune_hba *h = &t->hbas[i];
		if (h->numa_node.set)
			snprintf(node, sizeof(node), "%lld", (long long)h->numa_node.v);
		else
			snprintf(node, sizeof(node), "unknown");
		stune_prom_sample(w, "scsitune_hba_info",
				  L("pci", hba_name(h, buf, sizeof(buf)), "driver", h->driver ? h->driver : "",
				    "firmware", h->firmware ? h->firmware : "", "numa_node", node),
				  1);
	}
	stune_prom_gauge(w, "scsitune_irq_vectors",
			 "An HBA's IRQ vectors by where they are served against its NUMA node.");
	for (size_t i = 0; i < t->n_hbas; i++) {
		const struct stune_hba *h = &t->hbas[i];
		size_t n[4] = {0}; /* local, remote, spans, managed */
		for (size_t k = 0; k < h->n_irqs; k++) {
			const struct stune_irq *q = &t->irqs[h->irqs[k]];
			enum stune_placement at = stune_irq_served(t, h, q);
			/* detect's model: managed, movable (placed by where it is served) or unclassified
			 * (a bus controller's shared IRQ: neither, not counted) */
			if (q->managed == STUNE_YES)
				n[3]++;
			else if (q->managed == STUNE_NO && at != STUNE_PLACE_UNKNOWN)
				n[at == STUNE_PLACE_LOCAL ? 0 : at == STUNE_PLACE_REMOTE ? 1 : 2]++;
		}
		static const char *const names[] = {"local", "remote", "spans", "managed"};
		for (size_t k = 0; k < 4; k++)
			stune_prom_sample(w, "scsitune_irq_vectors",
					  L("hba", hba_name(h, buf, sizeof(buf)), "placement", names[k]), (double)n[k]);
	}
}

static void write_reports(struct stune_prom *w, const struct stune_newest_sets *s)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
	    {"scsitune_last_report_iops", "Mean IOPS of the newest saved result set of a phase."},
	    {"scsitune_last_report_iops_cov_ratio", "Coefficient of variation of its runs' IOPS (NaN for one run)."},
	    {"scsitune_last_report_runs", "Runs in the newest saved result set of a phase."},
	    {"scsitune_last_report_timestamp_seconds", "When the first run of that set started."},
	};
	for (size_t f = 0; f < ELEMENTSOF(fam); f++) {
		stune_prom_gauge(w, fam[f].name, fam[f].help);
		for (size_t i = 0; i < s->n; i++) {
			const struct stune_saved_set *set = s->sets[i];
			struct stune_stats st;
			if (!set || stune_stats_compute(set->kiops, set->n, &st) < 0)
				continue;
			/* KIOPS as saved, in IOPS to the thousandth (no binary noise of the product) */
			double v = f == 0   ? round(st.avg * 1e6) / 1000.0
				   : f == 1 ? (st.has_stddev ? st.cov : NAN)
				   : f == 2 ? (double)set->n
					    : (double)set->start_ms / 1000.0;
			if (f == 3 && !set->has_start)
				continue;
			stune_prom_sample(w, fam[f].name, L("phase", s->phases[i]), v);
		}
	}
}

/*
 * --per-disk: each disk detect finds (its name, HBA and stable key) and, with
 * a profile applied, its settings by verify state (all five, 0 when none).
 * One series per disk and state: bounded by the disks, so asked for.
 */
static void write_disks(struct stune_prom *w, const struct metrics_state *m)
{
	const struct stune_topology *t = m->t;
	char buf[512];
	stune_prom_gauge(w, "scsitune_disk_info", "A disk scsitune detect finds, with its HBA and stable key.");
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		const struct stune_hba *h =
		    d->host < t->n_hosts && t->hosts[d->host].hba < t->n_hbas ? &t->hbas[t->hosts[d->host].hba] : NULL;
		stune_prom_sample(w, "scsitune_disk_info",
				  L("disk", d->name ? d->name : "", "hba", h ? hba_name(h, buf, sizeof(buf)) : "",
				    "key", d->key ? d->key : ""),
				  1);
	}
	if (!m->plan)
		return;
	static const enum stune_vstate order[] = {STUNE_V_IN_EFFECT, STUNE_V_DRIFTED, STUNE_V_PROFILE_CHANGED,
						  STUNE_V_NOT_APPLICABLE, STUNE_V_NOT_SETTABLE};
	stune_prom_gauge(w, "scsitune_disk_verify_settings",
			 "A disk's settings of the applied profile by scsitune verify state.");
	for (size_t i = 0; i < t->n_disks; i++) {
		size_t count[_STUNE_V_MAX] = {0};
		for (size_t k = 0; k < m->plan->n_changes; k++) {
			const struct stune_change *ch = &m->plan->changes[k];
			if (ch->kind == STUNE_OBJ_DISK && ch->index == i && m->states[k] < _STUNE_V_MAX)
				count[m->states[k]]++;
		}
		for (size_t k = 0; k < ELEMENTSOF(order); k++)
			stune_prom_sample(
			    w, "scsitune_disk_verify_settings",
			    L("disk", t->disks[i].name ? t->disks[i].name : "", "state", stune_vstate_name(order[k])),
			    (double)count[order[k]]);
	}
}

int metrics_write(struct stune_prom *w, const struct metrics_state *m)
{
	write_state(w, m);
	write_hbas(w, m->t);
	if (m->per_disk)
		write_disks(w, m);
	write_reports(w, &m->sets);
	static const char *const checks[_CHECK_MAX] = {"payload", "profile", "hba", "report"};
	stune_prom_gauge(w, "scsitune_last_check_timestamp_seconds",
			 "When scsitune metrics last read each part of the host.");
	for (size_t i = 0; i < _CHECK_MAX; i++)
		stune_prom_sample(w, "scsitune_last_check_timestamp_seconds", L("check", checks[i]), m->read_at[i]);
	const char *text;
	size_t len;
	return stune_prom_text(w, &text, &len);
}
