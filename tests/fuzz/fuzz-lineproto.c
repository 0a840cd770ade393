/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line-protocol writer (report --upload), round trip: a run parsed from
 * fuzzed fio output, with fuzzed facts (host, kernel, phase, ...: the input
 * starts with them, NUL-separated and ended by two NULs, when it has two
 * NULs in a row), is encoded; lpreader.c, a strict reader of the InfluxDB
 * line protocol, must read the text back as exactly those tags and fields:
 * a tag value as scsitune's escaping leaves it (a backslash or a control
 * character becomes '_'), every number bit for bit, the timestamp.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "lpreader.h"
#include "report/points.h"

enum { F_HOST, F_KERNEL, F_PHASE, F_MODEL, F_FIRMWARE, F_PAYLOAD, F_PROFILE, F_DIGEST, F_VERIFY, F_SET, F_N };
static const char *const fact_key[F_N] = {"host",    "kernel",	"phase",	  "hba_model",	  "firmware",
					  "payload", "profile", "profile_digest", "verify_state", "set"};

/* The tag value as the writer leaves it: '\\', C0 and DEL as '_'. */
static char *as_written(const char *v)
{
	char *s = strdup(v);
	if (!s)
		abort();
	for (char *p = s; *p; p++)
		if (*p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	return s;
}

static void want_tag(const struct lp_point *p, const char *key, const char *value, size_t *n)
{
	const char *got = lp_tag(p, key);
	if (!value || !*value) {
		fuzz_check(!got, "tag %s='%s' for an empty value", key, got);
		return;
	}
	char *w = as_written(value);
	fuzz_check(got && !strcmp(got, w), "tag %s: '%s' read back, '%s' written", key, got ? got : "(none)", w);
	free(w);
	(*n)++;
}

static void want_float(const struct lp_point *p, const char *key, double v)
{
	int i = lp_field(p, key);
	if (!isfinite(v)) {
		fuzz_check(i < 0, "field %s for a value that is not finite", key);
		return;
	}
	fuzz_check(i >= 0 && p->field_type[i] == LP_FLOAT, "field %s missing or not a float", key);
	fuzz_check(p->field_float[i] == v, "field %s: %.17g read back, %.17g written", key, p->field_float[i], v);
}

static void want_int(const struct lp_point *p, const char *key, int64_t v)
{
	int i = lp_field(p, key);
	fuzz_check(i >= 0 && p->field_type[i] == LP_INT && p->field_int[i] == v, "field %s: want %lld", key,
		   (long long)v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *facts_v[F_N] = {"host-a", "6.1.0", "base", NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	char *facts_buf = NULL;
	const uint8_t *end = memmem(data, size, "\0\0", 2);
	if (end) {
		facts_buf = fuzz_str(data, (size_t)(end - data));
		size_t k = 0;
		for (char *s = facts_buf; k < F_N && s <= facts_buf + (end - data); s += strlen(s) + 1)
			facts_v[k++] = s;
		while (k < F_N)
			facts_v[k++] = NULL;
		size -= (size_t)(end - data) + 2;
		data = end + 2;
	}
	struct stune_fio_run *run = NULL;
	char *err = NULL;
	if (stune_fio_parse_buf(NULL, "dir/fuzz run.json", (const char *)data, size, &run, &err) < 0) {
		free(err);
		free(facts_buf);
		return 0;
	}
	struct stune_lp_facts facts = {.host = facts_v[F_HOST],
				       .kernel = facts_v[F_KERNEL],
				       .phase = facts_v[F_PHASE],
				       .hba_model = facts_v[F_MODEL],
				       .firmware = facts_v[F_FIRMWARE],
				       .payload = facts_v[F_PAYLOAD],
				       .profile = facts_v[F_PROFILE],
				       .profile_digest = facts_v[F_DIGEST],
				       .verify_state = facts_v[F_VERIFY],
				       .set = facts_v[F_SET],
				       .fallback_ms = 1796020732946};
	struct stune_fio_run *runs[2] = {run, run};
	char *text = NULL;
	size_t len = 0;
	fuzz_check(stune_lp_encode(runs, 2, &facts, &text, &len) == 0, "encode");
	/* Two runs, two lines, the same. */
	const char *nl = memchr(text, '\n', len);
	fuzz_check(nl && text[len - 1] == '\n', "lines end in '\\n'");
	size_t l1 = (size_t)(nl - text);
	fuzz_check(len == 2 * (l1 + 1) && !memcmp(text, nl + 1, l1 + 1), "two runs, two equal lines");
	struct lp_point p;
	const char *why = NULL;
	fuzz_check(lp_parse(text, l1, &p, &why) == 0, "not line protocol (%s): %.*s", why, (int)l1, text);
	fuzz_check(!strcmp(p.measurement, STUNE_LP_MEASUREMENT), "measurement %s", p.measurement);

	size_t n_tags = 0;
	for (int k = 0; k < F_N; k++)
		want_tag(&p, fact_key[k], facts_v[k], &n_tags);
	want_tag(&p, "fio_version", run->fio_version, &n_tags);
	want_tag(&p, "file", "fuzz run.json", &n_tags);
	want_tag(&p, "output_format", run->json_plus ? "json+" : "json", &n_tags);
	static const char *const opts[] = {"rw", "bs", "iodepth", "numjobs", "ioengine", "direct"};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		want_tag(&p, opts[k], run->n_jobs ? stune_fio_job_option(run, &run->jobs[0], opts[k]) : NULL, &n_tags);
	fuzz_check(p.n_tags == n_tags, "%zu tags read back, %zu written", p.n_tags, n_tags);

	want_float(&p, "iops", run->iops);
	want_float(&p, "kiops", run->iops / 1000.0);
	want_float(&p, "bw_kib_s", run->bw_kib_s);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		const struct stune_fio_io *io = &run->total[d];
		const char *dn = stune_fio_dir_name(d);
		char key[64];
		snprintf(key, sizeof(key), "%s_iops", dn);
		want_float(&p, key, io->iops);
		snprintf(key, sizeof(key), "%s_bw_kib_s", dn);
		want_float(&p, key, io->bw_kib_s);
		snprintf(key, sizeof(key), "%s_io_bytes", dn);
		want_int(&p, key, (int64_t)io->io_bytes);
		snprintf(key, sizeof(key), "%s_clat_mean_ns", dn);
		if (io->clat.samples)
			want_float(&p, key, io->clat.mean_ns);
		else
			fuzz_check(lp_field(&p, key) < 0, "%s without samples", key);
	}
	want_int(&p, "jobs", (int64_t)run->n_jobs);
	want_int(&p, "errors", (int64_t)run->n_failed);
	fuzz_check(p.timestamp == (run->timestamp_ms > 0 ? run->timestamp_ms : facts.fallback_ms), "timestamp %lld",
		   (long long)p.timestamp);
	for (size_t i = 0; i < p.n_fields; i++)
		fuzz_check(p.field_type[i] != LP_STRING && p.field_type[i] != LP_BOOL, "field %s of another type",
			   p.field_key[i]);
	lp_point_clear(&p);
	free(text);
	stune_fio_run_free(run);
	free(facts_buf);
	return 0;
}
