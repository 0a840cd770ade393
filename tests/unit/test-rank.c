/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank-based statistics (stats/rank.c): U's exact null distribution on
 * counts worked by hand, the Hodges-Lehmann estimate and its bound, the
 * seeds' table, and fixed-seed simulations of canaries with the seeds' noise
 * (tests/README.md: the rates issue 28 asks of the verdict).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define SEEDS_NOISE_SEED 0x5eed5eed12345678ULL
#include "seeds-noise.h"
#include "stats/rank.h"
#include "tap.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) < (eps))

CASE(u_exact, "U's exact tail: 3 vs 3 separated p = 1/20, U = 8 p = 2/20; 6 vs 6 separated p = 1/924")
{
	struct stune_shift_test t;
	double a[] = {1, 2, 3}, b[] = {4, 5, 6}, c[] = {2.5, 4, 5};
	CHECK(stune_shift_test(a, 3, b, 3, 0, 0.95, &t) == 0 && t.u == 9 && NEAR(t.p, 1.0 / 20, 1e-12));
	CHECK(NEAR(t.best_p, 1.0 / 20, 1e-12) && t.enough);
	CHECK(stune_shift_test(a, 3, c, 3, 0, 0.95, &t) == 0 && t.u == 8 && NEAR(t.p, 2.0 / 20, 1e-12));
	double r6[] = {1, 2, 3, 4, 5, 6}, c6[] = {7, 8, 9, 10, 11, 12};
	CHECK(stune_shift_test(r6, 6, c6, 6, 0, 0.95, &t) == 0 && t.u == 36 && NEAR(t.p, 1.0 / 924, 1e-12));
	/* Reversed: every current run below: U = 0, p = 1. */
	CHECK(stune_shift_test(c6, 6, r6, 6, 0, 0.95, &t) == 0 && t.u == 0 && NEAR(t.p, 1, 1e-12));
	/* 2 vs 2: the best p is 1/6 > 5 %: too few runs for 95 %, never shown. */
	CHECK(stune_shift_test(a, 2, b, 2, 0, 0.95, &t) == 0 && !t.enough && t.lower == -INFINITY && t.p > 0.05);
}

CASE(u_normal, "beyond the exact sizes the normal approximation agrees with the exact tail at 60 vs 60")
{
	static double ref[61], cur[61];
	for (int i = 0; i < 61; i++) {
		ref[i] = 1000 + 7 * i;
		cur[i] = 1000 + 7 * i + 50;
	}
	struct stune_shift_test exact, approx;
	CHECK(stune_shift_test(ref, 60, cur, 60, 0, 0.95, &exact) == 0);
	CHECK(stune_shift_test(ref, 61, cur, 61, 0, 0.95, &approx) == 0);
	CHECK_MSG(NEAR(exact.p, approx.p, 0.02), "exact %g, normal %g", exact.p, approx.p);
}

CASE(hodges_lehmann, "the estimate is the median pairwise ratio; the bound is below it and above d when shown")
{
	struct stune_shift_test t;
	double r1[] = {100}, c1[] = {110};
	CHECK(stune_shift_test(r1, 1, c1, 1, 0, 0.95, &t) == 0 && NEAR(t.estimate, 0.10, 1e-12));
	/* Ratios 1.2, 1.1, 1.3 / 1.0 ... : the median of the 9 pairwise ratios. */
	double r[] = {100, 110, 90}, c[] = {120, 121, 119};
	CHECK(stune_shift_test(r, 3, c, 3, 0, 0.95, &t) == 0);
	double ratios[9];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			ratios[i * 3 + j] = c[j] / r[i];
	double med;
	CHECK(stune_median(ratios, 9, &med) == 0 && NEAR(t.estimate, med - 1, 1e-12));
	/* 3 vs 3 at 95 %: the bound is the smallest ratio (u_crit 9), 119 / 110 - 1. */
	CHECK_MSG(NEAR(t.lower, 119.0 / 110 - 1, 1e-12) && t.lower < t.estimate, "lower %g", t.lower);
	CHECK(t.lower > 0.05 && t.p <= 0.05);
}

CASE(seeds_table, "the seeds' table (10 baseline runs, 5 tuned): +5 % shown at 95 %; the estimate is the median "
		  "change, not the averages' +17.5 %")
{
	static const double base[] = {4200, 6700, 6400, 6500, 6450, 6460, 6470, 6480, 6440, 6450};
	static const double tuned[] = {7000, 7700, 7350, 7300, 7400};
	struct stune_shift_test t;
	CHECK(stune_shift_test(base, 10, tuned, 5, 0.05, 0.95, &t) == 0);
	CHECK_MSG(t.p <= 0.05 && t.lower > 0.05 && t.enough, "p %g, lower %+.1f %%, estimate %+.1f %%", t.p,
		  t.lower * 100, t.estimate * 100);
	/* One odd run does not decide: the estimate is the median change (+13.8 %), not the averages' +17.5 %. */
	CHECK_MSG(t.estimate > 0.10 && t.estimate < 0.16, "estimate %+.2f %%", t.estimate * 100);
	/* The no-harm form holds too; +20 % is not shown. */
	CHECK(stune_shift_test(base, 10, tuned, 5, -0.02, 0.95, &t) == 0 && t.p <= 0.05);
	CHECK(stune_shift_test(base, 10, tuned, 5, 0.20, 0.95, &t) == 0 && t.p > 0.05);
}

/* --- fixed-seed simulations: the seeds' noise (tests/README.md) --- */

enum tuned_kind { SAME, EFFECT, LOSS5 };
/* Of `trials` canaries of `runs` baseline and `runs` tuned runs, the share where the change d is shown. */
static double pass_rate(enum tuned_kind kind, double d, size_t runs, int trials, double *avg_rule)
{
	int pass = 0, avg_pass = 0;
	for (int k = 0; k < trials; k++) {
		double b[32], t[32], sb = 0, st = 0;
		for (size_t i = 0; i < runs; i++) {
			b[i] = seed_run(1);
			t[i] = kind == SAME ? seed_run(1) : kind == EFFECT ? normal(7350, 0.03) : 0.95 * seed_run(1);
			sb += b[i];
			st += t[i];
		}
		struct stune_shift_test r;
		if (stune_shift_test(b, runs, t, runs, d, 0.95, &r) == 0 && r.p <= 0.05)
			pass++;
		avg_pass += st >= sb * (1 + d);
	}
	if (avg_rule)
		*avg_rule = (double)avg_pass / trials;
	return (double)pass / trials;
}

CASE(canary_rates, "1 host x 6 runs, 400 canaries each: no change passes +5 % <= 5 % (averages: ~19 %), the "
		   "seeds' effect >= 90 %, a 5 % loss passes the no-harm -2 % <= 5 %")
{
	double avg;
	double none = pass_rate(SAME, 0.05, 6, 400, &avg);
	CHECK_MSG(none <= 0.05, "no change: %.1f %% passed +5 %%", none * 100);
	CHECK_MSG(avg > 0.10, "the averages' rule passed %.1f %% of them (the audit saw ~19 %%)", avg * 100);
	double effect = pass_rate(EFFECT, 0.05, 6, 400, NULL);
	CHECK_MSG(effect >= 0.90, "the seeds' effect: %.1f %% passed +5 %%", effect * 100);
	double loss = pass_rate(LOSS5, -0.02, 6, 400, NULL);
	CHECK_MSG(loss <= 0.05, "a 5 %% loss: %.1f %% passed -2 %%", loss * 100);
	printf("# no change %.1f %% (averages %.1f %%), effect %.1f %%, 5 %% loss at -2 %%: %.1f %%\n", none * 100,
	       avg * 100, effect * 100, loss * 100);
}

CASE(robust_z, "the 4,200 run among runs near 6,660 is named (|z| > 3.5); equal runs give 0, one off gives inf")
{
	double v[] = {6660, 6650, 6670, 4200, 6655, 6665}, z[6];
	CHECK(stune_robust_z(v, 6, z) == 0);
	CHECK_MSG(fabs(z[3]) > STUNE_OUTLIER_Z && z[3] < 0, "z %g", z[3]);
	for (int i = 0; i < 6; i++)
		if (i != 3)
			CHECK_MSG(fabs(z[i]) < STUNE_OUTLIER_Z, "z[%d] %g", i, z[i]);
	double e[] = {5, 5, 5, 9}, ze[4];
	CHECK(stune_robust_z(e, 4, ze) == 0 && ze[0] == 0 && isinf(ze[3]) && ze[3] > 0);
}

CASE(jain, "Jain's index: 1 for equal shares, 1/n when one takes all")
{
	double eq[] = {3, 3, 3, 3}, one[] = {1, 0, 0, 0};
	CHECK(NEAR(stune_jain_index(eq, 4), 1, 1e-12) && NEAR(stune_jain_index(one, 4), 0.25, 1e-12));
}

CASE(bad_input, "an empty side, a value not positive and finite, a confidence outside (0, 1): -EINVAL")
{
	struct stune_shift_test t;
	double a[] = {1, 2}, neg[] = {1, -2}, inf[] = {1, INFINITY};
	CHECK(stune_shift_test(a, 0, a, 2, 0, 0.95, &t) == -EINVAL);
	CHECK(stune_shift_test(a, 2, neg, 2, 0, 0.95, &t) == -EINVAL);
	CHECK(stune_shift_test(inf, 2, a, 2, 0, 0.95, &t) == -EINVAL);
	CHECK(stune_shift_test(a, 2, a, 2, 0, 1, &t) == -EINVAL);
	double med;
	CHECK(stune_median(a, 0, &med) == -EINVAL);
}

CASE(signed_rank, "Wilcoxon signed-rank: 5 units all above p = 1/32, one below (rank 1) 2/32; 4 units are too few "
		  "for 95 %; the estimate is the median Walsh average, the bound the smallest at n = 5")
{
	struct stune_shift_test t;
	double up[] = {0.01, 0.02, 0.03, 0.04, 0.05}, one[] = {-0.01, 0.02, 0.03, 0.04, 0.05};
	CHECK(stune_signed_rank_test(up, 5, 0, 0.95, &t) == 0 && t.u == 15 && NEAR(t.p, 1.0 / 32, 1e-12));
	CHECK(NEAR(t.best_p, 1.0 / 32, 1e-12) && t.enough);
	CHECK_MSG(NEAR(t.estimate, expm1(0.03), 1e-12) && NEAR(t.lower, expm1(0.01), 1e-12), "estimate %g lower %g",
		  t.estimate, t.lower);
	CHECK(stune_signed_rank_test(one, 5, 0, 0.95, &t) == 0 && t.u == 14 && NEAR(t.p, 2.0 / 32, 1e-12));
	CHECK(stune_signed_rank_test(up, 4, 0, 0.95, &t) == 0 && !t.enough && t.lower == -INFINITY);
	/* The shift: against +3 % (log1p) the units 0.01 and 0.02 are below. */
	CHECK(stune_signed_rank_test(up, 5, expm1(0.03), 0.95, &t) == 0 && t.p > 0.05);
	/* A unit exactly at the shift is dropped: 4 signed units, all +, p = 1/16. */
	CHECK(stune_signed_rank_test(up, 5, expm1(0.01), 0.95, &t) == 0 && NEAR(t.p, 1.0 / 16, 1e-12));
	double bad[] = {0.1, NAN};
	CHECK(stune_signed_rank_test(bad, 2, 0, 0.95, &t) == -EINVAL &&
	      stune_signed_rank_test(up, 0, 0, 0.95, &t) == -EINVAL);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

CASE(signed_rank_walsh, "the estimate and bound found without the Walsh averages in memory equal the sorted list's, "
			"on 200 random sets of 1 to 40 units")
{
	static double x[40], w[40 * 41 / 2];
	for (int trial = 0; trial < 200; trial++) {
		size_t n = 1 + (size_t)(uniform() * 40), M = n * (n + 1) / 2, k = 0;
		for (size_t i = 0; i < n; i++)
			x[i] = (uniform() - 0.4) * 0.2;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i; j < n; j++)
				w[k++] = (x[i] + x[j]) / 2;
		qsort(w, M, sizeof(double), cmp_dbl);
		double med = M % 2 ? w[M / 2] : (w[M / 2 - 1] + w[M / 2]) / 2;
		struct stune_shift_test t;
		CHECK(stune_signed_rank_test(x, n, 0, 0.9, &t) == 0);
		CHECK_MSG(NEAR(log1p(t.estimate), med, 1e-12), "n %zu: estimate %g, want %g", n, log1p(t.estimate),
			  med);
		if (!t.enough)
			continue;
		/* The bound is a Walsh average, and W+ against it just below is >= the critical count. */
		bool found = false;
		for (size_t i = 0; i < M; i++)
			found = found || NEAR(w[i], log1p(t.lower), 1e-12);
		CHECK_MSG(found, "n %zu: the bound %g is not a Walsh average", n, log1p(t.lower));
		struct stune_shift_test at;
		CHECK(stune_signed_rank_test(x, n, expm1(log1p(t.lower) - 1e-7), 0.9, &at) == 0 && at.p <= 0.1 + 1e-12);
	}
}

CASE(signed_rank_normal, "beyond the exact sizes the normal approximation agrees with the exact tail (200 vs 201)")
{
	static double x[201];
	for (int i = 0; i < 201; i++)
		x[i] = (i % 3 ? 0.02 : -0.015) * (1 + i / 400.0);
	struct stune_shift_test exact, approx;
	CHECK(stune_signed_rank_test(x, 200, 0, 0.95, &exact) == 0 &&
	      stune_signed_rank_test(x, 201, 0, 0.95, &approx) == 0);
	CHECK_MSG(NEAR(exact.p, approx.p, 0.01), "exact %g, normal %g", exact.p, approx.p);
	CHECK(exact.lower > -1 && approx.lower > -1 && NEAR(exact.lower, approx.lower, 0.005));
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
