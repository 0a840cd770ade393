/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plan as apply, its dry run, verify and revert show it (plan-view.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "out.h"

struct stune_profile;
struct stune_plan;
struct stune_topology;
struct stune_hba;
struct stune_change;

/* Read the host and build the plan of p (with --persist's rows when persist);
 * prints the error and returns -errno on failure. */
int cli_plan(struct stune_ctx *ctx, const struct stune_profile *p, const char *profile_dir, bool persist,
	     struct stune_topology **t, struct stune_plan **plan);
/* A profile that did not load: the loader's line, or, for a name in a profile
 * directory that does not exist, how to install or run from a source tree. */
void cli_profile_error(int r, const char *err, const char *profile, const char *dir);
/* The HBA as people name it: its PCI address, else "/" + its sysfs path (in buf). */
const char *cli_hba_name(const struct stune_hba *h, char *buf, size_t len);
/* The plan's scope: per HBA in or out and why (text and JSON "hbas"). */
void render_scope(struct out *o, const struct stune_topology *t, const struct stune_plan *plan);
/* "Profile NAME  sha256 0123456789ab  includes F" (text only): how apply, its dry run and verify name it. */
void render_profile_text(struct out *o, const struct stune_profile *p, const char *digest);
/* A plan row's device for the text rows (caller frees; NULL when none). */
char *plan_row_device(const struct stune_change *c);
/* "scheduler mq-deadline -> none" (with_desired), else "scheduler mq-deadline" (caller frees). */
char *plan_row_text(const struct stune_change *c, bool with_desired);
