/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune apply --profile NAME (no --dry-run): take the lock before the host
 * is read (apply_lock: apply.c plans under it), write the plan with its
 * journal (the engine: tune/apply.c; each row's outcome: tune/outcome.c),
 * print the outcome of each row.
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
#include "tune/outcome.h"
#include "tune/plan.h"
#include "core/strv.h"
#include "rows.h"
#include "payload-install.h"
#include "apply-run.h"
#include "cli.h"
#include "plan-view.h"
#include "statedir.h"
#include "wrap.h"

#define NB    WRAP_NBSP
#define VLIST " (-v" NB "lists" NB "them)"

#define STUNE_APPLY_SCHEMA_VERSION 1

int apply_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *lock, struct stune_journal **out)
{
	if (cli_lock(ctx, state_opt, "apply", state_dir, lock) != EXIT_OK)
		return EXIT_ERROR;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	const char *jfile = "journal.json";
	int r = stune_journal_load_named(*state_dir, &j, &jfile);
	if (r == -ENOENT)
		r = (j = calloc(1, sizeof(*j))) ? 0 : -ENOMEM;
	if (r < 0) {
		error_msg("%s/%s: %s", *state_dir, jfile, stune_journal_strerror(r));
		return EXIT_ERROR;
	}
	if (cli_journal_check(*state_dir, j) != EXIT_OK)
		return EXIT_ERROR;
	*out = steal_pointer(&j);
	return EXIT_OK;
}

/*
 * The journal this apply appends to: a journal left by an earlier apply
 * stays, its entries first, so revert undoes this apply, then that one, back
 * to the original values. The profile fields say this apply's profile.
 * EXIT_OK, or EXIT_ERROR after printing the error.
 */
static int journal_begin(const struct stune_plan *plan, const char *profile_dir, bool persist, struct stune_journal *j)
{
	const struct stune_profile *p = plan->profile;
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
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* irqbalance reads its defaults only when it starts: apply restarted a
 * running one under systemd when it changed them (rr: what that returned;
 * 1 when it did not). What happened, or NULL. */
struct tally {
	size_t counts[4];
	size_t applied, failed, already, skipped;
};

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
			const struct stune_outcome *res, const char *restart)
{
	struct rows rows = {0};
	for (size_t i = 0; i < plan->n_changes && !out_is_json(o); i++) {
		const struct stune_change *c = &plan->changes[i];
		const struct stune_outcome *x = &res[i];
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
	rows_print(o, &rows, "RESULT", !g->verbose);
	rows_free(&rows);
}

/* JSON: every row with its result, and the summary. */
static void render_changes(struct out *o, const struct stune_plan *plan, const struct stune_outcome *res,
			   const struct tally *n)
{
	out_arr_begin(o, "changes");
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		const struct stune_outcome *x = &res[i];
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

int apply_run(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
	      const struct stune_plan *plan, const char *profile_dir, const char *state_dir, const char *state_opt,
	      bool persist, const struct stune_loaded_bundle *b, struct stune_journal *j)
{
	const struct stune_profile *p = plan->profile;
	/* apply --payload: the payload first, under the same lock; refused or failed: no profile either. */
	if (b && payload_apply_install(g, ctx, b, state_dir, false) != EXIT_OK)
		return EXIT_ERROR;
	if (journal_begin(plan, profile_dir, persist, j) != EXIT_OK)
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
	const char *restart = stune_irqbalance_restart_note(rr);
	/* Each row's outcome first: the text prints its counts before the rows. */
	_cleanup_free_ struct stune_outcome *res = calloc(plan->n_changes ? plan->n_changes : 1, sizeof(*res));
	if (!res || stune_apply_outcomes(plan, j, first, restart, res, &n.applied, &n.failed) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}

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
	_cleanup_(stune_payload_status_freep) struct stune_payload_status *ps = NULL;
	if (b && out_is_json(o) &&
	    stune_payload_state(ctx, b->m, NULL, STUNE_PAYLOAD_STATUS_MODPROBE | STUNE_PAYLOAD_STATUS_INITRD, NULL,
				&ps) == 0) {
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
