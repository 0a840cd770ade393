/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/userfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/macro.h"

int stune_user_file_open(const char *path, int *fd, struct stat *st)
{
	struct stat sb;
	/* O_NONBLOCK: open(2) of a FIFO without a writer would wait for one. */
	_cleanup_close_ int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (f < 0)
		return negative_errno();
	if (fstat(f, &sb) < 0)
		return negative_errno();
	if (S_ISDIR(sb.st_mode))
		return -EISDIR;
	if (!S_ISREG(sb.st_mode))
		return -STUNE_ENOTREG;
	/* A regular file ignores O_NONBLOCK; clear it anyway, for whoever reads the fd next. */
	int fl = fcntl(f, F_GETFL);
	if (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return negative_errno();
	if (st)
		*st = sb;
	*fd = f;
	f = -1;
	return 0;
}

int stune_read_user_fd(int fd, size_t cap, unsigned flags, char **out, size_t *len)
{
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, size = 0;
	for (;;) {
		if (size - n < 2) {
			/* Grow to at most cap + 2: one byte more than cap proves it is too large. */
			size_t ns = size ? size * 2 : 8192;
			if (ns > cap + 2)
				ns = cap + 2;
			if (ns <= size)
				return -EFBIG;
			char *nb = realloc(buf, ns);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			size = ns;
		}
		ssize_t k = read(fd, buf + n, size - n - 1);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > cap)
			return -EFBIG;
	}
	buf[n] = '\0';
	if ((flags & STUNE_UF_TEXT) && memchr(buf, '\0', n))
		return -EILSEQ;
	if (len)
		*len = n;
	*out = steal_pointer(&buf);
	return 0;
}

int stune_read_user_file(const char *path, size_t cap, unsigned flags, char **out, size_t *len)
{
	_cleanup_close_ int fd = -1;
	int r = stune_user_file_open(path, &fd, NULL);
	if (r < 0)
		return r;
	return stune_read_user_fd(fd, cap, flags, out, len);
}

const char *stune_user_file_strerror(int r, size_t cap)
{
	static __thread char buf[64];
	switch (r) {
	case -STUNE_ENOTREG:
		return "not a regular file";
	case -EILSEQ:
		return "contains a NUL byte: not a text file";
	case -EFBIG:
		if (!cap)
			break;
		if (cap >= (1u << 20) && cap % (1u << 20) == 0)
			snprintf(buf, sizeof(buf), "larger than %zu MiB", cap >> 20);
		else if (cap >= 1024 && cap % 1024 == 0)
			snprintf(buf, sizeof(buf), "larger than %zu KiB", cap >> 10);
		else
			snprintf(buf, sizeof(buf), "larger than %zu bytes", cap);
		return buf;
	}
	return strerror(-r);
}
