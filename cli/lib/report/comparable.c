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

const char *const stune_sig_keys[STUNE_SIG_N_KEYS] = {"rw", "bs", "iodepth", "numjobs", "ioengine", "direct",
						      "rwmixread"};

/* fio's other spellings of the same option. */
static const char *const sig_alias[STUNE_SIG_N_KEYS] = {"readwrite", "blocksize", NULL, NULL, NULL, NULL, "rwmixwrite"};

/* fio's defaults, so that an unset option and its default compare equal. */
static const char *const sig_default[STUNE_SIG_N_KEYS] = {"read", "4096", "1", "1", NULL, "0", NULL};

/* A size as fio reads it (kb_base 1024: 4k = 4096) in bytes, else the text as is. */
static char *normal_value(size_t key, const char *v)
{
	if (!strcmp(stune_sig_keys[key], "bs")) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		const char *units = "kmgt";
		const char *u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
		if (!errno && end != v && (!*end || (u && (!end[1] || !strcasecmp(end + 1, "b") ||
							     !strcasecmp(end + 1, "i") || !strcasecmp(end + 1, "ib"))))) {
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

int stune_sig_build(const char *fio_version, size_t n_jobs, stune_sig_opt_fn opt, void *data, struct stune_sig *out)
{
	*out = (struct stune_sig){0};
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
	return stune_sig_build(r->fio_version, r->n_jobs, run_opt, (void *)r, out);
}

static char *tuple_text(char *const *t)
{
	char *s = strdup("");
	for (size_t k = 0; s && k < STUNE_SIG_N_KEYS; k++) {
		if (!t[k])
			continue;
		char *n = stune_strdupf("%s%s%s=%s", s, *s ? "," : "", stune_sig_keys[k], t[k]);
		free(s);
		s = n;
	}
	return s;
}

static char *jobs_text(const struct stune_sig *s)
{
	char *out = strdup("");
	for (size_t i = 0; out && i < s->n_jobs; i++) {
		_cleanup_free_ char *t = tuple_text(s->jobs[i]);
		char *n = t ? stune_strdupf("%s%s%s", out, i ? " + " : "", *t ? t : "(no options)") : NULL;
		free(out);
		out = n;
	}
	return out;
}

int stune_sig_diff(const struct stune_sig *a, const struct stune_sig *b, char ***diffs, size_t *n)
{
	int r;
	if (val_cmp(a->fio_version, b->fio_version) &&
	    (r = stune_strv_push(diffs, n,
				 stune_strdupf("fio version %s vs %s", a->fio_version ? a->fio_version : "unknown",
					       b->fio_version ? b->fio_version : "unknown"))) < 0)
		return r;
	if (a->n_jobs == 1 && b->n_jobs == 1) {
		for (size_t k = 0; k < STUNE_SIG_N_KEYS; k++)
			if (val_cmp(a->jobs[0][k], b->jobs[0][k]) &&
			    (r = stune_strv_push(diffs, n,
						 stune_strdupf("%s %s vs %s", stune_sig_keys[k],
							       a->jobs[0][k] ? a->jobs[0][k] : "unset",
							       b->jobs[0][k] ? b->jobs[0][k] : "unset"))) < 0)
				return r;
		return 0;
	}
	bool same = a->n_jobs == b->n_jobs;
	for (size_t i = 0; same && i < a->n_jobs; i++)
		same = !tuple_cmp(a->jobs[i], b->jobs[i]);
	if (same)
		return 0;
	_cleanup_free_ char *ta = jobs_text(a), *tb = jobs_text(b);
	if (!ta || !tb)
		return -ENOMEM;
	return stune_strv_push(diffs, n, stune_strdupf("jobs %s vs %s", ta, tb));
}
