/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/verify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tune/profile.h"

const char *stune_vstate_name(enum stune_vstate s)
{
	static const char *const names[_STUNE_V_MAX] = {
	    [STUNE_V_IN_EFFECT] = "in-effect",
	    [STUNE_V_DRIFTED] = "drifted",
	    [STUNE_V_PROFILE_CHANGED] = "profile-changed",
	    [STUNE_V_NOT_SETTABLE] = "not-settable",
	    [STUNE_V_NOT_APPLICABLE] = "not-applicable",
	};
	return s < _STUNE_V_MAX ? names[s] : "?";
}

static int entry_cmp(const void *a, const void *b, void *data)
{
	const struct stune_jentry *e = data;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(e[x].object, e[y].object);
	if (!c)
		c = strcmp(e[x].setting, e[y].setting);
	return c ? c : (x > y ? -1 : x < y); /* newest first */
}

/* The newest entry of the journal that wrote (object, setting), through ord (sorted), or NULL. */
static const struct stune_jentry *written(const struct stune_journal *j, const size_t *ord, const char *object,
					  const char *setting)
{
	size_t lo = 0, hi = j->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct stune_jentry *e = &j->entries[ord[mid]];
		int c = strcmp(e->object, object);
		if (!c)
			c = strcmp(e->setting, setting);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < j->n; lo++) {
		const struct stune_jentry *e = &j->entries[ord[lo]];
		if (strcmp(e->object, object) || strcmp(e->setting, setting))
			break;
		if (e->state == STUNE_J_APPLIED || e->state == STUNE_J_IGNORED)
			return e;
	}
	return NULL;
}

int stune_verify_classify(const struct stune_plan *plan, const struct stune_journal *j,
			  struct stune_verify_summary *out, enum stune_vstate *states)
{
	bool changed = out->profile_changed;
	*out = (struct stune_verify_summary){.profile_changed = changed};
	_cleanup_free_ size_t *ord = NULL;
	if (changed && j && j->n) {
		if (!(ord = calloc(j->n, sizeof(*ord))))
			return -ENOMEM;
		for (size_t i = 0; i < j->n; i++)
			ord[i] = i;
		qsort_r(ord, j->n, sizeof(*ord), entry_cmp, j->entries);
	}
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		enum stune_vstate st = STUNE_V_NOT_APPLICABLE;
		switch (c->state) {
		case STUNE_CHANGE:
			st = STUNE_V_DRIFTED;
			if (ord) {
				const struct stune_jentry *e = written(j, ord, c->object, c->setting);
				/* The host as apply left it: current means what was read back after the write. */
				struct stune_change as_applied = *c;
				as_applied.desired = c->current;
				if (!e || (e->after && c->current && stune_change_in_effect(&as_applied, e->after)))
					st = STUNE_V_PROFILE_CHANGED;
			}
			break;
		case STUNE_ALREADY:
			st = STUNE_V_IN_EFFECT;
			break;
		case STUNE_NOT_SETTABLE:
			st = STUNE_V_NOT_SETTABLE;
			break;
		case STUNE_NOT_APPLICABLE:
			break;
		}
		switch (st) {
		case STUNE_V_IN_EFFECT:
			out->in_effect++;
			break;
		case STUNE_V_DRIFTED:
			out->drifted++;
			break;
		case STUNE_V_PROFILE_CHANGED:
			out->profile_changed_rows++;
			break;
		case STUNE_V_NOT_SETTABLE:
			out->not_settable++;
			break;
		case STUNE_V_NOT_APPLICABLE:
		case _STUNE_V_MAX:
			out->not_applicable++;
			break;
		}
		if (states)
			states[i] = st;
	}
	return 0;
}

int stune_verify_journal(const struct stune_topology *t, const struct stune_journal *j, const char *default_dir,
			 struct stune_verify_summary *out, char **err)
{
	*err = NULL;
	*out = (struct stune_verify_summary){0};
	if (!j->profile_path)
		return -EBADMSG;
	_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
	int r = stune_profile_load(j->profile_path, j->profile_dir ? j->profile_dir : default_dir, &p, err);
	if (r < 0)
		return r;
	_cleanup_free_ char *digest = NULL;
	if (j->digest && (r = stune_profile_digest(p, &digest)) < 0)
		return r;
	out->profile_changed = digest && strcmp(digest, j->digest) != 0;
	_cleanup_(stune_plan_freep) struct stune_plan *plan = NULL;
	if ((r = stune_plan_build(t, p, &plan)) < 0)
		return r;
	return stune_verify_classify(plan, j, out, NULL);
}
