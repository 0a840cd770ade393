/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/strv.c: string vectors, stune_strdupf, and stune_errf, the engine's one error formatter. */
#include <errno.h>
#include <stdlib.h>

#include "core/strv.h"
#include "tap.h"

int main(void)
{
	char *err = NULL;
	TEST("the message formatted, r returned");
	CHECK(stune_errf(&err, -EINVAL, "%s: line %d", "profile", 3) == -EINVAL);
	CHECK_STR(err, "profile: line 3");
	TEST("a second message replaces the first (valgrind and ASan: the first is freed)");
	CHECK(stune_errf(&err, -ENOENT, "again") == -ENOENT);
	CHECK_STR(err, "again");
	free(err);
	TEST("no place for a message: r alone");
	CHECK(stune_errf(NULL, -EIO, "nobody reads %s", "this") == -EIO);

	_cleanup_(stune_strv_freep) char **v = NULL;
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		CHECK(stune_strv_push(&v, &n, stune_strdupf("s%d", i)) == 0);
	CHECK(n == 100 && v[100] == NULL);
	CHECK_STR(v[0], "s0");
	CHECK_STR(v[99], "s99");
	TEST("a failed allocation (NULL) is refused, the vector unchanged");
	CHECK(stune_strv_push(&v, &n, NULL) == -ENOMEM && n == 100 && v[100] == NULL);
	TAP_END();
}
