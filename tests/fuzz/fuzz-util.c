/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fuzz.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static void remove_dir(void)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
	if (!dir) {
		const char *tmp = getenv("TMPDIR");
		if (asprintf(&dir, "%s/scsitune-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0 || !mkdtemp(dir))
			fuzz_fail(__FILE__, __LINE__, "mkdtemp", "cannot make a temporary directory: %s",
				  strerror(errno));
		atexit(remove_dir);
	}
	return dir;
}

static void mkdir_parents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			fuzz_fail(__FILE__, __LINE__, "mkdir", "%s: %s", path, strerror(errno));
		*p = '/';
	}
}

void fuzz_write(const char *d, const char *name, const void *data, size_t len)
{
	char *path;
	if (asprintf(&path, "%s/%s", d && *d ? d : fuzz_dir(), name) < 0)
		abort();
	mkdir_parents(path);
	FILE *f = fopen(path, "we");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
		fuzz_fail(__FILE__, __LINE__, "write", "%s: %s", path, strerror(errno));
	free(path);
}

void fuzz_unlink(const char *d, const char *name)
{
	char *path;
	if (asprintf(&path, "%s/%s", d && *d ? d : fuzz_dir(), name) < 0)
		abort();
	unlink(path);
	free(path);
}

char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

size_t fuzz_split(const uint8_t *data, size_t size, const char *sep, const uint8_t **parts, size_t *lens, size_t max)
{
	size_t n = 0, k = strlen(sep);
	const uint8_t *p = data, *end = data + size;
	while (n + 1 < max) {
		const uint8_t *q = k && (size_t)(end - p) >= k ? memmem(p, (size_t)(end - p), sep, k) : NULL;
		if (!q)
			break;
		parts[n] = p;
		lens[n++] = (size_t)(q - p);
		p = q + k;
	}
	parts[n] = p;
	lens[n++] = (size_t)(end - p);
	return n;
}

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s:%d: property violated: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_check_message(int r, const char *err)
{
	if (r == -EINVAL || r == -EBADMSG || r == -ENODATA)
		fuzz_check(err && *err, "refused (%s) without saying why", strerror(-r));
}
