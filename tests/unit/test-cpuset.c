/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/cpuset.c: the CPU bitmap and its three spellings (cpulist, blk-mq list, hex mask). */
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

/* CHECK_STR of the range form of s, freed. */
#define CHECK_FMT(s, want)           \
	do {                         \
		char *_t = fmt(s);   \
		CHECK_STR(_t, want); \
		free(_t);            \
	} while (0)

CASE(parse_list, "cpulist: ranges and single CPUs parsed, counted, formatted back")
{
	struct stune_cpuset s = {0};
	CHECK(stune_cpuset_parse_list(&s, "0-3,8\n") == 0);
	CHECK(stune_cpuset_count(&s) == 5);
	CHECK(stune_cpuset_has(&s, 8) && !stune_cpuset_has(&s, 4));
	CHECK_FMT(&s, "0-3,8");
	stune_cpuset_clear(&s);
}

CASE(parse_blkmq_list, "blk-mq mq/N/cpu_list is comma+space separated, not ranges")
{
	struct stune_cpuset s = {0};
	CHECK(stune_cpuset_parse_list(&s, "0, 1, 2, 5") == 0);
	CHECK_FMT(&s, "0-2,5");
	stune_cpuset_clear(&s);
}

CASE(parse_empty, "an empty list (CPU-less node) is valid and empty, not unknown, whatever the set held")
{
	struct stune_cpuset s = {0};
	CHECK(stune_cpuset_parse_list(&s, "0-2,5") == 0 && stune_cpuset_count(&s) == 4);
	CHECK(stune_cpuset_parse_list(&s, "") == 0);
	CHECK(s.valid && stune_cpuset_count(&s) == 0);
	stune_cpuset_clear(&s);
}

CASE(parse_garbage, "garbage leaves the previous value untouched and fails")
{
	struct stune_cpuset s = {0};
	CHECK(stune_cpuset_parse_list(&s, "1-3") == 0);
	CHECK(stune_cpuset_parse_list(&s, "0-") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "3-1") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "a") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "1,") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "1 2") == -EINVAL);
	CHECK(stune_cpuset_parse_list(&s, "99999999") == -ERANGE);
	CHECK(stune_cpuset_count(&s) == 3);
	stune_cpuset_clear(&s);
}

CASE(parse_mask, "hex masks: 32-bit groups, most significant first; not hex or a group too wide refused")
{
	struct stune_cpuset m = {0};
	CHECK(stune_cpuset_parse_mask(&m, "ff,00000001") == 0);
	CHECK_FMT(&m, "0,32-39");
	CHECK(stune_cpuset_parse_mask(&m, "xyz") == -EINVAL);
	CHECK(stune_cpuset_parse_mask(&m, "123456789") == -EINVAL);
	stune_cpuset_clear(&m);
}

CASE(list_equals_mask, "a cpulist and the matching mask compare equal; one CPU more and they differ")
{
	struct stune_cpuset s = {0}, m = {0};
	CHECK(stune_cpuset_parse_mask(&m, "ff,00000001") == 0);
	CHECK(stune_cpuset_parse_list(&s, "0,32-39") == 0);
	CHECK(stune_cpuset_equal(&s, &m));
	CHECK(stune_cpuset_set(&s, 100) == 0);
	CHECK(!stune_cpuset_equal(&s, &m));
	CHECK(stune_cpuset_end(&s) == 101);
	CHECK(stune_cpuset_next(&s, 40) == 100);
	stune_cpuset_clear(&s);
	stune_cpuset_clear(&m);
}

CASE(built_by_cpu, "8192 CPUs set one by one (the storage doubles): the same set as parsed, formatted")
{
	/* Built CPU by CPU (the storage doubles, so it may hold zero words past
	 * the highest CPU): the same set as parsed, and formatted. */
	struct stune_cpuset s = {0}, m = {0};
	for (unsigned c = 0; c < 8192; c++)
		CHECK(stune_cpuset_set(&s, c) == 0);
	CHECK(stune_cpuset_count(&s) == 8192 && stune_cpuset_end(&s) == 8192);
	CHECK(stune_cpuset_next(&s, 8191) == 8191 && stune_cpuset_next(&s, 8192) == -1);
	CHECK(stune_cpuset_parse_list(&m, "0-8191") == 0);
	CHECK(stune_cpuset_equal(&s, &m) && stune_cpuset_equal(&m, &s));
	CHECK_FMT(&s, "0-8191");
	stune_cpuset_clear(&s);
	stune_cpuset_clear(&m);
}

CASE(built_sparse, "CPUs 0, 64 and 130 set by hand: three words or more, the same set as the mask, formatted")
{
	struct stune_cpuset s = {0}, m = {0};
	CHECK(stune_cpuset_set(&s, 0) == 0 && stune_cpuset_set(&s, 64) == 0 && stune_cpuset_set(&s, 130) == 0);
	CHECK(s.nwords >= 3 && stune_cpuset_end(&s) == 131 && stune_cpuset_count(&s) == 3);
	CHECK(stune_cpuset_parse_mask(&m, "4,00000000,00000001,00000000,00000001") == 0);
	CHECK(stune_cpuset_equal(&s, &m));
	CHECK_FMT(&s, "0,64,130");
	stune_cpuset_clear(&s);
	stune_cpuset_clear(&m);
}

CASE(clear_unknown, "a cleared set is unknown (not valid), not empty")
{
	struct stune_cpuset s = {0};
	CHECK(stune_cpuset_parse_list(&s, "0-3") == 0 && s.valid);
	stune_cpuset_clear(&s);
	CHECK(!s.valid);
	CHECK(stune_cpuset_count(&s) == 0 && !s.bits);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
