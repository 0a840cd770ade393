/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The statistics of `report`, proven on SPEC.md's seed table. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"
#include "tap.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) < (eps))

int main(void)
{
	struct stune_stats base, tuned, s;
	struct stune_stats_cmp cmp;

	TEST("Baseline: 10 runs, 4,200 - 6,700 KIOPS, average 6,255");
	const double b[] = {4200, 6700, 6400, 6500, 6450, 6460, 6470, 6480, 6440, 6450};
	CHECK(stune_stats_compute(b, 10, &base) == 0);
	CHECK(base.n == 10);
	CHECK(NEAR(base.avg, 6255, 1e-9));
	CHECK(base.min == 4200 && base.max == 6700);
	CHECK(NEAR(base.spread * 100, 37.3, 0.05)); /* 2,500 / 6,700 = 37.31 % */
	CHECK(NEAR(base.spread, 2500.0 / 6700.0, 1e-12));
	CHECK(base.has_stddev);

	TEST("Baseline + all patches: 5 runs, 7,000 - 7,700 KIOPS, average 7,350");
	const double t[] = {7000, 7700, 7350, 7300, 7400};
	CHECK(stune_stats_compute(t, 5, &tuned) == 0);
	CHECK(NEAR(tuned.avg, 7350, 1e-9));
	CHECK(NEAR(tuned.spread * 100, 9.1, 0.05)); /* 700 / 7,700 = 9.09 % */

	TEST("Comparison: +17.5 % avg, spread 37.3 % -> 9.1 %: -28.2 points");
	CHECK(stune_stats_compare(&base, &tuned, &cmp) == 0);
	CHECK(NEAR(cmp.avg_change * 100, 17.5, 0.05));
	CHECK(NEAR(cmp.avg_change, 1095.0 / 6255.0, 1e-12));
	CHECK(NEAR(cmp.spread_change * 100, -28.2, 0.05));

	TEST("Sample stddev (n - 1) and CoV: {2,4,4,4,5,5,7,9}: mean 5, sum of squares 32");
	const double w[] = {2, 4, 4, 4, 5, 5, 7, 9};
	CHECK(stune_stats_compute(w, 8, &s) == 0);
	CHECK(NEAR(s.stddev, sqrt(32.0 / 7.0), 1e-12));
	CHECK(NEAR(s.cov, sqrt(32.0 / 7.0) / 5.0, 1e-12));
	TEST("Tuned: deviations -350, 350, 0, -50, 50: sum of squares 250,000 over 4");
	CHECK(NEAR(tuned.stddev, sqrt(250000.0 / 4.0), 1e-9));
	CHECK(NEAR(tuned.cov, 250.0 / 7350.0, 1e-12));

	TEST("One run: no stddev; spread 0. No runs, NaN: refused");
	CHECK(stune_stats_compute(w, 1, &s) == 0);
	CHECK(!s.has_stddev && s.spread == 0 && s.avg == 2);
	CHECK(stune_stats_compute(w, 0, &s) == -EINVAL);
	const double bad[] = {1, NAN};
	CHECK(stune_stats_compute(bad, 2, &s) == -EINVAL);
	const double zero[] = {0, 0};
	CHECK(stune_stats_compute(zero, 2, &s) == 0 && s.spread == 0 && s.cov == 0);
	CHECK(stune_stats_compare(&s, &tuned, &cmp) == -EINVAL);

	TEST("Histograms: exact merge, fio's percentile rule");
	uint64_t v1[] = {100, 200, 300}, c1[] = {5, 3, 2};
	uint64_t v2[] = {150, 200, 400}, c2[] = {1, 7, 2};
	struct stune_hist a = {0}, h1 = {v1, c1, 3}, h2 = {v2, c2, 3};
	CHECK(stune_hist_merge(&a, &h1) == 0);
	CHECK(stune_hist_merge(&a, &h2) == 0);
	CHECK(a.n == 5 && stune_hist_total(&a) == 20);
	CHECK(a.value_ns[0] == 100 && a.value_ns[1] == 150 && a.value_ns[2] == 200 && a.count[2] == 10);
	uint64_t p;
	TEST("cumulative 5, 6, 16, 18, 20 of 20");
	CHECK(stune_hist_percentile(&a, 25, &p) && p == 100); /* 5 >= 5 */
	CHECK(stune_hist_percentile(&a, 50, &p) && p == 200); /* 16 >= 10 */
	CHECK(stune_hist_percentile(&a, 90, &p) && p == 300); /* 18 >= 18 */
	CHECK(stune_hist_percentile(&a, 99.9, &p) && p == 400);
	CHECK(stune_hist_percentile(&a, 100, &p) && p == 400);
	CHECK(!stune_hist_percentile(&a, 0, &p));
	struct stune_hist empty = {0};
	CHECK(!stune_hist_percentile(&empty, 50, &p));
	CHECK(stune_hist_merge(&empty, &empty) == 0 && empty.n == 0);
	stune_hist_clear(&a);

	TAP_END();
}
