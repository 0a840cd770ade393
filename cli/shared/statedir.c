/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state directory and its lock, for apply, verify, revert and payload. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/root.h"
#include "core/userfile.h"
#include "tune/journal.h"
#include "cli.h"
#include "statedir.h"

/* Who keeps this command out: always the holder, by pid when it wrote one, else why its pid is not known. */
static void lock_busy(const char *state_dir, const struct stune_lock_holder *h)
{
	if (h->shared)
		error_msg("a scsitune verify is reading the host (it holds %s/lock shared): run this again when it "
			  "ends",
			  state_dir);
	else if (h->pid > 0 && h->what[0])
		error_msg("another scsitune %s is running (pid %ld)", h->what, (long)h->pid);
	else if (h->pid > 0)
		error_msg("another process holds %s/lock (pid %ld)", state_dir, (long)h->pid);
	else {
		error_msg("another process holds %s/lock: %s", state_dir, h->why);
		/* util-linux's lslocks (always installed) names it: the lock is a flock(2) on that file. */
		hint_msg("to see which: lslocks --output PID,COMMAND,PATH | grep -F %s/lock", state_dir);
	}
}

static int lock_error(const char *state_dir, int r, const struct stune_lock_holder *h)
{
	if (r == -EWOULDBLOCK)
		lock_busy(state_dir, h);
	else
		error_msg("%s/lock: %s", state_dir,
			  r == -ELOOP ? "a symbolic link: refused" : stune_user_file_strerror(r, 0));
	return EXIT_ERROR;
}

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

int cli_lock(struct stune_ctx *ctx, const char *state_opt, const char *what, char **state_dir, int *fd)
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
	_cleanup_(stune_trust_fault_clear) struct stune_trust_fault bad = {0};
	int r = stune_state_dir(stune_root_prefix(ctx->root), state_opt, true, state_dir, &bad);
	if (r == -EPERM && bad.path)
		return cli_state_untrusted(stune_root_prefix(ctx->root), state_opt, &bad);
	if (r < 0) {
		error_msg("state directory: %s", strerror(-r));
		return EXIT_ERROR;
	}
	struct stune_lock_holder holder = {0};
	r = stune_lock_take(*state_dir, what, fd, &holder);
	return r < 0 ? lock_error(*state_dir, r, &holder) : EXIT_OK;
}

int cli_state_dir(struct stune_ctx *ctx, const char *state_opt, char **state_dir)
{
	_cleanup_(stune_trust_fault_clear) struct stune_trust_fault bad = {0};
	int r = stune_state_dir(stune_root_prefix(ctx->root), state_opt, false, state_dir, &bad);
	if (r == -EPERM && bad.path)
		return cli_state_untrusted(stune_root_prefix(ctx->root), state_opt, &bad);
	if (r < 0) {
		error_msg("state directory: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

int cli_lock_shared(struct stune_ctx *ctx, const char *state_opt, int *fd)
{
	_cleanup_free_ char *state_dir = NULL;
	if (cli_state_dir(ctx, state_opt, &state_dir) != EXIT_OK)
		return EXIT_ERROR;
	struct stune_lock_holder holder = {0};
	int r = stune_lock_take_shared(state_dir, fd, &holder);
	return r < 0 ? lock_error(state_dir, r, &holder) : EXIT_OK;
}

int cli_journal_check(const char *state_dir, const struct stune_journal *j)
{
	size_t bad = 0;
	const char *why = NULL;
	if (stune_apply_journal_check(j, &bad, &why) == 0)
		return EXIT_OK;
	const struct stune_jentry *e = &j->entries[bad];
	error_msg("%s/journal.json: changes[%zu] (%s %s): %s: refused before any change", state_dir, bad,
		  e->kind == STUNE_JK_FILE	? "file"
		  : e->kind == STUNE_JK_SYMLINK ? "symlink"
						: "value",
		  e->path, why);
	return EXIT_ERROR;
}
