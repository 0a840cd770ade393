/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/fio.h"

#include "stats/rank.h"

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

#include "core/ctx.h"
#include "core/strv.h"
#include "core/userfile.h"
#include "core/utf8.h"

/* fio's JSON is a few MB at most (json+ with 16 jobs is ~1 MB); refuse absurd files. */
#define FIO_MAX_FILE_BYTES (256u << 20)

const double stune_pct_levels[STUNE_N_PCT] = {50.0, 99.0, 99.9};

const char *stune_fio_dir_name(enum stune_fio_dir d)
{
	return d == STUNE_FIO_READ ? "read" : "write";
}

const char *stune_pct_source_name(enum stune_pct_source s)
{
	switch (s) {
	case STUNE_PCT_FIO:
		return "fio";
	case STUNE_PCT_BINS:
		return "merged-bins";
	case STUNE_PCT_MAX_OF_JOBS:
		return "max-of-jobs";
	case STUNE_PCT_NONE:
		break;
	}
	return "none";
}

static void kv_free(struct stune_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

/* Free what a run owns (not the run itself). */
static void run_clear(struct stune_fio_run *r)
{
	for (size_t i = 0; i < r->n_jobs; i++) {
		struct stune_fio_job *j = &r->jobs[i];
		free(j->name);
		kv_free(j->options, j->n_options);
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			stune_hist_clear(&j->io[d].clat.bins);
	}
	free(r->jobs);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		stune_hist_clear(&r->total[d].clat.bins);
	for (size_t i = 0; i < r->n_devs; i++)
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			stune_hist_clear(&r->devs[i].clat[d].bins);
	free(r->devs);
	kv_free(r->global_options, r->n_global_options);
	free(r->path);
	free(r->fio_version);
	free(r->time);
}

void stune_fio_run_free(struct stune_fio_run *r)
{
	if (!r)
		return;
	run_clear(r);
	free(r);
}

const char *stune_fio_job_option(const struct stune_fio_run *r, const struct stune_fio_job *j, const char *key)
{
	for (size_t i = 0; j && i < j->n_options; i++)
		if (!strcmp(j->options[i].key, key))
			return j->options[i].value;
	for (size_t i = 0; i < r->n_global_options; i++)
		if (!strcmp(r->global_options[i].key, key))
			return r->global_options[i].value;
	return NULL;
}

/*
 * The document as a flat array of tokens (no tree, no allocation per value):
 * an object is its token, then each member's key (a string) and value; an
 * array is its token, then its elements; every token knows where the value
 * after it starts (next), so skipping a value is O(1). A file is read by a
 * strict tokenizer straight from its buffer (strings without escapes point
 * into it); what it does not take (escapes \u, non-strict syntax, numbers
 * beyond int64, several documents, text after the document, duplicate keys
 * where order or count matters) is read by json-c as before and turned into
 * the same tokens, so both give one model, one set of messages.
 */
enum jt { JT_NULL, JT_BOOL, JT_INT, JT_BIG, JT_DOUBLE, JT_STRING, JT_OBJECT, JT_ARRAY };

struct jtok {
	unsigned char type; /* enum jt; JT_BIG: a json-c integer above INT64_MAX (d holds it) */
	bool b;
	uint32_t len;  /* JT_STRING: bytes; JT_DOUBLE from the tokenizer: the number's text */
	uint32_t n;    /* JT_OBJECT: members; JT_ARRAY: elements */
	uint32_t next; /* the first token after this value and all inside it */
	const char *s; /* JT_STRING (not NUL-terminated), JT_DOUBLE's text */
	union {
		int64_t i; /* JT_INT */
		double d;  /* JT_BIG, JT_DOUBLE */
	};
	json_object *jc; /* the json-c value it stands for (documents json-c read), else NULL */
};

#define JNONE SIZE_MAX
/* Not an error: the tokenizer or the fast reading leaves this document to json-c. */
#define JSON_C_READS (-EAGAIN)
/* json-c's default nesting limit is 32; deeper documents go to json-c for its message. */
#define JDEPTH_MAX 30

struct jdoc {
	struct jtok *t;
	size_t n, cap;
	char *arena; /* strings with escapes, decoded (never longer than the input) */
	size_t arena_used;
};

static void jdoc_clear(struct jdoc *d)
{
	free(d->t);
	free(d->arena);
	*d = (struct jdoc){0};
}

static int jpush(struct jdoc *d, size_t *idx)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		struct jtok *nt = realloc(d->t, cap * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		d->t = nt;
		d->cap = cap;
	}
	*idx = d->n++;
	d->t[*idx] = (struct jtok){.next = (uint32_t)d->n};
	return 0;
}

static size_t skip_ws(const char *buf, size_t len, size_t pos)
{
	while (pos < len && (buf[pos] == ' ' || buf[pos] == '\n' || buf[pos] == '\t' || buf[pos] == '\r'))
		pos++;
	return pos;
}

/* A string at buf[pos] == '"': its token; *pos after the closing quote. */
static int tok_string(struct jdoc *d, const char *buf, size_t len, size_t *pos, size_t ti)
{
	size_t start = ++*pos, i = start;
	while (i < len && buf[i] != '"' && buf[i] != '\\' && (unsigned char)buf[i] >= 0x20)
		i++;
	if (i >= len || (unsigned char)buf[i] < 0x20)
		return JSON_C_READS;
	if (buf[i] == '"') {
		d->t[ti] = (struct jtok){
		    .type = JT_STRING, .s = buf + start, .len = (uint32_t)(i - start), .next = (uint32_t)ti + 1};
		*pos = i + 1;
		return 0;
	}
	/* Escapes: decoded into the arena (simple ones; \u is json-c's). */
	if (!d->arena && !(d->arena = malloc(len + 1)))
		return -ENOMEM;
	char *out = d->arena + d->arena_used, *o = out;
	memcpy(o, buf + start, i - start);
	o += i - start;
	for (;;) {
		if (i >= len)
			return JSON_C_READS;
		char c = buf[i];
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			return JSON_C_READS;
		if (c != '\\') {
			*o++ = c;
			i++;
			continue;
		}
		if (i + 1 >= len)
			return JSON_C_READS;
		switch (buf[i + 1]) {
		case '"':
		case '\\':
		case '/':
			*o++ = buf[i + 1];
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		default:
			return JSON_C_READS;
		}
		i += 2;
	}
	d->arena_used += (size_t)(o - out);
	d->t[ti] = (struct jtok){.type = JT_STRING, .s = out, .len = (uint32_t)(o - out), .next = (uint32_t)ti + 1};
	*pos = i + 1;
	return 0;
}

/* A number (strict JSON) at buf[pos]: JT_INT when it has no '.', 'e' or 'E' and fits int64 (json-c's rule). */
static int tok_number(struct jdoc *d, const char *buf, size_t len, size_t *pos, size_t ti)
{
	size_t i = *pos, start = i;
	bool dbl = false;
	if (buf[i] == '-')
		i++;
	if (i >= len || buf[i] < '0' || buf[i] > '9')
		return JSON_C_READS;
	if (buf[i] == '0' && i + 1 < len && buf[i + 1] >= '0' && buf[i + 1] <= '9')
		return JSON_C_READS; /* a leading zero */
	while (i < len && buf[i] >= '0' && buf[i] <= '9')
		i++;
	if (i < len && buf[i] == '.') {
		dbl = true;
		if (++i >= len || buf[i] < '0' || buf[i] > '9')
			return JSON_C_READS;
		while (i < len && buf[i] >= '0' && buf[i] <= '9')
			i++;
	}
	if (i < len && (buf[i] == 'e' || buf[i] == 'E')) {
		dbl = true;
		if (++i < len && (buf[i] == '+' || buf[i] == '-'))
			i++;
		if (i >= len || buf[i] < '0' || buf[i] > '9')
			return JSON_C_READS;
		while (i < len && buf[i] >= '0' && buf[i] <= '9')
			i++;
	}
	char text[64];
	if (i - start >= sizeof(text))
		return JSON_C_READS;
	memcpy(text, buf + start, i - start);
	text[i - start] = '\0';
	struct jtok *t = &d->t[ti];
	*t = (struct jtok){.type = dbl ? JT_DOUBLE : JT_INT, .next = (uint32_t)ti + 1};
	if (dbl) {
		t->d = strtod(text, NULL); /* json-c: strtod, out-of-range values kept as strtod gives them */
		t->s = buf + start;
		t->len = (uint32_t)(i - start);
	} else {
		errno = 0;
		t->i = strtoll(text, NULL, 10);
		if (errno)
			return JSON_C_READS; /* beyond int64: json-c keeps it as uint64 */
	}
	*pos = i;
	return 0;
}

/* One JSON document at buf (strict), into d; *end: where it ends. JSON_C_READS: not for this tokenizer. */
static int tokenize(struct jdoc *d, const char *buf, size_t len, size_t *end)
{
	size_t stack[JDEPTH_MAX];
	int depth = 0, r;
	size_t pos = skip_ws(buf, len, 0), ti;

	for (;;) {
		/* A value at pos. */
		if (pos >= len)
			return JSON_C_READS;
		if ((r = jpush(d, &ti)) < 0)
			return r;
		if (depth > 0 && d->t[stack[depth - 1]].type == JT_ARRAY)
			d->t[stack[depth - 1]].n++;
		char c = buf[pos];
		bool open = false;
		if (c == '{' || c == '[') {
			if (depth == JDEPTH_MAX)
				return JSON_C_READS;
			d->t[ti].type = c == '{' ? JT_OBJECT : JT_ARRAY;
			stack[depth++] = ti;
			pos = skip_ws(buf, len, pos + 1);
			if (pos < len && buf[pos] == (c == '{' ? '}' : ']')) {
				d->t[ti].next = (uint32_t)d->n;
				depth--;
				pos++;
			} else if (c == '{') {
				/* The first key. */
				if (pos >= len || buf[pos] != '"' || (r = jpush(d, &ti)) < 0 ||
				    (r = tok_string(d, buf, len, &pos, ti)) < 0)
					return r < 0 ? r : JSON_C_READS;
				d->t[stack[depth - 1]].n++;
				pos = skip_ws(buf, len, pos);
				if (pos >= len || buf[pos] != ':')
					return JSON_C_READS;
				pos = skip_ws(buf, len, pos + 1);
				open = true;
			} else
				open = true;
		} else if (c == '"') {
			if ((r = tok_string(d, buf, len, &pos, ti)) < 0)
				return r;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			if ((r = tok_number(d, buf, len, &pos, ti)) < 0)
				return r;
		} else if (len - pos >= 4 && !memcmp(buf + pos, "true", 4)) {
			d->t[ti].type = JT_BOOL;
			d->t[ti].b = true;
			pos += 4;
		} else if (len - pos >= 5 && !memcmp(buf + pos, "false", 5)) {
			d->t[ti].type = JT_BOOL;
			pos += 5;
		} else if (len - pos >= 4 && !memcmp(buf + pos, "null", 4)) {
			d->t[ti].type = JT_NULL;
			pos += 4;
		} else
			return JSON_C_READS;
		if (open)
			continue;
		/* After a value: the next member or element, or the end of containers. */
		for (;;) {
			if (depth == 0) {
				*end = pos;
				return 0;
			}
			pos = skip_ws(buf, len, pos);
			if (pos >= len)
				return JSON_C_READS;
			size_t top = stack[depth - 1];
			bool obj = d->t[top].type == JT_OBJECT;
			if (buf[pos] == (obj ? '}' : ']')) {
				d->t[top].next = (uint32_t)d->n;
				depth--;
				pos++;
				continue;
			}
			if (buf[pos] != ',')
				return JSON_C_READS;
			pos = skip_ws(buf, len, pos + 1);
			if (obj) {
				if (pos >= len || buf[pos] != '"' || (r = jpush(d, &ti)) < 0 ||
				    (r = tok_string(d, buf, len, &pos, ti)) < 0)
					return r < 0 ? r : JSON_C_READS;
				d->t[top].n++;
				pos = skip_ws(buf, len, pos);
				if (pos >= len || buf[pos] != ':')
					return JSON_C_READS;
				pos = skip_ws(buf, len, pos + 1);
			}
			break;
		}
	}
}

/* A document json-c read, as tokens (json-c's order of members, its values). */
static int from_json_c(struct jdoc *d, json_object *o)
{
	size_t ti;
	int r = jpush(d, &ti);
	if (r < 0)
		return r;
	struct jtok *t = &d->t[ti];
	t->jc = o;
	switch (json_object_get_type(o)) {
	case json_type_null:
		t->type = JT_NULL;
		break;
	case json_type_boolean:
		t->type = JT_BOOL;
		t->b = json_object_get_boolean(o);
		break;
	case json_type_int:
		if (json_object_get_int64(o) == INT64_MAX && json_object_get_double(o) > (double)INT64_MAX) {
			t->type = JT_BIG;
			t->d = json_object_get_double(o);
		} else {
			t->type = JT_INT;
			t->i = json_object_get_int64(o);
		}
		break;
	case json_type_double:
		t->type = JT_DOUBLE;
		t->d = json_object_get_double(o);
		break;
	case json_type_string:
		t->type = JT_STRING;
		t->s = json_object_get_string(o);
		t->len = (uint32_t)json_object_get_string_len(o);
		break;
	case json_type_object: {
		t->type = JT_OBJECT;
		t->n = (uint32_t)json_object_object_length(o);
		json_object_object_foreach(o, key, val)
		{
			size_t ki;
			if ((r = jpush(d, &ki)) < 0)
				return r;
			d->t[ki].type = JT_STRING;
			d->t[ki].s = key;
			d->t[ki].len = (uint32_t)strlen(key);
			if ((r = from_json_c(d, val)) < 0)
				return r;
		}
		break;
	}
	case json_type_array: {
		size_t n = json_object_array_length(o);
		t->type = JT_ARRAY;
		t->n = (uint32_t)n;
		/* t moves when the array grows: not used below. */
		for (size_t k = 0; k < n; k++)
			if ((r = from_json_c(d, json_object_array_get_idx(o, k))) < 0)
				return r;
		break;
	}
	}
	d->t[ti].next = (uint32_t)d->n;
	return 0;
}

/* Parse state: the error message is set once, by the innermost failure. */
struct parse {
	struct stune_ctx *ctx;
	const char *path;
	char *err;
	bool old_keys;
	const struct jdoc *doc;
	char **warnings; /* kept until the document is read: a fast reading given up says nothing */
	size_t n_warnings;
	size_t not_utf8; /* bytes of kept strings that were not UTF-8 (now U+FFFD) */
	bool not_fio;	 /* the failure: no fio document at all (empty, not JSON, not fio's) */
};

static int fail(struct parse *p, const char *fmt, ...) _printf_(2, 3);
static int fail(struct parse *p, const char *fmt, ...)
{
	if (!p->err) {
		va_list ap;
		va_start(ap, fmt);
		if (vasprintf(&p->err, fmt, ap) < 0)
			p->err = NULL;
		va_end(ap);
		if (!p->err)
			return -ENOMEM;
	}
	return -EINVAL;
}

static void warn(struct parse *p, const char *fmt, ...) _printf_(2, 3);
static void warn(struct parse *p, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	if (!p->ctx)
		return;
	va_start(ap, fmt);
	int r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0 || stune_grow(&p->warnings, p->n_warnings, sizeof(*p->warnings)) < 0)
		return;
	p->warnings[p->n_warnings++] = steal_pointer(&msg);
}

/* Send the warnings kept, in order. */
static void warnings_flush(struct parse *p)
{
	for (size_t i = 0; i < p->n_warnings; i++) {
		stune_log(p->ctx, STUNE_LOG_WARNING, p->path, "%s", p->warnings[i]);
		free(p->warnings[i]);
	}
	free(p->warnings);
	p->warnings = NULL;
	p->n_warnings = 0;
}

static const struct jtok *jt(const struct parse *p, size_t v)
{
	return &p->doc->t[v];
}

static bool jis(const struct parse *p, size_t v, enum jt type)
{
	return v != JNONE && p->doc->t[v].type == type;
}

/* json_object_is_type(v, json_type_int): JT_BIG is an integer too. */
static bool jis_int(const struct parse *p, size_t v)
{
	return jis(p, v, JT_INT) || jis(p, v, JT_BIG);
}

/* The value of member key of object obj (the last of that name: json-c keeps the last), JNONE if none. */
static size_t jget(const struct parse *p, size_t obj, const char *key)
{
	const struct jdoc *d = p->doc;
	if (!jis(p, obj, JT_OBJECT))
		return JNONE;
	size_t klen = strlen(key), found = JNONE, k = obj + 1;
	for (uint32_t m = 0; m < d->t[obj].n; m++) {
		if (d->t[k].len == klen && !memcmp(d->t[k].s, key, klen))
			found = k + 1;
		k = d->t[k + 1].next;
	}
	return found;
}

static double jnum(const struct parse *p, size_t v)
{
	const struct jtok *t = jt(p, v);
	return t->type == JT_INT ? (double)t->i : t->d;
}

static int64_t jint64(const struct parse *p, size_t v)
{
	return jt(p, v)->type == JT_BIG ? INT64_MAX : jt(p, v)->i;
}

/* json_object_get_int: int64 clamped to int. */
static int jint(const struct parse *p, size_t v)
{
	int64_t x = jint64(p, v);
	return x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int)x;
}

/* A string kept from the document: always UTF-8 (job names and options go
 * into JSON, saved sets, the service's tags and HTML), a stray byte U+FFFD. */
static char *jstrdup(struct parse *p, size_t v)
{
	return stune_utf8_dup_valid(jt(p, v)->s, jt(p, v)->len, &p->not_utf8);
}

static bool is_num(const struct parse *p, size_t v)
{
	return jis_int(p, v) || jis(p, v, JT_DOUBLE);
}

/* A number under key; absent: *out = 0 unless required. Negative values are refused. */
static int get_num(struct parse *p, size_t obj, const char *key, const char *where, bool required, double *out)
{
	size_t v = jget(p, obj, key);
	*out = 0;
	if (v == JNONE || jis(p, v, JT_NULL)) {
		if (required)
			return fail(p, "%s: no '%s'", where, key);
		return 0;
	}
	if (!is_num(p, v))
		return fail(p, "%s: '%s' is not a number", where, key);
	double x = jnum(p, v);
	if (!isfinite(x) || x < 0)
		return fail(p, "%s: '%s' is negative or not finite", where, key);
	*out = x;
	return 0;
}

/* 2^63: every count, size and time fits an int64_t below it (the line protocol's integers are signed). */
#define FIO_INT_LIMIT 9223372036854775808.0
/* 10000-01-01T00:00:00Z in seconds since 1970. */
#define FIO_YEAR_10000_S INT64_C(253402300800)

static int out_of_range(struct parse *p, const char *where, const char *key, double x)
{
	return fail(p, "%s: '%s' is out of range (%g)", where, key, x);
}

/* An integer field: a number from 0 to 2^63 - 1 (fractions are cut). */
static int get_u64(struct parse *p, size_t obj, const char *key, const char *where, bool required, uint64_t *out)
{
	double x;
	int r = get_num(p, obj, key, where, required, &x);
	if (r < 0)
		return r;
	if (!(x < FIO_INT_LIMIT))
		return out_of_range(p, where, key, x);
	*out = (uint64_t)x;
	return 0;
}

/* a + b for the totals of all jobs, or an error naming the field. */
static int add_u64(struct parse *p, const char *key, const char *dir, uint64_t *a, uint64_t b)
{
	if (*a + b < *a || *a + b >= (uint64_t)1 << 63)
		return fail(p, "%s: the jobs' '%s' sum is out of range", dir, key);
	*a += b;
	return 0;
}

static int add_dbl(struct parse *p, const char *key, const char *dir, double *a, double b)
{
	if (!isfinite(*a + b))
		return fail(p, "%s: the jobs' '%s' sum is out of range", dir, key);
	*a += b;
	return 0;
}

/* x * scale (usec to ns for fio < 2.99) must stay finite. */
static int scaled(struct parse *p, const char *where, const char *key, double *x, double scale)
{
	if (!isfinite(*x * scale))
		return out_of_range(p, where, key, *x);
	*x *= scale;
	return 0;
}

/* A value other than a string, as json-c writes it (json_object_to_json_string). */
static char *json_text(struct parse *p, size_t v)
{
	const struct jtok *t = jt(p, v);
	if (t->jc) {
		const char *text = json_object_to_json_string(t->jc);
		return stune_utf8_dup_valid(text, strlen(text), &p->not_utf8);
	}
	if (t->type == JT_NULL)
		return strdup("null");
	if (t->type == JT_BOOL)
		return strdup(t->b ? "true" : "false");
	if (t->type == JT_INT)
		return stune_strdupf("%" PRId64, t->i);
	if (t->type == JT_DOUBLE) /* json-c writes a parsed double as it was written */
		return strndup(t->s, t->len);
	return NULL; /* an object or array: json-c's spacing, json-c writes it */
}

/* An object of strings ("job options", "global options"); non-strings are written as JSON. */
static int parse_options(struct parse *p, size_t obj, const char *where, struct stune_kv **out, size_t *n_out)
{
	if (!jis(p, obj, JT_OBJECT))
		return fail(p, "%s is not an object", where);
	size_t n = jt(p, obj)->n, k = 0;
	if (n == 0)
		return 0;
	if (!jt(p, obj)->jc) /* a key twice: json-c keeps one, at the first place */
		for (size_t a = obj + 1, i = 0; i < n; a = jt(p, a + 1)->next, i++)
			for (size_t b = obj + 1, j = 0; j < i; b = jt(p, b + 1)->next, j++)
				if (jt(p, a)->len == jt(p, b)->len && !memcmp(jt(p, a)->s, jt(p, b)->s, jt(p, a)->len))
					return JSON_C_READS;
	struct stune_kv *kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (size_t key = obj + 1, i = 0; i < n; key = jt(p, key + 1)->next, i++) {
		size_t val = key + 1;
		if (!jis(p, val, JT_STRING) && !jt(p, val)->jc && (jis(p, val, JT_OBJECT) || jis(p, val, JT_ARRAY))) {
			kv_free(kv, k);
			return JSON_C_READS;
		}
		kv[k].key = jstrdup(p, key);
		kv[k].value = jis(p, val, JT_STRING) ? jstrdup(p, val) : json_text(p, val);
		if (!kv[k].key || !kv[k++].value) {
			kv_free(kv, k);
			return -ENOMEM;
		}
	}
	*out = kv;
	*n_out = k;
	return 0;
}

struct bin {
	uint64_t v, c;
};

static int cmp_bin(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* json+ bins: {"<value>": count}; values in ns (usec for old fio). 1: unknown layout, ignored. */
static int parse_bins(struct parse *p, size_t bins, double scale, const char *where, struct stune_hist *h)
{
	if (!jis(p, bins, JT_OBJECT))
		return fail(p, "%s: 'bins' is not an object", where);
	size_t n = jt(p, bins)->n, k = 0;
	if (n == 0)
		return 0;
	_cleanup_free_ struct bin *b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	bool sorted = true, strict = true;
	uint64_t prev_key = 0, total = 0;
	for (size_t key = bins + 1, i = 0; i < n; key = jt(p, key + 1)->next, i++) {
		size_t val = key + 1;
		char kbuf[32];
		_cleanup_free_ char *kheap = NULL;
		const char *ks = kbuf;
		if (jt(p, key)->len < sizeof(kbuf)) {
			memcpy(kbuf, jt(p, key)->s, jt(p, key)->len);
			kbuf[jt(p, key)->len] = '\0';
		} else if (!(ks = kheap = jstrdup(p, key)))
			return -ENOMEM;
		uint64_t v;
		if (stune_parse_uint64(ks, &v) < 0 || !jis_int(p, val) || jint64(p, val) < 0) {
			warn(p, "%s: clat bins in an unknown layout (key '%s'), ignored", where, ks);
			return 1;
		}
		/* fio writes them ascending; a key twice (one entry in json-c) or out of order: json-c reads it. */
		if (i > 0 && v <= prev_key)
			strict = false;
		prev_key = v;
		double ns = (double)v * scale;
		if (!(ns < FIO_INT_LIMIT))
			return fail(p, "%s: clat 'bins' value '%s' is out of range", where, ks);
		b[k].v = (uint64_t)ns;
		b[k].c = (uint64_t)jint64(p, val);
		if (total + b[k].c < total || total + b[k].c >= (uint64_t)1 << 63)
			return fail(p, "%s: clat 'bins' counts sum out of range", where);
		total += b[k++].c;
		if (k > 1 && b[k - 1].v < b[k - 2].v)
			sorted = false;
	}
	if (!strict && !jt(p, bins)->jc)
		return JSON_C_READS;
	if (!sorted)
		qsort(b, k, sizeof(*b), cmp_bin);
	h->value_ns = malloc(k * sizeof(uint64_t));
	h->count = malloc(k * sizeof(uint64_t));
	if (!h->value_ns || !h->count) {
		stune_hist_clear(h);
		return -ENOMEM;
	}
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m > 0 && h->value_ns[m - 1] == b[i].v) {
			h->count[m - 1] += b[i].c;
			continue;
		}
		h->value_ns[m] = b[i].v;
		h->count[m++] = b[i].c;
	}
	h->n = m;
	return 0;
}

/* fallback_samples: the I/O count of the direction, for a clat without "N" (fio 2.x, early 3.x). */
static int parse_lat(struct parse *p, size_t dir, const char *where, uint64_t fallback_samples, struct stune_lat *lat)
{
	size_t c = jget(p, dir, "clat_ns");
	double scale = 1;
	if (c == JNONE) {
		if ((c = jget(p, dir, "clat")) == JNONE)
			return 0; /* no latency: not an error, just unknown */
		scale = 1000;	  /* fio < 2.99: usec */
		p->old_keys = true;
	}
	if (!jis(p, c, JT_OBJECT))
		return fail(p, "%s: clat is not an object", where);
	int r;
	uint64_t n = 0;
	if ((r = get_u64(p, c, "N", where, false, &n)) < 0)
		return r;
	lat->samples = jget(p, c, "N") != JNONE ? n : fallback_samples;
	if ((r = get_num(p, c, "min", where, false, &lat->min_ns)) < 0 ||
	    (r = get_num(p, c, "max", where, false, &lat->max_ns)) < 0 ||
	    (r = get_num(p, c, "mean", where, false, &lat->mean_ns)) < 0 ||
	    (r = scaled(p, where, "min", &lat->min_ns, scale)) < 0 ||
	    (r = scaled(p, where, "max", &lat->max_ns, scale)) < 0 ||
	    (r = scaled(p, where, "mean", &lat->mean_ns, scale)) < 0)
		return r;
	/* The jobs' mean is weighted by samples: mean x N must be finite too. */
	if (!isfinite(lat->mean_ns * (double)lat->samples))
		return out_of_range(p, where, "mean", lat->mean_ns);
	if (lat->samples == 0)
		return 0;

	size_t pct = jget(p, c, "percentile");
	if (jis(p, pct, JT_OBJECT)) {
		for (int i = 0; i < STUNE_N_PCT; i++) {
			char key[32];
			snprintf(key, sizeof(key), "%f", stune_pct_levels[i]);
			size_t v = jget(p, pct, key);
			if (v != JNONE && is_num(p, v)) {
				double x = jnum(p, v);
				if (!(x >= 0 && isfinite(x * scale)))
					return fail(p, "%s: clat percentile '%s' is out of range (%g)", where, key, x);
				lat->pct_set[i] = true;
				lat->pct_ns[i] = x * scale;
				lat->pct_source = STUNE_PCT_FIO;
			}
		}
	}
	size_t bins = jget(p, c, "bins");
	if (bins != JNONE) {
		r = parse_bins(p, bins, scale, where, &lat->bins);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_io(struct parse *p, size_t job, enum stune_fio_dir d, const char *jwhere, struct stune_fio_io *io)
{
	char where[256];
	size_t dir = jget(p, job, stune_fio_dir_name(d));
	if (dir == JNONE)
		return 0;
	snprintf(where, sizeof(where), "%s.%s", jwhere, stune_fio_dir_name(d));
	if (!jis(p, dir, JT_OBJECT))
		return fail(p, "%s is not an object", where);
	int r;
	if ((r = get_u64(p, dir, "io_bytes", where, true, &io->io_bytes)) < 0 ||
	    (r = get_u64(p, dir, "total_ios", where, false, &io->total_ios)) < 0 ||
	    (r = get_num(p, dir, "bw", where, true, &io->bw_kib_s)) < 0 ||
	    (r = get_num(p, dir, "iops", where, true, &io->iops)) < 0 ||
	    (r = get_u64(p, dir, "runtime", where, false, &io->runtime_ms)) < 0)
		return r;
	/* fio 2.x and early 3.x (3.1) write no clat "N": every completed I/O is a sample, so total_ios
	 * is N (fio 2.1, without total_ios: IOPS x runtime, rounded). */
	uint64_t fallback = io->total_ios;
	if (jget(p, dir, "total_ios") == JNONE) {
		double ios = round(io->iops * (double)io->runtime_ms / 1000.0);
		if (!(ios < FIO_INT_LIMIT))
			return fail(p, "%s: 'iops' x 'runtime' (the I/O count) is out of range (%g)", where, ios);
		fallback = (uint64_t)ios;
	}
	if ((r = parse_lat(p, dir, where, fallback, &io->clat)) < 0)
		return r;
	/* fio < 2.99 wrote io_bytes in KiB and had no io_kbytes. */
	if (p->old_keys && jget(p, dir, "io_kbytes") == JNONE) {
		if (io->io_bytes > (UINT64_C(1) << 63) / 1024 - 1)
			return fail(p, "%s: 'io_bytes' (KiB in fio < 2.99) is out of range (%" PRIu64 ")", where,
				    io->io_bytes);
		io->io_bytes *= 1024;
	}
	return 0;
}

static int parse_job(struct parse *p, size_t job, size_t idx, struct stune_fio_job *j)
{
	char where[128];
	size_t v;
	int r;

	snprintf(where, sizeof(where), "jobs[%zu]", idx);
	if (!jis(p, job, JT_OBJECT))
		return fail(p, "%s is not an object", where);
	if (!jis(p, v = jget(p, job, "jobname"), JT_STRING))
		return fail(p, "%s: no 'jobname'", where);
	if (!(j->name = jstrdup(p, v)))
		return -ENOMEM;
	snprintf(where, sizeof(where), "jobs[%zu] '%.80s'", idx, j->name);
	uint64_t gid = 0;
	if ((r = get_u64(p, job, "groupid", where, false, &gid)) < 0)
		return r;
	j->groupid = (int64_t)gid;
	if ((v = jget(p, job, "error")) != JNONE) {
		if (!jis_int(p, v))
			return fail(p, "%s: 'error' is not an integer", where);
		j->error = jint(p, v);
	}
	if ((v = jget(p, job, "job options")) != JNONE &&
	    (r = parse_options(p, v, "'job options'", &j->options, &j->n_options)) < 0)
		return r;
	if (jget(p, job, "read") == JNONE && jget(p, job, "write") == JNONE)
		return fail(p, "%s: no 'read' or 'write' section", where);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		if ((r = parse_io(p, job, d, where, &j->io[d])) < 0)
			return r;
	return 0;
}

/* Whether job i counts: every job (file NULL), or the jobs reading file. */
static bool job_reads(const struct stune_fio_run *run, size_t i, const char *file)
{
	return !file || !strcmp(stune_fio_job_option(run, &run->jobs[i], "filename"), file);
}

/* Latency over all jobs (file NULL) or one device's: exact mean (weighted by samples), exact or labelled
 * percentiles, into t. */
static int lat_over(struct parse *p, const struct stune_fio_run *run, enum stune_fio_dir d, const char *file,
		    struct stune_lat *t)
{
	size_t with_samples = 0, with_bins = 0, last = 0;
	double sum = 0;
	uint64_t binned = 0;
	bool first = true;
	const char *dn = stune_fio_dir_name(d);
	int r;

	for (size_t i = 0; i < run->n_jobs; i++) {
		const struct stune_lat *l = &run->jobs[i].io[d].clat;
		if (l->samples == 0 || !job_reads(run, i, file))
			continue;
		with_samples++;
		last = i;
		if (l->bins.n > 0)
			with_bins++;
		if ((r = add_u64(p, "N", dn, &t->samples, l->samples)) < 0 ||
		    (r = add_u64(p, "bins", dn, &binned, stune_hist_total(&l->bins))) < 0 ||
		    (r = add_dbl(p, "mean", dn, &sum, l->mean_ns * (double)l->samples)) < 0)
			return r;
		t->min_ns = first || l->min_ns < t->min_ns ? l->min_ns : t->min_ns;
		t->max_ns = first || l->max_ns > t->max_ns ? l->max_ns : t->max_ns;
		first = false;
	}
	if (with_samples == 0)
		return 0;
	t->mean_ns = sum / (double)t->samples;
	if (with_samples == 1) {
		const struct stune_lat *l = &run->jobs[last].io[d].clat;
		memcpy(t->pct_set, l->pct_set, sizeof(t->pct_set));
		memcpy(t->pct_ns, l->pct_ns, sizeof(t->pct_ns));
		t->pct_source = l->pct_source;
		return 0;
	}
	if (with_bins == with_samples) {
		for (size_t i = 0; i < run->n_jobs; i++) {
			if (!job_reads(run, i, file))
				continue;
			r = stune_hist_merge(&t->bins, &run->jobs[i].io[d].clat.bins);
			if (r < 0)
				return r;
		}
		for (int k = 0; k < STUNE_N_PCT; k++) {
			uint64_t ns;
			t->pct_set[k] = stune_hist_percentile(&t->bins, stune_pct_levels[k], &ns);
			t->pct_ns[k] = (double)ns;
		}
		t->pct_source = STUNE_PCT_BINS;
		return 0;
	}
	/* Without histograms the exact merged percentile is unknowable: the largest per-job value bounds it. */
	for (int k = 0; k < STUNE_N_PCT; k++) {
		bool all = true;
		double mx = 0;
		for (size_t i = 0; i < run->n_jobs; i++) {
			const struct stune_lat *l = &run->jobs[i].io[d].clat;
			if (l->samples == 0 || !job_reads(run, i, file))
				continue;
			if (!l->pct_set[k])
				all = false;
			else if (l->pct_ns[k] > mx)
				mx = l->pct_ns[k];
		}
		t->pct_set[k] = all;
		t->pct_ns[k] = all ? mx : 0;
	}
	t->pct_source = STUNE_PCT_MAX_OF_JOBS;
	return 0;
}

/* Per device, when the jobs read more than one file: IOPS, latency, and the fairness of their shares. */
static int per_device(struct parse *p, struct stune_fio_run *run)
{
	for (size_t i = 0; i < run->n_devs; i++)
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			stune_hist_clear(&run->devs[i].clat[d].bins);
	free(run->devs);
	run->devs = NULL;
	run->n_devs = 0;
	run->fairness = NAN;
	size_t n = 0;
	for (size_t i = 0; i < run->n_jobs; i++) {
		const char *f = stune_fio_job_option(run, &run->jobs[i], "filename");
		size_t k = 0;
		if (!f)
			return 0; /* a job without a file of its own: one workload, not devices */
		while (k < i && strcmp(stune_fio_job_option(run, &run->jobs[k], "filename"), f))
			k++;
		n += k == i;
	}
	if (n < 2 || !(run->devs = calloc(n, sizeof(*run->devs))))
		return n < 2 ? 0 : -ENOMEM;
	_cleanup_free_ double *iops = calloc(n, sizeof(double));
	if (!iops)
		return -ENOMEM;
	for (size_t i = 0; i < run->n_jobs; i++) {
		const char *f = stune_fio_job_option(run, &run->jobs[i], "filename");
		size_t k = 0;
		while (k < run->n_devs && strcmp(run->devs[k].filename, f))
			k++;
		if (k == run->n_devs)
			run->devs[run->n_devs++].filename = f;
		struct stune_fio_dev *dev = &run->devs[k];
		dev->n_jobs++;
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
			dev->iops += run->jobs[i].io[d].iops;
	}
	for (size_t k = 0; k < run->n_devs; k++) {
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
			int r = lat_over(p, run, (enum stune_fio_dir)d, run->devs[k].filename, &run->devs[k].clat[d]);
			if (r < 0)
				return r;
		}
		iops[k] = run->devs[k].iops;
	}
	run->fairness = stune_jain_index(iops, run->n_devs);
	return 0;
}

static int compute_totals(struct parse *p, struct stune_fio_run *run)
{
	int r;
	for (size_t i = 0; i < run->n_jobs; i++) {
		const struct stune_fio_job *j = &run->jobs[i];
		if (j->error != 0 && run->n_failed++ == 0) {
			run->first_error = j->error;
			run->first_failed_job = i;
		}
		for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
			struct stune_fio_io *t = &run->total[d];
			const struct stune_fio_io *io = &j->io[d];
			const char *dn = stune_fio_dir_name(d);
			if ((r = add_u64(p, "io_bytes", dn, &t->io_bytes, io->io_bytes)) < 0 ||
			    (r = add_u64(p, "total_ios", dn, &t->total_ios, io->total_ios)) < 0 ||
			    (r = add_dbl(p, "bw", dn, &t->bw_kib_s, io->bw_kib_s)) < 0 ||
			    (r = add_dbl(p, "iops", dn, &t->iops, io->iops)) < 0)
				return r;
			if (io->runtime_ms > t->runtime_ms)
				t->runtime_ms = io->runtime_ms;
			if (io->clat.bins.n > 0)
				run->json_plus = true;
		}
	}
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		if ((r = add_dbl(p, "iops", "read and write", &run->iops, run->total[d].iops)) < 0 ||
		    (r = add_dbl(p, "bw", "read and write", &run->bw_kib_s, run->total[d].bw_kib_s)) < 0 ||
		    (r = lat_over(p, run, (enum stune_fio_dir)d, NULL, &run->total[d].clat)) < 0)
			return r;
	}
	return per_device(p, run);
}

static int parse_doc(struct parse *p, size_t doc, struct stune_fio_run *run)
{
	size_t v, jobs;
	int r;

	if (!jis(p, doc, JT_OBJECT))
		return p->not_fio = true, fail(p, "not fio output: the JSON document is not an object");
	if (!jis(p, jobs = jget(p, doc, "jobs"), JT_ARRAY)) {
		if (jget(p, doc, "client_stats") != JNONE)
			return fail(p, "fio client/server output ('client_stats', fio --client) is not supported: "
				       "run fio on the host itself");
		return p->not_fio = true, fail(p, "not fio output: no 'jobs' array");
	}
	size_t n = jt(p, jobs)->n;
	if (n == 0)
		return fail(p, "fio output without jobs: 'jobs' is empty");
	if (jis(p, v = jget(p, doc, "fio version"), JT_STRING) && !(run->fio_version = jstrdup(p, v)))
		return -ENOMEM;
	/* Seconds or ms since 1970, before the year 10000 (ISO 8601's four digits): never negative, and
	 * x 1000 cannot overflow. */
	if (jis_int(p, v = jget(p, doc, "timestamp_ms"))) {
		run->timestamp_ms = jint64(p, v);
		if (run->timestamp_ms < 0 || run->timestamp_ms >= FIO_YEAR_10000_S * 1000)
			return fail(p, "'timestamp_ms' is out of range (%" PRId64 ")", run->timestamp_ms);
	} else if (jis_int(p, v = jget(p, doc, "timestamp"))) {
		int64_t sec = jint64(p, v);
		if (sec < 0 || sec >= FIO_YEAR_10000_S)
			return fail(p, "'timestamp' is out of range (%" PRId64 " s)", sec);
		run->timestamp_ms = sec * 1000;
	}
	if (jis(p, v = jget(p, doc, "time"), JT_STRING) && !(run->time = jstrdup(p, v)))
		return -ENOMEM;
	if ((v = jget(p, doc, "global options")) != JNONE &&
	    (r = parse_options(p, v, "'global options'", &run->global_options, &run->n_global_options)) < 0)
		return r;

	run->jobs = calloc(n, sizeof(*run->jobs));
	if (!run->jobs)
		return -ENOMEM;
	size_t job = jobs + 1;
	for (size_t i = 0; i < n; i++, job = jt(p, job)->next) {
		run->n_jobs = i + 1; /* freed as far as filled */
		if ((r = parse_job(p, job, i, &run->jobs[i])) < 0)
			return r;
	}
	run->old_keys = p->old_keys;
	run->group = -1;
	for (size_t i = 0; i < run->n_jobs; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = run->jobs[k].groupid == run->jobs[i].groupid;
		run->n_groups += !seen;
	}
	return compute_totals(p, run);
}

char *stune_fio_run_groups(const struct stune_fio_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	size_t shown = 0;
	for (size_t i = 0; i < r->n_jobs; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r->jobs[k].groupid == r->jobs[i].groupid;
		if (seen)
			continue;
		const char *rw = stune_fio_job_option(r, &r->jobs[i], "rw");
		if (!rw)
			rw = stune_fio_job_option(r, &r->jobs[i], "readwrite");
		fprintf(m, "%s%" PRId64 " (%s)", shown++ ? ", " : "", r->jobs[i].groupid, rw ? rw : r->jobs[i].name);
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void job_clear(struct stune_fio_job *j)
{
	free(j->name);
	kv_free(j->options, j->n_options);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		stune_hist_clear(&j->io[d].clat.bins);
}

int stune_fio_run_keep_group(struct stune_fio_run *r, int64_t group, char **err)
{
	*err = NULL;
	size_t k = 0;
	for (size_t i = 0; i < r->n_jobs; i++)
		k += r->jobs[i].groupid == group;
	if (!k) {
		*err = stune_fio_run_groups(r);
		return -ENOENT;
	}
	for (size_t i = 0, w = 0; i < r->n_jobs; i++) {
		if (r->jobs[i].groupid != group)
			job_clear(&r->jobs[i]);
		else
			r->jobs[w++] = r->jobs[i];
	}
	r->n_jobs = k;
	r->n_groups = 1;
	r->group = group;
	/* The totals again, from the jobs kept. */
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		stune_hist_clear(&r->total[d].clat.bins);
		r->total[d] = (struct stune_fio_io){0};
	}
	r->iops = r->bw_kib_s = 0;
	r->n_failed = 0;
	r->first_error = 0;
	r->first_failed_job = 0;
	r->json_plus = false;
	struct parse p = {.path = r->path, .old_keys = r->old_keys};
	int ret = compute_totals(&p, r);
	if (ret < 0)
		*err = steal_pointer(&p.err);
	free(p.err);
	return ret;
}

/* Length of the first line of s (at most max), for quoting it in a message. */
static int line_len(const char *s, size_t len, int max)
{
	size_t n = 0;
	while (n < len && s[n] != '\n' && n < (size_t)max)
		n++;
	return (int)n;
}

static size_t skip_space(const char *buf, size_t len, size_t off)
{
	while (off < len && isspace((unsigned char)buf[off]))
		off++;
	return off;
}

/* What a reading given up left in run: everything but its path. */
static void run_reset(struct stune_fio_run *run)
{
	char *path = steal_pointer(&run->path);
	run_clear(run);
	*run = (struct stune_fio_run){.path = path};
}

static bool force_json_c;
static unsigned long json_c_reads;

void stune_fio_force_json_c(bool on)
{
	force_json_c = on;
}

unsigned long stune_fio_json_c_reads(void)
{
	return json_c_reads;
}

/* The document from start as json-c reads it (several, text after...), then the same reading. */
static int parse_json_c(struct parse *p, const char *buf, size_t len, size_t start, struct stune_fio_run *run)
{
	int r;
	json_c_reads++;
	/* One document, or several concatenated (--status-interval): the last is the final result. */
	json_object *doc = NULL;
	size_t n_docs = 0, off = start;
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	while (off < len) {
		json_tokener_reset(tok);
		json_object *o = json_tokener_parse_ex(tok, buf + off, (int)(len - off));
		enum json_tokener_error e = json_tokener_get_error(tok);
		if (!o) {
			if (e == json_tokener_continue || e == json_tokener_success)
				r = (p->not_fio = true,
				     fail(p, "truncated JSON: the document starting at byte %zu ends early", off));
			else
				r = (p->not_fio = true,
				     fail(p, "invalid JSON at byte %zu: %s", off + json_tokener_get_parse_end(tok),
					  json_tokener_error_desc(e)));
			json_object_put(doc);
			json_tokener_free(tok);
			return r;
		}
		json_object_put(doc);
		doc = o;
		n_docs++;
		off = skip_space(buf, len, off + json_tokener_get_parse_end(tok));
		if (off < len && buf[off] != '{') {
			warn(p, "text after the JSON document ignored: \"%.*s\"", line_len(buf + off, len - off, 100),
			     buf + off);
			break;
		}
	}
	json_tokener_free(tok);
	if (n_docs > 1)
		warn(p, "%zu concatenated JSON documents (--status-interval?): using the last", n_docs);

	struct jdoc d = {0};
	r = from_json_c(&d, doc);
	if (r == 0) {
		p->doc = &d;
		r = parse_doc(p, 0, run);
		p->doc = NULL;
	}
	jdoc_clear(&d);
	json_object_put(doc);
	return r;
}

static int parse_buf(struct parse *p, const char *buf, size_t len, struct stune_fio_run *run)
{
	int r;

	/* fio prints error lines on stdout before the JSON (fio#731): start at the first line that opens with '{'. */
	size_t start = skip_space(buf, len, 0);
	if (start >= len)
		return p->not_fio = true, fail(p, "empty file, no JSON document");
	if (buf[start] != '{') {
		const char *brace = NULL;
		for (const char *s = buf; (s = memchr(s, '\n', len - (size_t)(s - buf))); s++)
			if (s + 1 < buf + len && s[1] == '{') {
				brace = s + 1;
				break;
			}
		if (!brace)
			return p->not_fio = true, fail(p, "not JSON: no line starts with '{' (begins \"%.*s\")",
						       line_len(buf + start, len - start, 60), buf + start);
		size_t lines = 0;
		for (const char *s = buf; s < brace; s++)
			lines += *s == '\n';
		warn(p, "skipped %zu line%s of text before the JSON document (fio prints errors there): \"%.*s\"",
		     lines, lines == 1 ? "" : "s", line_len(buf + start, len - start, 100), buf + start);
		start = (size_t)(brace - buf);
	}

	/* One strict document and nothing after it (what fio writes): the tokenizer, straight from buf. */
	struct jdoc d = {.cap = 0};
	size_t end = 0, kept = p->n_warnings;
	r = force_json_c ? JSON_C_READS : tokenize(&d, buf + start, len - start, &end);
	if (r == 0 && skip_space(buf, len, start + end) == len) {
		p->doc = &d;
		r = parse_doc(p, 0, run);
		p->doc = NULL;
	} else if (r == 0)
		r = JSON_C_READS;
	jdoc_clear(&d);
	if (r != JSON_C_READS)
		return r;
	/* Given up: nothing of it stays (warnings, error, model), json-c reads it all. */
	for (size_t i = kept; i < p->n_warnings; i++)
		free(p->warnings[i]);
	p->n_warnings = kept;
	free(p->err);
	p->err = NULL;
	p->old_keys = false;
	p->not_utf8 = 0;
	run_reset(run);
	return parse_json_c(p, buf, len, start, run);
}

int stune_fio_parse_buf(struct stune_ctx *ctx, const char *path, const char *buf, size_t len,
			struct stune_fio_run **out, char **err)
{
	struct parse p = {.ctx = ctx, .path = path};

	*err = NULL;
	_cleanup_(stune_fio_run_freep) struct stune_fio_run *run = calloc(1, sizeof(*run));
	if (!run || !(run->path = strdup(path)))
		return -ENOMEM;
	int r = parse_buf(&p, buf, len, run);
	if (r >= 0 && p.not_utf8)
		warn(&p, "%zu byte%s of its names and options %s not UTF-8: shown as U+FFFD", p.not_utf8,
		     p.not_utf8 == 1 ? "" : "s", p.not_utf8 == 1 ? "is" : "are");
	warnings_flush(&p);
	if (r < 0) {
		*err = p.err;
		return r == -EINVAL && p.not_fio ? -ENOMSG : r;
	}
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ull;
	run->content_hash = h;
	run->content_len = len;
	free(p.err);
	*out = steal_pointer(&run);
	return 0;
}

int stune_fio_parse_file(struct stune_ctx *ctx, const char *path, struct stune_fio_run **out, char **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	*err = NULL;
	/* "-": standard input, read to its end (fio ... | scsitune report -), named "stdin". A file
	 * named on the command line: a regular file only (a FIFO would block, /dev/zero never end). */
	bool in = !strcmp(path, "-");
	int r = in ? stune_read_user_fd(STDIN_FILENO, FIO_MAX_FILE_BYTES, 0, &buf, &len)
		   : stune_read_user_file(path, FIO_MAX_FILE_BYTES, 0, &buf, &len);
	if (in)
		path = "stdin";
	if (r < 0) {
		if (r == -STUNE_ENOTREG || r == -EFBIG) {
			*err = strdup(stune_user_file_strerror(r, FIO_MAX_FILE_BYTES));
			return *err ? r : -ENOMEM;
		}
		return r;
	}
	return stune_fio_parse_buf(ctx, path, buf, len, out, err);
}
