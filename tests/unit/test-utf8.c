/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "tap.h"

static void dup_is(const char *in, size_t len, const char *want, size_t want_bad)
{
	size_t bad = 0;
	char *s = stune_utf8_dup_valid(in, len, &bad);
	CHECK_STR(s, want);
	CHECK(bad == want_bad);
	free(s);
}

static const unsigned char e_acute[] = {0xc3, 0xa9}, euro[] = {0xe2, 0x82, 0xac}, smile[] = {0xf0, 0x9f, 0x98, 0x80};

CASE(seq_valid, "a sequence of one to four bytes is its length")
{
	CHECK(stune_utf8_seq((const unsigned char *)"a", 1) == 1);
	CHECK(stune_utf8_seq(e_acute, 2) == 2 && stune_utf8_seq(euro, 3) == 3 && stune_utf8_seq(smile, 4) == 4);
}

CASE(seq_truncated, "a sequence is truncated by what is there, not read past it")
{
	CHECK(stune_utf8_seq(euro, 2) == 0 && stune_utf8_seq(smile, 3) == 0 && stune_utf8_seq(e_acute, 0) == 0);
}

CASE(seq_invalid, "a stray continuation, Latin-1, overlong, a surrogate, beyond U+10FFFF: not a sequence")
{
	static const char *const bad[] = {"\x80",	  "\xff",	  "\xe9t\xe9",	     "\xc0\xaf",
					  "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(stune_utf8_seq((const unsigned char *)bad[i], strlen(bad[i])) == 0);
}

CASE(dup_valid, "dup_valid: valid text copied, each bad byte one U+FFFD and counted, a NUL or the length ends it")
{
	dup_is("plain", 5, "plain", 0);
	dup_is("caf\xc3\xa9", 5, "caf\xc3\xa9", 0);
	dup_is("single\xff\xfe", 8, "single\xef\xbf\xbd\xef\xbf\xbd", 2);
	dup_is("caf\xe9!", 5, "caf\xef\xbf\xbd!", 1);
	dup_is("\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd", 2); /* a truncated sequence: each byte */
	dup_is("ab\0cd", 5, "ab", 0);			      /* a NUL ends it, as strndup */
	dup_is("abcdef", 3, "abc", 0);
	char *x = stune_utf8_dup_valid("x", 1, NULL); /* no count asked for */
	CHECK_STR(x, "x");
	free(x);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
