/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int stune_stats_compute(const double *v, size_t n, struct stune_stats *out)
{
	if (n == 0)
		return -EINVAL;
	double sum = 0, min = v[0], max = v[0];
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			return -EINVAL;
		sum += v[i];
		if (v[i] < min)
			min = v[i];
		if (v[i] > max)
			max = v[i];
	}
	double avg = sum / (double)n;
	struct stune_stats s = {.n = n, .avg = avg, .min = min, .max = max};
	s.spread = max != 0 ? (max - min) / max : 0;
	if (n >= 2) {
		double ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += (v[i] - avg) * (v[i] - avg);
		s.has_stddev = true;
		s.stddev = sqrt(ss / (double)(n - 1));
		s.cov = avg != 0 ? s.stddev / avg : 0;
	}
	*out = s;
	return 0;
}

int stune_stats_compare(const struct stune_stats *ref, const struct stune_stats *cur, struct stune_stats_cmp *out)
{
	if (ref->avg == 0)
		return -EINVAL;
	out->avg_change = (cur->avg - ref->avg) / ref->avg;
	out->spread_change = cur->spread - ref->spread;
	return 0;
}

void stune_hist_clear(struct stune_hist *h)
{
	free(h->value_ns);
	free(h->count);
	*h = (struct stune_hist){0};
}

int stune_hist_merge(struct stune_hist *dst, const struct stune_hist *src)
{
	size_t cap = dst->n + src->n;
	if (cap == 0)
		return 0;
	uint64_t *val = malloc(cap * sizeof(*val));
	uint64_t *cnt = malloc(cap * sizeof(*cnt));
	if (!val || !cnt) {
		free(val);
		free(cnt);
		return -ENOMEM;
	}
	size_t i = 0, j = 0, k = 0;
	while (i < dst->n || j < src->n) {
		if (j >= src->n || (i < dst->n && dst->value_ns[i] < src->value_ns[j])) {
			val[k] = dst->value_ns[i];
			cnt[k++] = dst->count[i++];
		} else if (i >= dst->n || src->value_ns[j] < dst->value_ns[i]) {
			val[k] = src->value_ns[j];
			cnt[k++] = src->count[j++];
		} else {
			val[k] = dst->value_ns[i];
			cnt[k++] = dst->count[i++] + src->count[j++];
		}
	}
	free(dst->value_ns);
	free(dst->count);
	dst->value_ns = val;
	dst->count = cnt;
	dst->n = k;
	return 0;
}

uint64_t stune_hist_total(const struct stune_hist *h)
{
	uint64_t t = 0;
	for (size_t i = 0; i < h->n; i++)
		t += h->count[i];
	return t;
}

bool stune_hist_percentile(const struct stune_hist *h, double p, uint64_t *out_ns)
{
	uint64_t total = stune_hist_total(h);
	if (total == 0 || !(p > 0 && p <= 100))
		return false;
	double want = p / 100.0 * (double)total;
	uint64_t sum = 0;
	for (size_t i = 0; i < h->n; i++) {
		sum += h->count[i];
		if ((double)sum >= want) {
			*out_ns = h->value_ns[i];
			return true;
		}
	}
	*out_ns = h->value_ns[h->n - 1];
	return true;
}
