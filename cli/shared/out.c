/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "out.h"
#include "wrap.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/utf8.h"

#define OUT_MAX_DEPTH 16

/*
 * JSON is streamed (core/jsonw.c): each value is printed as it comes, in the
 * bytes json-c printed for the tree this layer used to build. The document
 * stays open until out_finish(), as the tree's root did; a value with no key
 * inside an object (text-only) is left out, and so is everything inside a
 * container left out that way.
 */
struct out {
	enum out_format fmt;
	FILE *f;
	/* out_set_wrap: text goes to f, a memory stream, and out_finish wraps it into dst. */
	FILE *dst;
	char *buf;
	size_t buf_len, wrap;
	struct stune_jsonw w;
	bool is_arr[OUT_MAX_DEPTH];
	int depth; /* index of the innermost open container, -1 none */
	int muted; /* depth of the innermost container left out, -1 none */
};

struct out *out_new(enum out_format fmt, FILE *f)
{
	struct out *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->fmt = fmt;
	o->f = f;
	o->depth = -1;
	o->muted = -1;
	stune_jsonw_init(&o->w, f, STUNE_JSONW_PRETTY | STUNE_JSONW_SPACED);
	return o;
}

void out_set_wrap(struct out *o, size_t width)
{
	if (o->fmt != OUT_TEXT || o->dst)
		return;
	FILE *m = open_memstream(&o->buf, &o->buf_len);
	if (!m)
		return; /* unwrapped, but printed */
	o->dst = o->f;
	o->f = m;
	o->wrap = width;
}

void out_free(struct out *o)
{
	if (!o)
		return;
	if (o->dst) {
		fclose(o->f);
		free(o->buf);
	}
	free(o);
}

bool out_is_json(const struct out *o)
{
	return o->fmt == OUT_JSON;
}

int out_finish(struct out *o)
{
	if (o->dst) {
		bool bad = fclose(o->f) != 0;
		o->f = o->dst;
		o->dst = NULL;
		if (!bad)
			wrap_text(o->f, o->buf, o->buf_len, o->wrap);
		free(o->buf);
		o->buf = NULL;
		if (bad)
			return -ENOMEM;
	}
	if (o->fmt == OUT_JSON && o->depth >= 0) {
		stune_jsonw_end_all(&o->w);
		fputc('\n', o->f);
		o->depth = -1;
	}
	if (fflush(o->f) != 0 || ferror(o->f))
		return -(errno ? errno : EIO);
	return 0;
}

/* Does a value under key go into the document? */
static bool takes(const struct out *o, const char *key)
{
	return o->fmt == OUT_JSON && o->depth >= 0 && o->muted < 0 && (key || o->is_arr[o->depth]);
}

static void push(struct out *o, const char *key, bool arr)
{
	if (o->fmt != OUT_JSON || o->depth + 1 >= OUT_MAX_DEPTH)
		return;
	if (o->depth < 0 || takes(o, key)) {
		if (arr)
			stune_jsonw_arr_begin(&o->w, key);
		else
			stune_jsonw_obj_begin(&o->w, key);
	} else if (o->muted < 0) {
		o->muted = o->depth + 1;
	}
	o->is_arr[++o->depth] = arr;
}

void out_obj_begin(struct out *o, const char *key)
{
	push(o, key, false);
}

void out_arr_begin(struct out *o, const char *key)
{
	push(o, key, true);
}

static void pop(struct out *o)
{
	if (o->fmt != OUT_JSON || o->depth <= 0)
		return; /* the document's root closes in out_finish */
	if (o->muted == o->depth)
		o->muted = -1;
	else if (o->muted < 0)
		stune_jsonw_end(&o->w);
	o->depth--;
}

void out_obj_end(struct out *o)
{
	pop(o);
}

void out_arr_end(struct out *o)
{
	pop(o);
}

char *out_escape(const char *s, unsigned flags)
{
	return stune_utf8_escape(s, flags);
}

void out_vfprintf_escaped(FILE *f, unsigned flags, const char *fmt, va_list ap)
{
	_cleanup_free_ char *raw = NULL, *esc = NULL;
	if (vasprintf(&raw, fmt, ap) < 0)
		return;
	esc = out_escape(raw, flags);
	fputs(esc ? esc : "(out of memory)", f);
}

void out_text(struct out *o, const char *fmt, ...)
{
	if (o->fmt != OUT_TEXT)
		return;
	va_list ap;
	va_start(ap, fmt);
	out_vfprintf_escaped(o->f, OUT_ESC_KEEP_NL | OUT_ESC_KEEP_WRAP, fmt, ap);
	va_end(ap);
}

/* Text formats are literals at every call site, with exactly one %s. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void text(struct out *o, const char *tfmt, const char *v)
{
	if (o->fmt != OUT_TEXT || !tfmt)
		return;
	_cleanup_free_ char *esc = v ? out_escape(v, 0) : NULL;
	fprintf(o->f, tfmt, esc ? esc : v ? "(out of memory)" : "-");
}
#pragma GCC diagnostic pop

void out_str(struct out *o, const char *key, const char *tfmt, const char *v)
{
	if (o->fmt == OUT_JSON) {
		if (takes(o, key))
			stune_jsonw_str(&o->w, key, v);
	} else
		text(o, tfmt, v && *v ? v : NULL);
}

void out_str_shown(struct out *o, const char *key, const char *tfmt, const char *v, const char *shown)
{
	if (o->fmt == OUT_JSON) {
		if (takes(o, key))
			stune_jsonw_str(&o->w, key, v);
	} else
		text(o, tfmt, shown && *shown ? shown : NULL);
}

void out_rootpath(struct out *o, const char *key, const char *tfmt, const char *rel)
{
	_cleanup_free_ char *p = NULL;
	if (rel && asprintf(&p, "/%s", rel + strspn(rel, "/")) < 0)
		p = NULL;
	out_str(o, key, tfmt, p);
}

static void json_num(struct out *o, const char *key, struct stune_num v)
{
	if (!takes(o, key))
		return;
	if (v.set)
		stune_jsonw_int(&o->w, key, v.v);
	else
		stune_jsonw_null(&o->w, key);
}

void out_int(struct out *o, const char *key, const char *tfmt, long long v)
{
	out_num(o, key, tfmt, STUNE_NUM(v));
}

void out_num(struct out *o, const char *key, const char *tfmt, struct stune_num v)
{
	char buf[32];
	if (o->fmt == OUT_JSON) {
		json_num(o, key, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%lld", (long long)v.v);
	text(o, tfmt, v.set ? buf : NULL);
}

void out_hex(struct out *o, const char *key, const char *tfmt, struct stune_num v, int width)
{
	char buf[32];
	if (o->fmt == OUT_JSON) {
		json_num(o, key, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%0*llx", width, (unsigned long long)v.v);
	text(o, tfmt, v.set ? buf : NULL);
}

void out_size(struct out *o, const char *key, const char *tfmt, struct stune_num v)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	char buf[32];
	if (o->fmt == OUT_JSON) {
		json_num(o, key, v);
		return;
	}
	double x = (double)v.v;
	size_t u = 0;
	while (x >= 1024 && u + 1 < ELEMENTSOF(units)) {
		x /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, sizeof(buf), "%lld B", (long long)v.v);
	else
		snprintf(buf, sizeof(buf), "%.1f %s", x, units[u]);
	text(o, tfmt, v.set ? buf : NULL);
}

void out_bool(struct out *o, const char *key, const char *tfmt, enum stune_tristate v)
{
	if (o->fmt == OUT_JSON) {
		if (!takes(o, key))
			return;
		if (v == STUNE_UNKNOWN)
			stune_jsonw_null(&o->w, key);
		else
			stune_jsonw_bool(&o->w, key, v == STUNE_YES);
	} else
		text(o, tfmt, v == STUNE_UNKNOWN ? NULL : v == STUNE_YES ? "yes" : "no");
}

void out_cpus(struct out *o, const char *key, const char *tfmt, const struct stune_cpuset *s)
{
	if (o->fmt == OUT_JSON) {
		if (!takes(o, key))
			return;
		if (!s->valid) {
			stune_jsonw_null(&o->w, key);
			return;
		}
		stune_jsonw_arr_begin(&o->w, key);
		stune_cpuset_foreach (cpu, s)
			stune_jsonw_int(&o->w, NULL, cpu);
		stune_jsonw_end(&o->w);
		return;
	}
	_cleanup_free_ char *txt = NULL;
	if (s->valid && stune_cpuset_format(s, &txt) < 0)
		return;
	text(o, tfmt, s->valid ? (*txt ? txt : "none") : NULL);
}

void out_strv(struct out *o, const char *key, const char *tfmt, char *const *v)
{
	if (o->fmt == OUT_JSON) {
		if (!takes(o, key))
			return;
		if (!v) {
			stune_jsonw_null(&o->w, key);
			return;
		}
		stune_jsonw_arr_begin(&o->w, key);
		for (char *const *p = v; *p; p++)
			stune_jsonw_str(&o->w, NULL, *p);
		stune_jsonw_end(&o->w);
		return;
	}
	if (!tfmt)
		return;
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	if (!m)
		return;
	for (char *const *p = v; p && *p; p++)
		fprintf(m, "%s%s", p == v ? "" : " ", *p);
	fclose(m);
	text(o, tfmt, v ? buf : NULL);
	free(buf);
}

void out_fmt_dbl(char *buf, size_t size, double v, int decimals)
{
	char raw[64];
	if (isnan(v)) {
		snprintf(buf, size, "-");
		return;
	}
	snprintf(raw, sizeof(raw), "%.*f", decimals, v);
	const char *digits = raw + (raw[0] == '-');
	size_t int_len = strcspn(digits, ".");
	size_t k = 0;
	if (raw[0] == '-' && k + 1 < size)
		buf[k++] = '-';
	for (size_t i = 0; digits[i] && k + 1 < size; i++) {
		if (i > 0 && i < int_len && (int_len - i) % 3 == 0 && k + 2 < size)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
}

bool out_fmt_json_dbl(char *buf, size_t size, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, size, "null");
		return false;
	}
	/* Three decimals, trailing zeros dropped: stable output, no 17-digit noise. */
	snprintf(buf, size, "%.3f", v);
	char *dot = strchr(buf, '.');
	if (dot) {
		char *e = buf + strlen(buf) - 1;
		while (e > dot && *e == '0')
			*e-- = '\0';
		if (e == dot)
			*e = '\0';
	}
	if (!strcmp(buf, "-0"))
		snprintf(buf, size, "0");
	return true;
}

bool out_fmt_json_exact(char *buf, size_t size, double v)
{
	if (!isfinite(v)) {
		snprintf(buf, size, "null");
		return false;
	}
	/* 12 significant digits: what VictoriaMetrics keeps of a sample (it stores
	 * decimals), so that a run read back from it prints as the host printed it. */
	snprintf(buf, size, "%.12g", v);
	return true;
}

/* A double in JSON, digits made by fmt (null when it says not finite). */
static void json_dbl(struct out *o, const char *key, double v, bool (*fmt)(char *, size_t, double))
{
	char buf[80];
	if (!takes(o, key))
		return;
	if (!fmt(buf, sizeof(buf), v))
		stune_jsonw_null(&o->w, key);
	else
		stune_jsonw_raw(&o->w, key, buf);
}

void out_dbl_exact(struct out *o, const char *key, const char *tfmt, double v, int decimals)
{
	if (o->fmt == OUT_JSON)
		json_dbl(o, key, v, out_fmt_json_exact);
	else
		out_dbl(o, key, tfmt, v, decimals);
}

void out_dbl(struct out *o, const char *key, const char *tfmt, double v, int decimals)
{
	char buf[80];
	if (o->fmt == OUT_JSON) {
		json_dbl(o, key, v, out_fmt_json_dbl);
		return;
	}
	out_fmt_dbl(buf, sizeof(buf), v, decimals);
	text(o, tfmt, isnan(v) ? NULL : buf);
}
