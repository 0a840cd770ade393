/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "core/ctx.h"
#include "core/trust.h"

struct stune_journal;

/*
 * Find (and create) the state directory for state_opt (NULL: the default inside
 * the root; under --sysroot refused when a symlink on its way leads out of the
 * tree) and take its lock before anything of the host is read, writing
 * "PID WHAT" (what: the command, "apply") into it: EXIT_OK, or EXIT_ERROR after
 * printing the error, which names the holder ("another scsitune apply is
 * running (pid N)", "a scsitune verify is reading the host ...", or why its pid
 * is not known).
 */
int cli_lock(struct stune_ctx *ctx, const char *state_opt, const char *what, char **state_dir, int *fd);
/*
 * verify's: the same lock shared (never while apply, revert or payload holds it;
 * many verifies at once), creating nothing: no state directory or no lock file
 * there is EXIT_OK with *fd -1 (nothing was ever applied with it).
 */
int cli_lock_shared(struct stune_ctx *ctx, const char *state_opt, int *fd);
/*
 * The state directory for state_opt (NULL: the default inside the root),
 * not created, trusted (core/trust.h): EXIT_OK with *state_dir, or
 * EXIT_ERROR after the one line (untrusted: the directory at fault and the fix).
 */
int cli_state_dir(struct stune_ctx *ctx, const char *state_opt, char **state_dir);
/*
 * The apply journal j of state_dir names only what apply could have written
 * (stune_apply_journal_check): EXIT_OK, or EXIT_ERROR after one line naming
 * the journal, the entry (changes[N], its kind and path) and why.
 */
int cli_journal_check(const char *state_dir, const struct stune_journal *j);
/*
 * The one line for a state directory that is not trusted (stune_state_dir's
 * -EPERM; core/trust.h): "state directory DIR: not trusted: what and the fix",
 * DIR state_opt, else the default under the host prefix. EXIT_ERROR.
 */
int cli_state_untrusted(const char *prefix, const char *state_opt, const struct stune_trust_fault *bad);
