/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directory and its lock, for apply, revert and payload. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/root.h"
#include "tune/journal.h"
#include "cli.h"
#include "statedir.h"

int cli_state_untrusted(const char *prefix, const char *state_opt, const struct stune_trust_fault *bad)
{
	_cleanup_free_ char *dir = NULL, *why = NULL;
	if (state_opt)
		dir = strdup(state_opt);
	else if (asprintf(&dir, "%s%s", prefix ? prefix : "", STUNE_STATE_DIR) < 0)
		dir = NULL;
	why = stune_trust_fault_msg(bad, dir);
	if (!dir || !why)
		error_msg("out of memory");
	else
		error_msg("state directory %s: not trusted: %s", dir, why);
	return EXIT_ERROR;
}

int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd)
{
	_cleanup_(stune_trust_fault_clear) struct stune_trust_fault bad = {0};
	int r = stune_state_dir(stune_root_prefix(ctx->root), state_opt, true, state_dir, &bad);
	if (r == -EPERM && bad.path)
		return cli_state_untrusted(stune_root_prefix(ctx->root), state_opt, &bad);
	if (r < 0) {
		error_msg("state directory: %s", strerror(-r));
		return EXIT_ERROR;
	}
	pid_t holder = 0;
	r = stune_lock_take(*state_dir, fd, &holder);
	if (r == -EWOULDBLOCK) {
		if (holder > 0)
			error_msg("another scsitune apply or revert is running (pid %ld)", (long)holder);
		else
			error_msg("another scsitune apply or revert is running (pid unknown)");
		return EXIT_ERROR;
	}
	if (r < 0) {
		error_msg("%s/lock: %s", *state_dir, stune_state_strerror(r, 0));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
