/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/strv.c: string vectors, stune_strdupf, stune_errf, the engine's one error formatter, and stune_ctrl_escape. */
#include <errno.h>
#include <stdlib.h>

#include "core/strv.h"
#include "tap.h"

CASE(errf_formats, "errf: the message formatted, r returned; a second replaces the first (ASan: the first is freed)")
{
	char *err = NULL;
	CHECK(stune_errf(&err, -EINVAL, "%s: line %d", "profile", 3) == -EINVAL);
	CHECK_STR(err, "profile: line 3");
	CHECK(stune_errf(&err, -ENOENT, "again") == -ENOENT);
	CHECK_STR(err, "again");
	free(err);
}

CASE(errf_no_place, "errf: no place for a message, r alone")
{
	CHECK(stune_errf(NULL, -EIO, "nobody reads %s", "this") == -EIO);
}

CASE(strv_push_grows, "strv: 100 strings pushed, in order, NULL-terminated")
{
	_cleanup_(stune_strv_freep) char **v = NULL;
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		CHECK(stune_strv_push(&v, &n, stune_strdupf("s%d", i)) == 0);
	CHECK(n == 100 && v && v[100] == NULL);
	CHECK_STR(v ? v[0] : NULL, "s0");
	CHECK_STR(v ? v[99] : NULL, "s99");
}

CASE(strv_push_null_refused, "strv: a failed allocation (NULL) is refused, the vector unchanged")
{
	_cleanup_(stune_strv_freep) char **v = NULL;
	size_t n = 0;
	int pushed = 0;
	for (int i = 0; i < 100; i++)
		pushed += stune_strv_push(&v, &n, stune_strdupf("s%d", i)) == 0;
	CHECK(pushed == 100 && n == 100 && v);
	if (!v)
		return;
	CHECK(stune_strv_push(&v, &n, NULL) == -ENOMEM && n == 100 && v[100] == NULL);
	CHECK_STR(v[99], "s99");
}

CASE(ctrl_escape, "ctrl_escape: control characters as \\xNN, a tab as one space, the rest as it is")
{
	char *s = stune_ctrl_escape("a\tb\nc\x1b[2J\x7f\xe2\x80\xae");
	CHECK_STR(s, "a b\\x0ac\\x1b[2J\\x7f\xe2\x80\xae"); /* the bidi control: stune_utf8_escape's */
	free(s);
	CHECK(stune_ctrl_escape(NULL) == NULL);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
