/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directory and its lock, for apply, revert and payload. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/root.h"
#include "tune/journal.h"
#include "cli.h"
#include "statedir.h"

int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd)
{
	/* The default under --sysroot is a host path inside the tree (made with mkdir -p): a symlink on the way
	 * that leads out of the tree would put the journal, the lock and the kept initrd on the host. */
	_cleanup_free_ char *link = NULL, *target = NULL;
	if (!state_opt && stune_root_confined(ctx->root, STUNE_STATE_DIR, &link, &target) == -EXDEV) {
		error_msg(
		    "state directory %s%s: %s is a symlink to %s, which leads out of the --sysroot tree: refused, "
		    "nothing was changed (--state-dir names another)",
		    stune_root_prefix(ctx->root), STUNE_STATE_DIR, link, target);
		return EXIT_ERROR;
	}
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
