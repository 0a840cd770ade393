/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/points.h"
#include "report/internal.h"
#include "net/lineproto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tag {
	const char *key, *value;
};

static int tag_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tag *)a)->key, ((const struct tag *)b)->key);
}

static void field_sep(FILE *f, bool *first)
{
	if (!*first)
		fputc(',', f);
	*first = false;
}

static void field_dbl(FILE *f, bool *first, const char *key, double v)
{
	char buf[64];
	if (!isfinite(v))
		return;
	stune_lp_format_double(buf, sizeof(buf), v);
	field_sep(f, first);
	fprintf(f, "%s=%s", key, buf);
}

static void field_int(FILE *f, bool *first, const char *key, int64_t v)
{
	field_sep(f, first);
	fprintf(f, "%s=%" PRId64 "i", key, v);
}

static void fields_lat(FILE *f, bool *first, const char *dir, const struct stune_lat *l)
{
	static const char *const pct[STUNE_N_PCT] = {"p50", "p99", "p99_9"};
	char key[64];
	if (l->samples == 0)
		return;
	snprintf(key, sizeof(key), "%s_clat_mean_ns", dir);
	field_dbl(f, first, key, l->mean_ns);
	for (int k = 0; k < STUNE_N_PCT; k++) {
		if (!l->pct_set[k])
			continue;
		snprintf(key, sizeof(key), "%s_clat_%s_ns", dir, pct[k]);
		field_dbl(f, first, key, l->pct_ns[k]);
	}
}

/* Several devices: the fairness of their IOPS and the worst device's p99 (the reads; no reads: the writes). */
static void fields_devices(FILE *f, bool *first, const struct stune_fio_run *run)
{
	if (run->n_devs < 2)
		return;
	enum stune_fio_dir d = run->total[STUNE_FIO_READ].clat.samples ? STUNE_FIO_READ : STUNE_FIO_WRITE;
	double worst = 0;
	bool all = true;
	for (size_t i = 0; i < run->n_devs; i++) {
		const struct stune_lat *l = &run->devs[i].clat[d];
		all = all && l->pct_set[1]; /* stune_pct_levels[1]: 99 */
		worst = l->pct_set[1] && l->pct_ns[1] > worst ? l->pct_ns[1] : worst;
	}
	field_int(f, first, "devices", (int64_t)run->n_devs);
	field_dbl(f, first, "fairness", run->fairness);
	if (all)
		field_dbl(f, first, "worst_clat_p99_ns", worst);
}

int stune_lp_write_run(FILE *f, const struct stune_fio_run *run, const struct stune_lp_facts *facts)
{
	const struct stune_fio_job *j0 = run->n_jobs > 0 ? &run->jobs[0] : NULL;
	const char *base = run->path ? strrchr(run->path, '/') : NULL;
	base = base ? base + 1 : run->path;
	struct tag tags[24];
	size_t n = 0;
#define TAG(k, v) tags[n++] = (struct tag){k, v}
	TAG("host", facts->host);
	TAG("kernel", facts->kernel);
	TAG("phase", facts->phase);
	TAG("hba_model", facts->hba_model);
	TAG("firmware", facts->firmware);
	TAG("payload", facts->payload);
	TAG("profile", facts->profile);
	TAG("profile_digest", facts->profile_digest);
	TAG("verify_state", facts->verify_state);
	TAG("set", facts->set);
	TAG("fio_version", run->fio_version);
	TAG("file", base);
	TAG("output_format", run->json_plus ? "json+" : "json");
	static const char *const opts[] = {"rw", "bs", "iodepth", "numjobs", "ioengine", "direct"};
	for (size_t i = 0; i < ELEMENTSOF(opts); i++)
		TAG(opts[i], j0 ? stune_fio_job_option(run, j0, opts[i]) : NULL);
#undef TAG
	qsort(tags, n, sizeof(tags[0]), tag_cmp);

	fputs(STUNE_LP_MEASUREMENT, f);
	for (size_t i = 0; i < n; i++) {
		if (!tags[i].value || !*tags[i].value)
			continue;
		fputc(',', f);
		stune_lp_escape_tag(f, tags[i].key);
		fputc('=', f);
		stune_lp_escape_tag(f, tags[i].value);
	}
	fputc(' ', f);

	bool first = true;
	field_dbl(f, &first, "iops", run->iops);
	field_dbl(f, &first, "kiops", run->iops / 1000.0);
	field_dbl(f, &first, "bw_kib_s", run->bw_kib_s);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		const struct stune_fio_io *io = &run->total[d];
		const char *dn = stune_fio_dir_name(d);
		char key[64];
		snprintf(key, sizeof(key), "%s_iops", dn);
		field_dbl(f, &first, key, io->iops);
		snprintf(key, sizeof(key), "%s_bw_kib_s", dn);
		field_dbl(f, &first, key, io->bw_kib_s);
		snprintf(key, sizeof(key), "%s_io_bytes", dn);
		field_int(f, &first, key, (int64_t)io->io_bytes);
		fields_lat(f, &first, dn, &io->clat);
	}
	field_int(f, &first, "jobs", (int64_t)run->n_jobs);
	field_int(f, &first, "errors", (int64_t)run->n_failed);
	fields_devices(f, &first, run);
	int64_t ts = run->timestamp_ms > 0 ? run->timestamp_ms : facts->fallback_ms;
	fprintf(f, " %" PRId64 "\n", ts);
	return ferror(f) ? -EIO : 0;
}

int stune_lp_encode(struct stune_fio_run *const *runs, size_t n, const struct stune_lp_facts *facts, char **out,
		    size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = stune_lp_write_run(f, runs[i], facts);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		free(buf);
		return r;
	}
	*out = buf;
	if (len)
		*len = size;
	return 0;
}
