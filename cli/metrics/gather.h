/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What scsitune metrics reads, each with the engine call its command uses
 * (detect, verify, payload verify, report), and the families it writes.
 */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "detect/topology.h"
#include "payload/state.h"
#include "prom/text.h"
#include "report/resultset.h"
#include "tune/journal.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "tune/verify.h"

/* The checks, each with the time this run read it. */
enum metrics_check { CHECK_PAYLOAD, CHECK_PROFILE, CHECK_HBA, CHECK_REPORT, _CHECK_MAX };

struct metrics_state {
	const char *state_opt, *profile_dir;
	char *state_dir;
	struct stune_journal *j; /* NULL: nothing applied */
	struct stune_profile *p;
	char *digest; /* the profile file's now */
	struct stune_verify_summary sum;
	bool per_disk;		   /* --per-disk: the disk families too */
	struct stune_plan *plan;   /* the journal's profile planned (NULL: nothing applied) */
	enum stune_vstate *states; /* per plan row: verify's state */
	struct stune_topology *t;
	struct stune_payload_status *payload;
	struct stune_newest_sets sets;
	double read_at[_CHECK_MAX];
};

void metrics_state_clear(struct metrics_state *m);

/* Each reads its part into m: EXIT_OK, or EXIT_ERROR after the one line naming what failed. */
int metrics_read_profile(struct stune_ctx *ctx, struct metrics_state *m);
int metrics_read_payload(struct stune_ctx *ctx, struct metrics_state *m);
int metrics_read_reports(struct metrics_state *m);

/* Every family of m into w: 0 or the writer's -errno. */
int metrics_write(struct stune_prom *w, const struct metrics_state *m);
