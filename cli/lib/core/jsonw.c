/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/jsonw.h"

#include <inttypes.h>
#include <string.h>

void stune_jsonw_init(struct stune_jsonw *w, FILE *f, unsigned flags)
{
	*w = (struct stune_jsonw){.f = f, .flags = flags};
}

static void indent(struct stune_jsonw *w, int level)
{
	if (!(w->flags & STUNE_JSONW_PRETTY))
		return;
	for (int i = 0; i < level; i++)
		fputs_unlocked("  ", w->f);
}

/* json-c's json_escape_str: \b \n \r \t \f " \\ by name, other bytes below 0x20 as \u00XX. */
void stune_jsonw_escaped(FILE *f, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c >= ' ' && c != '"' && c != '\\')
			continue;
		fwrite_unlocked(run, 1, (size_t)(p - run), f);
		run = p + 1;
		switch (c) {
		case '\b':
			fputs_unlocked("\\b", f);
			break;
		case '\n':
			fputs_unlocked("\\n", f);
			break;
		case '\r':
			fputs_unlocked("\\r", f);
			break;
		case '\t':
			fputs_unlocked("\\t", f);
			break;
		case '\f':
			fputs_unlocked("\\f", f);
			break;
		case '"':
			fputs_unlocked("\\\"", f);
			break;
		case '\\':
			fputs_unlocked("\\\\", f);
			break;
		default: {
			char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf], '\0'};
			fputs_unlocked(u, f);
		}
		}
	}
	fwrite_unlocked(run, 1, strlen(run), f);
}

/* What comes before a value: the separator, the indent, and in an object the key. */
static void member(struct stune_jsonw *w, const char *key)
{
	if (w->depth == 0)
		return;
	int d = w->depth - 1;
	if (w->had[d]) {
		putc_unlocked(',', w->f);
		if (w->flags & STUNE_JSONW_PRETTY)
			putc_unlocked('\n', w->f);
	}
	w->had[d] = true;
	if ((w->flags & STUNE_JSONW_SPACED) && !(w->flags & STUNE_JSONW_PRETTY))
		putc_unlocked(' ', w->f);
	indent(w, w->depth);
	if (w->is_obj[d]) {
		putc_unlocked('"', w->f);
		stune_jsonw_escaped(w->f, key ? key : "");
		fputs_unlocked(w->flags & STUNE_JSONW_SPACED ? "\": " : "\":", w->f);
	}
}

static void open_container(struct stune_jsonw *w, const char *key, bool obj)
{
	member(w, key);
	putc_unlocked(obj ? '{' : '[', w->f);
	if (w->flags & STUNE_JSONW_PRETTY)
		putc_unlocked('\n', w->f);
	if (w->depth < STUNE_JSONW_MAX_DEPTH) {
		w->had[w->depth] = false;
		w->is_obj[w->depth] = obj;
	}
	w->depth++;
}

void stune_jsonw_obj_begin(struct stune_jsonw *w, const char *key)
{
	open_container(w, key, true);
}

void stune_jsonw_arr_begin(struct stune_jsonw *w, const char *key)
{
	open_container(w, key, false);
}

void stune_jsonw_end(struct stune_jsonw *w)
{
	if (w->depth == 0)
		return;
	int d = --w->depth;
	if (w->flags & STUNE_JSONW_PRETTY) {
		if (w->had[d])
			putc_unlocked('\n', w->f);
		indent(w, d);
	}
	if ((w->flags & STUNE_JSONW_SPACED) && !(w->flags & STUNE_JSONW_PRETTY))
		putc_unlocked(' ', w->f);
	putc_unlocked(w->is_obj[d] ? '}' : ']', w->f);
}

void stune_jsonw_end_all(struct stune_jsonw *w)
{
	while (w->depth > 0)
		stune_jsonw_end(w);
}

void stune_jsonw_str(struct stune_jsonw *w, const char *key, const char *v)
{
	member(w, key);
	if (!v) {
		fputs_unlocked("null", w->f);
		return;
	}
	putc_unlocked('"', w->f);
	stune_jsonw_escaped(w->f, v);
	putc_unlocked('"', w->f);
}

void stune_jsonw_int(struct stune_jsonw *w, const char *key, int64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	stune_jsonw_raw(w, key, buf);
}

void stune_jsonw_bool(struct stune_jsonw *w, const char *key, bool v)
{
	stune_jsonw_raw(w, key, v ? "true" : "false");
}

void stune_jsonw_null(struct stune_jsonw *w, const char *key)
{
	stune_jsonw_raw(w, key, "null");
}

void stune_jsonw_raw(struct stune_jsonw *w, const char *key, const char *text)
{
	member(w, key);
	fputs_unlocked(text, w->f);
}
