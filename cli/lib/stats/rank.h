/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rank-based statistics for a verdict that one odd run cannot decide
 * (issue 28): the one-sided Mann-Whitney U test of "the current runs are
 * above the reference runs scaled by (1 + d)", the Hodges-Lehmann estimate of
 * the change (the median of the pairwise log-ratios) with its distribution-
 * free one-sided confidence bound from the same order statistics, robust
 * z-scores (Iglewicz and Hoaglin) to name outlier runs, and Jain's fairness
 * index. Pure functions of their inputs; nothing here prints or allocates
 * more than its own work arrays. Sources: Kayenta's MannWhitneyClassifier
 * (spinnaker/kayenta), Hollander and Wolfe, "Nonparametric Statistical
 * Methods" (U's exact null distribution, Hodges-Lehmann), Iglewicz and
 * Hoaglin (1993) for |z| > 3.5.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Log-ratios closer than this are a tie (a ratio within 1 +- 1e-9): KIOPS
 * that went through decimal text (fio's JSON, the service) make a ratio of
 * exactly 1.1 come out a rounding error above or below it.
 */
#define STUNE_RANK_TIE 1e-9

/* Runs per side the exact null distribution is computed for; beyond, the normal approximation. */
#define STUNE_RANK_EXACT_MAX 60

struct stune_shift_test {
	double u;	   /* pairs (ref i, cur j) with cur_j > ref_i * (1 + d); a tie counts 1/2 */
	double p;	   /* one-sided: P(U >= u) when the current runs are not above the scaled reference */
	double estimate;   /* Hodges-Lehmann: the median pairwise change cur_j / ref_i - 1 (fraction) */
	double lower;	   /* one-sided lower confidence bound of the change at `confidence`; -inf: too few runs */
	double confidence; /* as asked (0.95) */
	double best_p;	   /* the smallest p these run counts can give (1 / C(m + n, m)) */
	bool enough;	   /* best_p <= 1 - confidence: the runs can show the change at all */
};

/*
 * ref[m] and cur[n] (positive and finite), the change d (0.05: +5 %; -0.02:
 * "at least -2 %", the no-harm form) and the confidence (0 < c < 1) into *out.
 * The change is judged shown when out->p <= 1 - confidence (equivalently,
 * without ties, out->lower > d). -EINVAL for an empty side, a value that is
 * not positive and finite, or a confidence outside (0, 1); -ENOMEM.
 */
int stune_shift_test(const double *ref, size_t m, const double *cur, size_t n, double d, double confidence,
		     struct stune_shift_test *out);

/* The median of v[n] (n >= 1; v is not changed). -EINVAL for n == 0, -ENOMEM. */
int stune_median(const double *v, size_t n, double *out);

/*
 * Robust z-scores: z_i = 0.6745 (v_i - median) / MAD (the median absolute
 * deviation); a run with |z| > 3.5 is an outlier (Iglewicz and Hoaglin).
 * z[n] out; with MAD 0 (half the runs equal or more) every z is 0 but a run
 * off the median, which gets +-inf. -EINVAL for n == 0, -ENOMEM.
 */
int stune_robust_z(const double *v, size_t n, double *z);
#define STUNE_OUTLIER_Z 3.5

/* Jain's fairness index (sum x)^2 / (n sum x^2): 1 when every share is equal, 1/n when one takes all. */
double stune_jain_index(const double *x, size_t n);

/*
 * The one-sample form for hosts as units (a selection): x[n] are the units'
 * changes on a log scale (log(cur / ref) per host), and the test is the
 * one-sided Wilcoxon signed-rank test of "their median is above log1p(d)":
 * W+ is the sum of the ranks of |x_i - log1p(d)| whose sign is +, zeros
 * dropped, ties given their mid-rank (counted down: conservative). Exact up
 * to STUNE_RANK_SIGNED_EXACT_MAX units, normal beyond. estimate: the
 * Hodges-Lehmann estimate (the median of the Walsh averages (x_i + x_j) / 2,
 * i <= j) as a fraction, lower its one-sided bound; u is W+, best_p 1 / 2^n.
 * -EINVAL for n == 0, a value that is not finite, a confidence outside (0, 1);
 * -ENOMEM.
 */
#define STUNE_RANK_SIGNED_EXACT_MAX 200
int stune_signed_rank_test(const double *x, size_t n, double d, double confidence, struct stune_shift_test *out);
