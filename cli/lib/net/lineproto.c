/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "net/lineproto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void stune_lp_escape_tag(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ',' || c == '=' || c == ' ')
			fputc('\\', f);
		fputc(c == '\\' || c < 0x20 || c == 0x7f ? '_' : c, f);
	}
}

void stune_lp_format_double(char *buf, size_t size, double v)
{
	if (v == trunc(v) && fabs(v) < 1e15) {
		snprintf(buf, size, "%.0f", v == 0 ? 0.0 : v); /* no "-0", no exponent */
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}
