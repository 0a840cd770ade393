/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growable CPU bitmap and the three spellings the kernel uses for it:
 * cpulists ("0-3,8"), blk-mq lists ("0, 1, 2") and hex masks ("ff,00000001").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stune_cpuset {
	uint64_t *bits;
	size_t nwords; /* allocated words; those past the highest CPU are zero */
	bool valid;    /* false: unknown (null in JSON), distinct from empty */
};

void stune_cpuset_clear(struct stune_cpuset *s);
int stune_cpuset_set(struct stune_cpuset *s, unsigned cpu);
bool stune_cpuset_has(const struct stune_cpuset *s, unsigned cpu);
size_t stune_cpuset_count(const struct stune_cpuset *s);
/* Highest set CPU + 1, 0 when empty. */
unsigned stune_cpuset_end(const struct stune_cpuset *s);
bool stune_cpuset_equal(const struct stune_cpuset *a, const struct stune_cpuset *b);
int stune_cpuset_copy(struct stune_cpuset *dst, const struct stune_cpuset *src);
/* Lowest CPU >= from, or -1. */
int stune_cpuset_next(const struct stune_cpuset *s, unsigned from);

/* "0-3,8,10-11" and the blk-mq "0, 1, 2" form; empty string is an empty set. */
int stune_cpuset_parse_list(struct stune_cpuset *s, const char *text);
/* "ff,00000001" (32-bit groups, most significant first). */
int stune_cpuset_parse_mask(struct stune_cpuset *s, const char *text);
/* Range form, "" when empty. Caller frees. */
int stune_cpuset_format(const struct stune_cpuset *s, char **out);

#define stune_cpuset_foreach(cpu, s) \
	for (int cpu = stune_cpuset_next((s), 0); cpu >= 0; cpu = stune_cpuset_next((s), (unsigned)cpu + 1))
