/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/kmod.h"

#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"

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

static int open_kmod(struct stune_ctx *ctx, const char *release, struct kmod_ctx **out, char **dirname)
{
	const char *prefix = stune_root_prefix(ctx->root);
	_cleanup_free_ char *dir = stune_strdupf("%s/lib/modules/%s", prefix, release);
	char *cfg[] = {stune_strdupf("%s/etc/modprobe.d", prefix), stune_strdupf("%s/run/modprobe.d", prefix),
		       stune_strdupf("%s/usr/local/lib/modprobe.d", prefix), stune_strdupf("%s/lib/modprobe.d", prefix),
		       NULL};
	int r = 0;
	for (size_t i = 0; i < 4; i++)
		if (!cfg[i])
			r = -ENOMEM;
	if (!dir)
		r = -ENOMEM;
	if (r == 0) {
		*out = kmod_new(dir, (const char *const *)cfg);
		if (!*out)
			r = -ENOMEM;
		else
			kmod_set_log_priority(*out, 0);
	}
	for (size_t i = 0; i < 4; i++)
		free(cfg[i]);
	if (r == 0 && dirname)
		*dirname = steal_pointer(&dir);
	return r;
}

int stune_kmod_resolve(struct stune_ctx *ctx, const char *release, const char *name, char **out)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *kc = NULL;
	_cleanup_(kmod_list_unrefp) struct kmod_list *list = NULL;
	_cleanup_free_ char *dir = NULL;
	int r = open_kmod(ctx, release, &kc, &dir);
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

int stune_kmod_reload(struct stune_ctx *ctx, const char *name, char **err)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *kc = NULL;
	_cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
	if (!stune_root_is_live(ctx->root))
		return -EOPNOTSUPP;
	_cleanup_free_ char *release = NULL;
	int r = stune_root_read(ctx->root, "proc/sys/kernel/osrelease", &release);
	if (r < 0 || (r = open_kmod(ctx, release, &kc, NULL)) < 0)
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
