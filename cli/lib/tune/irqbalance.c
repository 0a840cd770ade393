/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/irqbalance.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/macro.h"

int stune_irqbalance_restart(const struct stune_ctx *ctx)
{
	if (!stune_root_is_live(ctx->root))
		return -EOPNOTSUPP;
	pid_t pid = fork();
	if (pid < 0)
		return negative_errno();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("systemctl", "systemctl", "try-restart", "irqbalance.service", (char *)NULL);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
