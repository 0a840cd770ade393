/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The statistics of `report`, proven on SPEC.md's seed table. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"
#include "tap.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) < (eps))

/* The seed table's baseline: 10 runs, 4,200 - 6,700 KIOPS. */
static void baseline(struct stune_stats *base)
{
	static const double b[] = {4200, 6700, 6400, 6500, 6450, 6460, 6470, 6480, 6440, 6450};
	CHECK(stune_stats_compute(b, 10, base) == 0);
}

/* The seed table's baseline + all patches: 5 runs, 7,000 - 7,700 KIOPS. */
static void tuned_runs(struct stune_stats *tuned)
{
	static const double t[] = {7000, 7700, 7350, 7300, 7400};
	CHECK(stune_stats_compute(t, 5, tuned) == 0);
}

/* The histograms {100: 5, 200: 3, 300: 2} and {150: 1, 200: 7, 400: 2} merged into *a (cleared by the caller). */
static void merged(struct stune_hist *a)
{
	static uint64_t v1[] = {100, 200, 300}, c1[] = {5, 3, 2};
	static uint64_t v2[] = {150, 200, 400}, c2[] = {1, 7, 2};
	struct stune_hist h1 = {v1, c1, 3}, h2 = {v2, c2, 3};
	*a = (struct stune_hist){0};
	CHECK(stune_hist_merge(a, &h1) == 0);
	CHECK(stune_hist_merge(a, &h2) == 0);
}

static const double w[] = {2, 4, 4, 4, 5, 5, 7, 9};

CASE(baseline, "baseline: 10 runs, 4,200 - 6,700 KIOPS, average 6,255, spread 37.3 %")
{
	struct stune_stats base;
	baseline(&base);
	CHECK(base.n == 10);
	CHECK(NEAR(base.avg, 6255, 1e-9));
	CHECK(base.min == 4200 && base.max == 6700);
	CHECK(NEAR(base.spread * 100, 37.3, 0.05)); /* 2,500 / 6,700 = 37.31 % */
	CHECK(NEAR(base.spread, 2500.0 / 6700.0, 1e-12));
	CHECK(base.has_stddev);
}

CASE(tuned, "baseline + all patches: 5 runs, 7,000 - 7,700 KIOPS, average 7,350, spread 9.1 %")
{
	struct stune_stats tuned;
	tuned_runs(&tuned);
	CHECK(NEAR(tuned.avg, 7350, 1e-9));
	CHECK(NEAR(tuned.spread * 100, 9.1, 0.05)); /* 700 / 7,700 = 9.09 % */
}

CASE(comparison, "comparison: +17.5 % avg, spread 37.3 % -> 9.1 %: -28.2 points")
{
	struct stune_stats base, tuned;
	struct stune_stats_cmp cmp;
	baseline(&base);
	tuned_runs(&tuned);
	CHECK(stune_stats_compare(&base, &tuned, &cmp) == 0);
	CHECK(NEAR(cmp.avg_change * 100, 17.5, 0.05));
	CHECK(NEAR(cmp.avg_change, 1095.0 / 6255.0, 1e-12));
	CHECK(NEAR(cmp.spread_change * 100, -28.2, 0.05));
}

CASE(stddev, "sample stddev (n - 1) and CoV: {2,4,4,4,5,5,7,9} (sum of squares 32); the tuned runs (250,000 over 4)")
{
	struct stune_stats s, tuned;
	CHECK(stune_stats_compute(w, 8, &s) == 0);
	CHECK(NEAR(s.stddev, sqrt(32.0 / 7.0), 1e-12));
	CHECK(NEAR(s.cov, sqrt(32.0 / 7.0) / 5.0, 1e-12));
	/* Tuned: deviations -350, 350, 0, -50, 50: sum of squares 250,000 over 4. */
	tuned_runs(&tuned);
	CHECK(NEAR(tuned.stddev, sqrt(250000.0 / 4.0), 1e-9));
	CHECK(NEAR(tuned.cov, 250.0 / 7350.0, 1e-12));
}

CASE(edges, "one run: no stddev, spread 0; no runs or a NaN refused; all zero: no spread, not a reference")
{
	struct stune_stats s, tuned;
	struct stune_stats_cmp cmp;
	CHECK(stune_stats_compute(w, 1, &s) == 0);
	CHECK(!s.has_stddev && s.spread == 0 && s.avg == 2);
	CHECK(stune_stats_compute(w, 0, &s) == -EINVAL);
	const double bad[] = {1, NAN};
	CHECK(stune_stats_compute(bad, 2, &s) == -EINVAL);
	const double zero[] = {0, 0};
	CHECK(stune_stats_compute(zero, 2, &s) == 0 && s.spread == 0 && s.cov == 0);
	tuned_runs(&tuned);
	CHECK(stune_stats_compare(&s, &tuned, &cmp) == -EINVAL);
}

CASE(hist_merge, "histograms: an exact merge, values in order, counts of the same value added")
{
	struct stune_hist a;
	merged(&a);
	CHECK(a.n == 5 && stune_hist_total(&a) == 20);
	CHECK(a.n == 5 && a.value_ns[0] == 100 && a.value_ns[1] == 150 && a.value_ns[2] == 200 && a.count[2] == 10);
	struct stune_hist empty = {0};
	CHECK(stune_hist_merge(&empty, &empty) == 0 && empty.n == 0);
	stune_hist_clear(&a);
}

CASE(hist_percentile, "fio's percentile rule: cumulative 5, 6, 16, 18, 20 of 20; none of nothing or at 0")
{
	struct stune_hist a;
	uint64_t p;
	merged(&a);
	CHECK(stune_hist_percentile(&a, 25, &p) && p == 100); /* 5 >= 5 */
	CHECK(stune_hist_percentile(&a, 50, &p) && p == 200); /* 16 >= 10 */
	CHECK(stune_hist_percentile(&a, 90, &p) && p == 300); /* 18 >= 18 */
	CHECK(stune_hist_percentile(&a, 99.9, &p) && p == 400);
	CHECK(stune_hist_percentile(&a, 100, &p) && p == 400);
	CHECK(!stune_hist_percentile(&a, 0, &p));
	struct stune_hist empty = {0};
	CHECK(!stune_hist_percentile(&empty, 50, &p));
	stune_hist_clear(&a);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
