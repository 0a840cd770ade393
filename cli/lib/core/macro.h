/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Ownership helpers: _cleanup_ attributes in the systemd/kmod style. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _unused_       __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _must_check_   __attribute__((warn_unused_result))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Declare a cleanup function for a type with its own destructor. */
#define DEFINE_CLEANUP_FUNC(type, fn)      \
	static inline void fn##p(type **p) \
	{                                  \
		if (*p)                    \
			fn(*p);            \
	}

/* Hand ownership to the caller: returns the pointer and clears the variable. */
#define steal_pointer(pp)                     \
	({                                    \
		__typeof__(*(pp)) _p = *(pp); \
		*(pp) = NULL;                 \
		_p;                           \
	})

static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * Room for one more item in an array of n items of size bytes that grows
 * only through this function (from NULL): the capacity doubles (4, 8,
 * 16...), so appending n items costs O(n), never a copy per item.
 */
static inline int stune_grow(void *vp, size_t n, size_t size)
{
	void **v = vp;
	if (n != 0 && (n < 4 || (n & (n - 1)) != 0))
		return 0; /* capacity max(4, next power of two) is not reached */
	size_t cap = n ? 2 * n : 4;
	if (cap > SIZE_MAX / size)
		return -ENOMEM;
	void *nv = realloc(*v, cap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	return 0;
}
