/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/kmod.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strv.h"
#include "payload/kmod-api.h"

static void kmod_unrefp(struct kmod_ctx **c)
{
	if (*c)
		kmod_unref(*c);
}

static void kmod_list_unrefp(struct kmod_list **l)
{
	if (*l)
		kmod_module_unref_list(*l);
}

static void kmod_module_unrefp(struct kmod_module **m)
{
	if (*m)
		kmod_module_unref(*m);
}

/* libkmod for a release of the root "/" (config: its modprobe.d directories). */
static int open_kmod(const char *release, struct kmod_ctx **out, char **dirname)
{
	_cleanup_free_ char *dir = stune_strdupf("/lib/modules/%s", release);
	if (!dir)
		return -ENOMEM;
	/* NULL config: libkmod's default modprobe.d directories. */
	if (!(*out = kmod_new(dir, NULL)))
		return -ENOMEM;
	kmod_set_log_priority(*out, 0);
	if (dirname)
		*dirname = steal_pointer(&dir);
	return 0;
}

/* In the current root: what modprobe name loads, relative to lib/modules/RELEASE. */
static int resolve_here(const char *release, const char *name, char **out)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *kc = NULL;
	_cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
	_cleanup_free_ char *dir = NULL;
	int r = open_kmod(release, &kc, &dir);
	if (r < 0)
		return r;
	r = kmod_module_new_from_lookup(kc, name, &list);
	if (r < 0)
		return r;
	if (!list)
		return -ENOENT;
	struct kmod_module *mod = kmod_module_get_module(list);
	const char *path = kmod_module_get_path(mod);
	int ret;
	if (!path) {
		ret = -ENOENT; /* built in, or only an alias */
	} else {
		size_t dl = strlen(dir);
		if (!strncmp(path, dir, dl) && path[dl] == '/')
			path += dl + 1;
		ret = (*out = strdup(path)) ? 0 : -ENOMEM;
	}
	kmod_module_unref(mod);
	return ret;
}

int stune_kmod_resolve(struct stune_ctx *ctx, const char *release, const char *name, char **out)
{
	/* Before the fork: the child is chrooted into the tree, whose libraries are never loaded. */
	int r = stune_kmod_load(NULL);
	if (r < 0)
		return r;
	if (stune_root_is_live(ctx->root))
		return resolve_here(release, name, out);
	/*
	 * A --sysroot tree: libkmod runs in a child chrooted into it, so that every
	 * file it reads (the index, modprobe.d, and /proc/cmdline, which kmod_new()
	 * reads for module options) is the tree's, never this machine's.
	 */
	if (geteuid() != 0)
		return -EPERM;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return negative_errno();
	pid_t pid = fork();
	if (pid < 0) {
		int e = negative_errno();
		close(pfd[0]);
		close(pfd[1]);
		return e;
	}
	if (pid == 0) {
		close(pfd[0]);
		char *path = NULL;
		r = chroot(stune_root_prefix(ctx->root)) < 0 || chdir("/") < 0 ? negative_errno()
									       : resolve_here(release, name, &path);
		if (r == 0 && write(pfd[1], path, strlen(path)) != (ssize_t)strlen(path))
			r = -EIO;
		_exit(r < 0 ? (-r & 0xff) : 0);
	}
	close(pfd[1]);
	char buf[4096];
	size_t n = 0;
	for (;;) {
		ssize_t k = read(pfd[0], buf + n, sizeof(buf) - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == sizeof(buf) - 1)
			break;
	}
	close(pfd[0]);
	buf[n] = '\0';
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return negative_errno();
	if (!WIFEXITED(status))
		return -EIO;
	if (WEXITSTATUS(status))
		return -WEXITSTATUS(status);
	return (*out = strdup(buf)) ? 0 : -ENOMEM;
}

int stune_kmod_reload(struct stune_ctx *ctx, const char *name, char **err)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *kc = NULL;
	_cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
	if (!stune_root_is_live(ctx->root))
		return -EOPNOTSUPP;
	_cleanup_free_ char *release = NULL;
	int r = stune_kmod_load(err);
	if (r < 0)
		return r;
	r = stune_root_read(ctx->root, "proc/sys/kernel/osrelease", &release);
	if (r < 0 || (r = open_kmod(release, &kc, NULL)) < 0)
		return r;
	if ((r = kmod_module_new_from_name(kc, name, &mod)) < 0)
		return r;
	if (kmod_module_get_initstate(mod) == KMOD_MODULE_LIVE) {
		if (kmod_module_get_refcnt(mod) > 0) {
			*err = stune_strdupf("%s is in use (refcnt %d): reboot instead", name,
					     kmod_module_get_refcnt(mod));
			return -EBUSY;
		}
		if ((r = kmod_module_remove_module(mod, 0)) < 0) {
			*err = stune_strdupf("unloading %s: %s", name, strerror(-r));
			return r;
		}
	}
	kmod_module_unref(mod);
	mod = NULL;
	_cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
	if ((r = kmod_module_new_from_lookup(kc, name, &list)) < 0 || !list) {
		*err = stune_strdupf("modprobe %s: not found", name);
		return r < 0 ? r : -ENOENT;
	}
	mod = kmod_module_get_module(list);
	if ((r = kmod_module_probe_insert_module(mod, 0, NULL, NULL, NULL, NULL)) < 0) {
		*err = stune_strdupf("loading %s: %s", name, strerror(-r));
		return r;
	}
	return 0;
}
