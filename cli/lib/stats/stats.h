/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Statistics for `report`: pure functions, no I/O.
 *
 * Across the runs of one configuration (SPEC.md "Why it exists"):
 *   avg     arithmetic mean
 *   spread  (max - min) / max, as a fraction (0.373 = 37.3 %)
 *   stddev  sample standard deviation (n - 1 in the denominator)
 *   cov     coefficient of variation = stddev / avg, as a fraction
 * and the comparison of two sets: change in avg (fraction of the reference
 * avg) and change in spread (difference of the two spreads, in points).
 *
 * Latency histograms: fio's json+ `clat_ns.bins` ({"<value ns>": count}),
 * merged exactly by adding counts per value; percentiles from a histogram
 * follow fio's own rule (stat.c calc_clat_percentiles): the value of the
 * first bin at which the running count reaches p/100 * total.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stune_stats {
	size_t n;
	double avg, min, max;
	double spread;	 /* (max - min) / max; 0 when max is 0 */
	bool has_stddev; /* n >= 2 */
	double stddev;	 /* sample, n - 1 */
	double cov;	 /* stddev / avg; 0 when avg is 0 */
};

/* -EINVAL when n == 0 or a value is not finite. */
int stune_stats_compute(const double *v, size_t n, struct stune_stats *out);

struct stune_stats_cmp {
	double avg_change;    /* (new.avg - ref.avg) / ref.avg, fraction */
	double spread_change; /* new.spread - ref.spread, fraction (x100 = points) */
};

/* -EINVAL when ref->avg is 0. */
int stune_stats_compare(const struct stune_stats *ref, const struct stune_stats *cur, struct stune_stats_cmp *out);

/* A latency histogram: values ascending, no duplicates. */
struct stune_hist {
	uint64_t *value_ns;
	uint64_t *count;
	size_t n;
};

void stune_hist_clear(struct stune_hist *h);
/* Add src's counts into dst (a merge of two sorted lists). 0 or -ENOMEM. */
int stune_hist_merge(struct stune_hist *dst, const struct stune_hist *src);
uint64_t stune_hist_total(const struct stune_hist *h);
/* fio's rule; false when the histogram is empty or p is outside (0, 100]. */
bool stune_hist_percentile(const struct stune_hist *h, double p, uint64_t *out_ns);
