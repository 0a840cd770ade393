/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t stune_utf8_seq(const unsigned char *s, size_t avail)
{
	if (avail == 0)
		return 0;
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

char *stune_utf8_dup_valid(const char *s, size_t len, size_t *replaced)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t end = strnlen(s, len), bad = 0;
	for (size_t i = 0; i < end;) {
		size_t n = stune_utf8_seq(p + i, end - i);
		bad += n == 0;
		i += n ? n : 1;
	}
	if (replaced)
		*replaced += bad;
	if (!bad)
		return strndup(s, end);
	/* U+FFFD is 3 bytes where the byte it stands for was one. */
	char *out = malloc(end + 2 * bad + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < end;) {
		size_t n = stune_utf8_seq(p + i, end - i);
		if (n) {
			memcpy(o, p + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}
