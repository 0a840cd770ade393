/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/session.h"
#include "report/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/strv.h"
#include "report/fio.h"
#include "report/lineproto.h"
#include "report/resultset.h"
#include "report/upload.h"

void stune_report_set_clear(struct stune_report_set *s)
{
	for (size_t i = 0; s->runs && i < s->n_runs; i++)
		stune_fio_run_free(s->runs[i]);
	free(s->runs);
	free(s->kiops);
	s->runs = NULL;
	s->kiops = NULL;
	s->n_runs = 0;
}

static void report_bad(void (*bad)(void *, const char *), void *data, const char *fmt, ...) _printf_(3, 4);
static void report_bad(void (*bad)(void *, const char *), void *data, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (bad)
		bad(data, msg ? msg : "out of memory");
}

int stune_report_ingest(struct stune_ctx *ctx, char *const *files, size_t n, struct stune_report_set *s,
			void (*bad)(void *data, const char *msg), void *data)
{
	s->runs = calloc(n ? n : 1, sizeof(*s->runs));
	if (!s->runs)
		return -ENOMEM;
	s->n_runs = n;
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *err = NULL;
		int r = stune_fio_parse_file(ctx, files[i], &s->runs[i], &err);
		if (r < 0) {
			report_bad(bad, data, "%s: %s", files[i], err ? err : strerror(-r));
			ok = false;
			continue;
		}
		const struct stune_fio_run *run = s->runs[i];
		if (run->n_failed > 0) {
			const struct stune_fio_job *j = &run->jobs[run->first_failed_job];
			report_bad(bad, data, "%s: fio job %zu '%s' failed with error %d (%s)%s", files[i],
				   run->first_failed_job, j->name, j->error, strerror(j->error),
				   run->n_failed > 1 ? ", and more jobs failed" : "");
			ok = false;
		}
	}
	return ok ? 0 : -EINVAL;
}

int stune_report_set_stats(struct stune_report_set *s)
{
	free(s->kiops);
	s->kiops = calloc(s->n_runs ? s->n_runs : 1, sizeof(double));
	if (!s->kiops)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_runs; i++)
		s->kiops[i] = s->runs[i]->iops / 1000.0;
	return stune_stats_compute(s->kiops, s->n_runs, &s->stats);
}

bool stune_report_is_file_arg(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

int stune_report_reference(const char *state_dir, const char *compare, const struct stune_report_set *s,
			   struct stune_saved_set **ref, struct stune_report_compare *c, char **err)
{
	_cleanup_free_ char *path = NULL, *lerr = NULL;
	int r;
	*c = (struct stune_report_compare){.cur_label = s->phase ? s->phase : "this set"};
	if (stune_report_is_file_arg(compare)) {
		if (!(path = strdup(compare)))
			return stune_errf(err, -ENOMEM, "out of memory");
	} else {
		r = stune_resultset_find(state_dir, compare, &path);
		if (r == -ENOENT)
			return stune_errf(err, r, "--compare %s: no saved result set for phase '%s' in %s/reports/%s",
					  compare, compare, state_dir, compare);
		if (r < 0)
			return stune_errf(err, r, "--compare %s: %s/reports/%s: %s", compare, state_dir, compare,
					  strerror(-r));
	}
	r = stune_saved_set_load(path, ref, &lerr);
	if (r < 0)
		return stune_errf(err, r, "--compare %s: %s: %s", compare, path, lerr ? lerr : strerror(-r));
	if ((r = stune_stats_compute((*ref)->kiops, (*ref)->n, &c->ref)) < 0 ||
	    (r = stune_stats_compare(&c->ref, &s->stats, &c->cmp)) < 0)
		return stune_errf(err, r, "--compare %s: %s: reference has no usable runs", compare, (*ref)->path);
	c->ref_label = (*ref)->phase ? (*ref)->phase : (*ref)->path;
	c->ref_source = (*ref)->path;
	return 0;
}

int64_t stune_report_set_start_ms(const struct stune_report_set *s)
{
	int64_t start = 0;
	for (size_t i = 0; i < s->n_runs; i++)
		if (s->runs[i]->timestamp_ms > 0 && (start == 0 || s->runs[i]->timestamp_ms < start))
			start = s->runs[i]->timestamp_ms;
	if (start == 0) /* no run says when it started: name the set after now */
		start = (int64_t)time(NULL) * 1000;
	return start;
}

int stune_report_save(const char *state_dir, const struct stune_report_set *s, const char *doc, char **saved)
{
	_cleanup_free_ char *name = NULL;
	int r = stune_resultset_name(stune_report_set_start_ms(s), &name);
	if (r < 0)
		return r;
	return stune_resultset_save(state_dir, s->phase, name, doc, saved);
}

int stune_report_spool(const char *state_dir, const struct stune_report_set *s, int64_t now_ms, char **path)
{
	struct utsname u;
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	bool have_uname = uname(&u) == 0;
	_cleanup_free_ char *set = NULL;
	int r = stune_resultset_name(stune_report_set_start_ms(s), &set);
	if (r < 0)
		return r;
	set[strlen(set) - 5] = '\0'; /* the saved set's name without ".json" */
	struct stune_lp_facts facts = {.host = host,
				       .kernel = have_uname ? u.release : NULL,
				       .phase = s->phase,
				       .set = set,
				       .fallback_ms = now_ms};
	const struct stune_provenance *p = s->prov;
	if (p) { /* report --run, --host-facts: what detect saw (the --sysroot tree's, under --sysroot) */
		if (p->host)
			facts.host = p->host;
		if (p->kernel)
			facts.kernel = p->kernel;
		facts.hba_model = p->hba_model;
		facts.firmware = p->hba_firmware;
		facts.payload = p->payload_version;
		facts.profile = p->profile;
		facts.profile_digest = p->profile_digest;
		facts.verify_state = p->profile_verify_state;
	}
	_cleanup_free_ char *lines = NULL;
	size_t len = 0;
	r = stune_lp_encode(s->runs, s->n_runs, &facts, &lines, &len);
	if (r < 0)
		return r;
	return stune_spool_add(state_dir, lines, len, path);
}

void stune_flush_result_clear(struct stune_flush_result *r)
{
	free(r->err);
	*r = (struct stune_flush_result){0};
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/* One batch, up to 3 tries while the failure is retryable. */
static int send_batch(const struct stune_upload *u, const char *body, size_t len, const struct stune_flush_cb *cb,
		      char **err)
{
	int r = 0;
	for (int t = 0; t < 3; t++) {
		free(*err);
		*err = NULL;
		r = stune_upload_send(u, body, len, err);
		if (r != -EAGAIN || t == 2)
			break;
		if (cb && cb->retry)
			cb->retry(cb->data, *err ? *err : strerror(-r), 1u << t);
		sleep(1u << t);
	}
	return r;
}

int stune_report_flush(const char *state_dir, const struct stune_upload *u, const struct stune_flush_cb *cb,
		       struct stune_flush_result *res)
{
	char **paths = NULL;
	size_t n = 0;
	*res = (struct stune_flush_result){0};
	int r = stune_spool_list(state_dir, &paths, &n);
	if (r < 0)
		return stune_errf(&res->err, r, "--state-dir %s: reading %s/spool: %s", state_dir, state_dir,
				  strerror(-r));
	res->batches = n;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *body = NULL;
		size_t len = 0;
		if ((r = stune_spool_read(paths[i], &body, &len)) < 0) {
			stune_errf(&res->err, r, "%s: %s", paths[i], strerror(-r));
			break;
		}
		if ((r = send_batch(u, body, len, cb, &res->err)) < 0) {
			res->retryable = r == -EAGAIN;
			if (!res->err)
				res->err = strdup(strerror(-r));
			break;
		}
		free(res->err);
		res->err = NULL;
		int rr = stune_spool_remove(paths[i]);
		if (rr < 0 && cb && cb->not_removed)
			cb->not_removed(cb->data, paths[i], rr);
		res->sent++;
		res->points += count_lines(body, len);
	}
	stune_spool_list_free(paths, n);
	return r < 0 ? r : 0;
}
