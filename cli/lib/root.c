/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct stune_root {
	char *prefix; /* "" for the live root, else an absolute path without trailing '/' */
};

int stune_root_new(const char *prefix, struct stune_root **out)
{
	_cleanup_free_ char *abs = NULL;
	struct stat st;

	if (prefix && *prefix && strcmp(prefix, "/") != 0) {
		abs = realpath(prefix, NULL);
		if (!abs)
			return negative_errno();
		if (stat(abs, &st) < 0)
			return negative_errno();
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (strcmp(abs, "/") == 0) {
			free(abs);
			abs = NULL;
		}
	}
	struct stune_root *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->prefix = abs ? steal_pointer(&abs) : strdup("");
	if (!r->prefix) {
		free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void stune_root_free(struct stune_root *r)
{
	if (!r)
		return;
	free(r->prefix);
	free(r);
}

bool stune_root_is_live(const struct stune_root *r)
{
	return r->prefix[0] == '\0';
}

const char *stune_root_prefix(const struct stune_root *r)
{
	return r->prefix;
}

int stune_root_host_path(const struct stune_root *r, const char *path, char **out)
{
	while (*path == '/')
		path++;
	if (asprintf(out, "%s/%s", r->prefix, path) < 0)
		return -ENOMEM;
	return 0;
}

int stune_root_read(const struct stune_root *r, const char *path, char **out)
{
	_cleanup_free_ char *hp = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if ((ret = stune_root_host_path(r, path, &hp)) < 0)
		return ret;
	fd = open(hp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	for (;;) {
		if (cap - len < 4096) {
			size_t ncap = cap ? cap * 2 : 4096;
			if (ncap > (64u << 20))
				return -EFBIG;
			char *n = realloc(buf, ncap + 1);
			if (!n)
				return -ENOMEM;
			buf = n;
			cap = ncap;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return -ENOMEM;
	}
	if (memchr(buf, '\0', len))
		return -EILSEQ;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	*out = steal_pointer(&buf);
	return 0;
}

int stune_root_readf(const struct stune_root *r, char **out, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return stune_root_read(r, path, out);
}

int stune_root_readlink(const struct stune_root *r, const char *path, char **out)
{
	_cleanup_free_ char *hp = NULL;
	char buf[PATH_MAX];
	int ret;

	if ((ret = stune_root_host_path(r, path, &hp)) < 0)
		return ret;
	ssize_t n = readlink(hp, buf, sizeof(buf) - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* Components still to walk, kept as one string "a/b/c". */
static int prepend(char **rest, const char *head)
{
	char *n;
	if (!*rest || !**rest)
		n = strdup(head);
	else if (asprintf(&n, "%s/%s", head, *rest) < 0)
		n = NULL;
	if (!n)
		return -ENOMEM;
	free(*rest);
	*rest = n;
	return 0;
}

int stune_root_resolve(const struct stune_root *r, const char *path, char **out)
{
	_cleanup_free_ char *rest = strdup(path);
	_cleanup_free_ char *done = strdup(""); /* resolved so far, no leading '/' */
	int links = 0, ret;

	if (!rest || !done)
		return -ENOMEM;
	while (rest && *rest) {
		/* Pop the first component of rest. */
		char *p = rest;
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		_cleanup_free_ char *comp = strndup(p, n);
		char *tail = strdup(p + n);
		if (!comp || !tail) {
			free(tail);
			return -ENOMEM;
		}
		free(rest);
		rest = tail;

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = '\0';
			else
				done[0] = '\0'; /* ".." above the root stays at the root */
			continue;
		}
		_cleanup_free_ char *cand = NULL;
		if (asprintf(&cand, "%s%s%s", done, *done ? "/" : "", comp) < 0)
			return -ENOMEM;
		_cleanup_free_ char *target = NULL;
		ret = stune_root_readlink(r, cand, &target);
		if (ret == -EINVAL) { /* not a link */
			free(done);
			done = steal_pointer(&cand);
			continue;
		}
		if (ret < 0)
			return ret;
		if (++links > 40)
			return -ELOOP;
		if (target[0] == '/')
			done[0] = '\0';
		if ((ret = prepend(&rest, target)) < 0)
			return ret;
	}
	*out = steal_pointer(&done);
	return 0;
}

int stune_root_opendir(const struct stune_root *r, const char *path, DIR **out)
{
	_cleanup_free_ char *hp = NULL;
	int ret;
	if ((ret = stune_root_host_path(r, path, &hp)) < 0)
		return ret;
	DIR *d = opendir(hp);
	if (!d)
		return negative_errno();
	*out = d;
	return 0;
}

bool stune_root_exists(const struct stune_root *r, const char *path)
{
	_cleanup_free_ char *hp = NULL;
	if (stune_root_host_path(r, path, &hp) < 0)
		return false;
	return access(hp, F_OK) == 0;
}

int stune_path_join(char **out, const char *a, const char *b)
{
	if (asprintf(out, "%s%s%s", a, *a && *b ? "/" : "", b) < 0)
		return -ENOMEM;
	return 0;
}

const char *stune_path_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int stune_path_dirname(const char *path, char **out)
{
	const char *s = strrchr(path, '/');
	*out = s ? strndup(path, (size_t)(s - path)) : strdup("");
	return *out ? 0 : -ENOMEM;
}
