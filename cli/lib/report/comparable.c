/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/comparable.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strv.h"
#include "report/fio.h"

const char *const stune_sig_keys[STUNE_SIG_N_KEYS] = {"rw",	"bs",	     "iodepth", "numjobs", "ioengine",
						      "direct", "rwmixread", "size",	"runtime"};

/* fio's other spellings of the same option. */
static const char *const sig_alias[STUNE_SIG_N_KEYS] = {"readwrite", "blocksize", NULL, NULL,	  NULL,
							NULL,	     NULL,	  NULL, "timeout"};

/* fio's defaults, so that an unset option and its default compare equal. */
static const char *const sig_default[STUNE_SIG_N_KEYS] = {"read", "4096", "1", "1", NULL, "0", NULL, NULL, NULL};

/* A size as fio reads it (kb_base 1024: 4k = 4096) in bytes, else the text as is. */
static char *normal_value(size_t key, const char *v)
{
	if (!strcmp(stune_sig_keys[key], "bs") || !strcmp(stune_sig_keys[key], "size")) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		const char *units = "kmgt";
		const char *u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
		if (!errno && end != v &&
		    (!*end || (u && (!end[1] || !strcasecmp(end + 1, "b") || !strcasecmp(end + 1, "i") ||
				     !strcasecmp(end + 1, "ib"))))) {
			for (const char *p = units; u && p <= u; p++)
				n *= 1024;
			return stune_strdupf("%llu", n);
		}
	}
	return strdup(v);
}

static void tuple_free(char **t)
{
	if (!t)
		return;
	for (size_t k = 0; k < STUNE_SIG_N_KEYS; k++)
		free(t[k]);
	free(t);
}

void stune_sig_clear(struct stune_sig *s)
{
	free(s->fio_version);
	for (size_t i = 0; i < s->n_jobs; i++)
		tuple_free(s->jobs[i]);
	free(s->jobs);
	*s = (struct stune_sig){0};
}

static int val_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int tuple_cmp(char *const *a, char *const *b)
{
	for (size_t k = 0; k < STUNE_SIG_N_KEYS; k++) {
		int c = val_cmp(a[k], b[k]);
		if (c)
			return c;
	}
	return 0;
}

static int tuple_qcmp(const void *a, const void *b)
{
	return tuple_cmp(*(char **const *)a, *(char **const *)b);
}

int stune_sig_build(const char *fio_version, size_t n_jobs, bool options_known, stune_sig_opt_fn opt, void *data,
		    struct stune_sig *out)
{
	*out = (struct stune_sig){.options_known = options_known};
	if (!options_known)
		n_jobs = 0;
	if (fio_version && !(out->fio_version = strdup(fio_version)))
		return -ENOMEM;
	if (!(out->jobs = calloc(n_jobs ? n_jobs : 1, sizeof(*out->jobs))))
		goto nomem;
	for (size_t i = 0; i < n_jobs; i++) {
		char **t = calloc(STUNE_SIG_N_KEYS, sizeof(*t));
		if (!t)
			goto nomem;
		for (size_t k = 0; k < STUNE_SIG_N_KEYS; k++) {
			const char *v = opt(data, i, stune_sig_keys[k]);
			if (!v && sig_alias[k])
				v = opt(data, i, sig_alias[k]);
			if (!v)
				v = sig_default[k];
			if (v && !(t[k] = normal_value(k, v))) {
				tuple_free(t);
				goto nomem;
			}
		}
		bool seen = false;
		for (size_t j = 0; j < out->n_jobs && !seen; j++)
			seen = !tuple_cmp(out->jobs[j], t);
		if (seen)
			tuple_free(t);
		else
			out->jobs[out->n_jobs++] = t;
	}
	qsort(out->jobs, out->n_jobs, sizeof(*out->jobs), tuple_qcmp);
	return 0;
nomem:
	stune_sig_clear(out);
	return -ENOMEM;
}

static const char *run_opt(void *data, size_t job, const char *key)
{
	const struct stune_fio_run *r = data;
	return stune_fio_job_option(r, &r->jobs[job], key);
}

int stune_sig_of_run(const struct stune_fio_run *r, struct stune_sig *out)
{
	bool known = r->n_global_options > 0;
	for (size_t i = 0; i < r->n_jobs && !known; i++)
		known = r->jobs[i].n_options > 0;
	return stune_sig_build(r->fio_version, r->n_jobs, known, run_opt, (void *)r, out);
}

/* The value every job of s has for key k, else NULL through *uniform false. */
static const char *uniform_value(const struct stune_sig *s, size_t k, bool *uniform)
{
	*uniform = s->n_jobs > 0;
	for (size_t i = 1; i < s->n_jobs && *uniform; i++)
		*uniform = !val_cmp(s->jobs[i][k], s->jobs[0][k]);
	return *uniform ? s->jobs[0][k] : NULL;
}

/* "2 (randread, randrw)": the distinct jobs, by their rw. */
static char *jobs_text(const struct stune_sig *s)
{
	char *out = stune_strdupf("%zu (", s->n_jobs);
	for (size_t i = 0; out && i < s->n_jobs; i++) {
		char *n = stune_strdupf("%s%s%s", out, i ? ", " : "", s->jobs[i][0] ? s->jobs[i][0] : "?");
		free(out);
		out = n;
	}
	char *n = out ? stune_strdupf("%s)", out) : NULL;
	free(out);
	return n;
}

int stune_sig_diff(const struct stune_sig *a, const struct stune_sig *b, char ***diffs, size_t *n)
{
	int r;
	/* Compared where both are known. */
	if (a->fio_version && b->fio_version && strcmp(a->fio_version, b->fio_version) &&
	    (r = stune_strv_push(diffs, n, stune_strdupf("fio version %s vs %s", a->fio_version, b->fio_version))) < 0)
		return r;
	if (!a->options_known || !b->options_known)
		return 0;
	/* An option every job has, with another value on each side: "bs 4096 vs 8192". */
	size_t before = *n;
	for (size_t k = 0; k < STUNE_SIG_N_KEYS; k++) {
		bool ua, ub;
		const char *va = uniform_value(a, k, &ua), *vb = uniform_value(b, k, &ub);
		if (ua && ub && val_cmp(va, vb) &&
		    (r = stune_strv_push(
			 diffs, n,
			 stune_strdupf("%s %s vs %s", stune_sig_keys[k], va ? va : "unset", vb ? vb : "unset"))) < 0)
			return r;
	}
	/* Other jobs, or jobs that differ in what not all of them share: their count and kinds. */
	bool same = a->n_jobs == b->n_jobs;
	for (size_t i = 0; same && i < a->n_jobs; i++)
		same = !tuple_cmp(a->jobs[i], b->jobs[i]);
	if (same || (a->n_jobs == b->n_jobs && *n > before))
		return 0;
	_cleanup_free_ char *ta = jobs_text(a), *tb = jobs_text(b);
	if (!ta || !tb)
		return -ENOMEM;
	return stune_strv_push(diffs, n, stune_strdupf("jobs %s vs %s", ta, tb));
}
