/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel identity, taint, lockdown, signature enforcement, module trust (modtrust.c), payload modules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/gather.h"

/* Letters of kernel/panic.c taint_flags[], by bit number (6.1). */
static const char taint_letters[] = "PFSRMBUDAWCIOELKXT";

/* Modules the payload replaces (SPEC.md "Payload"). */
static const char *const payload_modules[] = {"scsi_mod", "target_core_mod"};

static int find_in_updates(struct stune_ctx *ctx, const char *dir, const char *module, int depth, char **out)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	size_t mlen = strlen(module);

	if (depth > 8 || stune_root_opendir(ctx->root, dir, &d) < 0)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		_cleanup_free_ char *p = NULL;
		if (stune_path_join(&p, dir, de->d_name) < 0)
			return -ENOMEM;
		const char *ext = de->d_name + mlen;
		if (strncmp(de->d_name, module, mlen) == 0 && (!strcmp(ext, ".ko") || !strcmp(ext, ".ko.xz") ||
							       !strcmp(ext, ".ko.zst") || !strcmp(ext, ".ko.gz"))) {
			*out = steal_pointer(&p);
			return 1;
		}
		if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) {
			int r = find_in_updates(ctx, p, module, depth + 1, out);
			if (r != 0)
				return r;
		}
	}
	return 0;
}

static int scan_module(struct stune_ctx *ctx, const char *release, const char *name, struct stune_module *m)
{
	_cleanup_free_ char *dir = NULL;
	int r;

	if (!(m->name = strdup(name)))
		return -ENOMEM;
	if (asprintf(&dir, "sys/module/%s", name) < 0)
		return -ENOMEM;
	if (stune_root_exists(ctx->root, dir)) {
		_cleanup_free_ char *init = NULL;
		if (stune_attr_str(ctx, &init, STUNE_ATTR_OPTIONAL, "%s/initstate", dir) == 0)
			m->loaded = true;
		else
			m->builtin = true;
		stune_attr_str(ctx, &m->version, STUNE_ATTR_OPTIONAL, "%s/version", dir);
		stune_attr_str(ctx, &m->srcversion, STUNE_ATTR_OPTIONAL, "%s/srcversion", dir);
		if (m->loaded)
			stune_attr_str(ctx, &m->taint, STUNE_ATTR_OPTIONAL, "%s/taint", dir);
	}
	if (release) {
		_cleanup_free_ char *upd = NULL;
		if (asprintf(&upd, "lib/modules/%s/updates", release) < 0)
			return -ENOMEM;
		if ((r = find_in_updates(ctx, upd, name, 0, &m->updates_path)) < 0)
			return r;
	}
	return 0;
}

int stune_scan_kernel(struct stune_ctx *ctx, struct stune_topology *t)
{
	struct stune_kernel *k = &t->kernel;
	_cleanup_free_ char *lockdown = NULL, *enforce = NULL;
	int r;

	stune_attr_str(ctx, &k->release, 0, "proc/sys/kernel/osrelease");
	stune_attr_str(ctx, &k->version, STUNE_ATTR_OPTIONAL, "proc/sys/kernel/version");
	stune_attr_str(ctx, &k->hostname, STUNE_ATTR_OPTIONAL, "proc/sys/kernel/hostname");
	if (stune_attr_num(ctx, &k->tainted, 0, "proc/sys/kernel/tainted") == 0) {
		char letters[sizeof(taint_letters)] = "";
		size_t n = 0;
		for (size_t b = 0; b < sizeof(taint_letters) - 1; b++)
			if ((uint64_t)k->tainted.v >> b & 1)
				letters[n++] = taint_letters[b];
		letters[n] = '\0';
		if (!(k->taint_flags = strdup(letters)))
			return -ENOMEM;
	}

	/* "[none] integrity confidentiality": absent without the lockdown LSM. */
	if (stune_attr_str(ctx, &lockdown, STUNE_ATTR_OPTIONAL, "sys/kernel/security/lockdown") == 0) {
		char *a = strchr(lockdown, '['), *b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			if (!(k->lockdown = strndup(a + 1, (size_t)(b - a - 1))))
				return -ENOMEM;
		} else {
			stune_warn_path(ctx, "sys/kernel/security/lockdown", "unexpected value '%.40s'", lockdown);
		}
	}
	if (stune_attr_str(ctx, &enforce, STUNE_ATTR_OPTIONAL, "sys/module/module/parameters/sig_enforce") == 0) {
		if (!strcmp(enforce, "Y"))
			k->sig_enforce = STUNE_YES;
		else if (!strcmp(enforce, "N"))
			k->sig_enforce = STUNE_NO;
		else
			stune_warn_path(ctx, "sys/module/module/parameters/sig_enforce", "unexpected value '%.40s'",
					enforce);
	}

	/* What the kernel trusts for modules: detect's, not a plan's (apply and verify never need it). */
	if (!t->plan_scope && (r = stune_module_trust_read(ctx, &k->trust)) < 0)
		return r;

	k->modules = calloc(ELEMENTSOF(payload_modules), sizeof(*k->modules));
	if (!k->modules)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(payload_modules); i++) {
		k->n_modules++;
		if ((r = scan_module(ctx, k->release, payload_modules[i], &k->modules[i])) < 0)
			return r;
	}
	return 0;
}
