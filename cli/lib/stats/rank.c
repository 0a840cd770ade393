// SPDX-License-Identifier: GPL-2.0-or-later
/* Rank-based statistics (rank.h). */
#include "stats/rank.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int stune_median(const double *v, size_t n, double *out)
{
	if (n == 0)
		return -EINVAL;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), dbl_cmp);
	*out = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return 0;
}

/*
 * U's exact null distribution for m reference and n current runs: c[k],
 * k = 0..m n, the number of the C(m + n, m) orderings with U = k. The
 * largest value of all is a current run (it beats every reference run: U
 * grows by a) or a reference run (U unchanged): f(a, b)[k] = f(a, b - 1)[k - a]
 * + f(a - 1, b)[k]. Sums of positive numbers only: no cancellation. f holds
 * one row per a <= m, for the b reached so far. Caller frees *c.
 */
static int u_null(size_t m, size_t n, double **c)
{
	size_t len = m * n + 1;
	double *f = calloc((m + 1) * len, sizeof(double));
	if (!f)
		return -ENOMEM;
	for (size_t a = 0; a <= m; a++)
		f[a * len] = 1; /* b = 0: one ordering, U = 0 */
	for (size_t b = 1; b <= n; b++)
		for (size_t a = 1; a <= m; a++) {
			double *row = f + a * len;
			const double *below = f + (a - 1) * len;
			for (size_t k = len; k-- > 0;)
				row[k] = (k >= a ? row[k - a] : 0) + below[k];
		}
	/* Row m is the answer: hand it over, moved to the front. */
	memmove(f, f + m * len, len * sizeof(double));
	*c = f;
	return 0;
}

/* P(X >= x) of an exact null distribution c[0..len); a half (a tie) counted down: conservative. */
static double exact_tail(const double *c, size_t len, double x)
{
	size_t from = (size_t)floor(x);
	double total = 0, tail = 0;
	for (size_t k = 0; k < len; k++) {
		total += c[k];
		if (k >= from)
			tail += c[k];
	}
	return tail / total;
}

/* P(U >= u) under the null (the two sides one distribution). */
static double u_tail(const double *c, size_t m, size_t n, double u)
{
	return exact_tail(c, m * n + 1, u);
}

/* The normal approximation (continuity corrected) beyond STUNE_RANK_EXACT_MAX runs a side. */
static double u_tail_normal(size_t m, size_t n, double u)
{
	double mean = (double)m * (double)n / 2, sd = sqrt((double)m * (double)n * (double)(m + n + 1) / 12);
	return 0.5 * erfc((u - 0.5 - mean) / sd / sqrt(2));
}

int stune_shift_test(const double *ref, size_t m, const double *cur, size_t n, double d, double confidence,
		     struct stune_shift_test *out)
{
	if (m == 0 || n == 0 || !(confidence > 0 && confidence < 1) || !(d > -1) || !isfinite(d))
		return -EINVAL;
	for (size_t i = 0; i < m; i++)
		if (!(ref[i] > 0) || !isfinite(ref[i]))
			return -EINVAL;
	for (size_t j = 0; j < n; j++)
		if (!(cur[j] > 0) || !isfinite(cur[j]))
			return -EINVAL;
	size_t N = m * n;
	double *diff = malloc(N * sizeof(double));
	if (!diff)
		return -ENOMEM;
	/* The pairwise log-ratios: the change is a ratio, so the shift is on a log scale. */
	double shift = log1p(d), u = 0;
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++) {
			double x = log(cur[j]) - log(ref[i]);
			diff[i * n + j] = x;
			u += x > shift + STUNE_RANK_TIE ? 1 : x >= shift - STUNE_RANK_TIE ? 0.5 : 0;
		}
	qsort(diff, N, sizeof(double), dbl_cmp);
	double alpha = 1 - confidence;
	*out = (struct stune_shift_test){.u = u, .confidence = confidence, .lower = -INFINITY};
	out->estimate = expm1(N % 2 ? diff[N / 2] : (diff[N / 2 - 1] + diff[N / 2]) / 2);
	/* u_crit: the smallest count of pairs above the shift that the test takes as shown. */
	size_t u_crit = N + 1;
	if (m <= STUNE_RANK_EXACT_MAX && n <= STUNE_RANK_EXACT_MAX) {
		double *c = NULL;
		int r = u_null(m, n, &c);
		if (r < 0) {
			free(diff);
			return r;
		}
		out->p = u_tail(c, m, n, u);
		out->best_p = u_tail(c, m, n, (double)N);
		for (size_t k = N + 1; k-- > 0 && u_tail(c, m, n, (double)k) <= alpha;)
			u_crit = k;
		free(c);
	} else {
		out->p = u_tail_normal(m, n, u);
		out->best_p = u_tail_normal(m, n, (double)N);
		for (size_t k = N + 1; k-- > 0 && u_tail_normal(m, n, (double)k) <= alpha;)
			u_crit = k;
	}
	out->enough = out->best_p <= alpha;
	/* Every shift below the (N - u_crit + 1)-th smallest log-ratio leaves at least u_crit pairs above it. */
	if (u_crit <= N)
		out->lower = expm1(diff[N - u_crit]);
	free(diff);
	return 0;
}

int stune_robust_z(const double *v, size_t n, double *z)
{
	double med, mad;
	int r = stune_median(v, n, &med);
	if (r < 0)
		return r;
	double *dev = malloc(n * sizeof(double));
	if (!dev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(v[i] - med);
	r = stune_median(dev, n, &mad);
	free(dev);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		z[i] = mad > 0 ? 0.6745 * (v[i] - med) / mad : v[i] == med ? 0 : v[i] > med ? INFINITY : -INFINITY;
	return 0;
}

double stune_jain_index(const double *x, size_t n)
{
	double sum = 0, sq = 0;
	for (size_t i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return n && sq > 0 ? sum * sum / ((double)n * sq) : 0;
}

/* W+'s exact null distribution for n units: c[k], k = 0..n(n+1)/2, subsets of 1..n with rank sum k. */
static int w_null(size_t n, double **c)
{
	size_t len = n * (n + 1) / 2 + 1;
	double *f = calloc(len, sizeof(double));
	if (!f)
		return -ENOMEM;
	f[0] = 1;
	for (size_t r = 1, top = 0; r <= n; top += r, r++)
		for (size_t k = top + r + 1; k-- > r;)
			f[k] += f[k - r];
	*c = f;
	return 0;
}

/* P(W+ >= w) for n units: exact from c (NULL: the normal approximation, continuity corrected). */
static double w_tail(const double *c, size_t n, double w)
{
	double nn = (double)n;
	if (!c) {
		double mean = nn * (nn + 1) / 4, sd = sqrt(nn * (nn + 1) * (2 * nn + 1) / 24);
		return 0.5 * erfc((w - 0.5 - mean) / sd / sqrt(2));
	}
	return exact_tail(c, n * (n + 1) / 2 + 1, w);
}

/* The Walsh averages (s_i + s_j) / 2, i <= j, of sorted s[n] that are <= v. */
static size_t walsh_at_most(const double *s, size_t n, double v)
{
	size_t count = 0, j = n;
	for (size_t i = 0; i < n; i++) {
		while (j > i && (s[i] + s[j - 1]) / 2 > v)
			j--;
		if (j <= i)
			break;
		count += j - i;
	}
	return count;
}

/* The k-th smallest (1-based) Walsh average of sorted s[n], without the n(n+1)/2 of them in memory. */
static double walsh_kth(const double *s, size_t n, size_t k)
{
	double lo = s[0], hi = s[n - 1];
	if (walsh_at_most(s, n, lo) >= k)
		return lo;
	for (int it = 0; it < 200 && lo < hi; it++) {
		double mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (walsh_at_most(s, n, mid) >= k)
			hi = mid;
		else
			lo = mid;
	}
	/* The k-th lies in (lo, hi]: the largest Walsh average <= hi. */
	double best = -INFINITY;
	for (size_t i = 0, j = n; i < n; i++) {
		while (j > i && (s[i] + s[j - 1]) / 2 > hi)
			j--;
		if (j <= i)
			break;
		double w = (s[i] + s[j - 1]) / 2;
		best = w > best ? w : best;
	}
	return best;
}

struct ranked {
	double a; /* |x - shift| */
	bool pos;
};
static int ranked_cmp(const void *p, const void *q)
{
	const struct ranked *x = p, *y = q;
	return (x->a > y->a) - (x->a < y->a);
}

/* W+ of x[n] against shift (zeros dropped: *nz units keep a sign; ties at their mid-rank). */
static int signed_ranks(const double *x, size_t n, double shift, double *w, size_t *nz)
{
	struct ranked *r = malloc(n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	*nz = 0;
	for (size_t i = 0; i < n; i++)
		if (fabs(x[i] - shift) > STUNE_RANK_TIE)
			r[(*nz)++] = (struct ranked){fabs(x[i] - shift), x[i] > shift};
	qsort(r, *nz, sizeof(*r), ranked_cmp);
	*w = 0;
	for (size_t i = 0; i < *nz;) {
		size_t j = i;
		while (j < *nz && r[j].a == r[i].a)
			j++;
		for (size_t k = i; k < j; k++)
			*w += r[k].pos ? (double)(i + 1 + j) / 2 : 0; /* ranks i+1..j share their mean */
		i = j;
	}
	free(r);
	return 0;
}

int stune_signed_rank_test(const double *x, size_t n, double d, double confidence, struct stune_shift_test *out)
{
	if (n == 0 || !(confidence > 0 && confidence < 1) || !(d > -1) || !isfinite(d))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -EINVAL;
	double shift = log1p(d), alpha = 1 - confidence, w;
	size_t nz, M = n * (n + 1) / 2;
	int e = signed_ranks(x, n, shift, &w, &nz);
	if (e < 0)
		return e;
	double *s = malloc(n * sizeof(double)), *c = NULL, *cz = NULL;
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(double));
	qsort(s, n, sizeof(double), dbl_cmp);
	bool exact = n <= STUNE_RANK_SIGNED_EXACT_MAX;
	if (exact && ((e = w_null(n, &c)) < 0 || (nz < n && (e = w_null(nz, &cz)) < 0))) {
		free(c);
		free(s);
		return e;
	}
	*out = (struct stune_shift_test){.u = w, .confidence = confidence, .lower = -INFINITY};
	out->estimate = expm1((walsh_kth(s, n, (M + 1) / 2) + walsh_kth(s, n, M / 2 + 1)) / 2);
	out->p = nz ? w_tail(nz < n ? cz : c, nz, w) : 1;
	out->best_p = w_tail(c, n, (double)M);
	out->enough = out->best_p <= alpha;
	/* w_crit, the smallest W+ taken as shown: the tail falls as w grows (bisection). */
	if (out->enough) {
		size_t lo = 0, hi = M; /* tail(hi) <= alpha */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (w_tail(c, n, (double)mid) <= alpha)
				hi = mid;
			else
				lo = mid + 1;
		}
		/* Every shift below the (M - w_crit + 1)-th smallest Walsh average leaves W+ >= w_crit. */
		out->lower = expm1(walsh_kth(s, n, M - lo + 1));
	}
	free(cz);
	free(c);
	free(s);
	return 0;
}
