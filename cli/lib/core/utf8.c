/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/utf8.h"

#include <stdint.h>
#include <stdio.h>
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

uint32_t stune_utf8_cp(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	if (n == 0 || n > 4)
		return 0;
	uint32_t cp = s[0] & lead_mask[n];
	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

bool stune_utf8_is_bidi_control(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
	       cp == 0x061c;
}

char *stune_utf8_escape(const char *s, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	if (!m)
		return NULL;
	while (*p) {
		size_t n = stune_utf8_seq(p, strnlen((const char *)p, 4));
		uint32_t cp = stune_utf8_cp(p, n);
		/* C1 controls (U+0080..U+009F, "\xc2\x80".."\xc2\x9f"): CSI and OSC for some terminals. */
		bool c1 = n == 2 && cp < 0xa0;
		if (n == 1 &&
		    ((*p >= 0x20 && *p != 0x7f) || ((flags & STUNE_ESC_KEEP_WRAP) && *p >= 0x1d && *p <= 0x1f))) {
			fputc(*p++, m);
			continue;
		}
		if (n > 1 && stune_utf8_is_bidi_control(cp)) {
			fprintf(m, "\\u%04x", (unsigned)cp);
			p += n;
			continue;
		}
		if (n > 1 && !c1) {
			fwrite(p, 1, n, m);
			p += n;
			continue;
		}
		if ((*p == '\n' || *p == '\t' || (*p >= 0x1d && *p <= 0x1f)) && (flags & STUNE_ESC_KEEP_NL))
			fputc(*p, m); /* and the markers that wrap_text() consumes (shared/wrap.h) */
		else if (*p == '\n')
			fputs("\\n", m);
		else if (*p == '\r')
			fputs("\\r", m);
		else if (*p == '\t')
			fputc(' ', m);
		else if (c1) {
			fprintf(m, "\\x%02x\\x%02x", p[0], p[1]);
			p++;
		} else
			fprintf(m, "\\x%02x", *p);
		p++;
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
