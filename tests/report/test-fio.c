/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fio JSON parser on real fio outputs (tests/report/fio/, made by
 * make-fio-outputs.sh) and on hand-made bad input.
 * Usage: test-fio FIXTURE_DIR
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "report/fio.h"
#include "../unit/tap.h"

static char last_warning[512];
static unsigned n_warnings;

static void capture(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	(void)data;
	(void)level;
	(void)path;
	n_warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

static struct stune_ctx ctx = {.log_fn = capture};
static const char *dir;

static struct stune_fio_run *load(const char *name)
{
	char path[1024];
	char *err = NULL;
	struct stune_fio_run *r = NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int rc = stune_fio_parse_file(&ctx, path, &r, &err);
	if (rc < 0)
		fprintf(stderr, "%s: %s\n", path, err ? err : strerror(-rc));
	free(err);
	return r;
}

/* Parse a buffer; returns the error message (caller frees) or NULL on success. */
static char *bad(const char *text, int *rc)
{
	struct stune_fio_run *r = NULL;
	char *err = NULL;
	*rc = stune_fio_parse_buf(&ctx, "mem.json", text, strlen(text), &r, &err);
	stune_fio_run_free(r);
	return err;
}

static bool same_lat(const struct stune_lat *a, const struct stune_lat *b)
{
	if (a->samples != b->samples || a->min_ns != b->min_ns || a->max_ns != b->max_ns || a->mean_ns != b->mean_ns ||
	    a->pct_source != b->pct_source || a->bins.n != b->bins.n)
		return false;
	for (int k = 0; k < STUNE_N_PCT; k++)
		if (a->pct_set[k] != b->pct_set[k] || a->pct_ns[k] != b->pct_ns[k])
			return false;
	for (size_t i = 0; i < a->bins.n; i++)
		if (a->bins.value_ns[i] != b->bins.value_ns[i] || a->bins.count[i] != b->bins.count[i])
			return false;
	return true;
}

static bool same_io(const struct stune_fio_io *a, const struct stune_fio_io *b)
{
	return a->io_bytes == b->io_bytes && a->total_ios == b->total_ios && a->bw_kib_s == b->bw_kib_s &&
	       a->iops == b->iops && a->runtime_ms == b->runtime_ms && same_lat(&a->clat, &b->clat);
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_kv(const struct stune_kv *a, size_t na, const struct stune_kv *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!same_str(a[i].key, b[i].key) || !same_str(a[i].value, b[i].value))
			return false;
	return true;
}

/* Every field of two models. */
static bool same_run(const struct stune_fio_run *a, const struct stune_fio_run *b)
{
	if (!a || !b || !same_str(a->fio_version, b->fio_version) || a->timestamp_ms != b->timestamp_ms ||
	    !same_str(a->time, b->time) || a->old_keys != b->old_keys || a->json_plus != b->json_plus ||
	    !same_kv(a->global_options, a->n_global_options, b->global_options, b->n_global_options) ||
	    a->n_jobs != b->n_jobs || a->iops != b->iops || a->bw_kib_s != b->bw_kib_s || a->n_failed != b->n_failed ||
	    a->first_error != b->first_error || a->first_failed_job != b->first_failed_job)
		return false;
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		if (!same_io(&a->total[d], &b->total[d]))
			return false;
	for (size_t i = 0; i < a->n_jobs; i++) {
		const struct stune_fio_job *x = &a->jobs[i], *y = &b->jobs[i];
		if (!same_str(x->name, y->name) || x->groupid != y->groupid || x->error != y->error ||
		    !same_kv(x->options, x->n_options, y->options, y->n_options))
			return false;
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			if (!same_io(&x->io[d], &y->io[d]))
				return false;
	}
	return true;
}

/*
 * The strict tokenizer and json-c (forced) give the same model, warnings and
 * errors. via_json_c: json-c reads it anyway (the tokenizer leaves it).
 */
static void both_ways(const char *name, const char *text, bool via_json_c)
{
	struct stune_fio_run *a = NULL, *b = NULL;
	char *ea = NULL, *eb = NULL;
	size_t len = strlen(text);
	unsigned long before = stune_fio_json_c_reads();
	n_warnings = 0;
	int ra = stune_fio_parse_buf(&ctx, name, text, len, &a, &ea);
	unsigned wa = n_warnings;
	CHECK((stune_fio_json_c_reads() > before) == via_json_c);
	if ((stune_fio_json_c_reads() > before) != via_json_c)
		fprintf(stderr, "  %s: %s json-c\n", name, via_json_c ? "not read by" : "read by");
	stune_fio_force_json_c(true);
	n_warnings = 0;
	int rb = stune_fio_parse_buf(&ctx, name, text, len, &b, &eb);
	stune_fio_force_json_c(false);
	CHECK(ra == rb && wa == n_warnings && same_str(ea, eb));
	if (ra == 0)
		CHECK(same_run(a, b));
	if (ra != rb || wa != n_warnings || !same_str(ea, eb) || (ra == 0 && !same_run(a, b)))
		fprintf(stderr, "  %s: tokenizer and json-c differ (%d/%d, %u/%u warnings, '%s'/'%s')\n", name, ra, rb,
			wa, n_warnings, ea ? ea : "", eb ? eb : "");
	stune_fio_run_free(a);
	stune_fio_run_free(b);
	free(ea);
	free(eb);
}

static char *slurp(const char *name)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[65536];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	fclose(m);
	return buf;
}

static bool contains(const char *s, const char *sub)
{
	return s && strstr(s, sub);
}

int main(int argc, char **argv)
{
	struct stune_fio_run *r;
	int rc;
	char *e;

	if (argc != 2) {
		fprintf(stderr, "usage: test-fio FIXTURE_DIR\n");
		return 2;
	}
	dir = argv[1];

	/* numjobs=2 without group_reporting: two entries named "rr", summed. */
	CHECK((r = load("fio-3.33-randread-2jobs-json.json")) != NULL);
	if (r) {
		CHECK_STR(r->fio_version, "fio-3.33");
		CHECK(r->n_jobs == 2);
		CHECK_STR(r->jobs[0].name, "rr");
		CHECK_STR(r->jobs[1].name, "rr");
		CHECK(r->timestamp_ms > 0 && r->time);
		CHECK(!r->json_plus && !r->old_keys && r->n_failed == 0);
		double sum = r->jobs[0].io[STUNE_FIO_READ].iops + r->jobs[1].io[STUNE_FIO_READ].iops;
		CHECK(r->iops > 0 && fabs(r->iops - sum) < 1e-6);
		CHECK(r->total[STUNE_FIO_READ].io_bytes ==
		      r->jobs[0].io[STUNE_FIO_READ].io_bytes + r->jobs[1].io[STUNE_FIO_READ].io_bytes);
		CHECK(r->total[STUNE_FIO_WRITE].iops == 0);
		/* No bins: the merged percentile is the largest per-job one, and labelled so. */
		const struct stune_lat *t = &r->total[STUNE_FIO_READ].clat;
		CHECK(t->pct_source == STUNE_PCT_MAX_OF_JOBS);
		CHECK(t->pct_set[2] &&
		      t->pct_ns[2] == fmax(r->jobs[0].io[0].clat.pct_ns[2], r->jobs[1].io[0].clat.pct_ns[2]));
		/* The mean is exact: weighted by samples. */
		const struct stune_lat *a = &r->jobs[0].io[0].clat, *b = &r->jobs[1].io[0].clat;
		CHECK(t->samples == a->samples + b->samples);
		CHECK(fabs(t->mean_ns - (a->mean_ns * a->samples + b->mean_ns * b->samples) / t->samples) < 1e-6);
		CHECK_STR(stune_fio_job_option(r, &r->jobs[0], "rw"), "randread");
		stune_fio_run_free(r);
	}

	/* json+: bins merged exactly. */
	CHECK((r = load("fio-3.33-randread-2jobs-jsonplus.json")) != NULL);
	if (r) {
		CHECK(r->json_plus && r->n_jobs == 2);
		const struct stune_lat *t = &r->total[STUNE_FIO_READ].clat;
		CHECK(t->pct_source == STUNE_PCT_BINS);
		CHECK(stune_hist_total(&t->bins) == t->samples);
		/* The merged p50 lies between the two jobs' p50. */
		double p0 = r->jobs[0].io[0].clat.pct_ns[0], p1 = r->jobs[1].io[0].clat.pct_ns[0];
		CHECK(t->pct_ns[0] >= fmin(p0, p1) && t->pct_ns[0] <= fmax(p0, p1));
		stune_fio_run_free(r);
	}

	/* One job: the percentiles computed from its bins are fio's own (same rule). */
	CHECK((r = load("fio-3.33-randread-1job-jsonplus.json")) != NULL);
	if (r) {
		const struct stune_lat *l = &r->jobs[0].io[STUNE_FIO_READ].clat;
		CHECK(r->n_jobs == 1 && l->bins.n > 0 && stune_hist_total(&l->bins) == l->samples);
		CHECK(r->total[STUNE_FIO_READ].clat.pct_source == STUNE_PCT_FIO);
		for (int k = 0; k < STUNE_N_PCT; k++) {
			uint64_t ns = 0;
			CHECK(stune_hist_percentile(&l->bins, stune_pct_levels[k], &ns));
			CHECK(l->pct_set[k] && (double)ns == l->pct_ns[k]);
		}
		stune_fio_run_free(r);
	}

	/* A job file with [global]: options inherited; a mixed job adds write IOPS. */
	CHECK((r = load("fio-3.33-global-mixed-json.json")) != NULL);
	if (r) {
		CHECK(r->n_jobs == 2 && r->n_global_options > 0);
		CHECK_STR(r->jobs[0].name, "reader");
		CHECK_STR(r->jobs[1].name, "mixer");
		CHECK_STR(stune_fio_job_option(r, &r->jobs[1], "ioengine"), "psync");
		CHECK_STR(stune_fio_job_option(r, &r->jobs[1], "rw"), "randrw");
		CHECK(r->total[STUNE_FIO_WRITE].iops > 0);
		CHECK(fabs(r->iops - r->total[0].iops - r->total[1].iops) < 1e-6);
		/* Only "mixer" writes: its percentiles are fio's own. */
		CHECK(r->total[STUNE_FIO_WRITE].clat.pct_source == STUNE_PCT_FIO);
		stune_fio_run_free(r);
	}

	/* Error text on stdout before the JSON: skipped with a warning; the job's error is kept. */
	n_warnings = 0;
	CHECK((r = load("fio-3.33-enospc-stdout-json.json")) != NULL);
	CHECK(n_warnings == 1 && contains(last_warning, "skipped 1 line of text") &&
	      contains(last_warning, "No space left on device"));
	if (r) {
		CHECK(r->n_failed == 1 && r->first_error == ENOSPC && r->first_failed_job == 0);
		stune_fio_run_free(r);
	}

	/* Bad input: -EINVAL (-ENOMSG: no fio document at all) and a one-line reason. */
	e = bad("{\"fio version\": \"fio-3.33\", \"jobs\": [", &rc);
	CHECK(rc == -ENOMSG && contains(e, "truncated JSON") && !strchr(e, '\n'));
	free(e);
	e = bad("hello world\nnot json\n", &rc);
	CHECK(rc == -ENOMSG && contains(e, "not JSON: no line starts with '{'"));
	free(e);
	e = bad("{\"a\": 1}", &rc);
	CHECK(rc == -ENOMSG && contains(e, "not fio output: no 'jobs' array"));
	free(e);
	e = bad("[1, 2]", &rc);
	CHECK(rc == -ENOMSG && contains(e, "not JSON"));
	free(e);
	e = bad("{\"jobs\": [ }", &rc);
	CHECK(rc == -ENOMSG && contains(e, "invalid JSON at byte"));
	free(e);
	e = bad("{\"jobs\": []}", &rc);
	CHECK(rc == -EINVAL && contains(e, "'jobs' is empty"));
	free(e);
	e = bad("{\"jobs\": [{\"jobname\": \"x\"}]}", &rc);
	CHECK(rc == -EINVAL && contains(e, "no 'read' or 'write'"));
	free(e);
	e = bad("{\"jobs\": [{\"jobname\": \"x\", \"read\": {\"io_bytes\": 1, \"bw\": \"fast\", \"iops\": 1}}]}", &rc);
	CHECK(rc == -EINVAL && contains(e, "jobs[0] 'x'.read: 'bw' is not a number"));
	free(e);
	e = bad("{\"fio version\": \"fio-2.6\", \"client_stats\": [{\"jobname\": \"All clients\"}]}", &rc);
	CHECK(rc == -EINVAL && contains(e, "fio client/server output ('client_stats', fio --client) is not supported"));
	free(e);
	e = bad("", &rc);
	CHECK(rc == -ENOMSG && contains(e, "empty file"));
	free(e);

	/* fio 2.x key names: clat in usec, io_bytes in KiB. */
	const char *old =
	    "{\"fio version\": \"fio-2.2.10\", \"timestamp\": 1500000000, \"jobs\": [{\"jobname\": \"o\","
	    " \"error\": 0, \"read\": {\"io_bytes\": 4, \"bw\": 4, \"iops\": 1000, \"runtime\": 1000,"
	    " \"clat\": {\"min\": 1, \"max\": 9, \"mean\": 2.5, \"N\": 1000, \"percentile\": {\"50.000000\": 2,"
	    " \"99.000000\": 8, \"99.900000\": 9}}}}]}";
	struct stune_fio_run *o = NULL;
	CHECK(stune_fio_parse_buf(&ctx, "old.json", old, strlen(old), &o, &e) == 0);
	if (o) {
		CHECK(o->old_keys && o->timestamp_ms == 1500000000000LL);
		CHECK(o->total[0].io_bytes == 4096);
		CHECK(o->total[0].clat.mean_ns == 2500 && o->total[0].clat.pct_ns[1] == 8000);
		stune_fio_run_free(o);
	}

	/* Real outputs of older fio (sources in fio/SOURCES.md). fio 3.1: nanosecond keys, no clat "N"
	 * (samples = total_ios). */
	n_warnings = 0;
	CHECK((r = load("fio-3.1-randread-1job-json.json")) != NULL);
	if (r) {
		const struct stune_lat *l = &r->total[STUNE_FIO_READ].clat;
		CHECK(!r->old_keys && !r->json_plus && r->n_jobs == 1 && r->timestamp_ms == 1564907970022LL);
		CHECK(strcmp(r->fio_version, "fio-3.1") == 0);
		CHECK(fabs(r->iops - 6614.073099) < 1e-6 && r->total[STUNE_FIO_READ].io_bytes == 1625501696ULL);
		CHECK(l->samples == 396851 && fabs(l->mean_ns - 135557.025488) < 1e-6);
		CHECK(l->pct_source == STUNE_PCT_FIO && l->pct_ns[0] == 134144 && l->pct_ns[1] == 142336 &&
		      l->pct_ns[2] == 464896);
		CHECK(r->total[STUNE_FIO_WRITE].clat.samples == 0);
		stune_fio_run_free(r);
	}
	/* fio 2.17: clat in usec, io_bytes in KiB, two groups (randread, randwrite), total_ios. */
	CHECK((r = load("fio-2.17-randread-randwrite-2groups-json.json")) != NULL);
	if (r) {
		const struct stune_lat *rd = &r->total[STUNE_FIO_READ].clat, *wr = &r->total[STUNE_FIO_WRITE].clat;
		CHECK(r->old_keys && r->n_jobs == 2 && r->timestamp_ms == 1506559552257LL);
		CHECK(fabs(r->iops - (8086.673998 + 2457.017193)) < 1e-6);
		CHECK(r->total[STUNE_FIO_READ].io_bytes == 1294256ULL * 1024 &&
		      r->total[STUNE_FIO_WRITE].io_bytes == 393280ULL * 1024);
		CHECK(rd->samples == 80891 && fabs(rd->mean_ns - 238357.679) < 1e-3 && rd->pct_ns[0] == 96000 &&
		      rd->pct_ns[2] == 1896000 && rd->pct_source == STUNE_PCT_FIO);
		CHECK(wr->samples == 24580 && fabs(wr->mean_ns - 800193.694) < 1e-3 && wr->pct_ns[1] == 2384000);
		stune_fio_run_free(r);
	}
	/* fio 2.1.4: no timestamp, no total_ios (samples = IOPS x runtime), five groups. */
	CHECK((r = load("fio-2.1.4-5groups-json.json")) != NULL);
	if (r) {
		const struct stune_lat *rd = &r->total[STUNE_FIO_READ].clat;
		CHECK(r->old_keys && r->n_jobs == 5 && r->timestamp_ms == 0 && r->n_failed == 0);
		CHECK(r->iops == 893 + 1743 && r->bw_kib_s == 68118 + 129836 + 6443 + 1269 + 1292);
		CHECK(r->total[STUNE_FIO_READ].io_bytes == (361984ULL + 36244 + 36244) * 1024);
		/* 253 x 2.788 s = 705, 317 x 28.540 s = 9047, 323 x 28.045 s = 9059 */
		CHECK(rd->samples == 705 + 9047 + 9059);
		double mean = (705 * 250667.06 + 9047 * 3117.62 + 9059 * 198030.44) / 18811 * 1000;
		CHECK(fabs(rd->mean_ns - mean) < 1e-3);
		CHECK(rd->pct_source == STUNE_PCT_MAX_OF_JOBS && rd->pct_ns[1] == 473088000);
		stune_fio_run_free(r);
	}
	CHECK(n_warnings == 0);

	/* --status-interval: concatenated documents, the last one counts, with a warning. */
	const char *two = "{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": 1, \"bw\": 1, \"iops\": 1}}]}\n"
			  "{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": 2, \"bw\": 2, \"iops\": 2}}]}\n";
	n_warnings = 0;
	CHECK(stune_fio_parse_buf(&ctx, "two.json", two, strlen(two), &o, &e) == 0);
	CHECK(n_warnings == 1 && contains(last_warning, "2 concatenated JSON documents"));
	if (o) {
		CHECK(o->iops == 2);
		stune_fio_run_free(o);
	}

	/* The tokenizer (what fio writes) and json-c give one model: every real output (fio 2.17
	 * repeats "filename" in its global options: json-c keeps one, so json-c reads that file)... */
	static const struct {
		const char *name;
		bool via_json_c;
	} files[] = {
	    {"fio-2.1.4-5groups-json.json", false},	  {"fio-2.17-randread-randwrite-2groups-json.json", true},
	    {"fio-3.1-randread-1job-json.json", false},	  {"fio-3.33-enospc-stdout-json.json", false},
	    {"fio-3.33-global-mixed-json.json", false},	  {"fio-3.33-randread-1job-jsonplus.json", false},
	    {"fio-3.33-randread-2jobs-json.json", false}, {"fio-3.33-randread-2jobs-jsonplus.json", false},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = slurp(files[i].name);
		CHECK(text != NULL);
		if (text)
			both_ways(files[i].name, text, files[i].via_json_c);
		free(text);
	}
	/* ...and what the tokenizer leaves to json-c: \u escapes, several documents, text after, a
	 * key twice where order counts (options, bins), bins out of order, an option that is an
	 * object, a number beyond int64, a leading zero, NaN, deep nesting, bad JSON. */
#define JOB(x) "{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": 1, \"bw\": 1, \"iops\": 1" x "}}]}"
	static const struct {
		const char *text;
		bool via_json_c;
	} docs[] = {
	    {JOB(""), false},
	    {"{\"fio version\": \"fio-3\\n\\\"x\\\"\\/\\t\", \"jobs\": [{\"jobname\": \"a\\\\b\", \"read\": "
	     "{\"io_bytes\": 1, \"bw\": 1e2, \"iops\": -0}}]}",
	     false},
	    {JOB(", \"clat_ns\": {\"N\": 3, \"min\": 1, \"max\": 3.5, \"mean\": 2, \"bins\": {\"1\": 1, \"2\": 1, "
		 "\"3\": 1}}"),
	     false},
	    {JOB(", \"clat_ns\": {\"N\": 2, \"mean\": 2, \"bins\": {\"2\": 1, \"1\": 1}}"), true},
	    {JOB(", \"clat_ns\": {\"N\": 2, \"mean\": 2, \"bins\": {\"2\": 1, \"2\": 7}}"), true},
	    {JOB(", \"clat_ns\": {\"N\": 2, \"mean\": 2, \"bins\": {\"0x2\": 1, \"3\": 7}}"), false},
	    {JOB(", \"clat_ns\": {\"N\": 2, \"mean\": 2, \"bins\": {\"x\": 1}}"), false},
	    {JOB(", \"clat_ns\": {\"N\": null, \"mean\": 2}"), false},
	    {"{\"global options\": {\"rw\": \"read\", \"bs\": 4096, \"x\": 1.50, \"y\": true, \"z\": null}, \"jobs\": "
	     "[{\"jobname\": \"a\", \"read\": {\"io_bytes\": 1, \"bw\": 1, \"iops\": 1}}]}",
	     false},
	    {"{\"global options\": {\"rw\": \"read\", \"rw\": \"write\"}, \"jobs\": [{\"jobname\": \"a\", \"read\": "
	     "{\"io_bytes\": 1, \"bw\": 1, \"iops\": 1}}]}",
	     true},
	    {"{\"global options\": {\"o\": {\"k\": [1, 2]}}, \"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": "
	     "1, \"bw\": 1, \"iops\": 1}}]}",
	     true},
	    {"{\"jobs\": [{\"jobname\": \"\\u00e9\", \"read\": {\"io_bytes\": 1, \"bw\": 1, \"iops\": 1}}]}", true},
	    {JOB(", \"runtime\": 99999999999999999999"), true},
	    {JOB(", \"runtime\": 012"), true},
	    {JOB(", \"runtime\": NaN"), true},
	    {"{\"jobs\": [{\"jobname\": \"a\", \"error\": 99999999999, \"read\": {\"io_bytes\": 1, \"bw\": 1, "
	     "\"iops\": 1, \"iops\": 5}}]}",
	     false},
	    {JOB("") "\n" JOB(""), true},
	    {JOB("") "\ntrailing words\n", true},
	    {"{\"a\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], \"jobs\": []}", true},
	    {"{\"jobs\": [{\"jobname\": \"a\", \"read\": {\"io_bytes\": 1, \"bw\": 1, \"iops\": 1}}}", true},
	    {"{\"jobs\": [{\"jobname\": \"a\" \"read\": 1}]}", true},
	    {"{\"jobs\": 5}", false},
	};
#undef JOB
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "doc%zu.json", i);
		both_ways(name, docs[i].text, docs[i].via_json_c);
	}

	/* Missing file and directory: -errno, no message. */
	e = NULL;
	CHECK(stune_fio_parse_file(&ctx, "/nonexistent/x.json", &o, &e) == -ENOENT && !e);
	CHECK(stune_fio_parse_file(&ctx, dir, &o, &e) == -EISDIR && !e);

	TAP_END();
}
