/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/verify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tune/profile.h"

void stune_verify_count(const struct stune_plan *plan, struct stune_verify_summary *out)
{
	bool changed = out->profile_changed;
	*out = (struct stune_verify_summary){.profile_changed = changed};
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		switch (c->state) {
		case STUNE_CHANGE:
			out->drifted++;
			break;
		case STUNE_ALREADY:
			out->in_effect++;
			break;
		case STUNE_NOT_SETTABLE:
			out->not_settable++;
			break;
		case STUNE_NOT_APPLICABLE:
			out->not_applicable++;
			break;
		}
	}
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
	stune_verify_count(plan, out);
	return 0;
}
