/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/initrd.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "payload/archive-api.h"

void stune_initrd_free(struct stune_initrd *i)
{
	if (!i)
		return;
	for (size_t k = 0; k < i->n; k++) {
		free(i->files[k].module);
		free(i->files[k].path);
	}
	free(i->files);
	free(i->modules_dep);
	free(i);
}

static void archive_read_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

/* "NAME.ko", "NAME.ko.xz", ... as the last component of path. */
static bool is_module_file(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(name);
	if (strncmp(b, name, n))
		return false;
	b += n;
	return !strcmp(b, ".ko") || !strcmp(b, ".ko.xz") || !strcmp(b, ".ko.zst") || !strcmp(b, ".ko.gz");
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix) && (a == b || s[a - b - 1] == '/');
}

static int hash_entry(struct archive *a, char out[STUNE_SHA256_HEX])
{
	crypto_hash_sha256_state s;
	crypto_hash_sha256_init(&s);
	for (;;) {
		const void *blk;
		size_t n;
		la_int64_t off;
		int r = archive_read_data_block(a, &blk, &n, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return -EBADMSG;
		crypto_hash_sha256_update(&s, blk, n);
	}
	uint8_t h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_final(&s, h);
	stune_hex(h, sizeof(h), out);
	return 0;
}

static int read_text(struct archive *a, size_t max, char **out)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		la_ssize_t k = archive_read_data(a, buf + n, cap - n);
		if (k < 0) {
			free(buf);
			return -EBADMSG;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n == cap) {
			if (cap >= max) {
				free(buf);
				return -EFBIG;
			}
			char *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* modules.dep read, and for each module either no line in it or its resolved file hashed. */
static bool known_all(const struct stune_initrd *i, char *const *modules)
{
	if (!i->modules_dep)
		return false;
	for (char *const *m = modules; *m; m++) {
		_cleanup_free_ char *rel = stune_initrd_resolve(i, *m);
		if (rel && !stune_initrd_file(i, *m, rel))
			return false;
	}
	return true;
}

int stune_initrd_read(const uint8_t *data, size_t len, const char *release, char *const *modules,
		      struct stune_initrd **out, char **err)
{
	_cleanup_(stune_initrd_freep) struct stune_initrd *i = calloc(1, sizeof(*i));
	_cleanup_free_ char *depname = NULL;
	size_t off = 0;
	int r = stune_archive_load(err);
	if (r < 0)
		return r;
	if (!i || asprintf(&depname, "lib/modules/%s/modules.dep", release) < 0)
		return -ENOMEM;
	while (off < len) {
		while (off < len && data[off] == 0) /* padding between the parts */
			off++;
		if (off >= len)
			break;
		_cleanup_(archive_read_freep) struct archive *a = archive_read_new();
		if (!a)
			return -ENOMEM;
		archive_read_support_filter_all(a);
		archive_read_support_format_cpio(a);
		if (archive_read_open_memory(a, data + off, len - off) != ARCHIVE_OK) {
			if (err)
				*err = stune_strdupf("part %u at byte %zu: not a cpio archive (%s)", i->parts + 1, off,
						     archive_error_string(a));
			return -EBADMSG;
		}
		struct archive_entry *e;
		while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
			i->entries++;
			r = ARCHIVE_OK;
			const char *p = archive_entry_pathname(e);
			if (!p || archive_entry_filetype(e) != AE_IFREG)
				continue;
			if (!i->modules_dep && ends_with(p, depname)) {
				if ((r = read_text(a, 16u << 20, &i->modules_dep)) < 0)
					goto bad;
				r = ARCHIVE_OK;
				if ((i->complete = known_all(i, modules)))
					break;
				continue;
			}
			for (char *const *m = modules; *m; m++) {
				if (!is_module_file(p, *m))
					continue;
				struct stune_initrd_file *nf = realloc(i->files, (i->n + 1) * sizeof(*nf));
				if (!nf)
					return -ENOMEM;
				i->files = nf;
				struct stune_initrd_file *f = &nf[i->n];
				memset(f, 0, sizeof(*f));
				if (!(f->module = strdup(*m)) || !(f->path = strdup(p))) {
					free(f->module);
					return -ENOMEM;
				}
				i->n++;
				if ((r = hash_entry(a, f->sha256)) < 0)
					goto bad;
				r = ARCHIVE_OK;
				break;
			}
			if ((i->complete = known_all(i, modules)))
				break;
		}
		if (r == ARCHIVE_OK && i->complete) {
			i->parts++;
			break; /* everything asked for is known: the rest is not read */
		}
		if (r != ARCHIVE_EOF)
			goto bad;
		i->parts++;
		/* filter 0 is the outermost: more than one filter (the "none" one) means compressed. */
		bool compressed = archive_filter_code(a, 0) != ARCHIVE_FILTER_NONE;
		la_int64_t used = archive_filter_bytes(a, -1);
		if (compressed || used <= 0)
			break;
		off += (size_t)used;
		continue;
	bad:
		if (err)
			*err = stune_strdupf("part %u at byte %zu: damaged or truncated (%s)", i->parts + 1, off,
					     archive_error_string(a) ? archive_error_string(a) : "read error");
		return -EBADMSG;
	}
	if (i->parts == 0) {
		if (err)
			*err = stune_strdupf("empty: no cpio archive");
		return -EBADMSG;
	}
	*out = steal_pointer(&i);
	return 0;
}

char *stune_initrd_resolve(const struct stune_initrd *i, const char *name)
{
	if (!i->modules_dep)
		return NULL;
	const char *p = i->modules_dep;
	while (*p) {
		const char *nl = strchr(p, '\n'), *colon = strchr(p, ':');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (colon && (size_t)(colon - p) < n) {
			_cleanup_free_ char *path = strndup(p, (size_t)(colon - p));
			if (!path)
				return NULL;
			if (is_module_file(path, name))
				return steal_pointer(&path);
		}
		p += n + (nl ? 1 : 0);
	}
	return NULL;
}

const struct stune_initrd_file *stune_initrd_file(const struct stune_initrd *i, const char *name, const char *relpath)
{
	for (size_t k = 0; k < i->n; k++)
		if (!strcmp(i->files[k].module, name) && ends_with(i->files[k].path, relpath))
			return &i->files[k];
	return NULL;
}
