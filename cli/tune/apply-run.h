/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "cli.h"

struct stune_topology;
struct stune_plan;
/* apply without --dry-run (apply-run.c). */
struct stune_loaded_bundle;
/* b: apply --payload's bundle (installed first, under the same lock), or NULL. */
int apply_run(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
	      const struct stune_plan *plan, const char *profile_dir, const char *state_opt, bool persist,
	      const struct stune_loaded_bundle *b);
