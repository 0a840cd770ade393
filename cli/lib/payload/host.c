/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "payload/util.h"

void stune_payload_host_free(struct stune_payload_host *h)
{
	if (!h)
		return;
	free(h->release);
	free(h->running_release);
	free(h->running_debian_version);
	free(h->installed_debian_version);
	free(h->lockdown);
	stune_module_trust_free(h->trust);
	free(h);
}

char *stune_proc_version_debian(const char *text)
{
	const char *hash = strchr(text, '#');
	if (!hash)
		return NULL;
	const char *d = strstr(hash, " Debian ");
	if (!d)
		return NULL;
	d += 8;
	size_t n = strcspn(d, " \n");
	return n ? strndup(d, n) : NULL;
}

char *stune_dpkg_status_version(const char *text, const char *package)
{
	size_t pl = strlen(package);
	const char *p = text;
	while (p && *p) {
		/* One paragraph: up to a blank line. */
		const char *end = strstr(p, "\n\n");
		const char *stop = end ? end + 1 : p + strlen(p);
		bool match = false, installed = false;
		const char *ver = NULL;
		size_t verlen = 0;
		for (const char *l = p; l < stop;) {
			const char *nl = memchr(l, '\n', (size_t)(stop - l));
			size_t n = nl ? (size_t)(nl - l) : (size_t)(stop - l);
			if (n == 9 + pl && !strncmp(l, "Package: ", 9) && !strncmp(l + 9, package, pl))
				match = true;
			else if (n >= 8 && !strncmp(l, "Status: ", 8))
				installed = n == 8 + 20 && !strncmp(l + 8, "install ok installed", 20);
			else if (n > 9 && !strncmp(l, "Version: ", 9)) {
				ver = l + 9;
				verlen = n - 9;
			}
			l += n + 1;
		}
		if (match)
			return installed && ver ? strndup(ver, verlen) : NULL;
		p = end ? end + 2 : NULL;
	}
	return NULL;
}

int stune_payload_host_read(struct stune_ctx *ctx, const char *release, struct stune_payload_host **out)
{
	_cleanup_(stune_payload_host_freep) struct stune_payload_host *h = calloc(1, sizeof(*h));
	_cleanup_free_ char *v = NULL, *status = NULL, *pkg = NULL, *lockdown = NULL, *enforce = NULL, *dir = NULL;
	if (!h)
		return -ENOMEM;
	stune_attr_str(ctx, &h->running_release, STUNE_ATTR_OPTIONAL, "proc/sys/kernel/osrelease");
	if (!release)
		release = h->running_release;
	if (!release)
		return -ENOENT;
	if (!(h->release = strdup(release)))
		return -ENOMEM;
	h->running = h->running_release && !strcmp(h->running_release, release);
	if (h->running && stune_attr_str(ctx, &v, STUNE_ATTR_OPTIONAL, "proc/version") == 0)
		h->running_debian_version = stune_proc_version_debian(v);
	if (asprintf(&pkg, "linux-image-%s", release) < 0)
		return -ENOMEM;
	if (stune_root_read(ctx->root, STUNE_DPKG_STATUS, &status) == 0)
		h->installed_debian_version = stune_dpkg_status_version(status, pkg);
	if (asprintf(&dir, "lib/modules/%s", release) < 0)
		return -ENOMEM;
	DIR *d = NULL;
	if (stune_root_opendir(ctx->root, dir, &d) == 0) {
		h->modules_dir = true;
		closedir(d);
	}
	if (stune_attr_str(ctx, &enforce, STUNE_ATTR_OPTIONAL, "sys/module/module/parameters/sig_enforce") == 0)
		h->sig_enforce = !strcmp(enforce, "Y") ? STUNE_YES : !strcmp(enforce, "N") ? STUNE_NO : STUNE_UNKNOWN;
	if (stune_attr_str(ctx, &lockdown, STUNE_ATTR_OPTIONAL, "sys/kernel/security/lockdown") == 0) {
		char *a = strchr(lockdown, '['), *b = a ? strchr(a, ']') : NULL;
		if (a && b && !(h->lockdown = strndup(a + 1, (size_t)(b - a - 1))))
			return -ENOMEM;
	}
	*out = steal_pointer(&h);
	return 0;
}

int stune_payload_host_read_trust(struct stune_ctx *ctx, struct stune_payload_host *h)
{
	if (h->trust)
		return 0;
	int r = stune_module_trust_read(ctx, &h->trust);
	if (r < 0)
		return r;
	h->secure_boot = h->trust->secure_boot;
	return 0;
}

/* Each line of a text, NUL-terminated in place. */
static char *next_line(char **p)
{
	if (!*p || !**p)
		return NULL;
	char *s = *p, *nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

/* name.ko, name.ko.xz, name.ko.zst, name.ko.gz: the module's name is the basename before ".ko". */
static bool path_is_module(const char *path, const char *name)
{
	const char *b = stune_path_basename(path);
	size_t n = strlen(name);
	if (strncmp(b, name, n))
		return false;
	b += n;
	return !strcmp(b, ".ko") || !strcmp(b, ".ko.xz") || !strcmp(b, ".ko.zst") || !strcmp(b, ".ko.gz");
}

int stune_stock_module_path(struct stune_ctx *ctx, const char *release, const char *name, char **out)
{
	_cleanup_free_ char *order = NULL;
	int r = stune_root_readf(ctx->root, &order, "lib/modules/%s/modules.order", release);
	if (r < 0)
		return r;
	char *p = order, *l;
	while ((l = next_line(&p))) {
		if (!path_is_module(l, name))
			continue;
		/* modules.order names the .ko; the package may ship it compressed. */
		static const char *const ext[] = {"", ".xz", ".zst", ".gz"};
		for (size_t i = 0; i < ELEMENTSOF(ext); i++) {
			_cleanup_free_ char *cand = NULL;
			if (asprintf(&cand, "lib/modules/%s/%s%s", release, l, strstr(l, ".ko.") ? "" : ext[i]) < 0)
				return -ENOMEM;
			if (stune_root_exists(ctx->root, cand)) {
				*out = steal_pointer(&cand);
				return 0;
			}
		}
	}
	return -ENOENT;
}

int stune_module_dependents(struct stune_ctx *ctx, const char *release, char *const *names, char ***out)
{
	_cleanup_free_ char *dep = NULL;
	_cleanup_(stune_strv_freep) char **v = NULL;
	size_t n = 0;
	int r = stune_root_readf(ctx->root, &dep, "lib/modules/%s/modules.dep", release);
	if (r < 0)
		return r;
	char *p = dep, *l;
	while ((l = next_line(&p))) {
		char *colon = strchr(l, ':');
		if (!colon)
			continue;
		*colon = '\0';
		bool self = false, depends = false;
		for (char *const *nm = names; *nm; nm++)
			if (path_is_module(l, *nm))
				self = true;
		if (self || !strncmp(l, STUNE_PAYLOAD_SUBDIR "/", strlen(STUNE_PAYLOAD_SUBDIR) + 1))
			continue;
		for (char *t = strtok(colon + 1, " \t"); t && !depends; t = strtok(NULL, " \t"))
			for (char *const *nm = names; *nm; nm++)
				if (path_is_module(t, *nm))
					depends = true;
		if (!depends)
			continue;
		if ((r = stune_strv_push(&v, &n, stune_strdupf("lib/modules/%s/%s", release, l))) < 0)
			return r;
	}
	if (!v && !(v = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*out = steal_pointer(&v);
	return 0;
}
