/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether the profile of the last apply is in effect, as `scsitune verify`
 * decides it: the journal's profile (its file and --profile-dir) is loaded,
 * the plan is built against a host model, and each setting counts as in
 * effect (already), drifted (would change), not settable or not applicable.
 * report --run records the result in its provenance.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tune/journal.h"
#include "tune/plan.h"
#include "detect/topology.h"

/* A plan row as verify sees it. */
enum stune_vstate {
	STUNE_V_IN_EFFECT = 0,
	STUNE_V_DRIFTED,	 /* the host changed: it no longer has the value */
	STUNE_V_PROFILE_CHANGED, /* the profile changed since apply: it asks for a value apply never wrote */
	STUNE_V_NOT_SETTABLE,
	STUNE_V_NOT_APPLICABLE,
	_STUNE_V_MAX
};
const char *stune_vstate_name(enum stune_vstate s);

struct stune_verify_summary {
	size_t in_effect, drifted, profile_changed_rows, not_settable, not_applicable;
	bool profile_changed; /* the profile file's digest differs from the journal's */
};

/*
 * Count a plan's rows as verify does, each row's state into states (n_changes
 * of them) when not NULL. A row that differs is drifted, unless the profile
 * changed since the journal's apply (j given, digest differs; set
 * out->profile_changed first) and the host still has what that apply wrote
 * (read back after its write), or that apply never wrote it: then the profile
 * asks for something new, and the row is profile-changed. -ENOMEM.
 */
int stune_verify_classify(const struct stune_plan *plan, const struct stune_journal *j,
			  struct stune_verify_summary *out, enum stune_vstate *states);
/*
 * The journal's profile against t. default_dir: where names resolve when the
 * journal has no profile directory. -EBADMSG when the journal names no
 * profile; the profile loader's error (with *err, "FILE:LINE: ...") when the
 * profile cannot be read.
 */
int stune_verify_journal(const struct stune_topology *t, const struct stune_journal *j, const char *default_dir,
			 struct stune_verify_summary *out, char **err);
