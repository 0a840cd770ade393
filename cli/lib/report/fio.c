/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/fio.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "core/userfile.h"

/* fio's JSON is a few MB at most (json+ with 16 jobs is ~1 MB); refuse absurd files. */
#define FIO_MAX_FILE_BYTES (256u << 20)

const double stune_pct_levels[STUNE_N_PCT] = {50.0, 99.0, 99.9};

const char *stune_fio_dir_name(enum stune_fio_dir d)
{
	return d == STUNE_FIO_READ ? "read" : "write";
}

const char *stune_pct_source_name(enum stune_pct_source s)
{
	switch (s) {
	case STUNE_PCT_FIO:
		return "fio";
	case STUNE_PCT_BINS:
		return "merged-bins";
	case STUNE_PCT_MAX_OF_JOBS:
		return "max-of-jobs";
	case STUNE_PCT_NONE:
		break;
	}
	return "none";
}

static void kv_free(struct stune_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void stune_fio_run_free(struct stune_fio_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_jobs; i++) {
		struct stune_fio_job *j = &r->jobs[i];
		free(j->name);
		kv_free(j->options, j->n_options);
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			stune_hist_clear(&j->io[d].clat.bins);
	}
	free(r->jobs);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		stune_hist_clear(&r->total[d].clat.bins);
	kv_free(r->global_options, r->n_global_options);
	free(r->path);
	free(r->fio_version);
	free(r->time);
	free(r);
}

const char *stune_fio_job_option(const struct stune_fio_run *r, const struct stune_fio_job *j, const char *key)
{
	for (size_t i = 0; j && i < j->n_options; i++)
		if (!strcmp(j->options[i].key, key))
			return j->options[i].value;
	for (size_t i = 0; i < r->n_global_options; i++)
		if (!strcmp(r->global_options[i].key, key))
			return r->global_options[i].value;
	return NULL;
}

/* Parse state: the error message is set once, by the innermost failure. */
struct parse {
	struct stune_ctx *ctx;
	const char *path;
	char *err;
	bool old_keys;
};

static int fail(struct parse *p, const char *fmt, ...) _printf_(2, 3);
static int fail(struct parse *p, const char *fmt, ...)
{
	if (!p->err) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(&p->err, fmt, ap) < 0)
			p->err = NULL;
		va_end(ap);
		if (!p->err)
			return -ENOMEM;
	}
	return -EINVAL;
}

static void warn(struct parse *p, const char *fmt, ...) _printf_(2, 3);
static void warn(struct parse *p, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	if (!p->ctx)
		return;
	va_start(ap, fmt);
	int r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r >= 0)
		stune_log(p->ctx, STUNE_LOG_WARNING, p->path, "%s", msg);
}

static bool is_num(json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* A number under key; absent: *out = 0 unless required. Negative values are refused. */
static int get_num(struct parse *p, json_object *obj, const char *key, const char *where, bool required, double *out)
{
	json_object *v;
	*out = 0;
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return fail(p, "%s: no '%s'", where, key);
		return 0;
	}
	if (!is_num(v))
		return fail(p, "%s: '%s' is not a number", where, key);
	double x = json_object_get_double(v);
	if (!isfinite(x) || x < 0)
		return fail(p, "%s: '%s' is negative or not finite", where, key);
	*out = x;
	return 0;
}

/* 2^63: every count, size and time fits an int64_t below it (the line protocol's integers are signed). */
#define FIO_INT_LIMIT 9223372036854775808.0
/* 10000-01-01T00:00:00Z in seconds since 1970. */
#define FIO_YEAR_10000_S INT64_C(253402300800)

static int out_of_range(struct parse *p, const char *where, const char *key, double x)
{
	return fail(p, "%s: '%s' is out of range (%g)", where, key, x);
}

/* An integer field: a number from 0 to 2^63 - 1 (fractions are cut). */
static int get_u64(struct parse *p, json_object *obj, const char *key, const char *where, bool required, uint64_t *out)
{
	double x;
	int r = get_num(p, obj, key, where, required, &x);
	if (r < 0)
		return r;
	if (!(x < FIO_INT_LIMIT))
		return out_of_range(p, where, key, x);
	*out = (uint64_t)x;
	return 0;
}

/* a + b for the totals of all jobs, or an error naming the field. */
static int add_u64(struct parse *p, const char *key, const char *dir, uint64_t *a, uint64_t b)
{
	if (*a + b < *a || *a + b >= (uint64_t)1 << 63)
		return fail(p, "%s: the jobs' '%s' sum is out of range", dir, key);
	*a += b;
	return 0;
}

static int add_dbl(struct parse *p, const char *key, const char *dir, double *a, double b)
{
	if (!isfinite(*a + b))
		return fail(p, "%s: the jobs' '%s' sum is out of range", dir, key);
	*a += b;
	return 0;
}

/* x * scale (usec to ns for fio < 2.99) must stay finite. */
static int scaled(struct parse *p, const char *where, const char *key, double *x, double scale)
{
	if (!isfinite(*x * scale))
		return out_of_range(p, where, key, *x);
	*x *= scale;
	return 0;
}

static int dup_str(const char *s, char **out)
{
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

/* An object of strings ("job options", "global options"); non-strings are written as JSON. */
static int parse_options(struct parse *p, json_object *obj, const char *where, struct stune_kv **out, size_t *n_out)
{
	if (!json_object_is_type(obj, json_type_object))
		return fail(p, "%s is not an object", where);
	size_t n = (size_t)json_object_object_length(obj), k = 0;
	if (n == 0)
		return 0;
	struct stune_kv *kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	json_object_object_foreach(obj, key, val)
	{
		const char *s = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
									   : json_object_to_json_string(val);
		kv[k].key = strdup(key);
		kv[k].value = strdup(s ? s : "");
		if (!kv[k].key || !kv[k++].value) {
			kv_free(kv, k);
			return -ENOMEM;
		}
	}
	*out = kv;
	*n_out = k;
	return 0;
}

struct bin {
	uint64_t v, c;
};

static int cmp_bin(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* json+ bins: {"<value>": count}; values in ns (usec for old fio). 1: unknown layout, ignored. */
static int parse_bins(struct parse *p, json_object *bins, double scale, const char *where, struct stune_hist *h)
{
	if (!json_object_is_type(bins, json_type_object))
		return fail(p, "%s: 'bins' is not an object", where);
	size_t n = (size_t)json_object_object_length(bins), k = 0;
	if (n == 0)
		return 0;
	_cleanup_free_ struct bin *b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	uint64_t total = 0;
	json_object_object_foreach(bins, key, val)
	{
		uint64_t v;
		if (stune_parse_uint64(key, &v) < 0 || !json_object_is_type(val, json_type_int) ||
		    json_object_get_int64(val) < 0) {
			warn(p, "%s: clat bins in an unknown layout (key '%s'), ignored", where, key);
			return 1;
		}
		double ns = (double)v * scale;
		if (!(ns < FIO_INT_LIMIT))
			return fail(p, "%s: clat 'bins' value '%s' is out of range", where, key);
		b[k].v = (uint64_t)ns;
		b[k].c = (uint64_t)json_object_get_int64(val);
		if (total + b[k].c < total || total + b[k].c >= (uint64_t)1 << 63)
			return fail(p, "%s: clat 'bins' counts sum out of range", where);
		total += b[k++].c;
	}
	qsort(b, k, sizeof(*b), cmp_bin);
	h->value_ns = malloc(k * sizeof(uint64_t));
	h->count = malloc(k * sizeof(uint64_t));
	if (!h->value_ns || !h->count) {
		stune_hist_clear(h);
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m > 0 && h->value_ns[m - 1] == b[i].v) {
			h->count[m - 1] += b[i].c;
			continue;
		}
		h->value_ns[m] = b[i].v;
		h->count[m++] = b[i].c;
	}
	h->n = m;
	return 0;
}

/* fallback_samples: the I/O count of the direction, for a clat without "N" (fio 2.x, early 3.x). */
static int parse_lat(struct parse *p, json_object *dir, const char *where, uint64_t fallback_samples,
		     struct stune_lat *lat)
{
	json_object *c;
	double scale = 1;
	if (!json_object_object_get_ex(dir, "clat_ns", &c)) {
		if (!json_object_object_get_ex(dir, "clat", &c))
			return 0; /* no latency: not an error, just unknown */
		scale = 1000;	  /* fio < 2.99: usec */
		p->old_keys = true;
	}
	if (!json_object_is_type(c, json_type_object))
		return fail(p, "%s: clat is not an object", where);
	int r;
	uint64_t n = 0;
	if ((r = get_u64(p, c, "N", where, false, &n)) < 0)
		return r;
	lat->samples = json_object_object_get_ex(c, "N", NULL) ? n : fallback_samples;
	if ((r = get_num(p, c, "min", where, false, &lat->min_ns)) < 0 ||
	    (r = get_num(p, c, "max", where, false, &lat->max_ns)) < 0 ||
	    (r = get_num(p, c, "mean", where, false, &lat->mean_ns)) < 0 ||
	    (r = scaled(p, where, "min", &lat->min_ns, scale)) < 0 ||
	    (r = scaled(p, where, "max", &lat->max_ns, scale)) < 0 ||
	    (r = scaled(p, where, "mean", &lat->mean_ns, scale)) < 0)
		return r;
	/* The jobs' mean is weighted by samples: mean x N must be finite too. */
	if (!isfinite(lat->mean_ns * (double)lat->samples))
		return out_of_range(p, where, "mean", lat->mean_ns);
	if (lat->samples == 0)
		return 0;

	json_object *pct;
	if (json_object_object_get_ex(c, "percentile", &pct) && json_object_is_type(pct, json_type_object)) {
		for (int i = 0; i < STUNE_N_PCT; i++) {
			char key[32];
			json_object *v;
			snprintf(key, sizeof(key), "%f", stune_pct_levels[i]);
			if (json_object_object_get_ex(pct, key, &v) && is_num(v)) {
				double x = json_object_get_double(v);
				if (!(x >= 0 && isfinite(x * scale)))
					return fail(p, "%s: clat percentile '%s' is out of range (%g)", where, key, x);
				lat->pct_set[i] = true;
				lat->pct_ns[i] = x * scale;
				lat->pct_source = STUNE_PCT_FIO;
			}
		}
	}
	json_object *bins;
	if (json_object_object_get_ex(c, "bins", &bins)) {
		r = parse_bins(p, bins, scale, where, &lat->bins);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_io(struct parse *p, json_object *job, enum stune_fio_dir d, const char *jwhere,
		    struct stune_fio_io *io)
{
	json_object *dir;
	char where[256];
	if (!json_object_object_get_ex(job, stune_fio_dir_name(d), &dir))
		return 0;
	snprintf(where, sizeof(where), "%s.%s", jwhere, stune_fio_dir_name(d));
	if (!json_object_is_type(dir, json_type_object))
		return fail(p, "%s is not an object", where);
	int r;
	if ((r = get_u64(p, dir, "io_bytes", where, true, &io->io_bytes)) < 0 ||
	    (r = get_u64(p, dir, "total_ios", where, false, &io->total_ios)) < 0 ||
	    (r = get_num(p, dir, "bw", where, true, &io->bw_kib_s)) < 0 ||
	    (r = get_num(p, dir, "iops", where, true, &io->iops)) < 0 ||
	    (r = get_u64(p, dir, "runtime", where, false, &io->runtime_ms)) < 0)
		return r;
	/* fio 2.x and early 3.x (3.1) write no clat "N": every completed I/O is a sample, so total_ios
	 * is N (fio 2.1, without total_ios: IOPS x runtime, rounded). */
	uint64_t fallback = io->total_ios;
	if (!json_object_object_get_ex(dir, "total_ios", NULL)) {
		double ios = round(io->iops * (double)io->runtime_ms / 1000.0);
		if (!(ios < FIO_INT_LIMIT))
			return fail(p, "%s: 'iops' x 'runtime' (the I/O count) is out of range (%g)", where, ios);
		fallback = (uint64_t)ios;
	}
	if ((r = parse_lat(p, dir, where, fallback, &io->clat)) < 0)
		return r;
	/* fio < 2.99 wrote io_bytes in KiB and had no io_kbytes. */
	if (p->old_keys && !json_object_object_get_ex(dir, "io_kbytes", NULL)) {
		if (io->io_bytes > (UINT64_C(1) << 63) / 1024 - 1)
			return fail(p, "%s: 'io_bytes' (KiB in fio < 2.99) is out of range (%" PRIu64 ")", where,
				    io->io_bytes);
		io->io_bytes *= 1024;
	}
	return 0;
}

static int parse_job(struct parse *p, json_object *job, size_t idx, struct stune_fio_job *j)
{
	char where[128];
	json_object *v;
	int r;

	snprintf(where, sizeof(where), "jobs[%zu]", idx);
	if (!json_object_is_type(job, json_type_object))
		return fail(p, "%s is not an object", where);
	if (!json_object_object_get_ex(job, "jobname", &v) || !json_object_is_type(v, json_type_string))
		return fail(p, "%s: no 'jobname'", where);
	if ((r = dup_str(json_object_get_string(v), &j->name)) < 0)
		return r;
	snprintf(where, sizeof(where), "jobs[%zu] '%.80s'", idx, j->name);
	uint64_t gid = 0;
	if ((r = get_u64(p, job, "groupid", where, false, &gid)) < 0)
		return r;
	j->groupid = (int64_t)gid;
	if (json_object_object_get_ex(job, "error", &v)) {
		if (!json_object_is_type(v, json_type_int))
			return fail(p, "%s: 'error' is not an integer", where);
		j->error = (int)json_object_get_int(v);
	}
	if (json_object_object_get_ex(job, "job options", &v) &&
	    (r = parse_options(p, v, "'job options'", &j->options, &j->n_options)) < 0)
		return r;
	if (!json_object_object_get_ex(job, "read", NULL) && !json_object_object_get_ex(job, "write", NULL))
		return fail(p, "%s: no 'read' or 'write' section", where);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		if ((r = parse_io(p, job, d, where, &j->io[d])) < 0)
			return r;
	return 0;
}

/* Latency over all jobs: exact mean (weighted by samples), exact or labelled percentiles. */
static int total_lat(struct parse *p, struct stune_fio_run *run, enum stune_fio_dir d)
{
	struct stune_lat *t = &run->total[d].clat;
	size_t with_samples = 0, with_bins = 0, last = 0;
	double sum = 0;
	uint64_t binned = 0;
	bool first = true;
	const char *dn = stune_fio_dir_name(d);
	int r;

	for (size_t i = 0; i < run->n_jobs; i++) {
		const struct stune_lat *l = &run->jobs[i].io[d].clat;
		if (l->samples == 0)
			continue;
		with_samples++;
		last = i;
		if (l->bins.n > 0)
			with_bins++;
		if ((r = add_u64(p, "N", dn, &t->samples, l->samples)) < 0 ||
		    (r = add_u64(p, "bins", dn, &binned, stune_hist_total(&l->bins))) < 0 ||
		    (r = add_dbl(p, "mean", dn, &sum, l->mean_ns * (double)l->samples)) < 0)
			return r;
		t->min_ns = first || l->min_ns < t->min_ns ? l->min_ns : t->min_ns;
		t->max_ns = first || l->max_ns > t->max_ns ? l->max_ns : t->max_ns;
		first = false;
	}
	if (with_samples == 0)
		return 0;
	t->mean_ns = sum / (double)t->samples;
	if (with_samples == 1) {
		const struct stune_lat *l = &run->jobs[last].io[d].clat;
		memcpy(t->pct_set, l->pct_set, sizeof(t->pct_set));
		memcpy(t->pct_ns, l->pct_ns, sizeof(t->pct_ns));
		t->pct_source = l->pct_source;
		return 0;
	}
	if (with_bins == with_samples) {
		for (size_t i = 0; i < run->n_jobs; i++) {
			r = stune_hist_merge(&t->bins, &run->jobs[i].io[d].clat.bins);
			if (r < 0)
				return r;
		}
		for (int k = 0; k < STUNE_N_PCT; k++) {
			uint64_t ns;
			t->pct_set[k] = stune_hist_percentile(&t->bins, stune_pct_levels[k], &ns);
			t->pct_ns[k] = (double)ns;
		}
		t->pct_source = STUNE_PCT_BINS;
		return 0;
	}
	/* Without histograms the exact merged percentile is unknowable: the largest per-job value bounds it. */
	for (int k = 0; k < STUNE_N_PCT; k++) {
		bool all = true;
		double mx = 0;
		for (size_t i = 0; i < run->n_jobs; i++) {
			const struct stune_lat *l = &run->jobs[i].io[d].clat;
			if (l->samples == 0)
				continue;
			if (!l->pct_set[k])
				all = false;
			else if (l->pct_ns[k] > mx)
				mx = l->pct_ns[k];
		}
		t->pct_set[k] = all;
		t->pct_ns[k] = all ? mx : 0;
	}
	t->pct_source = STUNE_PCT_MAX_OF_JOBS;
	return 0;
}

static int compute_totals(struct parse *p, struct stune_fio_run *run)
{
	int r;
	for (size_t i = 0; i < run->n_jobs; i++) {
		const struct stune_fio_job *j = &run->jobs[i];
		if (j->error != 0 && run->n_failed++ == 0) {
			run->first_error = j->error;
			run->first_failed_job = i;
		}
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
			struct stune_fio_io *t = &run->total[d];
			const struct stune_fio_io *io = &j->io[d];
			const char *dn = stune_fio_dir_name(d);
			if ((r = add_u64(p, "io_bytes", dn, &t->io_bytes, io->io_bytes)) < 0 ||
			    (r = add_u64(p, "total_ios", dn, &t->total_ios, io->total_ios)) < 0 ||
			    (r = add_dbl(p, "bw", dn, &t->bw_kib_s, io->bw_kib_s)) < 0 ||
			    (r = add_dbl(p, "iops", dn, &t->iops, io->iops)) < 0)
				return r;
			if (io->runtime_ms > t->runtime_ms)
				t->runtime_ms = io->runtime_ms;
			if (io->clat.bins.n > 0)
				run->json_plus = true;
		}
	}
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		if ((r = add_dbl(p, "iops", "read and write", &run->iops, run->total[d].iops)) < 0 ||
		    (r = add_dbl(p, "bw", "read and write", &run->bw_kib_s, run->total[d].bw_kib_s)) < 0 ||
		    (r = total_lat(p, run, (enum stune_fio_dir)d)) < 0)
			return r;
	}
	return 0;
}

static int parse_doc(struct parse *p, json_object *doc, struct stune_fio_run *run)
{
	json_object *v, *jobs;
	int r;

	if (!json_object_is_type(doc, json_type_object))
		return fail(p, "not fio output: the JSON document is not an object");
	if (!json_object_object_get_ex(doc, "jobs", &jobs) || !json_object_is_type(jobs, json_type_array)) {
		if (json_object_object_get_ex(doc, "client_stats", NULL))
			return fail(p, "fio client/server output ('client_stats', fio --client) is not supported: "
				       "run fio on the host itself");
		return fail(p, "not fio output: no 'jobs' array");
	}
	size_t n = json_object_array_length(jobs);
	if (n == 0)
		return fail(p, "fio output without jobs: 'jobs' is empty");
	if (json_object_object_get_ex(doc, "fio version", &v) && json_object_is_type(v, json_type_string) &&
	    (r = dup_str(json_object_get_string(v), &run->fio_version)) < 0)
		return r;
	/* Seconds or ms since 1970, before the year 10000 (ISO 8601's four digits): never negative, and
	 * x 1000 cannot overflow. */
	if (json_object_object_get_ex(doc, "timestamp_ms", &v) && json_object_is_type(v, json_type_int)) {
		run->timestamp_ms = json_object_get_int64(v);
		if (run->timestamp_ms < 0 || run->timestamp_ms >= FIO_YEAR_10000_S * 1000)
			return fail(p, "'timestamp_ms' is out of range (%" PRId64 ")", run->timestamp_ms);
	} else if (json_object_object_get_ex(doc, "timestamp", &v) && json_object_is_type(v, json_type_int)) {
		int64_t sec = json_object_get_int64(v);
		if (sec < 0 || sec >= FIO_YEAR_10000_S)
			return fail(p, "'timestamp' is out of range (%" PRId64 " s)", sec);
		run->timestamp_ms = sec * 1000;
	}
	if (json_object_object_get_ex(doc, "time", &v) && json_object_is_type(v, json_type_string) &&
	    (r = dup_str(json_object_get_string(v), &run->time)) < 0)
		return r;
	if (json_object_object_get_ex(doc, "global options", &v) &&
	    (r = parse_options(p, v, "'global options'", &run->global_options, &run->n_global_options)) < 0)
		return r;

	run->jobs = calloc(n, sizeof(*run->jobs));
	if (!run->jobs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		run->n_jobs = i + 1; /* freed as far as filled */
		if ((r = parse_job(p, json_object_array_get_idx(jobs, i), i, &run->jobs[i])) < 0)
			return r;
	}
	run->old_keys = p->old_keys;
	return compute_totals(p, run);
}

/* Length of the first line of s (at most max), for quoting it in a message. */
static int line_len(const char *s, size_t len, int max)
{
	size_t n = 0;
	while (n < len && s[n] != '\n' && n < (size_t)max)
		n++;
	return (int)n;
}

static size_t skip_space(const char *buf, size_t len, size_t off)
{
	while (off < len && isspace((unsigned char)buf[off]))
		off++;
	return off;
}

static int parse_buf(struct parse *p, const char *buf, size_t len, struct stune_fio_run *run)
{
	int r;

	/* fio prints error lines on stdout before the JSON (fio#731): start at the first line that opens with '{'. */
	size_t start = skip_space(buf, len, 0);
	if (start >= len)
		return fail(p, "empty file, no JSON document");
	if (buf[start] != '{') {
		const char *brace = NULL;
		for (const char *s = buf; (s = memchr(s, '\n', len - (size_t)(s - buf))); s++)
			if (s + 1 < buf + len && s[1] == '{') {
				brace = s + 1;
				break;
			}
		if (!brace)
			return fail(p, "not JSON: no line starts with '{' (begins \"%.*s\")",
				    line_len(buf + start, len - start, 60), buf + start);
		size_t lines = 0;
		for (const char *s = buf; s < brace; s++)
			lines += *s == '\n';
		warn(p, "skipped %zu line%s of text before the JSON document (fio prints errors there): \"%.*s\"",
		     lines, lines == 1 ? "" : "s", line_len(buf + start, len - start, 100), buf + start);
		start = (size_t)(brace - buf);
	}

	/* One document, or several concatenated (--status-interval): the last is the final result. */
	json_object *doc = NULL;
	size_t n_docs = 0, off = start;
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	while (off < len) {
		json_tokener_reset(tok);
		json_object *o = json_tokener_parse_ex(tok, buf + off, (int)(len - off));
		enum json_tokener_error e = json_tokener_get_error(tok);
		if (!o) {
			if (e == json_tokener_continue || e == json_tokener_success)
				r = fail(p, "truncated JSON: the document starting at byte %zu ends early", off);
			else
				r = fail(p, "invalid JSON at byte %zu: %s", off + json_tokener_get_parse_end(tok),
					 json_tokener_error_desc(e));
			json_object_put(doc);
			json_tokener_free(tok);
			return r;
		}
		json_object_put(doc);
		doc = o;
		n_docs++;
		off = skip_space(buf, len, off + json_tokener_get_parse_end(tok));
		if (off < len && buf[off] != '{') {
			warn(p, "text after the JSON document ignored: \"%.*s\"", line_len(buf + off, len - off, 100),
			     buf + off);
			break;
		}
	}
	json_tokener_free(tok);
	if (n_docs > 1)
		warn(p, "%zu concatenated JSON documents (--status-interval?): using the last", n_docs);

	r = parse_doc(p, doc, run);
	json_object_put(doc);
	return r;
}

int stune_fio_parse_buf(struct stune_ctx *ctx, const char *path, const char *buf, size_t len,
			struct stune_fio_run **out, char **err)
{
	struct parse p = {.ctx = ctx, .path = path};

	*err = NULL;
	_cleanup_(stune_fio_run_freep) struct stune_fio_run *run = calloc(1, sizeof(*run));
	if (!run || !(run->path = strdup(path)))
		return -ENOMEM;
	int r = parse_buf(&p, buf, len, run);
	if (r < 0) {
		*err = p.err;
		return r;
	}
	free(p.err);
	*out = steal_pointer(&run);
	return 0;
}

int stune_fio_parse_file(struct stune_ctx *ctx, const char *path, struct stune_fio_run **out, char **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	*err = NULL;
	/* A regular file only: a FIFO would block, /dev/zero never end. */
	int r = stune_read_user_file(path, FIO_MAX_FILE_BYTES, 0, &buf, &len);
	if (r < 0) {
		if (r == -STUNE_ENOTREG || r == -EFBIG) {
			*err = strdup(stune_user_file_strerror(r, FIO_MAX_FILE_BYTES));
			return *err ? r : -ENOMEM;
		}
		return r;
	}
	return stune_fio_parse_buf(ctx, path, buf, len, out, err);
}
