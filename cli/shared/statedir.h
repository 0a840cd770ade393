/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "core/ctx.h"

/*
 * Find (and create) the state directory for state_opt (NULL: the default inside
 * the root; under --sysroot refused when a symlink on its way leads out of the
 * tree) and take its lock: EXIT_OK, or EXIT_ERROR after printing the error
 * ("another scsitune apply is running (pid N)").
 */
int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd);
