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

#include "tune/apply.h"
#include "tune/irqbalance.h"
#include "tune/journal.h"
#include "tune/plan.h"
#include "scsitune.h"

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

int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd)
{
	int r = stune_state_dir(stune_root_prefix(ctx->root), state_opt, true, state_dir);
	if (r < 0) {
		error_msg("state directory: %s", strerror(-r));
		return -1;
	}
	pid_t holder = 0;
	r = stune_lock_take(*state_dir, fd, &holder);
	if (r == -EWOULDBLOCK) {
		if (holder > 0)
			error_msg("another scsitune apply or revert is running (pid %ld)", (long)holder);
		else
			error_msg("another scsitune apply or revert is running (pid unknown)");
		return -1;
	}
	if (r < 0) {
		error_msg("%s/lock: %s", *state_dir, strerror(-r));
		return -1;
	}
	return 0;
}

int apply_write(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
		const struct stune_plan *plan, const char *profile_dir, const char *state_opt, bool persist)
{
	const struct stune_profile *p = plan->profile;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (cli_lock(ctx, state_opt, &state_dir, &lock) < 0)
		return EXIT_ERROR;
	int r;

	/* A journal left by an earlier apply stays: its entries come first, so
	 * revert undoes this apply, then that one, back to the original values. */
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	r = stune_journal_load(state_dir, &j);
	if (r == -ENOENT)
		r = (j = calloc(1, sizeof(*j))) ? 0 : -ENOMEM;
	if (r < 0) {
		error_msg("%s/journal.json: %s", state_dir, r == -EBADMSG ? "not a scsitune journal" : strerror(-r));
		return EXIT_ERROR;
	}
	size_t first = j->n;
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
	if (!j->profile || !j->profile_path || !j->profile_dir || (r = stune_profile_digest(p, &j->digest)) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	size_t counts[4];
	stune_plan_count(plan, counts);
	if (counts[STUNE_CHANGE] && (r = stune_apply_plan(ctx, plan, state_dir, j)) < 0) {
		error_msg("apply: %s (the journal in %s has what was written)", strerror(-r), state_dir);
		return EXIT_ERROR;
	}
	/* irqbalance reads its defaults only when it starts: restart a running one under systemd. */
	const char *restart = NULL;
	for (size_t i = first; i < j->n; i++) {
		const struct stune_jentry *e = &j->entries[i];
		if (strcmp(e->object, "irqbalance") || e->state != STUNE_J_APPLIED || !t->irqbalance.pid ||
		    !t->irqbalance.systemd)
			continue;
		int rr = stune_irqbalance_restart(ctx);
		restart = rr == 0 ? "irqbalance restarted (systemctl try-restart irqbalance.service) to read the bans"
			  : rr == -ENOENT
			      ? "no systemctl: restart irqbalance for the bans to take effect"
			      : "systemctl try-restart irqbalance.service failed: restart it by hand for the "
				"bans to take effect";
	}
	_cleanup_(jindex_free) struct jindex jx = {0};
	if (jindex_build(j, first, &jx) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}

	size_t n_applied = 0, n_failed = 0, n_already = counts[STUNE_ALREADY], n_skipped = counts[STUNE_NOT_SETTABLE];
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_APPLY_SCHEMA_VERSION);
	out_obj_begin(o, "profile");
	out_str(o, "name", "Profile %s", p->name);
	out_str(o, "digest", NULL, j->digest);
	out_obj_end(o);
	out_bool(o, "dry_run", NULL, STUNE_NO);
	out_str(o, "journal", NULL, counts[STUNE_CHANGE] ? state_dir : NULL);
	out_text(o, "\n");
	out_arr_begin(o, "changes");
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		const char *result = "not-applicable", *why = c->note;
		const struct stune_jentry *e = NULL;
		char buf[256];
		int err = 0;
		switch (c->state) {
		case STUNE_ALREADY:
			result = "already";
			break;
		case STUNE_NOT_SETTABLE:
			result = "skipped";
			break;
		case STUNE_NOT_APPLICABLE:
			break;
		case STUNE_CHANGE:
			e = jindex_find(&jx, c->object, c->setting);
			if (!e || e->state == STUNE_J_SKIPPED) {
				result = "failed";
				err = e ? e->err : 0;
				why = "could not read the old value: not written";
				n_failed++;
			} else if (e->state == STUNE_J_APPLIED) {
				result = "applied";
				n_applied++;
				if (c->kind == STUNE_OBJ_IRQBALANCE && restart)
					why = restart;
			} else if (e->state == STUNE_J_IGNORED) {
				result = "ignored";
				snprintf(buf, sizeof(buf),
					 "the kernel accepted the write but it is not in effect (reads back '%s')",
					 e->after ? e->after : "?");
				why = buf;
				n_failed++;
			} else {
				err = e->err;
				result = err == EINVAL ? "rejected" : err == EIO ? "not-settable" : "failed";
				snprintf(buf, sizeof(buf), "%s: %s", errno_name(err), strerror(err));
				why = buf;
				n_failed++;
			}
			break;
		}
		out_obj_begin(o, NULL);
		out_str(o, "object", NULL, c->object);
		out_str(o, "device", NULL, c->device);
		out_str(o, "setting", NULL, c->setting);
		out_rootpath(o, "path", NULL, c->path);
		out_str(o, "old", NULL, c->current);
		out_str(o, "desired", NULL, c->desired);
		out_str(o, "result", NULL, result);
		out_num(o, "errno", NULL, err ? STUNE_NUM(err) : (struct stune_num){0});
		out_str(o, "why", NULL, why);
		out_obj_end(o);
		if (c->state == STUNE_NOT_APPLICABLE && g->verbose == 0)
			continue;
		bool inline_why = why && c->state == STUNE_CHANGE && c->kind != STUNE_OBJ_IRQBALANCE;
		char b1[32], b2[32];
		const char *cur = stune_change_display(c, false, b1, sizeof(b1)),
			   *want = stune_change_display(c, true, b2, sizeof(b2));
		if (c->state == STUNE_ALREADY) {
			out_text(o, "%-14s %s %s: %s\n", result, c->object, c->setting, cur ? cur : "-");
			continue;
		}
		out_text(o, "%-14s %s %s: %s -> %s%s%s\n", result, c->object, c->setting, cur ? cur : "-",
			 want ? want : "-", inline_why ? ": " : "", inline_why ? why : "");
		if (why && (c->state != STUNE_CHANGE || c->kind == STUNE_OBJ_IRQBALANCE))
			out_text(o, "               (%s)\n", why);
	}
	out_arr_end(o);
	out_obj_begin(o, "summary");
	out_int(o, "applied", "\n%s applied", (long long)n_applied);
	out_int(o, "already", ", %s already right", (long long)n_already);
	out_int(o, "skipped", ", %s skipped (not settable)", (long long)n_skipped);
	out_int(o, "failed", ", %s failed", (long long)n_failed);
	out_int(o, "not_applicable", ", %s not applicable\n", (long long)counts[STUNE_NOT_APPLICABLE]);
	out_obj_end(o);
	if (counts[STUNE_CHANGE])
		out_text(o, "Journal: %s/journal.json ('scsitune revert' undoes this)\n", state_dir);
	out_obj_end(o);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return n_failed ? EXIT_ERROR : EXIT_OK;
}
