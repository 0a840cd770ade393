/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "detect/devices.h"

#include <errno.h>
#include <libudev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int list_live(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n)
{
	struct udev_enumerate *e = udev_enumerate_new(ctx->udev);
	struct udev_list_entry *it;
	int r = 0;

	if (!e)
		return -ENOMEM;
	if ((r = udev_enumerate_add_match_subsystem(e, subsystem)) < 0 || (r = udev_enumerate_scan_devices(e)) < 0)
		goto out;
	udev_list_entry_foreach (it, udev_enumerate_get_list_entry(e)) {
		const char *sp = udev_list_entry_get_name(it);
		while (*sp == '/')
			sp++;
		char *s = strdup(sp);
		if (!s || (r = stune_strv_push(out, n, s)) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
out:
	udev_enumerate_unref(e);
	return r;
}

/* unverified: NULL, every path is resolved (opened to prove it); else entries may be
 * returned as joined link targets, not opened (stune_root_dir_entry_target), and
 * *unverified says whether any was. */
static int list_sysroot(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n, bool *unverified)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct stune_rdir cls = STUNE_RDIR_INIT;
	struct dirent *de;
	int r;

	if (asprintf(&dir, "sys/class/%s", subsystem) < 0)
		return -ENOMEM;
	r = stune_root_opendir(ctx->root, dir, &d);
	if (r == -ENOENT)
		return 0; /* no such class on this host: nothing to list */
	if (r < 0)
		return r;
	/* The class directory once; each entry's target from it (one readlinkat and one open). */
	if ((r = stune_root_dir_open_canonical(ctx->root, dir, &cls)) < 0 && !(cls.path = strdup(dir)))
		return -ENOMEM;
	r = 0;
	stune_root_batch(ctx->root, true);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct stune_rdir dev;
		char *resolved = NULL;
		int t = unverified ? stune_root_dir_entry_target(ctx->root, &cls, de->d_name, &resolved) : -EAGAIN;
		if (t == 0) {
			*unverified = true;
		} else if (t == -ENOMEM) {
			r = t;
			break;
		} else if (stune_root_dir_open_entry(ctx->root, &cls, de->d_name, &dev) == 0) {
			resolved = steal_pointer(&dev.path);
			stune_root_dir_close(&dev);
		} else {
			/* Not a directory, or not there: resolved as a path, as it always was. */
			_cleanup_free_ char *link = NULL;
			if ((r = stune_path_join(&link, dir, de->d_name)) < 0)
				break;
			r = stune_root_resolve(ctx->root, link, &resolved);
			if (r < 0) {
				stune_warn_path(ctx, link, "cannot resolve: %s", strerror(-r));
				r = 0;
				continue;
			}
		}
		if ((r = stune_strv_push(out, n, resolved)) < 0)
			break;
	}
	stune_root_batch(ctx->root, false);
	stune_root_dir_close(&cls);
	return r;
}

static int devices_list(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n, bool *unverified)
{
	_cleanup_(stune_strv_freep) char **v = calloc(1, sizeof(char *));
	size_t k = 0;
	int r;

	if (!v)
		return -ENOMEM;
	r = ctx->udev ? list_live(ctx, subsystem, &v, &k) : list_sysroot(ctx, subsystem, &v, &k, unverified);
	if (r < 0)
		return r;
	*out = steal_pointer(&v);
	*n = k;
	return 0;
}

int stune_devices_list(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n)
{
	return devices_list(ctx, subsystem, out, n, NULL);
}

int stune_devices_list_targets(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n, bool *unverified)
{
	*unverified = false;
	return devices_list(ctx, subsystem, out, n, unverified);
}

static int props_live(struct stune_ctx *ctx, const char *syspath, struct stune_props *out)
{
	_cleanup_free_ char *abs = NULL;
	struct udev_list_entry *it;
	int r = 0;

	if (asprintf(&abs, "/%s", syspath) < 0)
		return -ENOMEM;
	struct udev_device *dev = udev_device_new_from_syspath(ctx->udev, abs);
	if (!dev)
		return 0; /* gone, or not a device: no properties */
	udev_list_entry_foreach (it, udev_device_get_properties_list_entry(dev)) {
		char *kv;
		if (asprintf(&kv, "%s=%s", udev_list_entry_get_name(it), udev_list_entry_get_value(it) ?: "") < 0 ||
		    stune_strv_push(&out->kv, &out->n, kv) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	udev_device_unref(dev);
	return r;
}

/* The E: lines of a udev database file, as pointers into its text (kept in out). */
static int props_db(struct stune_ctx *ctx, const struct stune_rdir *udev_data, const char *dbid,
		    struct stune_props *out)
{
	_cleanup_free_ char *text = NULL;
	int r = udev_data ? stune_root_read_at(ctx->root, udev_data, dbid, &text)
			  : stune_root_readf(ctx->root, &text, "run/udev/data/%s", dbid);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		_cleanup_free_ char *p = NULL;
		if (asprintf(&p, "run/udev/data/%s", dbid) >= 0)
			stune_warn_path(ctx, p, "cannot read: %s", strerror(-r));
		return 0;
	}
	size_t n = 0, cap = 0;
	char **kv = NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "E:", 2) != 0 || !strchr(line, '='))
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 32;
			char **nkv = realloc(kv, cap * sizeof(char *));
			if (!nkv) {
				free(kv);
				return -ENOMEM;
			}
			kv = nkv;
		}
		kv[n++] = line + 2;
		kv[n] = NULL;
	}
	if (!kv)
		return 0;
	out->kv = kv;
	out->n = n;
	out->text = steal_pointer(&text);
	return 0;
}

int stune_props_load_at(struct stune_ctx *ctx, const struct stune_rdir *udev_data, const char *syspath,
			const char *dbid, struct stune_props *out)
{
	*out = (struct stune_props){0};
	int r = ctx->udev ? props_live(ctx, syspath, out) : props_db(ctx, udev_data, dbid, out);
	if (r < 0)
		stune_props_clear(out);
	return r;
}

int stune_props_load(struct stune_ctx *ctx, const char *syspath, const char *dbid, struct stune_props *out)
{
	return stune_props_load_at(ctx, NULL, syspath, dbid, out);
}

const char *stune_props_get(const struct stune_props *p, const char *key)
{
	size_t len = strlen(key);
	for (size_t i = 0; i < p->n; i++)
		if (strncmp(p->kv[i], key, len) == 0 && p->kv[i][len] == '=')
			return p->kv[i] + len + 1;
	return NULL;
}

void stune_props_clear(struct stune_props *p)
{
	if (p->text) {
		free(p->kv);
		free(p->text);
	} else
		stune_strv_free(p->kv);
	*p = (struct stune_props){0};
}
