/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune report --query URL: options -> engine (fleet/query.c asks the
 * service and builds the fleet view, fleet/gate.c judges it) ->
 * render-query.c (and render-report-html.c for --html) -> exit code (0, 1 no answer or a bad
 * one, 4 gate failed).
 */
#include "query.h"
#include "html-file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/strv.h"
#include "core/url.h"
#include "core/userfile.h"
#include "fleet/gate.h"
#include "fleet/query.h"
#include "report/session.h"
#include "net/http.h"
#include "render-query.h"
#include "render-html.h"
#include "wrap.h"

/* The window's end is this far past now: a host's clock may be ahead of ours. */
#define QUERY_END_SLACK_MS (15 * 60 * 1000LL)
/* A hosts file larger than this is refused. */
#define HOSTS_FILE_MAX (64u << 20)

static int add_host(char ***hosts, size_t *n, const char *name, size_t len, const char *where)
{
	_cleanup_free_ char *h = strndup(name, len);
	if (!h) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	if (!stune_query_host_valid(h)) {
		usage_error("report", "%s: '%s' is not a host name (1 to 253 printable characters, no space)", where,
			    h);
		return EXIT_USAGE;
	}
	if (*n >= STUNE_QUERY_MAX_HOSTS) {
		usage_error("report", "%s: more than %d hosts", where, STUNE_QUERY_MAX_HOSTS);
		return EXIT_USAGE;
	}
	char **nv = realloc(*hosts, (*n + 2) * sizeof(char *));
	if (!nv) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	*hosts = nv;
	nv[(*n)++] = steal_pointer(&h);
	nv[*n] = NULL;
	return CLI_GO_ON;
}

int query_hosts_opt(struct query_opts *q, const char *arg)
{
	if (!*arg) {
		usage_error("report", "--hosts: empty list");
		return EXIT_USAGE;
	}
	for (const char *p = arg;;) {
		size_t len = strcspn(p, ",");
		int ec = len ? add_host(&q->hosts, &q->n_hosts, p, len, "--hosts") : CLI_GO_ON;
		if (ec != CLI_GO_ON)
			return ec;
		if (!len) {
			usage_error("report", "--hosts: an empty name in '%s'", arg);
			return EXIT_USAGE;
		}
		if (!p[len])
			return CLI_GO_ON;
		p += len + 1;
	}
}

/* --hosts-file F: one host per line; blank lines and '#' comments skipped. */
static int read_hosts_file(const char *path, char ***hosts, size_t *n)
{
	_cleanup_free_ char *text = NULL;
	int r = stune_read_user_file(path, HOSTS_FILE_MAX, STUNE_UF_TEXT, &text, NULL);
	if (r < 0) {
		error_msg("--hosts-file %s: %s", path, stune_user_file_strerror(r, HOSTS_FILE_MAX));
		return EXIT_ERROR;
	}
	size_t lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		char where[64];
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t k = strcspn(p, "#\r");
		while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t'))
			k--;
		if (k == 0)
			continue;
		snprintf(where, sizeof(where), "--hosts-file %.24s:%zu", path, lineno);
		int ec = add_host(hosts, n, p, k, where);
		if (ec != CLI_GO_ON)
			return ec;
	}
	if (*n == 0) {
		error_msg("--hosts-file %s: no host in the file", path);
		return EXIT_ERROR;
	}
	return CLI_GO_ON;
}

static int idx_cmp(const void *x, const void *y, void *data)
{
	char **v = data;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int c = strcmp(v[a], v[b]);
	return c ? c : (a > b) - (a < b);
}

/* A host named twice is asked once (the first place it was named). */
static int dedup_hosts(char **v, size_t *n)
{
	if (*n < 2)
		return 0;
	_cleanup_free_ size_t *idx = calloc(*n, sizeof(*idx));
	_cleanup_free_ bool *dup = calloc(*n, sizeof(*dup));
	if (!idx || !dup)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++)
		idx[i] = i;
	qsort_r(idx, *n, sizeof(*idx), idx_cmp, v);
	for (size_t i = 1; i < *n; i++)
		if (!strcmp(v[idx[i]], v[idx[i - 1]]))
			dup[idx[i]] = true;
	size_t m = 0;
	for (size_t i = 0; i < *n; i++) {
		if (dup[i])
			free(v[i]);
		else
			v[m++] = v[i];
	}
	v[m] = NULL;
	*n = m;
	return 0;
}

/* The options together: CLI_GO_ON to go on, else the exit code. */
static int check_opts(const struct query_opts *q, const char *phase, const char *compare, enum stune_query_api *api,
		      int64_t *since_ms)
{
	if (!phase) {
		usage_error("report", "--query: give the phase to show (--phase tuned)");
		return EXIT_USAGE;
	}
	if (compare && stune_report_is_file_arg(compare)) {
		usage_error("report", "--query --compare %s: a phase name, not a file", compare);
		return EXIT_USAGE;
	}
	if (compare && !strcmp(compare, phase)) {
		usage_error("report", "--query: --phase and --compare name the same phase '%s'", phase);
		return EXIT_USAGE;
	}
	if (q->confidence_given && !q->gate) {
		usage_error("report", "--confidence is the confidence of --gate's tests: give --gate");
		return EXIT_USAGE;
	}
	if (q->hosts && q->hosts_file) {
		usage_error("report", "--hosts and --hosts-file: one or the other");
		return EXIT_USAGE;
	}
	*api = STUNE_QUERY_AUTO;
	if (q->api && stune_query_api_parse(q->api, api) < 0) {
		usage_error("report", "--query-api: '%s' is not export, prometheus or influxql", q->api);
		return EXIT_USAGE;
	}
	if (stune_query_parse_since(q->since ? q->since : "7d", since_ms) < 0) {
		usage_error("report",
			    "--since: '%s' is not a duration from 1s to 3650d (N followed by s, m, h, d or w)",
			    q->since);
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

static void query_retry(void *data, const char *msg, unsigned seconds)
{
	const struct global_opts *g = data;
	if (g->verbose)
		note_msg("query: %s; retrying in %u s", msg, seconds);
}

/* Credentials and CA as for the upload; false after printing the error. */
static bool load_auth(const char *auth_file, const char *ca_file, struct stune_auth **auth)
{
	_cleanup_free_ char *err = NULL;
	int rc;
	if (ca_file && (rc = stune_upload_check_ca(ca_file)) < 0) {
		error_msg("--ca-file %s: %s", ca_file, stune_user_file_strerror(rc, 0));
		return false;
	}
	if (auth_file) {
		int r = stune_auth_load(auth_file, auth, &err);
		if (r < 0) {
			error_msg("--auth-file %s: %s", auth_file, err ? err : strerror(-r));
			if (r == -ENOENT)
				hint_msg("%s", AUTH_FILE_NEXT);
			return false;
		}
	}
	return true;
}

struct fleet_html {
	const struct stune_fleet *f;
	const struct fleet_meta *m;
	const struct stune_gate *gate;
	const struct stune_gate_result *gr;
};

static int fleet_html_fill(FILE *out, void *data)
{
	const struct fleet_html *d = data;
	return render_fleet_html(out, d->f, d->m, d->gate, d->gr);
}

/* Write --html FILE (before anything is printed), print the view; the gate decides the exit code. */
static int show(const struct global_opts *g, const struct stune_fleet *f, const struct fleet_meta *m,
		const struct stune_gate *gate, const char *html)
{
	_cleanup_(stune_gate_result_freep) struct stune_gate_result *gr = NULL;
	if (gate && stune_gate_eval(gate, f, &gr) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	if (html && !report_html_write(html, fleet_html_fill, &(struct fleet_html){f, m, gate, gr}))
		return EXIT_ERROR;
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	render_fleet(o, f, m, gate, gr);
	int r = out_finish(o);
	if (r < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	if (!gr)
		return EXIT_OK;
	if (gr->passed) {
		fprintf(stderr, "scsitune: gate passed: %s (%zu host(s) compared)\n", m->gate_expr, f->n_compared);
		return EXIT_OK;
	}
	_cleanup_free_ char *line = gate_failure_line(f, gate, gr);
	error_msg("gate failed: %s", line ? line : m->gate_expr);
	return EXIT_GATE;
}

int report_query(const struct global_opts *g, const struct query_opts *q, const char *phase, const char *compare,
		 const char *auth_file, const char *ca_file, long timeout_s)
{
	enum stune_query_api api;
	int64_t since_ms;
	int ec = check_opts(q, phase, compare, &api, &since_ms);
	if (ec != CLI_GO_ON)
		return ec;
	_cleanup_free_ char *url = NULL, *err = NULL;
	enum stune_query_api url_api;
	if (stune_query_url(q->url, api, &url, &url_api, &err) < 0) {
		_cleanup_free_ char *shown = stune_url_shown(q->url); /* never a password, not even here */
		usage_error("report", "--query %s: %s", shown ? shown : "URL", err ? err : "out of memory");
		return EXIT_USAGE;
	}
	_cleanup_(stune_gate_freep) struct stune_gate *gate = NULL;
	if (q->gate && stune_gate_parse(q->gate, compare != NULL, q->confidence, &gate, &err) < 0) {
		usage_error("report", "--gate %s", err ? err : "out of memory");
		return EXIT_USAGE;
	}
	_cleanup_(stune_strv_freep) char **hosts = NULL;
	size_t n_hosts = 0;
	if (q->hosts_file && (ec = read_hosts_file(q->hosts_file, &hosts, &n_hosts)) != CLI_GO_ON)
		return ec;
	char **asked = q->hosts_file ? hosts : q->hosts;
	size_t n_asked = q->hosts_file ? n_hosts : q->n_hosts;
	if (asked && dedup_hosts(asked, &n_asked) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	_cleanup_(stune_auth_freep) struct stune_auth *auth = NULL;
	if (!load_auth(auth_file, ca_file, &auth))
		return EXIT_ERROR;
	if (q->html && !report_html_check(q->html))
		return EXIT_ERROR;

	int64_t now = (int64_t)time(NULL) * 1000;
	struct stune_query sq = {.url = q->url,
				 .api = api,
				 .phase = phase,
				 .compare = compare,
				 .hosts = asked,
				 .n_hosts = n_asked,
				 .start_ms = now - since_ms,
				 .end_ms = now + QUERY_END_SLACK_MS,
				 .ca_file = ca_file,
				 .auth = auth,
				 .timeout_s = q->timeout_s ? q->timeout_s : timeout_s};
	struct stune_query_cb cb = {.retry = query_retry, .data = (void *)g};
	_cleanup_(stune_fleet_freep) struct stune_fleet *f = NULL;
	int r = stune_query_run(&sq, &cb, &f, &err);
	if (r < 0) {
		error_msg("query %s: %s%s", url, err ? err : strerror(-r),
			  gate ? "; the gate is not passed (no answer to judge)" : "");
		if (r == -EAGAIN) /* no connection, a timeout or 5xx, every try */
			hint_msg("check the URL (--query, or url= in [upload] of the settings file) and that the "
				 "service answers");
		return EXIT_ERROR;
	}
	struct fleet_meta m = {.phase = phase,
			       .compare = compare,
			       .since = q->since ? q->since : "7d",
			       .gate_expr = q->gate,
			       .start_ms = sq.start_ms,
			       .end_ms = sq.end_ms,
			       .hosts_asked = n_asked,
			       .hosts_given = asked != NULL};
	return show(g, f, &m, gate, q->html);
}
