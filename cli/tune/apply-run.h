/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "cli.h"

struct stune_topology;
struct stune_plan;
struct stune_journal;
struct stune_loaded_bundle;
/*
 * apply without --dry-run, before anything of the host is read: the lock
 * (STATE/lock), then the journal an earlier apply left (checked: it names
 * only what apply writes) or a new one. EXIT_OK with *state_dir, *lock and
 * *j, or EXIT_ERROR after printing why.
 */
int apply_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *lock, struct stune_journal **j);
/*
 * Then the plan made under that lock written (apply-run.c), journaled in j.
 * b: apply --payload's bundle (installed first, under the same lock), or NULL.
 */
int apply_run(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
	      const struct stune_plan *plan, const char *profile_dir, const char *state_dir, const char *state_opt,
	      bool persist, const struct stune_loaded_bundle *b, struct stune_journal *j);
