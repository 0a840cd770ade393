/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/resultset.h"
#include "report/internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/strv.h"
#include "core/statefile.h"
#include "core/trust.h"
#include "core/utctime.h"
#include "core/userfile.h"

/* A saved set is a few KiB per run. */
#define STUNE_RESULTSET_MAX_BYTES (64u << 20)

bool stune_phase_valid(const char *phase)
{
	size_t n = strlen(phase);
	if (n == 0 || n > 64 || phase[0] == '.')
		return false;
	for (const char *c = phase; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		      *c == '_' || *c == '-'))
			return false;
	return true;
}

int stune_resultset_name(int64_t start_ms, char **out)
{
	struct stune_utc u;
	char buf[64];
	/* core/utctime.h, not gmtime_r/strftime (they read the host's /etc/localtime). */
	if (start_ms < 0 || stune_utc_from_epoch(start_ms / 1000, &u) < 0 ||
	    snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02dZ.json", u.year, u.month, u.day, u.hour, u.min,
		     u.sec) >= (int)sizeof(buf))
		return -EINVAL;
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

int stune_resultset_save(const char *state_dir, const char *phase, const char *name, const char *doc, char **saved_path)
{
	_cleanup_free_ char *dir = NULL, *rel = NULL;
	int r;

	if (!stune_phase_valid(phase) || strchr(name, '/'))
		return -EINVAL;
	if (asprintf(&rel, "reports/%s", phase) < 0)
		return -ENOMEM;
	/* No symbolic link below the state directory is followed (-ELOOP). */
	if ((r = stune_state_subdir(state_dir, rel, 0755, true, NULL, &dir)) < 0)
		return r;
	return stune_write_atomic(dir, name, doc, strlen(doc), 0644, saved_path);
}

int stune_resultset_rundir(const char *state_dir, char **dir)
{
	return stune_state_subdir(state_dir, "runs", 0755, true, NULL, dir);
}

/* YYYYmmddTHHMMSSZ.json */
static bool is_set_name(const char *n)
{
	if (strlen(n) != 21 || strcmp(n + 16, ".json") != 0 || n[8] != 'T' || n[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (n[i] < '0' || n[i] > '9'))
			return false;
	return true;
}

/* STATE_DIR/REL (never through a link: stune_state_subdir) open for listing; *dir its path. */
static int open_state_listing(const char *state_dir, const char *rel, DIR **d, char **dir)
{
	int fd = -1, r;
	if ((r = stune_state_subdir(state_dir, rel, 0755, false, &fd, dir)) < 0)
		return r;
	if (!(*d = fdopendir(fd))) {
		r = negative_errno();
		close(fd);
		return r;
	}
	return 0;
}

int stune_resultset_find(const char *state_dir, const char *phase, char **path)
{
	_cleanup_free_ char *dir = NULL, *rel = NULL;
	char best[32] = "";
	int r;

	if (!stune_phase_valid(phase))
		return -EINVAL;
	if (asprintf(&rel, "reports/%s", phase) < 0)
		return -ENOMEM;
	_cleanup_closedir_ DIR *d = NULL;
	if ((r = open_state_listing(state_dir, rel, &d, &dir)) < 0)
		return r;
	struct dirent *de;
	while ((de = readdir(d)))
		if (is_set_name(de->d_name) && strcmp(de->d_name, best) > 0)
			memcpy(best, de->d_name, 22); /* is_set_name: exactly 21 characters */
	if (!*best)
		return -ENOENT;
	return asprintf(path, "%s/%s", dir, best) < 0 ? -ENOMEM : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The phase directories under STATE_DIR/reports (at most 64), sorted; none when it is not there. */
static int list_phases(const char *state_dir, char ***out, size_t *n_out)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	int r;
	*out = NULL;
	*n_out = 0;
	if ((r = open_state_listing(state_dir, "reports", &d, &dir)) < 0)
		return r;
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 64) {
		struct stat st;
		/* a directory, never through a link (d_type is DT_UNKNOWN on some file systems) */
		bool dir_ = de->d_type == DT_DIR ||
			    (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			     S_ISDIR(st.st_mode));
		if (dir_ && stune_phase_valid(de->d_name) && stune_strv_push(&names, &n, strdup(de->d_name)) < 0)
			return -ENOMEM;
	}
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*out = steal_pointer(&names);
	*n_out = n;
	return 0;
}

int stune_resultset_phases(const char *state_dir, char **list)
{
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t n = 0, len = 0;
	*list = NULL;
	int r = list_phases(state_dir, &names, &n);
	if (r < 0)
		return r;
	FILE *f = open_memstream(list, &len);
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", names[i]);
	if (f)
		fclose(f);
	return *list ? 0 : -ENOMEM;
}

void stune_newest_sets_clear(struct stune_newest_sets *s)
{
	for (size_t i = 0; i < s->n; i++)
		stune_saved_set_free(s->sets[i]);
	free(s->sets);
	stune_strv_free(s->phases);
	*s = (struct stune_newest_sets){0};
}

int stune_resultset_newest(const char *state_dir, struct stune_newest_sets *out, char **err)
{
	*out = (struct stune_newest_sets){0};
	int r = list_phases(state_dir, &out->phases, &out->n);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return stune_errf(err, r, "%s/reports: %s", state_dir, stune_state_strerror(r, 0));
	if (out->n && !(out->sets = calloc(out->n, sizeof(*out->sets))))
		return -ENOMEM;
	for (size_t i = 0; i < out->n; i++) {
		_cleanup_free_ char *path = NULL, *why = NULL;
		r = stune_resultset_find(state_dir, out->phases[i], &path);
		if (r == -ENOENT)
			continue; /* a phase directory without a set */
		if (r < 0)
			return stune_errf(err, r, "%s/reports/%s: %s", state_dir, out->phases[i],
					  stune_state_strerror(r, 0));
		r = stune_saved_set_load_flags(path, STUNE_UF_NOFOLLOW, &out->sets[i], &why);
		if (r < 0)
			return stune_errf(err, r, "%s: %s", path, why ? why : strerror(-r));
	}
	return 0;
}

void stune_saved_set_free(struct stune_saved_set *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->phase);
	free(s->kiops);
	stune_sig_clear(&s->sig);
	free(s->host);
	free(s->kernel);
	free(s->payload);
	free(s->profile);
	free(s->profile_digest);
	free(s->firmware);
	free(s);
}

/* A saved run's option for the signature: the job's own (jobs[i].options), else global_options. */
struct saved_run {
	json_object *jobs, *global;
};

static const char *json_opt(json_object *options, const char *key)
{
	json_object *v;
	if (!options || !json_object_object_get_ex(options, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static const char *saved_opt(void *data, size_t job, const char *key)
{
	const struct saved_run *r = data;
	json_object *j = json_object_array_get_idx(r->jobs, job), *o = NULL;
	const char *v = j && json_object_object_get_ex(j, "options", &o) ? json_opt(o, key) : NULL;
	return v ? v : json_opt(r->global, key);
}

/* obj.key as a copy into *out when it is a string (NULL otherwise): 0 or -ENOMEM. */
static int dup_str(json_object *obj, const char *key, char **out)
{
	json_object *v;
	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return 0;
	return (*out = strdup(json_object_get_string(v))) ? 0 : -ENOMEM;
}

/* The host facts of the set's provenance (--run, --host-facts), for --compare's treatment. */
static int saved_facts(json_object *prov, struct stune_saved_set *s)
{
	json_object *src, *hba = NULL, *profile = NULL;
	if (!prov || !json_object_object_get_ex(prov, "source", &src) || !json_object_is_type(src, json_type_string) ||
	    !strcmp(json_object_get_string(src), "files"))
		return 0;
	s->has_facts = true;
	if (json_object_object_get_ex(prov, "hba", &hba) && !json_object_is_type(hba, json_type_object))
		hba = NULL;
	if (json_object_object_get_ex(prov, "profile", &profile) && !json_object_is_type(profile, json_type_object))
		profile = NULL;
	int r = dup_str(prov, "kernel", &s->kernel);
	if (r < 0 || (r = dup_str(prov, "payload_version", &s->payload)) < 0 ||
	    (r = dup_str(profile, "name", &s->profile)) < 0 || (r = dup_str(profile, "digest", &s->profile_digest)) < 0)
		return r;
	return dup_str(hba, "firmware", &s->firmware);
}

/* The set's signature (its first run) and host, for --compare's comparability. */
static int saved_sig(json_object *doc, json_object *run, struct stune_saved_set *s)
{
	json_object *v, *prov, *host;
	struct saved_run r = {0};
	const char *version =
	    json_object_object_get_ex(run, "fio_version", &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v)
		: NULL;
	if (!json_object_object_get_ex(run, "jobs", &r.jobs) || !json_object_is_type(r.jobs, json_type_array))
		r.jobs = NULL;
	if (json_object_object_get_ex(run, "global_options", &r.global) &&
	    !json_object_is_type(r.global, json_type_object))
		r.global = NULL;
	size_t n_jobs = r.jobs ? json_object_array_length(r.jobs) : 0;
	/* Known when the run recorded any job option (its global ones or a job's own). */
	bool known = r.global && json_object_object_length(r.global) > 0;
	for (size_t i = 0; i < n_jobs && !known; i++) {
		json_object *o;
		known = json_object_object_get_ex(json_object_array_get_idx(r.jobs, i), "options", &o) &&
			json_object_is_type(o, json_type_object) && json_object_object_length(o) > 0;
	}
	int ret = stune_sig_build(version, n_jobs, known, saved_opt, &r, &s->sig);
	if (ret < 0)
		return ret;
	if (!json_object_object_get_ex(doc, "provenance", &prov) || !json_object_is_type(prov, json_type_object))
		return 0;
	if (json_object_object_get_ex(prov, "host", &host) && json_object_is_type(host, json_type_string) &&
	    !(s->host = strdup(json_object_get_string(host))))
		return -ENOMEM;
	return saved_facts(prov, s);
}

int stune_saved_set_load(const char *path, struct stune_saved_set **out, char **err)
{
	return stune_saved_set_load_flags(path, 0, out, err);
}

int stune_saved_set_load_flags(const char *path, unsigned flags, struct stune_saved_set **out, char **err)
{
	*err = NULL;
	_cleanup_(stune_saved_set_freep) struct stune_saved_set *s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path)))
		return -ENOMEM;
	_cleanup_free_ char *text = NULL;
	int r = stune_read_user_file(path, STUNE_RESULTSET_MAX_BYTES, STUNE_UF_TEXT | flags, &text, NULL);
	if (r == -STUNE_ENOTREG || r == -EFBIG || r == -EILSEQ || (r == -ELOOP && (flags & STUNE_UF_NOFOLLOW)))
		return stune_errf(err, r, "%s", stune_state_strerror(r, STUNE_RESULTSET_MAX_BYTES));
	if (r < 0)
		return r;
	enum json_tokener_error je;
	json_object *doc = json_tokener_parse_verbose(text, &je);
	if (!doc) {
		char msg[256];
		snprintf(msg, sizeof(msg), "not a scsitune result set: not JSON (%s)", json_tokener_error_desc(je));
		return stune_errf(err, -EINVAL, "%s", msg);
	}
	json_object *v, *runs;
	if (!json_object_is_type(doc, json_type_object) || !json_object_object_get_ex(doc, "schema_version", &v) ||
	    !json_object_is_type(v, json_type_int) || !json_object_object_get_ex(doc, "runs", &runs) ||
	    !json_object_is_type(runs, json_type_array))
		r = stune_errf(err, -EINVAL, "not a scsitune result set: no 'schema_version' and 'runs'");
	else if (json_object_get_int(v) < 1 || json_object_get_int(v) > STUNE_REPORT_SCHEMA_VERSION)
		r = stune_errf(err, -EINVAL, "result set of an unknown schema_version");
	if (r < 0)
		goto out;
	if (json_object_object_get_ex(doc, "phase", &v) && json_object_is_type(v, json_type_string) &&
	    !(s->phase = strdup(json_object_get_string(v)))) {
		r = -ENOMEM;
		goto out;
	}
	size_t n = json_object_array_length(runs);
	if (n == 0) {
		r = stune_errf(err, -EINVAL, "result set without runs");
		goto out;
	}
	if (!(s->kiops = calloc(n, sizeof(double)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *run = json_object_array_get_idx(runs, i);
		if (!json_object_object_get_ex(run, "kiops", &v) ||
		    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ||
		    !isfinite(json_object_get_double(v))) {
			char msg[64];
			snprintf(msg, sizeof(msg), "runs[%zu]: no 'kiops' number", i);
			r = stune_errf(err, -EINVAL, "%s", msg);
			goto out;
		}
		s->kiops[i] = json_object_get_double(v);
		json_object *t;
		if (json_object_object_get_ex(run, "start_time_ms", &t) && json_object_is_type(t, json_type_int) &&
		    json_object_get_int64(t) >= 0 && (!s->has_start || json_object_get_int64(t) < s->start_ms)) {
			s->start_ms = json_object_get_int64(t);
			s->has_start = true;
		}
	}
	s->n = n;
	json_object *summary;
	if (json_object_object_get_ex(doc, "summary", &summary) &&
	    json_object_object_get_ex(summary, "comparable", &v) && json_object_is_type(v, json_type_boolean))
		s->mixed = !json_object_get_boolean(v);
	if ((r = saved_sig(doc, json_object_array_get_idx(runs, 0), s)) < 0)
		goto out;
	*out = steal_pointer(&s);
out:
	json_object_put(doc);
	return r;
}
