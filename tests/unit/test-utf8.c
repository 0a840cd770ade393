/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
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

CASE(cp, "a sequence's code point: one to four bytes")
{
	CHECK(stune_utf8_cp((const unsigned char *)"a", 1) == 'a');
	CHECK(stune_utf8_cp(e_acute, 2) == 0xe9 && stune_utf8_cp(euro, 3) == 0x20ac &&
	      stune_utf8_cp(smile, 4) == 0x1f600);
	CHECK(stune_utf8_cp((const unsigned char *)"\xe2\x80\xae", 3) == 0x202e);
}

CASE(bidi_controls, "bidi controls: U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C; not their neighbours")
{
	static const uint32_t yes[] = {0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066,
				       0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c};
	static const uint32_t no[] = {0x2029, 0x202f, 0x2065, 0x206a, 0x200d, 0x2010, 0x061b, 0x061d, 'a', 0xe9};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK_MSG(stune_utf8_is_bidi_control(yes[i]), "U+%04X is a bidi control", (unsigned)yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK_MSG(!stune_utf8_is_bidi_control(no[i]), "U+%04X is not", (unsigned)no[i]);
}

static void esc_is(const char *in, unsigned flags, const char *want)
{
	char *s = stune_utf8_escape(in, flags);
	CHECK_STR(s, want);
	free(s);
}

CASE(escape_bidi, "escape: each bidi control as \\uXXXX (U+202E as \\u202e), other text kept")
{
	esc_is("key \xe2\x80\xae"
	       "fdp.exe",
	       0, "key \\u202efdp.exe"); /* "key exe.pdf" reversed on a terminal */
	esc_is("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0, "\\u202a\\u202b\\u202c\\u202d");
	esc_is("\xe2\x81\xa6x\xe2\x81\xa7x\xe2\x81\xa8x\xe2\x81\xa9", 0, "\\u2066x\\u2067x\\u2068x\\u2069");
	esc_is("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0, "\\u200e\\u200f\\u061c");
	esc_is("\xe2\x80\xae", STUNE_ESC_KEEP_NL | STUNE_ESC_KEEP_WRAP, "\\u202e"); /* in whole texts too */
	esc_is("caf\xc3\xa9 \xe2\x82\xac \xe2\x80\xaf \xd8\xb9", 0,
	       "caf\xc3\xa9 \xe2\x82\xac \xe2\x80\xaf \xd8\xb9"); /* é, €, U+202F, an Arabic letter: kept */
}

CASE(escape_tab, "escape: a tab in one line is one space; a whole text (KEEP_NL) keeps it")
{
	esc_is("a\tb\t\tc", 0, "a b  c");
	esc_is("a\tb\nc", STUNE_ESC_KEEP_NL, "a\tb\nc");
}

CASE(escape_controls, "escape: ESC, C1, DEL, CR, LF, bytes not UTF-8 as C escapes; wrap markers only when kept")
{
	esc_is("\x1b[2J\xc2\x9b"
	       "1m\x7f",
	       0, "\\x1b[2J\\xc2\\x9b1m\\x7f");
	esc_is("a\r\nb", 0, "a\\r\\nb");
	esc_is("\xff\xe2\x82", 0, "\\xff\\xe2\\x82");
	esc_is("back\\slash", 0, "back\\slash");
	esc_is("\x1dx\x1f", 0, "\\x1dx\\x1f");
	esc_is("\x1dx\x1f", STUNE_ESC_KEEP_WRAP, "\x1dx\x1f");
	esc_is(NULL, 0, "");
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
