/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/session.h"
#include "report/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/strv.h"
#include "report/comparable.h"
#include "report/fio.h"
#include "report/points.h"
#include "report/resultset.h"
#include "stats/rank.h"
#include "net/http.h"
#include "net/spool.h"
#include "core/trust.h"
#include "core/userfile.h"

void stune_report_set_clear(struct stune_report_set *s)
{
	for (size_t i = 0; s->runs && i < s->n_runs; i++)
		stune_fio_run_free(s->runs[i]);
	free(s->runs);
	free(s->kiops);
	free(s->robust_z);
	s->robust_z = NULL;
	stune_strv_free(s->mismatch);
	s->runs = NULL;
	s->kiops = NULL;
	s->mismatch = NULL;
	s->n_runs = s->n_mismatch = 0;
}

void stune_report_compare_clear(struct stune_report_compare *c)
{
	stune_strv_free(c->mismatch);
	c->mismatch = NULL;
	c->n_mismatch = 0;
	for (size_t i = 0; i < c->n_treatment; i++) {
		free(c->t_ref[i]);
		free(c->t_cur[i]);
	}
	c->n_treatment = 0;
}

/* A profile as shown in a treatment: "numa (sha256 0123456789ab)", or its name alone. */
static char *profile_text(const char *name, const char *digest)
{
	if (!name && !digest)
		return strdup("none");
	return digest ? stune_strdupf("%s (sha256 %.12s)", name ? name : "?", digest) : strdup(name);
}

/* The treatment of c: what differs between the reference's host facts and this set's. */
static int compare_treatment(const struct stune_saved_set *ref, const struct stune_provenance *p,
			     struct stune_report_compare *c)
{
	if (!ref->has_facts || !p)
		return 0;
	c->treatment_known = true;
	struct {
		const char *what, *a, *b;
	} items[] = {{"kernel", ref->kernel, p->kernel},
		     {"payload", ref->payload, p->payload_version},
		     {"profile", ref->profile_digest ? ref->profile_digest : ref->profile,
		      p->profile_digest ? p->profile_digest : p->profile},
		     {"firmware", ref->firmware, p->hba_firmware}};
	for (size_t i = 0; i < ELEMENTSOF(items); i++) {
		if (!(items[i].a || items[i].b) || (items[i].a && items[i].b && !strcmp(items[i].a, items[i].b)))
			continue;
		size_t k = c->n_treatment;
		c->what[k] = items[i].what;
		if (i == 2) {
			c->t_ref[k] = profile_text(ref->profile, ref->profile_digest);
			c->t_cur[k] = profile_text(p->profile, p->profile_digest);
		} else {
			c->t_ref[k] = strdup(items[i].a ? items[i].a : "none");
			c->t_cur[k] = strdup(items[i].b ? items[i].b : "none");
		}
		c->n_treatment++;
		if (!c->t_ref[k] || !c->t_cur[k])
			return -ENOMEM;
	}
	return 0;
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

/* fio groups: one kept (--group), or a file with several refused: their IOPS do not add up. */
static bool one_group(struct stune_report_set *s, size_t i, const char *shown, void (*bad)(void *, const char *),
		      void *data)
{
	struct stune_fio_run *run = s->runs[i];
	if (s->group_set) {
		_cleanup_free_ char *err = NULL;
		int r = stune_fio_run_keep_group(run, s->group, &err);
		if (r == -ENOENT)
			report_bad(bad, data, "%s: no fio group %" PRId64 " (groups: %s)", shown, s->group,
				   err ? err : "?");
		else if (r < 0)
			report_bad(bad, data, "%s: group %" PRId64 ": %s", shown, s->group, err ? err : strerror(-r));
		return r == 0;
	}
	if (run->n_groups <= 1)
		return true;
	_cleanup_free_ char *groups = stune_fio_run_groups(run);
	report_bad(bad, data,
		   "%s: %zu fio groups ran one after the other (stonewall or new_group): %s; their IOPS do not add "
		   "up: report one group with --group N",
		   shown, run->n_groups, groups ? groups : "?");
	return false;
}

/*
 * The runs of a set that are not the same job as its first, into
 * s->mismatch; without s->allow_mixed each is also reported through bad()
 * and *refused set.
 */
static int set_mismatch(struct stune_report_set *s, char *const *files, void (*bad)(void *, const char *), void *data,
			bool *refused)
{
	_cleanup_(stune_sig_clear) struct stune_sig first = {0};
	int r = stune_sig_of_run(s->runs[0], &first);
	for (size_t i = 1; r >= 0 && i < s->n_runs; i++) {
		_cleanup_(stune_sig_clear) struct stune_sig sig = {0};
		_cleanup_(stune_strv_freep) char **d = NULL;
		size_t n = 0;
		if ((r = stune_sig_of_run(s->runs[i], &sig)) < 0 || (r = stune_sig_diff(&first, &sig, &d, &n)) < 0 ||
		    !n)
			continue;
		_cleanup_free_ char *joined = NULL;
		for (size_t k = 0; k < n; k++) {
			char *j = stune_strdupf("%s%s%s", joined ? joined : "", joined ? ", " : "", d[k]);
			free(joined);
			if (!(joined = j))
				return -ENOMEM;
		}
		const char *shown = strcmp(files[i], "-") ? files[i] : "stdin";
		const char *first_shown = strcmp(files[0], "-") ? files[0] : "stdin";
		if (!s->allow_mixed) {
			report_bad(bad, data,
				   "%s: not the same fio job as %s (%s): a set is one job; --allow-mixed keeps "
				   "them, marked not comparable",
				   shown, first_shown, joined);
			*refused = true;
		}
		r = stune_strv_push(
		    &s->mismatch, &s->n_mismatch,
		    stune_strdupf("run %zu (%s) against run 1 (%s): %s", i + 1, shown, first_shown, joined));
	}
	return r;
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
		const char *shown = strcmp(files[i], "-") ? files[i] : "stdin"; /* "-": standard input */
		int r = stune_fio_parse_file(ctx, files[i], &s->runs[i], &err);
		if (r < 0) {
			report_bad(bad, data, "%s: %s", shown, err ? err : strerror(-r));
			/* Not a fio document at all (a fio file with a bad value is not counted: its line says which).
			 */
			if (r != -EINVAL && r != -ENOMEM)
				s->n_unparsed++;
			ok = false;
			continue;
		}
		if (!one_group(s, i, shown, bad, data)) {
			ok = false;
			continue;
		}
		const struct stune_fio_run *run = s->runs[i];
		/* The same run twice is not two runs (its spread would be 0 %). */
		for (size_t k = 0; k < i; k++)
			if (s->runs[k] && s->runs[k]->content_len == run->content_len &&
			    s->runs[k]->content_hash == run->content_hash) {
				report_bad(bad, data, "%s: the same run as %s (identical content): give each run once",
					   shown, strcmp(files[k], "-") ? files[k] : "stdin");
				ok = false;
				break;
			}
		if (run->n_failed > 0) {
			const struct stune_fio_job *j = &run->jobs[run->first_failed_job];
			report_bad(bad, data, "%s: fio job %zu '%s' failed with error %d (%s)%s", shown,
				   run->first_failed_job, j->name, j->error, strerror(j->error),
				   run->n_failed > 1 ? ", and more jobs failed" : "");
			ok = false;
		}
	}
	if (!ok)
		return -EINVAL;
	bool refused = false;
	int r = n > 1 ? set_mismatch(s, files, bad, data, &refused) : 0;
	return r < 0 ? r : refused ? -EINVAL : 0;
}

int stune_report_set_stats(struct stune_report_set *s)
{
	free(s->kiops);
	s->kiops = calloc(s->n_runs ? s->n_runs : 1, sizeof(double));
	if (!s->kiops)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_runs; i++)
		s->kiops[i] = s->runs[i]->iops / 1000.0;
	int r = stune_stats_compute(s->kiops, s->n_runs, &s->stats);
	if (r < 0 || s->n_runs < 3)
		return r;
	/* Outlier runs are named, never dropped: one odd run moves an average by several percent. */
	free(s->robust_z);
	if (!(s->robust_z = calloc(s->n_runs, sizeof(double))))
		return -ENOMEM;
	return stune_robust_z(s->kiops, s->n_runs, s->robust_z);
}

bool stune_report_is_file_arg(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

/* The Hodges-Lehmann change and its two-sided interval: each end a one-sided bound at half the error. */
static int change_interval(const double *ref, size_t m, const double *cur, size_t n, struct stune_report_compare *c)
{
	double one_side = 1 - (1 - STUNE_REPORT_CHANGE_CONFIDENCE) / 2;
	struct stune_shift_test up, down;
	int r = stune_shift_test(ref, m, cur, n, 0, one_side, &up);
	if (r < 0 || (r = stune_shift_test(cur, n, ref, m, 0, one_side, &down)) < 0)
		return r;
	c->change_estimate = up.estimate;
	c->has_low = up.enough;
	c->change_low = up.lower;
	/* The swapped sides' lower bound of ref / cur is an upper bound of cur / ref. */
	c->has_high = down.enough;
	c->change_high = 1 / (1 + down.lower) - 1;
	return 0;
}

int stune_report_reference(const char *state_dir, const char *compare, const struct stune_report_set *s,
			   struct stune_saved_set **ref, struct stune_report_compare *c, char **err)
{
	_cleanup_free_ char *path = NULL, *lerr = NULL;
	int r;
	unsigned flags = 0;
	*c = (struct stune_report_compare){.cur_label = s->phase ? s->phase : "this set"};
	if (stune_report_is_file_arg(compare)) {
		if (!(path = strdup(compare)))
			return stune_errf(err, -ENOMEM, "out of memory");
	} else {
		r = stune_resultset_find(state_dir, compare, &path);
		if (r == -ENOENT) {
			_cleanup_free_ char *saved = NULL;
			(void)stune_resultset_phases(state_dir, &saved);
			return stune_errf(err, r,
					  "--compare %s: no saved result set for phase '%s' in %s/reports/%s (%s%s)",
					  compare, compare, state_dir, compare,
					  saved && *saved ? "phases saved there: " : "no phase saved there yet",
					  saved && *saved ? saved : "");
		}
		if (r < 0)
			return stune_errf(err, r, "--compare %s: %s/reports/%s: %s", compare, state_dir, compare,
					  stune_state_strerror(r, 0));
		flags = STUNE_UF_NOFOLLOW; /* scsitune's own file: never through a symbolic link */
	}
	r = stune_saved_set_load_flags(path, flags, ref, &lerr);
	if (r < 0) {
		/* The loader's message names the file already: said once, not "--compare F: F: ...". */
		size_t pl = strlen(path);
		if (lerr && !strncmp(lerr, path, pl) && lerr[pl] == ':')
			return stune_errf(err, r, "--compare %s%s", compare, lerr + pl);
		if (!strcmp(path, compare))
			return stune_errf(err, r, "--compare %s: %s", compare, lerr ? lerr : strerror(-r));
		return stune_errf(err, r, "--compare %s: %s: %s", compare, path, lerr ? lerr : strerror(-r));
	}
	if ((r = stune_stats_compute((*ref)->kiops, (*ref)->n, &c->ref)) < 0 ||
	    (r = stune_stats_compare(&c->ref, &s->stats, &c->cmp)) < 0)
		return stune_errf(err, r, "--compare %s: %s: reference has no usable runs", compare, (*ref)->path);
	c->ref_label = (*ref)->phase ? (*ref)->phase : (*ref)->path;
	c->ref_source = (*ref)->path;
	if ((r = change_interval((*ref)->kiops, (*ref)->n, s->kiops, s->n_runs, c)) < 0)
		return stune_errf(err, r, "--compare %s: %s: %s", compare, (*ref)->path, strerror(-r));
	/* Comparable only with the same fio and job, on the same host (when both sets know theirs). */
	_cleanup_(stune_sig_clear) struct stune_sig cur = {0};
	if ((r = stune_sig_of_run(s->runs[0], &cur)) < 0 ||
	    (r = stune_sig_diff(&(*ref)->sig, &cur, &c->mismatch, &c->n_mismatch)) < 0)
		return stune_errf(err, r, "out of memory");
	if ((*ref)->mixed &&
	    (r = stune_strv_push(
		 &c->mismatch, &c->n_mismatch,
		 stune_strdupf("the reference set's runs are not one fio job (saved with --allow-mixed)"))) < 0)
		return stune_errf(err, r, "out of memory");
	if (s->n_mismatch &&
	    (r = stune_strv_push(&c->mismatch, &c->n_mismatch,
				 stune_strdupf("this set's runs are not one fio job (--allow-mixed)"))) < 0)
		return stune_errf(err, r, "out of memory");
	if ((r = compare_treatment(*ref, s->prov, c)) < 0)
		return stune_errf(err, r, "out of memory");
	/* The reference saved from these runs (the same files again): its change is 0 % by construction. Runs
	 * that started in the same millisecond are the same runs. */
	int64_t first = 0;
	for (size_t i = 0; i < s->n_runs; i++)
		if (s->runs[i]->timestamp_ms > 0 && (first == 0 || s->runs[i]->timestamp_ms < first))
			first = s->runs[i]->timestamp_ms;
	if ((*ref)->has_start && first > 0 && (*ref)->start_ms == first &&
	    (r = stune_strv_push(&c->mismatch, &c->n_mismatch,
				 stune_strdupf("the reference is these runs (its first run started when this set's "
					       "did): a set compared with itself"))) < 0)
		return stune_errf(err, r, "out of memory");
	const char *host = s->prov ? s->prov->host : NULL;
	if (host && (*ref)->host && strcmp(host, (*ref)->host) &&
	    (r = stune_strv_push(&c->mismatch, &c->n_mismatch, stune_strdupf("host %s vs %s", (*ref)->host, host))) < 0)
		return stune_errf(err, r, "out of memory");
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
				  stune_state_strerror(r, 0));
	res->batches = n;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *body = NULL;
		size_t len = 0;
		r = stune_spool_read(paths[i], &body, &len);
		const char *why = r == -STUNE_ENOTREG || r == -EFBIG || r == -EILSEQ || r == -ELOOP
				      ? stune_state_strerror(r, 0)
				  : r == 0 ? stune_spool_check(paths[i], body, len)
					   : NULL;
		if (why) { /* never sent: a server would refuse it, or store garbage, forever */
			_cleanup_free_ char *aside = NULL;
			if ((r = stune_spool_set_aside(paths[i], &aside)) < 0) {
				stune_errf(&res->err, r, "%s: corrupt (%s), and not set aside: %s", paths[i], why,
					   strerror(-r));
				break;
			}
			if (cb && cb->corrupt)
				cb->corrupt(cb->data, paths[i], aside, why);
			res->corrupt++;
			continue;
		}
		if (r < 0) {
			stune_errf(&res->err, r, "%s: %s", paths[i], stune_user_file_strerror(r, 0));
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
	if (r >= 0 && res->corrupt)
		return stune_errf(&res->err, -EBADMSG,
				  "%zu corrupt batch%s set aside in %s/spool (NAME.corrupt, not sent)", res->corrupt,
				  res->corrupt == 1 ? "" : "es", state_dir);
	return r < 0 ? r : 0;
}
