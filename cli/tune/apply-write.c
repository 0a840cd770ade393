/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune apply --profile NAME (no --dry-run): take the lock, write the plan
 * with its journal (lib/apply.c), print the outcome of each row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/userfile.h"
#include "tune/apply.h"
#include "tune/irqbalance.h"
#include "tune/journal.h"
#include "tune/plan.h"
#include "core/strv.h"
#include "rows.h"
#include "payload-install.h"
#include "apply-write.h"
#include "cli.h"
#include "plan-view.h"
#include "statedir.h"
#include "wrap.h"

#define NB    WRAP_NBSP
#define VLIST " (-v" NB "lists" NB "them)"

#define STUNE_APPLY_SCHEMA_VERSION 1

/* This apply's entries (from first on, side effects left out) by (object, setting), newest first. */
struct jindex {
	const struct stune_journal *j;
	size_t *ord;
	size_t n;
};

static int jentry_key_cmp(const struct stune_jentry *e, const char *object, const char *setting)
{
	int c = strcmp(e->object, object);
	return c ? c : strcmp(e->setting, setting);
}

static int jindex_cmp(const void *a, const void *b, void *data)
{
	const struct stune_journal *j = data;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = jentry_key_cmp(&j->entries[x], j->entries[y].object, j->entries[y].setting);
	return c ? c : (x > y ? -1 : x < y);
}

static int jindex_build(const struct stune_journal *j, size_t first, struct jindex *x)
{
	x->j = j;
	x->n = 0;
	if (!(x->ord = calloc(j->n > first ? j->n - first : 1, sizeof(*x->ord))))
		return -ENOMEM;
	for (size_t i = first; i < j->n; i++)
		if (j->entries[i].state != STUNE_J_RECORDED)
			x->ord[x->n++] = i;
	qsort_r(x->ord, x->n, sizeof(*x->ord), jindex_cmp, (void *)j);
	return 0;
}

static void jindex_free(struct jindex *x)
{
	free(x->ord);
}

static const struct stune_jentry *jindex_find(const struct jindex *x, const char *object, const char *setting)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (jentry_key_cmp(&x->j->entries[x->ord[mid]], object, setting) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->n && !jentry_key_cmp(&x->j->entries[x->ord[lo]], object, setting))
		return &x->j->entries[x->ord[lo]];
	return NULL;
}

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL:
		return "EINVAL";
	case EIO:
		return "EIO";
	case EBUSY:
		return "EBUSY";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EROFS:
		return "EROFS";
	case ENOENT:
		return "ENOENT";
	}
	return "errno";
}

/*
 * The journal this apply appends to: a journal left by an earlier apply
 * stays, its entries first, so revert undoes this apply, then that one, back
 * to the original values. The profile fields say this apply's profile.
 * -1 after printing the error.
 */
static int journal_begin(const struct stune_plan *plan, const char *profile_dir, const char *state_dir, bool persist,
			 struct stune_journal **out)
{
	const struct stune_profile *p = plan->profile;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	const char *jfile = "journal.json";
	int r = stune_journal_load_named(state_dir, &j, &jfile);
	if (r == -ENOENT)
		r = (j = calloc(1, sizeof(*j))) ? 0 : -ENOMEM;
	if (r < 0) {
		error_msg("%s/%s: %s", state_dir, jfile, stune_journal_strerror(r));
		return -1;
	}
	free(j->profile);
	free(j->profile_path);
	free(j->profile_dir);
	free(j->digest);
	j->profile = strdup(p->name);
	j->profile_path = strdup(p->path);
	/* Absolute: verify may run from another directory. */
	j->profile_dir = realpath(profile_dir, NULL);
	if (!j->profile_dir)
		j->profile_dir = strdup(profile_dir);
	j->digest = NULL;
	j->started = (long long)time(NULL);
	j->persist = j->persist || persist;
	if (!j->profile || !j->profile_path || !j->profile_dir || stune_profile_digest(p, &j->digest) < 0) {
		error_msg("out of memory");
		return -1;
	}
	*out = steal_pointer(&j);
	return 0;
}

/* irqbalance reads its defaults only when it starts: apply restarted a
 * running one under systemd when it changed them (rr: what that returned;
 * 1 when it did not). What happened, or NULL. */
static const char *irqbalance_restarted(int rr)
{
	return rr == 1	       ? NULL
	       : rr == 0       ? "irqbalance restarted (systemctl try-restart irqbalance.service) to read the bans"
	       : rr == -ENOENT ? "no systemctl: restart irqbalance for the bans to take effect"
			       : "systemctl try-restart irqbalance.service failed: restart it by hand for the "
				 "bans to take effect";
}

/* One row's outcome, from the plan and this apply's journal entries. */
struct outcome {
	const char *result, *why;
	int err;
	char buf[256];
};

struct tally {
	size_t counts[4];
	size_t applied, failed, already, skipped;
};

static void outcome_of(const struct stune_change *c, const struct jindex *jx, const char *restart, struct outcome *x,
		       struct tally *n)
{
	x->result = "not-applicable";
	x->why = c->note;
	switch (c->state) {
	case STUNE_ALREADY:
		x->result = "already";
		return;
	case STUNE_NOT_SETTABLE:
		x->result = "skipped";
		return;
	case STUNE_NOT_APPLICABLE:
		return;
	case STUNE_CHANGE:
		break;
	}
	const struct stune_jentry *e = jindex_find(jx, c->object, c->setting);
	if (!e || e->state == STUNE_J_SKIPPED) {
		x->result = "failed";
		x->err = e ? e->err : 0;
		x->why = "could not read the old value: not written";
		n->failed++;
	} else if (e->state == STUNE_J_APPLIED) {
		x->result = "applied";
		n->applied++;
		if (c->kind == STUNE_OBJ_IRQBALANCE && restart)
			x->why = restart;
	} else if (e->state == STUNE_J_IGNORED) {
		x->result = "ignored";
		snprintf(x->buf, sizeof(x->buf),
			 "the kernel accepted the write but it is not in effect (reads back '%s')",
			 e->after ? e->after : "?");
		x->why = x->buf;
		n->failed++;
	} else {
		x->err = e->err;
		x->result = x->err == EINVAL ? "rejected" : x->err == EIO ? "not-settable" : "failed";
		snprintf(x->buf, sizeof(x->buf), "%s: %s", errno_name(x->err), strerror(x->err));
		x->why = x->buf;
		n->failed++;
	}
}

/* Text: the counts and the scope line. */
static void render_counts(struct out *o, const struct global_opts *g, const struct stune_topology *t,
			  const struct stune_plan *plan, const struct tally *n)
{
	out_text(o,
		 "Applied %zu" NB "of" NB "%zu; %zu" NB "failed, %zu" NB "already" NB "right, %zu" NB "skipped" NB
		 "(not" NB "settable), %zu" NB "not" NB "applicable%s\n",
		 n->applied, n->counts[STUNE_CHANGE], n->failed, n->already, n->skipped,
		 n->counts[STUNE_NOT_APPLICABLE],
		 g->verbose || n->already + n->skipped + n->counts[STUNE_NOT_APPLICABLE] == 0 ? "" : VLIST);
	if (out_is_json(o))
		return;
	size_t in = 0;
	for (size_t i = 0; i < plan->n_hbas; i++)
		in += plan->hbas[i].in_scope;
	out_text(o, "Scope: %zu of %zu HBA%s" WRAP_LIST, in, plan->n_hbas, plan->n_hbas == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < plan->n_hbas; i++) {
		char buf[512];
		if (plan->hbas[i].in_scope)
			out_str(o, NULL, k++ ? ", %s" : ": %s",
				cli_hba_name(&t->hbas[plan->hbas[i].index], buf, sizeof(buf)));
	}
	out_text(o, "%s\n", g->verbose ? "" : " (apply --dry-run says why)");
}

/* Text: a row per object and result (written rows; -v all). */
static void render_rows(struct out *o, const struct global_opts *g, const struct stune_plan *plan,
			const struct outcome *res, const char *restart)
{
	struct rows rows = {0};
	for (size_t i = 0; i < plan->n_changes && !out_is_json(o); i++) {
		const struct stune_change *c = &plan->changes[i];
		const struct outcome *x = &res[i];
		if (c->state != STUNE_CHANGE && !g->verbose)
			continue;
		_cleanup_free_ char *dev = plan_row_device(c);
		char *text = plan_row_text(c, c->state == STUNE_CHANGE);
		/* A failed write says why on its row; other notes go below it. */
		bool inline_why = x->why && c->state == STUNE_CHANGE && strcmp(x->result, "applied");
		if (inline_why && text) {
			char *n = stune_strdupf("%s (%s)", text, x->why);
			free(text);
			text = n;
		}
		const char *note = inline_why								       ? NULL
				   : c->state == STUNE_CHANGE && !(c->kind == STUNE_OBJ_IRQBALANCE && restart) ? NULL
													       : x->why;
		if (rows_add(&rows, x->result, dev, c->object, text, note) < 0)
			break;
	}
	rows_print(o, &rows, "RESULT");
	rows_free(&rows);
}

/* JSON: every row with its result, and the summary. */
static void render_changes(struct out *o, const struct stune_plan *plan, const struct outcome *res,
			   const struct tally *n)
{
	out_arr_begin(o, "changes");
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		const struct outcome *x = &res[i];
		out_obj_begin(o, NULL);
		out_str(o, "object", NULL, c->object);
		out_str(o, "device", NULL, c->device);
		out_str(o, "setting", NULL, c->setting);
		out_rootpath(o, "path", NULL, c->path);
		out_str(o, "old", NULL, c->current);
		out_str(o, "desired", NULL, c->desired);
		out_str(o, "result", NULL, x->result);
		out_num(o, "errno", NULL, x->err ? STUNE_NUM(x->err) : (struct stune_num){0});
		out_str(o, "why", NULL, x->why);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_begin(o, "summary");
	out_int(o, "applied", NULL, (long long)n->applied);
	out_int(o, "already", NULL, (long long)n->already);
	out_int(o, "skipped", NULL, (long long)n->skipped);
	out_int(o, "failed", NULL, (long long)n->failed);
	out_int(o, "not_applicable", NULL, (long long)n->counts[STUNE_NOT_APPLICABLE]);
	out_obj_end(o);
}

int apply_write(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
		const struct stune_plan *plan, const char *profile_dir, const char *state_opt, bool persist,
		const struct stune_loaded_bundle *b)
{
	const struct stune_profile *p = plan->profile;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (cli_lock(ctx, state_opt, &state_dir, &lock) < 0)
		return EXIT_ERROR;
	/* apply --payload: the payload first, under the same lock; refused or failed: no profile either. */
	if (b && payload_apply_install(g, ctx, b, state_dir, false) < 0)
		return EXIT_ERROR;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	if (journal_begin(plan, profile_dir, state_dir, persist, &j) < 0)
		return EXIT_ERROR;
	if (b) { /* the journal names the payload installed with this apply */
		free(j->payload);
		if (!(j->payload = stune_strdupf("%s %s", b->m->payload_version, b->m->release))) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
	}
	size_t first = j->n;
	struct tally n = {0};
	stune_plan_count(plan, n.counts);
	n.already = n.counts[STUNE_ALREADY];
	n.skipped = n.counts[STUNE_NOT_SETTABLE];
	int r;
	int rr = 1; /* irqbalance not restarted */
	if (n.counts[STUNE_CHANGE] &&
	    (r = stune_apply_plan(ctx, plan, state_dir, j, t->irqbalance.pid && t->irqbalance.systemd ? &rr : NULL)) <
		0) {
		error_msg("apply: %s (the journal in %s has what was written)", strerror(-r), state_dir);
		return EXIT_ERROR;
	}
	const char *restart = irqbalance_restarted(rr);
	_cleanup_(jindex_free) struct jindex jx = {0};
	/* Each row's outcome first: the text prints its counts before the rows. */
	_cleanup_free_ struct outcome *res = calloc(plan->n_changes ? plan->n_changes : 1, sizeof(*res));
	if (!res || jindex_build(j, first, &jx) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < plan->n_changes; i++)
		outcome_of(&plan->changes[i], &jx, restart, &res[i], &n);

	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_APPLY_SCHEMA_VERSION);
	render_profile_text(o, p, j->digest);
	out_obj_begin(o, "profile");
	out_str(o, "name", NULL, p->name);
	out_str(o, "digest", NULL, j->digest);
	out_obj_end(o);
	out_bool(o, "dry_run", NULL, STUNE_NO);
	out_str(o, "journal", NULL, n.counts[STUNE_CHANGE] ? state_dir : NULL);
	/* apply --payload: the payload's chain of custody, from the code payload verify runs. */
	_cleanup_(stune_pstate_freep) struct stune_pstate *ps = NULL;
	if (b && out_is_json(o) &&
	    stune_payload_state(ctx, b->m, NULL, STUNE_PSTATE_MODPROBE | STUNE_PSTATE_INITRD, NULL, &ps) == 0) {
		out_obj_begin(o, "payload");
		payload_render_state(o, ps, g->verbose);
		out_obj_end(o);
	} else
		out_str(o, "payload", NULL, NULL);
	render_counts(o, g, t, plan, &n);
	render_rows(o, g, plan, res, restart);
	render_changes(o, plan, res, &n);
	if (n.counts[STUNE_CHANGE]) {
		/* The undo with what it needs to find this journal again. */
		_cleanup_free_ char *undo = cli_cmdline(g, "revert", "--state-dir", state_opt, NULL);
		out_str(o, NULL, "\nJournal: %s/journal.json; to undo this apply:\n", state_dir);
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", undo ? undo : "scsitune revert");
	}
	out_obj_end(o);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return n.failed ? EXIT_ERROR : EXIT_OK;
}
