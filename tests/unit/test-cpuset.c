/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>

#include "core/cpuset.h"
#include "tap.h"

static char *fmt(const struct stune_cpuset *s)
{
	char *out = NULL;
	if (stune_cpuset_format(s, &out) < 0)
		return NULL;
	return out;
}

int main(void)
{
	struct stune_cpuset s = {0}, m = {0};
	char *t;

	CHECK(stune_cpuset_parse_list(&s, "0-3,8\n") == 0);
	CHECK(stune_cpuset_count(&s) == 5);
	CHECK(stune_cpuset_has(&s, 8) && !stune_cpuset_has(&s, 4));
	CHECK_STR(t = fmt(&s), "0-3,8");
	free(t);

	TEST("blk-mq mq/N/cpu_list is comma+space separated, not ranges");
	CHECK(stune_cpuset_parse_list(&s, "0, 1, 2, 5") == 0);
	CHECK_STR(t = fmt(&s), "0-2,5");
	free(t);

	TEST("Empty list (CPU-less node) is valid and empty, not unknown");
	CHECK(stune_cpuset_parse_list(&s, "") == 0);
	CHECK(s.valid && stune_cpuset_count(&s) == 0);

	TEST("Garbage leaves the previous value untouched and fails");
	CHECK(stune_cpuset_parse_list(&s, "1-3") == 0);
	CHECK(stune_cpuset_parse_list(&s, "0-") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "3-1") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "a") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "1,") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "1 2") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "99999999") == -ERANGE);
	CHECK(stune_cpuset_count(&s) == 3);

	TEST("Hex masks: 32-bit groups, most significant first");
	CHECK(stune_cpuset_parse_mask(&m, "ff,00000001") == 0);
	CHECK_STR(t = fmt(&m), "0,32-39");
	free(t);
	CHECK(stune_cpuset_parse_mask(&m, "xyz") == -EINVAL);
	CHECK(stune_cpuset_parse_mask(&m, "123456789") == -EINVAL);

	TEST("A cpulist and the matching mask compare equal");
	CHECK(stune_cpuset_parse_list(&s, "0,32-39") == 0);
	CHECK(stune_cpuset_equal(&s, &m));
	CHECK(stune_cpuset_set(&s, 100) == 0);
	CHECK(!stune_cpuset_equal(&s, &m));
	CHECK(stune_cpuset_end(&s) == 101);
	CHECK(stune_cpuset_next(&s, 40) == 100);

	/* Built CPU by CPU (the storage doubles, so it may hold zero words past
	 * the highest CPU): the same set as parsed, as a mask, and formatted. */
	stune_cpuset_clear(&s);
	for (unsigned c = 0; c < 8192; c++)
		CHECK(stune_cpuset_set(&s, c) == 0);
	CHECK(stune_cpuset_count(&s) == 8192 && stune_cpuset_end(&s) == 8192);
	CHECK(stune_cpuset_next(&s, 8191) == 8191 && stune_cpuset_next(&s, 8192) == -1);
	CHECK(stune_cpuset_parse_list(&m, "0-8191") == 0);
	CHECK(stune_cpuset_equal(&s, &m) && stune_cpuset_equal(&m, &s));
	CHECK_STR(t = fmt(&s), "0-8191");
	free(t);
	stune_cpuset_clear(&s);
	CHECK(stune_cpuset_set(&s, 0) == 0 && stune_cpuset_set(&s, 64) == 0 && stune_cpuset_set(&s, 130) == 0);
	CHECK(s.nwords >= 3 && stune_cpuset_end(&s) == 131 && stune_cpuset_count(&s) == 3);
	CHECK(stune_cpuset_parse_mask(&m, "4,00000000,00000001,00000000,00000001") == 0);
	CHECK(stune_cpuset_equal(&s, &m));
	CHECK_STR(t = fmt(&s), "0,64,130");
	free(t);

	stune_cpuset_clear(&s);
	stune_cpuset_clear(&m);
	CHECK(!s.valid);
	TAP_END();
}
