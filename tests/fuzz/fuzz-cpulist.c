/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpulists and masks (sysfs cpulist, local_cpulist, /proc/irq/N/smp_affinity,
 * blk-mq lists) and the strict number readers every attribute goes through.
 * Round trip: a set parsed, formatted and parsed again is the same set.
 */
#include <stdlib.h>

#include "core/cpuset.h"
#include "core/ctx.h"
#include "fuzz.h"

static void round_trip(const struct stune_cpuset *s)
{
	char *text = NULL;
	fuzz_check(stune_cpuset_format(s, &text) == 0, "format");
	struct stune_cpuset back = {0};
	fuzz_check(stune_cpuset_parse_list(&back, text) == 0, "'%s' does not parse back", text);
	fuzz_check(stune_cpuset_equal(s, &back), "'%s' parses back as another set", text);
	stune_cpuset_clear(&back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct stune_cpuset s = {0};
	if (stune_cpuset_parse_list(&s, text) == 0)
		round_trip(&s);
	stune_cpuset_clear(&s);
	if (stune_cpuset_parse_mask(&s, text) == 0)
		round_trip(&s);
	stune_cpuset_clear(&s);
	int64_t i;
	uint64_t u;
	(void)stune_parse_int64(text, &i);
	(void)stune_parse_uint64(text, &u);
	free(text);
	return 0;
}
