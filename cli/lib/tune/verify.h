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

struct stune_verify_summary {
	size_t in_effect, drifted, not_settable, not_applicable;
	bool profile_changed; /* the profile file's digest differs from the journal's */
};

/* Count a plan's rows as verify does. */
void stune_verify_count(const struct stune_plan *plan, struct stune_verify_summary *out);
/*
 * The journal's profile against t. default_dir: where names resolve when the
 * journal has no profile directory. -EBADMSG when the journal names no
 * profile; the profile loader's error (with *err, "FILE:LINE: ...") when the
 * profile cannot be read.
 */
int stune_verify_journal(const struct stune_topology *t, const struct stune_journal *j, const char *default_dir,
			 struct stune_verify_summary *out, char **err);
