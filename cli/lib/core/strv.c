/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stune_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int stune_strv_push(char ***v, size_t *n, char *s)
{
	if (!s)
		return -ENOMEM;
	/* Slots (items and the NULL): at least 4, then doubled when the n + 1 in use fill a power of two. */
	size_t used = *n + 1, want = 0;
	if (*n + 2 <= 4)
		want = 4;
	else if ((used & (used - 1)) == 0)
		want = 2 * used;
	char **nv = *v;
	if (want && !(nv = realloc(*v, want * sizeof(char *)))) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

char *stune_strdupf(const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int stune_errf(char **err, int r, const char *fmt, ...)
{
	if (!err)
		return r;
	free(*err);
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
	return r;
}

char *stune_ctrl_escape(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *o = malloc(4 * n + 1), *p = o;
	if (!o)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\t')
			*p++ = ' '; /* as in the text renderer's escapes (core/utf8.h) */
		else if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = (char)c;
	}
	*p = '\0';
	return o;
}
