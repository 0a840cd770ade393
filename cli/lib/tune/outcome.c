/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What became of each row of a plan an apply wrote: the plan's state and this
 * apply's journal entries give the result word the text, the JSON and the
 * exit code use, and why. Pure: reads the plan and the journal only.
 */
#include "tune/outcome.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *stune_irqbalance_restart_note(int rr)
{
	return rr == 1	       ? NULL
	       : rr == 0       ? "irqbalance restarted (systemctl try-restart irqbalance.service) to read the bans"
	       : rr == -ENOENT ? "no systemctl: restart irqbalance for the bans to take effect"
			       : "systemctl try-restart irqbalance.service failed: restart it by hand for the "
				 "bans to take effect";
}

static void outcome_of(const struct stune_change *c, const struct jindex *jx, const char *restart,
		       struct stune_outcome *x, size_t *applied, size_t *failed)
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
		(*failed)++;
	} else if (e->state == STUNE_J_APPLIED) {
		x->result = "applied";
		(*applied)++;
		if (c->kind == STUNE_OBJ_IRQBALANCE && restart)
			x->why = restart;
	} else if (e->state == STUNE_J_IGNORED) {
		x->result = "ignored";
		snprintf(x->buf, sizeof(x->buf),
			 "the kernel accepted the write but it is not in effect (reads back '%s')",
			 e->after ? e->after : "?");
		x->why = x->buf;
		(*failed)++;
	} else {
		x->err = e->err;
		x->result = x->err == EINVAL ? "rejected" : x->err == EIO ? "not-settable" : "failed";
		snprintf(x->buf, sizeof(x->buf), "%s: %s", errno_name(x->err), strerror(x->err));
		x->why = x->buf;
		(*failed)++;
	}
}

int stune_apply_outcomes(const struct stune_plan *plan, const struct stune_journal *j, size_t first,
			 const char *restart_note, struct stune_outcome *res, size_t *applied, size_t *failed)
{
	struct jindex jx = {0};
	int r = jindex_build(j, first, &jx);
	if (r < 0)
		return r;
	for (size_t i = 0; i < plan->n_changes; i++)
		outcome_of(&plan->changes[i], &jx, restart_note, &res[i], applied, failed);
	jindex_free(&jx);
	return 0;
}
