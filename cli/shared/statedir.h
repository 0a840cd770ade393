/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "core/ctx.h"
#include "core/trust.h"

/*
 * Find (and create) the state directory for state_opt (NULL: the default inside
 * the root) and take its lock: EXIT_OK, or EXIT_ERROR after printing the error
 * ("another scsitune apply is running (pid N)").
 */
int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd);
/*
 * The one line for a state directory that is not trusted (stune_state_dir's
 * -EPERM; core/trust.h): "state directory DIR: not trusted: what and the fix",
 * DIR state_opt, else the default under the host prefix. EXIT_ERROR.
 */
int cli_state_untrusted(const char *prefix, const char *state_opt, const struct stune_trust_fault *bad);
