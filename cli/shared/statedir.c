/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directory and its lock, for apply, revert and payload. */
#include <errno.h>
#include <string.h>

#include "core/root.h"
#include "tune/journal.h"
#include "cli.h"
#include "statedir.h"

int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd)
{
	int r = stune_state_dir(stune_root_prefix(ctx->root), state_opt, true, state_dir);
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
		error_msg("%s/lock: %s", *state_dir, strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
