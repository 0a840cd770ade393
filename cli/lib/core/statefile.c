/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/macro.h"

static int mkdir_one(const char *p, mode_t mode)
{
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return negative_errno();
	struct stat st;
	if (stat(p, &st) < 0)
		return negative_errno();
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int stune_mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir_one(p, 0755);
		*s = '/';
		if (r < 0)
			return r;
	}
	return mkdir_one(p, mode);
}

struct buffer {
	const void *data;
	size_t len;
};

static int fill_buffer(FILE *f, void *data)
{
	const struct buffer *b = data;
	return fwrite(b->data, 1, b->len, f) == b->len ? 0 : -EIO;
}

int stune_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode, char **final)
{
	struct buffer b = {data, len};
	return stune_write_atomic_fn(dir, name, mode, fill_buffer, &b, final);
}

int stune_write_atomic_fn(const char *dir, const char *name, mode_t mode, int (*fill)(FILE *f, void *data), void *data,
			  char **final)
{
	_cleanup_free_ char *tmp = NULL, *dst = NULL;
	int r;

	if (strchr(name, '/'))
		return -EINVAL;
	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0 || asprintf(&dst, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	FILE *f = fdopen(fd, "w");
	if (!f) {
		r = negative_errno();
		close(fd);
		unlink(tmp);
		return r;
	}
	/* Large writes: a journal of 20,000 entries is a few MB. */
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	r = fill(f, data);
	if (r == 0 && (fflush(f) != 0 || ferror(f)))
		r = errno ? -errno : -EIO;
	if (r == 0 && fchmod(fd, mode) < 0)
		r = negative_errno();
	if (r == 0 && fsync(fd) < 0)
		r = negative_errno();
	if (fclose(f) != 0 && r == 0)
		r = negative_errno();
	if (r == 0 && rename(tmp, dst) < 0)
		r = negative_errno();
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0)
		return negative_errno();
	if (final)
		*final = steal_pointer(&dst);
	return 0;
}
