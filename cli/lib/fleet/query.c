/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fleet/query.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/strv.h"
#include "core/url.h"
#include "core/utctime.h"
#include "net/lineproto.h"
#include "net/http.h"

const char *stune_query_api_name(enum stune_query_api a)
{
	switch (a) {
	case STUNE_QUERY_EXPORT:
		return "export";
	case STUNE_QUERY_PROMETHEUS:
		return "prometheus";
	case STUNE_QUERY_INFLUXQL:
		return "influxql";
	default:
		return "auto";
	}
}

int stune_query_api_parse(const char *s, enum stune_query_api *out)
{
	static const enum stune_query_api all[] = {STUNE_QUERY_EXPORT, STUNE_QUERY_PROMETHEUS, STUNE_QUERY_INFLUXQL};
	for (size_t i = 0; i < ELEMENTSOF(all); i++)
		if (!strcmp(s, stune_query_api_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !memcmp(s + n - k, suffix, k);
}

int stune_query_url(const char *url, enum stune_query_api api, char **out, enum stune_query_api *out_api, char **err)
{
	int r = stune_url_check_credentials(url, err);
	if (r < 0)
		return r;
	size_t skip = !strncmp(url, "http://", 7) ? 7 : !strncmp(url, "https://", 8) ? 8 : 0;
	if (!skip)
		return stune_errf(err, -EINVAL, "not an http:// or https:// URL");
	if (strchr(url, '#'))
		return stune_errf(err, -EINVAL, "a query URL has no '#' fragment");
	const char *q = strchr(url, '?');
	const char *path = strchr(url + skip, '/');
	if (path && q && path > q)
		path = NULL;
	size_t plen = path ? (size_t)((q ? q : url + strlen(url)) - path) : 0;
	while (plen > 0 && path[plen - 1] == '/')
		plen--;
	if (api == STUNE_QUERY_AUTO) {
		if (plen == 0)
			api = STUNE_QUERY_EXPORT;
		else if (ends_with(path, plen, "/api/v1/export"))
			api = STUNE_QUERY_EXPORT;
		else if (ends_with(path, plen, "/api/v1/query"))
			api = STUNE_QUERY_PROMETHEUS;
		else if (ends_with(path, plen, "/query"))
			api = STUNE_QUERY_INFLUXQL;
		else
			return stune_errf(
			    err, -EINVAL,
			    "cannot tell the query API from the path (.../api/v1/export, .../api/v1/query, "
			    ".../query?db=DB): give --query-api export|prometheus|influxql");
		if (plen == 0) { /* VictoriaMetrics' base URL: its export API */
			size_t hl = (size_t)((path ? path : q ? q : url + strlen(url)) - url);
			if (asprintf(out, "%.*s/api/v1/export%s", (int)hl, url, q ? q : "") < 0)
				return -ENOMEM;
			*out_api = api;
			return 0;
		}
	}
	if (api == STUNE_QUERY_INFLUXQL && !(q && (strstr(q, "?db=") || strstr(q, "&db="))))
		return stune_errf(err, -EINVAL, "InfluxDB's /query needs the database: ?db=DB");
	if (api == STUNE_QUERY_INFLUXQL && q && (strstr(q, "?epoch=") || strstr(q, "&epoch=")))
		return stune_errf(err, -EINVAL, "sets epoch= itself: scsitune asks for epoch=ms");
	*out_api = api;
	if (api == STUNE_QUERY_INFLUXQL) {
		const char *sep = q[1] == '\0' || url[strlen(url) - 1] == '&' ? "" : "&";
		return asprintf(out, "%s%sepoch=ms", url, sep) < 0 ? -ENOMEM : 0;
	}
	return (*out = strdup(url)) ? 0 : -ENOMEM;
}

int stune_query_parse_since(const char *s, int64_t *ms)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || v == 0 || !*end || end[1])
		return -EINVAL;
	static const struct {
		char unit;
		int64_t ms;
	} units[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}, {'w', 7 * 86400000LL}};
	for (size_t i = 0; i < ELEMENTSOF(units); i++)
		if (*end == units[i].unit) {
			if (v > (unsigned long long)(3650 * 86400000LL / units[i].ms))
				return -EINVAL;
			*ms = (int64_t)v * units[i].ms;
			return 0;
		}
	return -EINVAL;
}

bool stune_query_host_valid(const char *h)
{
	size_t n = strlen(h);
	if (n == 0 || n > 253)
		return false;
	for (const unsigned char *p = (const unsigned char *)h; *p; p++)
		if (*p < 0x21 || *p == 0x7f)
			return false;
	return true;
}

/* --- the request --- */

static void url_encode(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%02X", *p);
	}
}

/* A regex alternative for PromQL's =~ inside a "..." string: regex metacharacters, then the string's. */
static void prom_regex_quote(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\.+*?()|[]{}^$", *s))
			fputs("\\\\", f);
		if (*s == '"')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* The fields read: KIOPS, each direction's latency percentiles (enum stune_qpct order), the worst device's p99
 * and the devices' fairness. */
enum {
	M_KIOPS,
	M_READ_LAT,
	M_WRITE_LAT = M_READ_LAT + STUNE_QPCT_N,
	M_WORST_P99 = M_WRITE_LAT + STUNE_QPCT_N,
	M_FAIRNESS,
	M_N
};
static const char *const metric_fields[M_N] = {
    "kiops",
    "read_clat_p50_ns",
    "read_clat_p99_ns",
    "read_clat_p99_9_ns",
    "write_clat_p50_ns",
    "write_clat_p99_ns",
    "write_clat_p99_9_ns",
    "worst_clat_p99_ns",
    "fairness",
};

static void prom_selector(FILE *f, const struct stune_query *q)
{
	fputs("{__name__=~\"" STUNE_LP_MEASUREMENT "_(", f);
	for (int m = 0; m < M_N; m++)
		fprintf(f, "%s%s", m ? "|" : "", metric_fields[m]);
	fputs(")\",phase=~\"", f);
	prom_regex_quote(f, q->phase);
	if (q->compare) {
		fputc('|', f);
		prom_regex_quote(f, q->compare);
	}
	fputc('"', f);
	if (q->hosts) {
		fputs(",host=~\"", f);
		for (size_t i = 0; i < q->n_hosts; i++) {
			if (i)
				fputc('|', f);
			prom_regex_quote(f, q->hosts[i]);
		}
		fputc('"', f);
	}
	fputc('}', f);
}

/* An InfluxQL string literal. */
static void influx_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static void influx_select(FILE *f, const struct stune_query *q)
{
	fputs("SELECT ", f);
	for (int m = 0; m < M_N; m++)
		fprintf(f, "%s\"%s\"", m ? ", " : "", metric_fields[m]);
	fprintf(f,
		" FROM \"" STUNE_LP_MEASUREMENT "\" WHERE time >= %" PRId64 "ms AND time <= %" PRId64
		"ms AND (\"phase\" = ",
		q->start_ms, q->end_ms);
	influx_string(f, q->phase);
	if (q->compare) {
		fputs(" OR \"phase\" = ", f);
		influx_string(f, q->compare);
	}
	fputc(')', f);
	for (size_t i = 0; q->hosts && i < q->n_hosts; i++) {
		fputs(i ? " OR \"host\" = " : " AND (\"host\" = ", f);
		influx_string(f, q->hosts[i]);
	}
	if (q->hosts)
		fputc(')', f);
	fputs(" GROUP BY *", f);
}

/* ms since the epoch as seconds with 3 decimals. */
static void seconds(FILE *f, int64_t ms)
{
	fprintf(f, "%" PRId64 ".%03" PRId64, ms / 1000, ms % 1000);
}

int stune_query_form(const struct stune_query *q, enum stune_query_api api, char **out)
{
	char *text = NULL, *buf = NULL;
	size_t tsize = 0, size = 0;
	FILE *t = open_memstream(&text, &tsize);
	if (!t)
		return -ENOMEM;
	if (api == STUNE_QUERY_INFLUXQL)
		influx_select(t, q);
	else
		prom_selector(t, q);
	if (api == STUNE_QUERY_PROMETHEUS) /* the range selector: every raw sample in the window */
		fprintf(t, "[%" PRId64 "s]", (q->end_ms - q->start_ms + 999) / 1000);
	if (fclose(t) != 0) {
		free(text);
		return -ENOMEM;
	}
	FILE *f = open_memstream(&buf, &size);
	if (!f) {
		free(text);
		return -ENOMEM;
	}
	switch (api) {
	case STUNE_QUERY_INFLUXQL:
		fputs("q=", f);
		url_encode(f, text);
		break;
	case STUNE_QUERY_PROMETHEUS:
		fputs("query=", f);
		url_encode(f, text);
		fputs("&time=", f);
		seconds(f, q->end_ms);
		break;
	default:
		fputs("match%5B%5D=", f);
		url_encode(f, text);
		fputs("&start=", f);
		seconds(f, q->start_ms);
		fputs("&end=", f);
		seconds(f, q->end_ms);
		break;
	}
	free(text);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

/* --- the answer --- */

static const char *const label_names[STUNE_QL_N] = {
    [STUNE_QL_HOST] = "host",
    [STUNE_QL_PHASE] = "phase",
    [STUNE_QL_SET] = "set",
    [STUNE_QL_KERNEL] = "kernel",
    [STUNE_QL_PAYLOAD] = "payload",
    [STUNE_QL_PROFILE] = "profile",
    [STUNE_QL_PROFILE_DIGEST] = "profile_digest",
    [STUNE_QL_FIRMWARE] = "firmware",
    [STUNE_QL_HBA_MODEL] = "hba_model",
    [STUNE_QL_VERIFY_STATE] = "verify_state",
    [STUNE_QL_RW] = "rw",
    [STUNE_QL_BS] = "bs",
    [STUNE_QL_IODEPTH] = "iodepth",
    [STUNE_QL_NUMJOBS] = "numjobs",
    [STUNE_QL_FILE] = "file",
    [STUNE_QL_FIO_VERSION] = "fio_version",
    [STUNE_QL_OUTPUT_FORMAT] = "output_format",
};

const char *stune_qpct_name(enum stune_qpct k)
{
	static const char *const names[STUNE_QPCT_N] = {"p50", "p99", "p99.9"};
	return k < STUNE_QPCT_N ? names[k] : NULL;
}

const char *stune_qside_lat_source(const struct stune_qside *s)
{
	const char *fmt = s->labels ? s->labels[STUNE_QL_OUTPUT_FORMAT] : NULL;
	const char *jobs = s->labels ? s->labels[STUNE_QL_NUMJOBS] : NULL;
	if (!fmt || !jobs)
		return "unknown";
	if (!strcmp(jobs, "1"))
		return "fio";
	return !strcmp(fmt, "json+") ? "merged-bins" : "max-of-jobs";
}

/* "scsitune_fio_read_clat_p99_ns" -> its index; -1: none the view reads. */
static int metric_of_name(const char *name)
{
	size_t n = strlen(STUNE_LP_MEASUREMENT);
	if (!name || strncmp(name, STUNE_LP_MEASUREMENT "_", n + 1))
		return -1;
	for (int m = 0; m < M_N; m++)
		if (!strcmp(name + n + 1, metric_fields[m]))
			return m;
	return -1;
}

const char *stune_qlabel_name(enum stune_qlabel l)
{
	return l < STUNE_QL_N ? label_names[l] : NULL;
}

struct stune_qseries {
	const char *labels[STUNE_QL_N]; /* in the answer's, then the fleet's, label pool */
	int metric;			/* M_KIOPS, a latency */
	int64_t *ts;
	double *v;
	size_t n;
};

/* The series read so far. */
/*
 * The series' label values, copied into chunks freed together: a fleet's
 * answer repeats them series after series (the kernel, firmware and job
 * options of every host; a host's name and set on each of its series), so
 * a value equal to the last one taken for its label is not copied again.
 * 10,000 hosts' answer: 480,000 series, 17 labels each.
 */
struct stune_label_pool {
	char **chunks;
	size_t n_chunks;
	size_t used, cap; /* in the last chunk */
	const char *last[STUNE_QL_N];
};

static void label_pool_free(struct stune_label_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_chunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p);
}

static const char *label_pool_take(struct stune_label_pool **pp, int slot, const char *v)
{
	if (!*pp && !(*pp = calloc(1, sizeof(**pp))))
		return NULL;
	struct stune_label_pool *p = *pp;
	if (p->last[slot] && !strcmp(p->last[slot], v))
		return p->last[slot];
	size_t len = strlen(v) + 1;
	if (p->used + len > p->cap) {
		size_t cap = len > ((size_t)64 << 10) ? len : ((size_t)64 << 10);
		char **nc = realloc(p->chunks, (p->n_chunks + 1) * sizeof(*nc));
		if (!nc)
			return NULL;
		p->chunks = nc;
		if (!(p->chunks[p->n_chunks] = malloc(cap)))
			return NULL;
		p->n_chunks++;
		p->used = 0;
		p->cap = cap;
	}
	char *d = p->chunks[p->n_chunks - 1] + p->used;
	memcpy(d, v, len);
	p->used += len;
	return p->last[slot] = d;
}

struct answer {
	struct stune_qseries *s;
	size_t n, cap;
	size_t points, duplicates;
	struct stune_label_pool *labels;
};

static void series_clear(struct stune_qseries *s)
{
	free(s->ts);
	free(s->v);
}

static void answer_clear(struct answer *a)
{
	for (size_t i = 0; i < a->n; i++)
		series_clear(&a->s[i]);
	free(a->s);
	label_pool_free(a->labels);
	*a = (struct answer){0};
}

static struct stune_qseries *answer_add(struct answer *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct stune_qseries *ns = realloc(a->s, cap * sizeof(*ns));
		if (!ns)
			return NULL;
		a->s = ns;
		a->cap = cap;
	}
	struct stune_qseries *s = &a->s[a->n++];
	*s = (struct stune_qseries){0};
	return s;
}

/* A series' tags: the ones the view needs; where: "line 3", "series 2". */
static int take_labels(struct answer *a, struct stune_qseries *s, json_object *tags, const char *where, char **err)
{
	if (!json_object_is_type(tags, json_type_object))
		return stune_errf(err, -EBADMSG, "%s: the series' tags are not an object", where);
	json_object_object_foreach(tags, key, val)
	{
		for (int i = 0; i < STUNE_QL_N; i++) {
			if (strcmp(key, label_names[i]))
				continue;
			if (!json_object_is_type(val, json_type_string))
				return stune_errf(err, -EBADMSG, "%s: tag '%s' is not a string", where, key);
			const char *v = json_object_get_string(val);
			if (*v && !(s->labels[i] = label_pool_take(&a->labels, i, v)))
				return -ENOMEM;
		}
	}
	if (!s->labels[STUNE_QL_HOST] || !s->labels[STUNE_QL_PHASE])
		return stune_errf(err, -EBADMSG, "%s: a series without a host or phase tag", where);
	return 0;
}

static int series_alloc(struct stune_qseries *s, size_t n)
{
	s->ts = calloc(n ? n : 1, sizeof(*s->ts));
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	return s->ts && s->v ? 0 : -ENOMEM;
}

static bool number(json_object *o, double *v)
{
	if (!json_object_is_type(o, json_type_double) && !json_object_is_type(o, json_type_int))
		return false;
	*v = json_object_get_double(o);
	return isfinite(*v);
}

static bool integer(json_object *o, int64_t *v)
{
	if (!json_object_is_type(o, json_type_int))
		return false;
	*v = json_object_get_int64(o);
	return true;
}

/* One line of /api/v1/export. */
static int export_series(struct answer *a, json_object *o, const char *where, char **err)
{
	json_object *metric, *values, *stamps, *name;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "metric", &metric) ||
	    !json_object_object_get_ex(o, "values", &values) || !json_object_object_get_ex(o, "timestamps", &stamps))
		return stune_errf(err, -EBADMSG, "%s: not a series (no metric, values and timestamps)", where);
	int m = M_KIOPS;
	if (json_object_object_get_ex(metric, "__name__", &name) &&
	    (m = metric_of_name(json_object_get_string(name))) < 0)
		return stune_errf(err, -EBADMSG, "%s: metric '%s', not " STUNE_LP_MEASUREMENT "_kiops or a latency",
				  where, json_object_get_string(name));
	if (!json_object_is_type(values, json_type_array) || !json_object_is_type(stamps, json_type_array) ||
	    json_object_array_length(values) != json_object_array_length(stamps))
		return stune_errf(err, -EBADMSG, "%s: values and timestamps are not two arrays of one length", where);
	struct stune_qseries *s = answer_add(a);
	if (!s)
		return -ENOMEM;
	s->metric = m;
	size_t n = json_object_array_length(values);
	int r = take_labels(a, s, metric, where, err);
	if (r < 0 || (r = series_alloc(s, n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (!number(json_object_array_get_idx(values, i), &s->v[i]) ||
		    !integer(json_object_array_get_idx(stamps, i), &s->ts[i]))
			return stune_errf(err, -EBADMSG,
					  "%s: sample %zu is not a finite number with an integer timestamp", where,
					  i + 1);
	}
	s->n = n;
	return 0;
}

/*
 * /api/v1/export read as it comes: one series per line, each line parsed
 * when its newline arrives and dropped, so the answer is never held whole
 * (stune_http_req.sink); only a line cut by a chunk's end waits in part.
 */
struct export_stream {
	struct answer a;
	json_tokener *tok;
	char *part; /* the line begun in an earlier chunk */
	size_t plen, pcap;
	size_t line;
	char *err; /* the first failure's message */
};

static void export_stream_clear(struct export_stream *x)
{
	answer_clear(&x->a);
	if (x->tok)
		json_tokener_free(x->tok);
	free(x->part);
	free(x->err);
	*x = (struct export_stream){0};
}

static int export_line(struct export_stream *x, const char *p, size_t n)
{
	x->line++;
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 0)
		return 0;
	if (n > STUNE_QUERY_MAX_LINE)
		return stune_errf(&x->err, -EFBIG, "line %zu: longer than %zu bytes", x->line,
				  (size_t)STUNE_QUERY_MAX_LINE);
	char where[32];
	snprintf(where, sizeof(where), "line %zu", x->line);
	if (!x->tok && !(x->tok = json_tokener_new()))
		return -ENOMEM;
	json_tokener_reset(x->tok);
	json_object *o = json_tokener_parse_ex(x->tok, p, (int)n);
	enum json_tokener_error je = json_tokener_get_error(x->tok);
	size_t used = json_tokener_get_parse_end(x->tok);
	if (!o)
		return stune_errf(&x->err, -EBADMSG, "%s: %s", where,
				  je == json_tokener_continue ? "truncated JSON" : "not JSON");
	int r = used != n ? stune_errf(&x->err, -EBADMSG, "%s: text after the JSON object", where)
			  : export_series(&x->a, o, where, &x->err);
	json_object_put(o);
	return r;
}

/* The sink: whole lines parsed in place, a cut one kept for the next chunk. */
static int export_sink(void *arg, const char *p, size_t n)
{
	struct export_stream *x = arg;
	int r;
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n;
		if (!nl || x->plen) { /* the line goes on, or began before: gathered in part */
			if (x->plen + k > STUNE_QUERY_MAX_LINE)
				return stune_errf(&x->err, -EFBIG, "line %zu: longer than %zu bytes", x->line + 1,
						  (size_t)STUNE_QUERY_MAX_LINE);
			if (x->plen + k + 1 > x->pcap) {
				size_t cap = x->pcap ? x->pcap : 4096;
				while (cap < x->plen + k + 1)
					cap *= 2;
				char *np = realloc(x->part, cap);
				if (!np)
					return -ENOMEM;
				x->part = np;
				x->pcap = cap;
			}
			memcpy(x->part + x->plen, p, k);
			x->plen += k;
			if (!nl)
				return 0;
			r = export_line(x, x->part, x->plen);
			x->plen = 0;
		} else
			r = export_line(x, p, k);
		if (r < 0)
			return r;
		p += k + 1;
		n -= k + 1;
	}
	return 0;
}

/* The end of the answer: its last line, when no newline ended it. */
static int export_finish(struct export_stream *x)
{
	int r = x->plen ? export_line(x, x->part, x->plen) : 0;
	x->plen = 0;
	return r;
}

static int parse_export(struct answer *a, const char *body, size_t len, char **err)
{
	struct export_stream x = {0};
	int r = export_sink(&x, body, len);
	if (r == 0)
		r = export_finish(&x);
	if (r == 0) {
		*a = x.a;
		x.a = (struct answer){0};
	} else if (x.err) {
		free(*err);
		*err = steal_pointer(&x.err);
	}
	export_stream_clear(&x);
	return r;
}

/* A whole-body JSON document (prometheus, influxql). */
static int parse_document(const char *body, size_t len, json_object **out, char **err)
{
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	while (len > 0 && isspace((unsigned char)body[len - 1]))
		len--;
	if (len == 0) {
		json_tokener_free(tok);
		return stune_errf(err, -EBADMSG, "an empty answer (no JSON document)");
	}
	json_object *o = json_tokener_parse_ex(tok, body, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o)
		return stune_errf(err, -EBADMSG, "%s", je == json_tokener_continue ? "truncated JSON" : "not JSON");
	if (used != len) {
		json_object_put(o);
		return stune_errf(err, -EBADMSG, "text after the JSON document");
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return stune_errf(err, -EBADMSG, "the answer is not a JSON object");
	}
	*out = o;
	return 0;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		   ? json_object_get_string(v)
		   : NULL;
}

static int prom_series(struct answer *a, json_object *o, const char *where, char **err)
{
	json_object *metric, *values;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "metric", &metric) ||
	    !json_object_object_get_ex(o, "values", &values) || !json_object_is_type(values, json_type_array))
		return stune_errf(err, -EBADMSG, "%s: not a range vector (no metric and values)", where);
	const char *mname = get_str(metric, "__name__");
	int m = mname ? metric_of_name(mname) : M_KIOPS;
	if (m < 0)
		return stune_errf(err, -EBADMSG, "%s: metric '%s', not " STUNE_LP_MEASUREMENT "_kiops or a latency",
				  where, mname);
	struct stune_qseries *s = answer_add(a);
	if (!s)
		return -ENOMEM;
	s->metric = m;
	size_t n = json_object_array_length(values);
	int r = take_labels(a, s, metric, where, err);
	if (r < 0 || (r = series_alloc(s, n)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		json_object *pair = json_object_array_get_idx(values, i);
		double t;
		const char *vs = NULL;
		char *end = NULL;
		if (json_object_is_type(pair, json_type_array) && json_object_array_length(pair) == 2 &&
		    number(json_object_array_get_idx(pair, 0), &t) &&
		    json_object_is_type(json_object_array_get_idx(pair, 1), json_type_string))
			vs = json_object_get_string(json_object_array_get_idx(pair, 1));
		if (vs)
			s->v[i] = strtod(vs, &end);
		if (!vs || end == vs || *end || !isfinite(s->v[i]) || fabs(t) > 1e11)
			return stune_errf(err, -EBADMSG, "%s: sample %zu is not [seconds, \"number\"]", where, i + 1);
		s->ts[i] = llround(t * 1000.0);
	}
	s->n = n;
	return 0;
}

static bool is_true(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static int parse_prometheus(struct answer *a, const char *body, size_t len, char **err)
{
	json_object *doc = NULL, *data, *result;
	int r = parse_document(body, len, &doc, err);
	if (r < 0)
		return r;
	const char *status = get_str(doc, "status"), *type;
	if (!status || strcmp(status, "success")) {
		const char *e = get_str(doc, "error");
		r = stune_errf(err, -EBADMSG, "status %s%s%s", status ? status : "missing", e ? ": " : "", e ? e : "");
	} else if (!json_object_object_get_ex(doc, "data", &data) || !(type = get_str(data, "resultType")) ||
		   !json_object_object_get_ex(data, "result", &result) ||
		   !json_object_is_type(result, json_type_array)) {
		r = stune_errf(err, -EBADMSG, "no data.resultType and data.result array");
	} else if (is_true(doc, "isPartial")) {
		r = stune_errf(err, -EBADMSG, "the answer is partial (isPartial: true): not judged");
	} else if (strcmp(type, "matrix")) {
		r = stune_errf(err, -EBADMSG, "resultType '%s', not matrix (raw samples of a range selector)", type);
	} else {
		for (size_t i = 0; r == 0 && i < json_object_array_length(result); i++) {
			char where[48];
			snprintf(where, sizeof(where), "data.result[%zu]", i);
			r = prom_series(a, json_object_array_get_idx(result, i), where, err);
		}
	}
	json_object_put(doc);
	return r;
}

static int column(json_object *cols, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(cols); i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(cols, i));
		if (c && !strcmp(c, name))
			return (int)i;
	}
	return -1;
}

static int influx_series(struct answer *a, json_object *o, const char *where, char **err)
{
	json_object *tags, *cols, *values;
	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "tags", &tags) ||
	    !json_object_object_get_ex(o, "columns", &cols) || !json_object_object_get_ex(o, "values", &values) ||
	    !json_object_is_type(cols, json_type_array) || !json_object_is_type(values, json_type_array))
		return stune_errf(err, -EBADMSG, "%s: not a series (no tags, columns and values)", where);
	if (is_true(o, "partial"))
		return stune_errf(err, -EBADMSG, "%s: the series is partial (the server cut it: max-row-limit?)",
				  where);
	int ct = column(cols, "time");
	if (ct < 0 || column(cols, "kiops") < 0)
		return stune_errf(err, -EBADMSG, "%s: no time and kiops columns", where);
	size_t n = json_object_array_length(values);
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(values, i);
		if (!json_object_is_type(row, json_type_array) ||
		    json_object_array_length(row) != json_object_array_length(cols))
			return stune_errf(err, -EBADMSG, "%s: row %zu is not [time in ms, kiops, ...]", where, i + 1);
	}
	/* One series per field read: KIOPS in every row; a latency where the row has one (null: the run had none). */
	for (int m = 0; m < M_N; m++) {
		int cv = column(cols, metric_fields[m]);
		if (cv < 0)
			continue;
		struct stune_qseries *s = answer_add(a);
		if (!s)
			return -ENOMEM;
		s->metric = m;
		int r = take_labels(a, s, tags, where, err);
		if (r < 0 || (r = series_alloc(s, n)) < 0)
			return r;
		for (size_t i = 0; i < n; i++) {
			json_object *row = json_object_array_get_idx(values, i);
			json_object *v = json_object_array_get_idx(row, (size_t)cv);
			if (m != M_KIOPS && !v)
				continue;
			if (!integer(json_object_array_get_idx(row, (size_t)ct), &s->ts[s->n]) ||
			    !number(v, &s->v[s->n]))
				return stune_errf(err, -EBADMSG, "%s: row %zu is not [time in ms, %s, ...]", where,
						  i + 1, metric_fields[m]);
			s->n++;
		}
	}
	return 0;
}

static int parse_influxql(struct answer *a, const char *body, size_t len, char **err)
{
	json_object *doc = NULL, *results;
	int r = parse_document(body, len, &doc, err);
	if (r < 0)
		return r;
	const char *e = get_str(doc, "error");
	if (e)
		r = stune_errf(err, -EBADMSG, "error: %s", e);
	else if (!json_object_object_get_ex(doc, "results", &results) || !json_object_is_type(results, json_type_array))
		r = stune_errf(err, -EBADMSG, "no results array");
	for (size_t i = 0; r == 0 && i < json_object_array_length(results); i++) {
		json_object *res = json_object_array_get_idx(results, i), *series;
		if (!json_object_is_type(res, json_type_object)) {
			r = stune_errf(err, -EBADMSG, "results[%zu] is not an object", i);
		} else if ((e = get_str(res, "error"))) {
			r = stune_errf(err, -EBADMSG, "results[%zu]: error: %s", i, e);
		} else if (is_true(res, "partial")) {
			r = stune_errf(err, -EBADMSG, "results[%zu] is partial (the server cut it: max-row-limit?)", i);
		} else if (json_object_object_get_ex(res, "series", &series)) {
			if (!json_object_is_type(series, json_type_array))
				r = stune_errf(err, -EBADMSG, "results[%zu].series is not an array", i);
			for (size_t k = 0; r == 0 && k < json_object_array_length(series); k++) {
				char where[64];
				snprintf(where, sizeof(where), "results[%zu].series[%zu]", i, k);
				r = influx_series(a, json_object_array_get_idx(series, k), where, err);
			}
		}
	}
	json_object_put(doc);
	return r;
}

struct sample {
	int64_t ts;
	double v;
};

static int sample_cmp(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

static int strcmp_null(const char *a, const char *b);

static int tags_cmp(const struct stune_qseries *a, const struct stune_qseries *b)
{
	for (int i = 0; i < STUNE_QL_N; i++) {
		int c = strcmp_null(a->labels[i], b->labels[i]);
		if (c)
			return c;
	}
	return 0;
}

/* Tags, then the field. */
static int labels_cmp(const void *x, const void *y)
{
	const struct stune_qseries *a = x, *b = y;
	int c = tags_cmp(a, b);
	return c ? c : (a->metric > b->metric) - (a->metric < b->metric);
}

/*
 * One series per set of tags: VictoriaMetrics' export may send a series in
 * several lines (one per block of data), and a run uploaded twice under
 * labels the view does not read (db=) is the same run: their samples are
 * put together, and dedup() drops the second of each time.
 */
static int merge(struct answer *a)
{
	if (a->n < 2)
		return 0;
	if (a->n)
		qsort(a->s, a->n, sizeof(*a->s), labels_cmp);
	size_t m = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (m == 0 || labels_cmp(&a->s[m - 1], &a->s[i])) {
			a->s[m++] = a->s[i];
			continue;
		}
		struct stune_qseries *d = &a->s[m - 1], *s = &a->s[i];
		int64_t *ts = realloc(d->ts, (d->n + s->n + 1) * sizeof(*ts));
		if (ts)
			d->ts = ts;
		double *v = realloc(d->v, (d->n + s->n + 1) * sizeof(*v));
		if (v)
			d->v = v;
		if (!ts || !v)
			return -ENOMEM;
		memcpy(d->ts + d->n, s->ts, s->n * sizeof(*ts));
		memcpy(d->v + d->n, s->v, s->n * sizeof(*v));
		d->n += s->n;
		series_clear(s);
	}
	a->n = m;
	return 0;
}

/* Samples in time order; a second sample at the same time of one series is a duplicate, dropped. */
static int dedup(struct answer *a)
{
	for (size_t i = 0; i < a->n; i++) {
		struct stune_qseries *s = &a->s[i];
		bool runs = s->metric == M_KIOPS; /* points and duplicates count runs: their KIOPS */
		if (s->n < 2) {
			a->points += runs ? s->n : 0;
			continue;
		}
		struct sample *v = malloc(s->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t k = 0; k < s->n; k++)
			v[k] = (struct sample){s->ts[k], s->v[k]};
		qsort(v, s->n, sizeof(*v), sample_cmp);
		size_t m = 0;
		for (size_t k = 0; k < s->n; k++) {
			if (m > 0 && v[k].ts == s->ts[m - 1]) {
				a->duplicates += runs;
				continue;
			}
			s->ts[m] = v[k].ts;
			s->v[m++] = v[k].v;
		}
		free(v);
		s->n = m;
		a->points += runs ? m : 0;
	}
	return 0;
}

/* --- the view --- */

static int strcmp_null(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

void stune_fleet_free(struct stune_fleet *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_hosts; i++) {
		struct stune_qhost *h = &f->hosts[i];
		free(h->name);
		free(h->reason);
		free(h->cur.kiops);
		free(h->cur.ts_ms);
		free(h->ref.kiops);
		free(h->ref.ts_ms);
		for (int k = 0; k < STUNE_QPCT_N; k++) {
			free(h->cur.lat[k]);
			free(h->ref.lat[k]);
		}
		free(h->cur.worst_p99);
		free(h->ref.worst_p99);
		free(h->cur.fairness);
		free(h->ref.fairness);
	}
	for (size_t i = 0; i < f->n_lat_series; i++)
		series_clear(&f->lat_series[i]);
	free(f->lat_series);
	free(f->hosts);
	free(f->cohorts);
	for (size_t i = 0; i < f->n_series; i++)
		series_clear(&f->series[i]);
	free(f->series);
	label_pool_free(f->labels);
	free(f->url);
	free(f);
}

struct run {
	int64_t ts;
	double v;
	const struct stune_qseries *s;
};

static int run_cmp(const void *x, const void *y)
{
	const struct run *a = x, *b = y;
	if (a->ts != b->ts)
		return (a->ts > b->ts) - (a->ts < b->ts);
	return strcmp_null(a->s->labels[STUNE_QL_FILE], b->s->labels[STUNE_QL_FILE]);
}

static int series_key_cmp(const struct stune_qseries *s, const char *host, const char *phase)
{
	int c = strcmp(s->labels[STUNE_QL_HOST], host);
	return c ? c : strcmp(s->labels[STUNE_QL_PHASE], phase);
}

static int series_cmp(const void *x, const void *y)
{
	const struct stune_qseries *a = x, *b = y;
	int c = series_key_cmp(a, b->labels[STUNE_QL_HOST], b->labels[STUNE_QL_PHASE]);
	return c ? c : strcmp_null(a->labels[STUNE_QL_SET], b->labels[STUNE_QL_SET]);
}

/* The series of host's phase: f->series[*first .. *last), sorted by set (none first). */
static void series_range(const struct stune_fleet *f, const char *host, const char *phase, size_t *first, size_t *last)
{
	size_t lo = 0, hi = f->n_series;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (series_key_cmp(&f->series[mid], host, phase) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo < f->n_series && series_key_cmp(&f->series[lo], host, phase) == 0)
		lo++;
	*last = lo;
}

static const enum stune_qlabel job_opts[] = {STUNE_QL_RW, STUNE_QL_BS, STUNE_QL_IODEPTH, STUNE_QL_NUMJOBS,
					     STUNE_QL_FIO_VERSION};

/* The first job option whose tag differs between two runs of side, into side->mixed_*. */
static void side_mixed(struct stune_qside *side, const struct stune_qseries *series, size_t first, size_t last)
{
	side->mixed_opt = -1;
	for (size_t i = first + 1; i < last; i++)
		for (size_t k = 0; k < ELEMENTSOF(job_opts); k++)
			if (series[i].n &&
			    strcmp_null(series[first].labels[job_opts[k]], series[i].labels[job_opts[k]])) {
				side->mixed_opt = (int)job_opts[k];
				side->mixed_a = series[first].labels[job_opts[k]];
				side->mixed_b = series[i].labels[job_opts[k]];
				return;
			}
}

/* A job that only writes: its latency is the writes'. */
static bool write_only(const char *rw)
{
	static const char *const w[] = {"write", "randwrite", "trim", "randtrim", "trimwrite"};
	for (size_t i = 0; rw && i < ELEMENTSOF(w); i++)
		if (!strcmp(rw, w[i]))
			return true;
	return false;
}

static int ts_cmp(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* Each run's value of field m: the sample of the same tags, field and time (NAN: none) into *out; *all: every
 * run has one. */
static int join_field(const struct stune_fleet *f, const struct run *runs, size_t n, int m, double **out, bool *all)
{
	if (!(*out = calloc(n, sizeof(double))))
		return -ENOMEM;
	*all = true;
	for (size_t i = 0; i < n; i++) {
		struct stune_qseries key = *runs[i].s;
		key.metric = m;
		const struct stune_qseries *ls =
		    f->n_lat_series ? bsearch(&key, f->lat_series, f->n_lat_series, sizeof(key), labels_cmp) : NULL;
		const int64_t *at = ls && ls->n ? bsearch(&runs[i].ts, ls->ts, ls->n, sizeof(int64_t), ts_cmp) : NULL;
		(*out)[i] = at ? ls->v[at - ls->ts] : NAN;
		*all = *all && at;
	}
	return 0;
}

/* Each run's latency percentiles, worst device p99 and fairness, joined by tags and time. */
static int side_latency(const struct stune_fleet *f, const struct run *runs, size_t n, struct stune_qside *side)
{
	side->lat_write = write_only(runs[0].s->labels[STUNE_QL_RW]);
	int r = 0;
	for (int k = 0; r == 0 && k < STUNE_QPCT_N; k++)
		r = join_field(f, runs, n, (side->lat_write ? M_WRITE_LAT : M_READ_LAT) + k, &side->lat[k],
			       &side->has_lat[k]);
	if (r == 0)
		r = join_field(f, runs, n, M_WORST_P99, &side->worst_p99, &side->has_worst_p99);
	if (r == 0)
		r = join_field(f, runs, n, M_FAIRNESS, &side->fairness, &side->has_fairness);
	return r;
}

/* The newest set of host's phase into side; *found false when the host has no point of it. */
static int take_side(const struct stune_fleet *f, const char *host, const char *phase, struct stune_qside *side,
		     bool *found)
{
	size_t first, last, n = 0;
	*found = false;
	series_range(f, host, phase, &first, &last);
	while (last > first && f->series[last - 1].n == 0)
		last--;
	if (last == first)
		return 0;
	*found = true;
	const char *newest = f->series[last - 1].labels[STUNE_QL_SET];
	while (first < last && strcmp_null(f->series[first].labels[STUNE_QL_SET], newest))
		first++;
	for (size_t i = first; i < last; i++)
		n += f->series[i].n;
	_cleanup_free_ struct run *runs = calloc(n, sizeof(*runs));
	side->kiops = calloc(n, sizeof(double));
	side->ts_ms = calloc(n, sizeof(int64_t));
	if (!runs || !side->kiops || !side->ts_ms)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = first; i < last; i++)
		for (size_t j = 0; j < f->series[i].n; j++)
			runs[k++] = (struct run){f->series[i].ts[j], f->series[i].v[j], &f->series[i]};
	qsort(runs, n, sizeof(*runs), run_cmp);
	for (size_t i = 0; i < n; i++) {
		side->kiops[i] = runs[i].v;
		side->ts_ms[i] = runs[i].ts;
	}
	side->n = n;
	side->set = newest;
	side->labels = (const char *const *)runs[0].s->labels;
	int r = side_latency(f, runs, n, side);
	if (r < 0)
		return r;
	while (first < last && f->series[first].n == 0)
		first++;
	side_mixed(side, f->series, first, last);
	return stune_stats_compute(side->kiops, n, &side->stats);
}

static int set_reason(struct stune_qhost *h, enum stune_qhost_status st, const char *fmt, ...) _printf_(3, 4);
static int set_reason(struct stune_qhost *h, enum stune_qhost_status st, const char *fmt, ...)
{
	va_list ap;
	h->status = st;
	va_start(ap, fmt);
	int r = vasprintf(&h->reason, fmt, ap);
	va_end(ap);
	if (r < 0) {
		h->reason = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The first job option that differs between the two sides, or -1. */
static int differing_option(const struct stune_qside *a, const struct stune_qside *b)
{
	for (size_t i = 0; i < ELEMENTSOF(job_opts) - 1; i++) /* a new fio version alone: same job */
		if (strcmp_null(a->labels[job_opts[i]], b->labels[job_opts[i]]))
			return (int)job_opts[i];
	return -1;
}

/* A side whose runs are not all the same job: apart. */
static int mixed_reason(struct stune_qhost *h, const struct stune_qside *s, const char *phase)
{
	h->apart = STUNE_QAPART_INCOMPARABLE;
	return set_reason(h, STUNE_QHOST_APART, "not comparable: its %s runs are not one job (%s %s and %s)", phase,
			  label_names[s->mixed_opt], s->mixed_a ? s->mixed_a : "unset",
			  s->mixed_b ? s->mixed_b : "unset");
}

/* The profile of a side: its digest, else its name. */
static const char *side_profile(const struct stune_qside *s)
{
	return s->labels[STUNE_QL_PROFILE_DIGEST] ? s->labels[STUNE_QL_PROFILE_DIGEST] : s->labels[STUNE_QL_PROFILE];
}

/* What differs between the two sides of h: the treatment. */
static void treatment(struct stune_qhost *h)
{
	static const enum stune_qlabel what[] = {STUNE_QL_KERNEL, STUNE_QL_PAYLOAD, STUNE_QL_PROFILE,
						 STUNE_QL_FIRMWARE};
	h->n_treatment = 0;
	for (size_t i = 0; i < ELEMENTSOF(what); i++) {
		bool differs = what[i] == STUNE_QL_PROFILE
				   ? strcmp_null(side_profile(&h->ref), side_profile(&h->cur)) != 0
				   : strcmp_null(h->ref.labels[what[i]], h->cur.labels[what[i]]) != 0;
		if (differs)
			h->treatment[h->n_treatment++] = what[i];
	}
}

/* The treatment holds something but the profile: a payload, kernel or firmware experiment. */
static bool treated_beside_profile(const struct stune_qhost *h)
{
	for (size_t i = 0; i < h->n_treatment; i++)
		if (h->treatment[i] != STUNE_QL_PROFILE)
			return true;
	return false;
}

/* Compared, apart (and why) or missing. */
static int classify(const struct stune_query *q, struct stune_qhost *h)
{
	/* The change is shown for every host with both sides, apart or not. */
	h->has_cmp =
	    q->compare && h->has_cur && h->has_ref && stune_stats_compare(&h->ref.stats, &h->cur.stats, &h->cmp) == 0;
	if (!h->has_cur && (!q->compare || !h->has_ref))
		return set_reason(h, STUNE_QHOST_MISSING, "no points in the window");
	if (!h->has_cur)
		return set_reason(h, STUNE_QHOST_MISSING, "no %s points in the window", q->phase);
	if (q->compare && !h->has_ref)
		return set_reason(h, STUNE_QHOST_MISSING, "no %s points in the window", q->compare);
	const char *vs = h->cur.labels[STUNE_QL_VERIFY_STATE];
	if (vs && !strcmp(vs, "drifted")) {
		h->apart = STUNE_QAPART_DRIFTED;
		return set_reason(h, STUNE_QHOST_APART, "drifted: its %s runs were made with the profile not in effect",
				  q->phase);
	}
	if (q->compare)
		treatment(h);
	/* No profile applied matters only where the profile is the treatment: a payload (or kernel,
	 * firmware) experiment runs without one. */
	if (q->compare && vs && !strcmp(vs, "none-applied") && !treated_beside_profile(h)) {
		h->apart = STUNE_QAPART_NOT_APPLIED;
		return set_reason(h, STUNE_QHOST_APART,
				  "not applied: its %s runs were made with no profile applied, and nothing else "
				  "differs from %s",
				  q->phase, q->compare);
	}
	if (h->cur.mixed_opt >= 0)
		return mixed_reason(h, &h->cur, q->phase);
	if (q->compare && h->ref.mixed_opt >= 0)
		return mixed_reason(h, &h->ref, q->compare);
	int opt = q->compare ? differing_option(&h->cur, &h->ref) : -1;
	if (opt >= 0) {
		const char *a = h->ref.labels[opt], *b = h->cur.labels[opt];
		h->apart = STUNE_QAPART_INCOMPARABLE;
		return set_reason(h, STUNE_QHOST_APART, "not comparable: %s %s in %s, %s in %s", label_names[opt],
				  a ? a : "unset", q->compare, b ? b : "unset", q->phase);
	}
	if (q->compare && !h->has_cmp) {
		h->apart = STUNE_QAPART_INCOMPARABLE;
		return set_reason(h, STUNE_QHOST_APART, "not comparable: %s avg KIOPS is 0", q->compare);
	}
	h->status = STUNE_QHOST_COMPARED;
	return 0;
}

static bool same_cohort(const struct stune_qcohort *c, const struct stune_qside *s)
{
	return !strcmp_null(c->kernel, s->labels[STUNE_QL_KERNEL]) &&
	       !strcmp_null(c->payload, s->labels[STUNE_QL_PAYLOAD]) &&
	       !strcmp_null(c->profile_digest ? c->profile_digest : c->profile, side_profile(s)) &&
	       !strcmp_null(c->firmware, s->labels[STUNE_QL_FIRMWARE]);
}

/* Pooled statistics over the runs of the hosts that pass keep(); false when there is no run. */
static int pool(const struct stune_fleet *f, size_t cohort, bool ref, struct stune_stats *out, bool *has)
{
	size_t n = 0;
	*has = false;
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct stune_qhost *h = &f->hosts[i];
		if (h->status == STUNE_QHOST_COMPARED && (!cohort || h->cohort == cohort))
			n += ref ? h->ref.n : h->cur.n;
	}
	if (n == 0)
		return 0;
	_cleanup_free_ double *v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct stune_qhost *h = &f->hosts[i];
		if (h->status != STUNE_QHOST_COMPARED || (cohort && h->cohort != cohort))
			continue;
		const struct stune_qside *s = ref ? &h->ref : &h->cur;
		memcpy(v + k, s->kiops, s->n * sizeof(*v));
		k += s->n;
	}
	int r = stune_stats_compute(v, n, out);
	*has = r == 0;
	return r;
}

static const struct stune_qcohort *cohort_sort_base;

static int cohort_order(const void *x, const void *y)
{
	const struct stune_qcohort *a = &cohort_sort_base[*(const size_t *)x],
				   *b = &cohort_sort_base[*(const size_t *)y];
	if (a->n_hosts != b->n_hosts)
		return a->n_hosts < b->n_hosts ? 1 : -1;
	int c = strcmp_null(a->kernel, b->kernel);
	if (!c)
		c = strcmp_null(a->payload, b->payload);
	if (!c)
		c = strcmp_null(a->profile_digest ? a->profile_digest : a->profile,
				b->profile_digest ? b->profile_digest : b->profile);
	return c ? c : strcmp_null(a->firmware, b->firmware);
}

/* Cohorts of the compared hosts, largest first. */
/* Two hosts with the same treatment: the same items, each with the same two values. */
static bool same_treatment(const struct stune_qhost *a, const struct stune_qhost *b)
{
	if (a->n_treatment != b->n_treatment)
		return false;
	for (size_t i = 0; i < a->n_treatment; i++) {
		enum stune_qlabel l = a->treatment[i];
		if (l != b->treatment[i])
			return false;
		if (l == STUNE_QL_PROFILE ? strcmp_null(side_profile(&a->ref), side_profile(&b->ref)) ||
						strcmp_null(side_profile(&a->cur), side_profile(&b->cur))
					  : strcmp_null(a->ref.labels[l], b->ref.labels[l]) ||
						strcmp_null(a->cur.labels[l], b->cur.labels[l]))
			return false;
	}
	return true;
}

/* Each cohort's treatment: the one its hosts share, or mixed. */
static void cohort_treatments(struct stune_fleet *f, bool compare)
{
	for (size_t i = 0; compare && i < f->n_hosts; i++) {
		const struct stune_qhost *h = &f->hosts[i];
		if (!h->cohort || !h->has_cur || !h->has_ref)
			continue;
		struct stune_qcohort *c = &f->cohorts[h->cohort - 1];
		if (!c->treated_like)
			c->treated_like = h;
		else if (!same_treatment(c->treated_like, h))
			c->treatment_mixed = true;
	}
}

static int cohorts(struct stune_fleet *f)
{
	struct stune_qcohort *c = calloc(f->n_compared ? f->n_compared : 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	f->cohorts = c;
	for (size_t i = 0; i < f->n_hosts; i++) {
		struct stune_qhost *h = &f->hosts[i];
		if (h->status != STUNE_QHOST_COMPARED)
			continue;
		size_t k = 0;
		while (k < f->n_cohorts && !same_cohort(&c[k], &h->cur))
			k++;
		if (k == f->n_cohorts) {
			const char *const *l = h->cur.labels;
			c[k] = (struct stune_qcohort){.kernel = l[STUNE_QL_KERNEL],
						      .payload = l[STUNE_QL_PAYLOAD],
						      .profile = l[STUNE_QL_PROFILE],
						      .profile_digest = l[STUNE_QL_PROFILE_DIGEST],
						      .firmware = l[STUNE_QL_FIRMWARE]};
			f->n_cohorts++;
		}
		c[k].n_hosts++;
		h->cohort = k + 1;
	}
	_cleanup_free_ size_t *order = calloc(f->n_cohorts ? f->n_cohorts : 1, sizeof(*order));
	_cleanup_free_ size_t *rank = calloc(f->n_cohorts ? f->n_cohorts : 1, sizeof(*rank));
	_cleanup_free_ struct stune_qcohort *sorted = calloc(f->n_cohorts ? f->n_cohorts : 1, sizeof(*sorted));
	if (!order || !rank || !sorted)
		return -ENOMEM;
	for (size_t k = 0; k < f->n_cohorts; k++)
		order[k] = k;
	cohort_sort_base = c;
	qsort(order, f->n_cohorts, sizeof(*order), cohort_order);
	for (size_t k = 0; k < f->n_cohorts; k++) {
		sorted[k] = c[order[k]];
		rank[order[k]] = k + 1;
	}
	memcpy(c, sorted, f->n_cohorts * sizeof(*c));
	for (size_t i = 0; i < f->n_hosts; i++)
		if (f->hosts[i].cohort)
			f->hosts[i].cohort = rank[f->hosts[i].cohort - 1];
	for (size_t k = 0; k < f->n_cohorts; k++) {
		int r = pool(f, k + 1, false, &c[k].cur, &c[k].has_cur);
		if (r < 0 || (r = pool(f, k + 1, true, &c[k].ref, &c[k].has_ref)) < 0)
			return r;
		c[k].has_cmp = c[k].has_ref && stune_stats_compare(&c[k].ref, &c[k].cur, &c[k].cmp) == 0;
	}
	return 0;
}

static int str_ptr_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The hosts: the ones asked for, in that order, or every host of the answer, sorted. */
static int host_names(const struct stune_query *q, const struct answer *a, char ***names, size_t *n)
{
	if (q->hosts) {
		*names = calloc(q->n_hosts ? q->n_hosts : 1, sizeof(char *));
		if (!*names)
			return -ENOMEM;
		for (size_t i = 0; i < q->n_hosts; i++)
			(*names)[i] = q->hosts[i];
		*n = q->n_hosts;
		return 0;
	}
	char **v = calloc(a->n ? a->n : 1, sizeof(char *));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < a->n; i++)
		v[k++] = (char *)a->s[i].labels[STUNE_QL_HOST]; /* read only: names, not owned */
	qsort(v, k, sizeof(*v), str_ptr_cmp);
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (m == 0 || strcmp(v[m - 1], v[i]))
			v[m++] = v[i];
	*names = v;
	*n = m;
	return 0;
}

/* Series of other phases or hosts than asked (a server that ignored a filter) are dropped. */
static int keep_asked(const struct stune_query *q, struct answer *a)
{
	_cleanup_free_ char **sorted = NULL;
	if (q->hosts) {
		if (!(sorted = calloc(q->n_hosts ? q->n_hosts : 1, sizeof(char *))))
			return -ENOMEM;
		memcpy(sorted, q->hosts, q->n_hosts * sizeof(char *));
		qsort(sorted, q->n_hosts, sizeof(char *), str_ptr_cmp);
	}
	size_t m = 0;
	for (size_t i = 0; i < a->n; i++) {
		struct stune_qseries *s = &a->s[i];
		const char *host = s->labels[STUNE_QL_HOST];
		bool ok = !strcmp(s->labels[STUNE_QL_PHASE], q->phase) ||
			  (q->compare && !strcmp(s->labels[STUNE_QL_PHASE], q->compare));
		if (ok && sorted)
			ok = bsearch(&host, sorted, q->n_hosts, sizeof(char *), str_ptr_cmp) != NULL;
		if (ok)
			a->s[m++] = *s;
		else
			series_clear(s);
	}
	a->n = m;
	return 0;
}

/* --- impossible answers fail closed --- */

static bool stats_finite(const struct stune_stats *st)
{
	return isfinite(st->avg) && isfinite(st->min) && isfinite(st->max) && isfinite(st->spread) &&
	       (!st->has_stddev || (isfinite(st->stddev) && isfinite(st->cov)));
}

/* ms since 1970 as "2026-12-04 13:05:07 UTC" (or the number, out of range). */
static const char *utc_text(char *buf, size_t size, int64_t ms)
{
	struct stune_utc u;
	if (stune_utc_from_epoch(ms / 1000, &u) < 0)
		snprintf(buf, size, "%" PRId64 " ms", ms);
	else
		snprintf(buf, size, "%04d-%02d-%02d %02d:%02d:%02d UTC", u.year, u.month, u.day, u.hour, u.min, u.sec);
	return buf;
}

/* The verify_state values scsitune itself writes (report/provenance.c). */
static bool known_verify_state(const char *vs)
{
	static const char *const known[] = {"in-effect", "drifted", "profile-changed", "none-applied"};
	for (size_t i = 0; vs && i < ELEMENTSOF(known); i++)
		if (!strcmp(vs, known[i]))
			return true;
	return !vs;
}

/*
 * What no scsitune upload can have written is not judged: a KIOPS value of
 * zero or below, a point more than a second outside the window asked for, a verify_state
 * scsitune does not write. -EBADMSG with *err naming the host, phase and
 * what was wrong.
 */
static int check_series(const struct stune_query *q, const struct stune_qseries *series, size_t n, char **err)
{
	for (size_t i = 0; i < n; i++) {
		const struct stune_qseries *s = &series[i];
		const char *host = s->labels[STUNE_QL_HOST], *phase = s->labels[STUNE_QL_PHASE];
		const char *vs = s->labels[STUNE_QL_VERIFY_STATE];
		if (!known_verify_state(vs))
			return stune_errf(
			    err, -EBADMSG,
			    "host %s, phase %s: verify_state '%s' is none that scsitune writes (in-effect, "
			    "drifted, profile-changed, none-applied)",
			    host, phase, vs);
		for (size_t k = 0; k < s->n; k++) {
			if (s->metric == M_FAIRNESS && s->v[k] > 1 + 1e-9)
				return stune_errf(err, -EBADMSG,
						  "host %s, phase %s: a fairness of %g (Jain's index is at most 1)",
						  host, phase, s->v[k]);
			if (!(s->v[k] > 0))
				return stune_errf(
				    err, -EBADMSG, "host %s, phase %s: a %s value of %g (zero or below: not a run)",
				    host, phase, s->metric == M_KIOPS ? "KIOPS" : metric_fields[s->metric], s->v[k]);
			/* A second of slack: a service may round the window's ends to whole seconds. */
			/* The differences in unsigned: a window's end may be INT64_MAX. */
			if ((s->ts[k] < q->start_ms && (uint64_t)q->start_ms - (uint64_t)s->ts[k] > 1000) ||
			    (s->ts[k] > q->end_ms && (uint64_t)s->ts[k] - (uint64_t)q->end_ms > 1000)) {
				char at[32], from[32], to[32];
				return stune_errf(
				    err, -EBADMSG,
				    "host %s, phase %s: a point at %s, outside the window asked for (%s to "
				    "%s)",
				    host, phase, utc_text(at, sizeof(at), s->ts[k]),
				    utc_text(from, sizeof(from), q->start_ms), utc_text(to, sizeof(to), q->end_ms));
			}
		}
	}
	return 0;
}

/* Every statistic the view shows and the gate judges is a finite number (a sum can overflow). */
static int check_finite(const struct stune_fleet *f, char **err)
{
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct stune_qhost *h = &f->hosts[i];
		if ((h->has_cur && !stats_finite(&h->cur.stats)) || (h->has_ref && !stats_finite(&h->ref.stats)) ||
		    (h->has_cmp && !(isfinite(h->cmp.avg_change) && isfinite(h->cmp.spread_change))))
			return stune_errf(err, -EBADMSG,
					  "host %s: its statistics are not finite numbers (the answer's "
					  "values overflow)",
					  h->name);
	}
	for (size_t i = 0; i < f->n_cohorts; i++) {
		const struct stune_qcohort *c = &f->cohorts[i];
		if ((c->has_cur && !stats_finite(&c->cur)) || (c->has_ref && !stats_finite(&c->ref)))
			return stune_errf(err, -EBADMSG, "cohort %zu: its statistics are not finite numbers", i + 1);
	}
	if ((f->has_cur && !stats_finite(&f->cur)) || (f->has_ref && !stats_finite(&f->ref)) ||
	    (f->has_cmp && !(isfinite(f->cmp.avg_change) && isfinite(f->cmp.spread_change))))
		return stune_errf(err, -EBADMSG,
				  "the selection's statistics are not finite numbers (the answer's "
				  "values overflow)");
	return 0;
}

/* The latency series out of a into f->lat_series (in a's order: by tags and field), the KIOPS ones kept. */
static int split_latency(struct stune_fleet *f, struct answer *a)
{
	size_t n = 0, m = 0;
	for (size_t i = 0; i < a->n; i++)
		n += a->s[i].metric != M_KIOPS;
	if (!n)
		return 0;
	if (!(f->lat_series = calloc(n, sizeof(*f->lat_series))))
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		if (a->s[i].metric != M_KIOPS)
			f->lat_series[f->n_lat_series++] = a->s[i];
		else
			a->s[m++] = a->s[i];
	}
	a->n = m;
	return 0;
}

static int build(const struct stune_query *q, struct stune_fleet *f, struct answer *a, char **err)
{
	char from[32], to[32];
	_cleanup_free_ char **names = NULL;
	size_t n = 0;
	int r;
	if ((r = keep_asked(q, a)) < 0 || (r = merge(a)) < 0 || (r = dedup(a)) < 0 || (r = split_latency(f, a)) < 0)
		return r;
	if (a->n) /* qsort wants a non-NULL base even for 0 items */
		qsort(a->s, a->n, sizeof(*a->s), series_cmp);
	f->series = a->s;
	f->labels = a->labels; /* the series' label values */
	f->n_series = a->n;
	f->n_points = a->points;
	f->n_duplicates = a->duplicates;
	*a = (struct answer){0};
	if (f->n_points == 0)
		return stune_errf(err, -ENODATA, "no point of phase %s%s%s in the answer, between %s and %s", q->phase,
				  q->compare ? " or " : "", q->compare ? q->compare : "",
				  utc_text(from, sizeof(from), q->start_ms), utc_text(to, sizeof(to), q->end_ms));
	if ((r = check_series(q, f->series, f->n_series, err)) < 0 ||
	    (r = check_series(q, f->lat_series, f->n_lat_series, err)) < 0)
		return r;
	if ((r = host_names(q, &(struct answer){.s = f->series, .n = f->n_series}, &names, &n)) < 0)
		return r;
	if (!(f->hosts = calloc(n ? n : 1, sizeof(*f->hosts))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct stune_qhost *h = &f->hosts[f->n_hosts++];
		if (!(h->name = strdup(names[i])))
			return -ENOMEM;
		if ((r = take_side(f, h->name, q->phase, &h->cur, &h->has_cur)) < 0 ||
		    (q->compare && (r = take_side(f, h->name, q->compare, &h->ref, &h->has_ref)) < 0) ||
		    (r = classify(q, h)) < 0)
			return r;
		f->n_compared += h->status == STUNE_QHOST_COMPARED;
		f->n_apart += h->status == STUNE_QHOST_APART;
		f->n_drifted += h->apart == STUNE_QAPART_DRIFTED || h->apart == STUNE_QAPART_NOT_APPLIED;
		f->n_missing += h->status == STUNE_QHOST_MISSING;
	}
	if ((r = cohorts(f)) < 0)
		return r;
	cohort_treatments(f, q->compare != NULL);
	if ((r = pool(f, 0, false, &f->cur, &f->has_cur)) < 0 || (r = pool(f, 0, true, &f->ref, &f->has_ref)) < 0)
		return r;
	f->has_cmp = f->has_ref && f->has_cur && stune_stats_compare(&f->ref, &f->cur, &f->cmp) == 0;
	return check_finite(f, err);
}

/* The answer's series, by its API's format. */
static int parse_answer(enum stune_query_api api, struct answer *a, const char *body, size_t len, char **err)
{
	return api == STUNE_QUERY_INFLUXQL     ? parse_influxql(a, body, len, err)
	       : api == STUNE_QUERY_PROMETHEUS ? parse_prometheus(a, body, len, err)
					       : parse_export(a, body, len, err);
}

/* The view from an answer's series (a: taken, cleared). */
static int fleet_from_series(const struct stune_query *q, enum stune_query_api api, struct answer *a,
			     struct stune_fleet **out, char **err)
{
	_cleanup_(stune_fleet_freep) struct stune_fleet *f = calloc(1, sizeof(*f));
	if (!f) {
		answer_clear(a);
		return -ENOMEM;
	}
	f->api = api;
	int r = build(q, f, a, err);
	answer_clear(a);
	if (r < 0)
		return r;
	*out = steal_pointer(&f);
	return 0;
}

int stune_fleet_from_answer(const struct stune_query *q, enum stune_query_api api, const char *body, size_t len,
			    struct stune_fleet **out, char **err)
{
	struct answer a = {0};
	int r = parse_answer(api, &a, body, len, err);
	if (r < 0) {
		answer_clear(&a);
		return r == -ENOMEM && !*err ? stune_errf(err, r, "out of memory") : r;
	}
	return fleet_from_series(q, api, &a, out, err);
}

int stune_fleet_from_export_pieces(const struct stune_query *q, const char *const *pieces, const size_t *lens, size_t n,
				   struct stune_fleet **out, char **err)
{
	struct export_stream x = {0};
	int r = 0;
	for (size_t i = 0; r == 0 && i < n; i++)
		r = export_sink(&x, pieces[i], lens[i]);
	if (r == 0)
		r = export_finish(&x);
	if (r < 0) {
		if (x.err) {
			free(*err);
			*err = steal_pointer(&x.err);
		}
		export_stream_clear(&x);
		return r == -ENOMEM && !*err ? stune_errf(err, r, "out of memory") : r;
	}
	struct answer a = x.a;
	x.a = (struct answer){0};
	export_stream_clear(&x);
	return fleet_from_series(q, STUNE_QUERY_EXPORT, &a, out, err);
}

/*
 * Nothing in the window: one more ask, a year back from the window's end, and
 * *err says how many points of the phases are older and when the newest was
 * (a window too short is the usual reason). Best effort: any failure leaves
 * *err as it was.
 */
static void older_points(const struct stune_query *q, const struct stune_http_req *req0, enum stune_query_api api,
			 char **err)
{
	struct stune_query wide = *q;
	wide.start_ms = q->end_ms - (int64_t)365 * 86400000;
	_cleanup_free_ char *form = NULL, *e = NULL;
	if (stune_query_form(&wide, api, &form) < 0)
		return;
	struct stune_http_req req = *req0;
	req.body = form;
	req.len = strlen(form);
	req.sink = NULL; /* kept whole (under the cap): only counted */
	req.sink_arg = NULL;
	struct stune_http_resp resp = {0};
	struct answer a = {0};
	if (stune_http_post(&req, &resp, &e) == 0 && resp.status == 200) {
		const char *body = resp.body ? resp.body : "";
		int r = parse_answer(api, &a, body, resp.len, &e);
		size_t n = 0;
		int64_t newest = 0;
		for (size_t i = 0; r == 0 && i < a.n; i++)
			for (size_t k = 0; a.s[i].metric == M_KIOPS && k < a.s[i].n; k++)
				if (a.s[i].ts[k] < q->start_ms) {
					n++;
					newest = a.s[i].ts[k] > newest ? a.s[i].ts[k] : newest;
				}
		char at[32];
		char *more = NULL;
		int64_t days = (q->end_ms - newest) / 86400000 + 1;
		if (r == 0 && (n ? asprintf(&more,
					    "%s; %zu older point%s of these phases, the newest at %s (--since %" PRId64
					    "d takes it)",
					    *err, n, n == 1 ? "" : "s", utc_text(at, sizeof(at), newest), days)
				 : asprintf(&more, "%s, nor in the year before", *err)) >= 0) {
			free(*err);
			*err = more;
		}
	}
	free(resp.body);
	answer_clear(&a);
}

int stune_query_run(const struct stune_query *q, const struct stune_query_cb *cb, struct stune_fleet **out, char **err)
{
	_cleanup_free_ char *url = NULL, *form = NULL;
	enum stune_query_api api = q->api;
	int r = stune_query_url(q->url, q->api, &url, &api, err);
	if (r < 0)
		return r;
	if ((r = stune_query_form(q, api, &form)) < 0)
		return r;
	struct stune_http_req req = {.url = url,
				     .content_type = "application/x-www-form-urlencoded",
				     .body = form,
				     .len = strlen(form),
				     .ca_file = q->ca_file,
				     .auth = q->auth,
				     .timeout_s = q->timeout_s,
				     .max_body = STUNE_QUERY_MAX_ANSWER,
				     .what = "query"};
	/* The export API's answer is read as it comes (export_sink): never held
	 * whole, so no cap on its size; the others are one JSON document each. */
	struct export_stream x = {0};
	if (api == STUNE_QUERY_EXPORT) {
		req.sink = export_sink;
		req.sink_arg = &x;
	}
	struct stune_http_resp resp = {0};
	for (int t = 0; t < 3; t++) {
		free(resp.body);
		free(*err);
		*err = NULL;
		export_stream_clear(&x); /* a try cut short starts over */
		r = stune_http_post(&req, &resp, err);
		if (r < 0 && x.err) { /* the sink stopped it: its message, never retried */
			free(*err);
			*err = steal_pointer(&x.err);
			break;
		}
		if (r != -EAGAIN || t == 2)
			break;
		if (cb && cb->retry)
			cb->retry(cb->data, *err ? *err : strerror(-r), 1u << t);
		sleep(1u << t);
	}
	if (r == 0 && resp.status != 200)
		r = stune_errf(err, -EBADMSG,
			       "HTTP %ld: the query APIs answer 200; any other answer (partial "
			       "content, not authoritative) is not judged",
			       resp.status);
	if (r == 0 && api == STUNE_QUERY_EXPORT && (r = export_finish(&x)) < 0 && x.err) {
		free(*err);
		*err = steal_pointer(&x.err);
	}
	if (r < 0) {
		export_stream_clear(&x);
		free(resp.body);
		return r == -ENOMEM && !*err ? stune_errf(err, r, "out of memory") : r;
	}
	if (api == STUNE_QUERY_EXPORT) {
		struct answer a = x.a;
		x.a = (struct answer){0};
		export_stream_clear(&x);
		r = fleet_from_series(q, api, &a, out, err);
	} else
		r = stune_fleet_from_answer(q, api, resp.body ? resp.body : "", resp.len, out, err);
	free(resp.body);
	if (r == -ENODATA)
		older_points(q, &req, api, err);
	if (r == 0 && !((*out)->url = strdup(url)))
		return -ENOMEM;
	return r;
}
