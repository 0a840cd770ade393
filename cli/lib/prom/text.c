/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "prom/text.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "core/utf8.h"

struct stune_prom {
	FILE *f;
	char *buf;
	size_t len;
	int error;
	char **families; /* every family begun, the last one last ("begun before", "another family's") */
	size_t n_families;
};

int stune_prom_new(struct stune_prom **out)
{
	_cleanup_(stune_prom_freep) struct stune_prom *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	if (!(w->f = open_memstream(&w->buf, &w->len)))
		return -ENOMEM;
	*out = steal_pointer(&w);
	return 0;
}

void stune_prom_free(struct stune_prom *w)
{
	if (!w)
		return;
	if (w->f)
		fclose(w->f);
	free(w->buf);
	stune_strv_free(w->families);
	free(w);
}

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      (colon && *s == ':')))
			return false;
	return true;
}

static int fail(struct stune_prom *w, int r)
{
	if (!w->error)
		w->error = r;
	return w->error;
}

/* s made valid UTF-8, then \\ and \n (and \" when quote) escaped, to w's stream. */
static int put_escaped(struct stune_prom *w, const char *s, bool quote)
{
	_cleanup_free_ char *valid = stune_utf8_dup_valid(s ? s : "", s ? strlen(s) : 0, NULL);
	if (!valid)
		return fail(w, -ENOMEM);
	for (const char *p = valid; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", w->f);
		else if (*p == '\n')
			fputs("\\n", w->f);
		else if (*p == '"' && quote)
			fputs("\\\"", w->f);
		else
			fputc(*p, w->f);
	}
	return 0;
}

int stune_prom_gauge(struct stune_prom *w, const char *name, const char *help)
{
	if (w->error)
		return w->error;
	if (!name_ok(name, true))
		return fail(w, -EINVAL);
	for (size_t i = 0; i < w->n_families; i++)
		if (!strcmp(w->families[i], name))
			return fail(w, -EINVAL);
	int r = stune_strv_push(&w->families, &w->n_families, strdup(name));
	if (r < 0)
		return fail(w, r);
	fprintf(w->f, "# HELP %s ", name);
	if ((r = put_escaped(w, help, false)) < 0)
		return r;
	fprintf(w->f, "\n# TYPE %s gauge\n", name);
	return 0;
}

/* The labels: names valid and each once. */
static bool labels_ok(const char *const *labels)
{
	for (size_t i = 0; labels && labels[i]; i += 2) {
		if (!name_ok(labels[i], false) || !strncmp(labels[i], "__", 2))
			return false;
		for (size_t k = 0; k < i; k += 2)
			if (!strcmp(labels[k], labels[i]))
				return false;
	}
	return true;
}

static void put_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else {
		/* the shortest of 15 to 17 digits that reads back as v */
		char buf[32];
		for (int digits = 15; digits <= 17; digits++) {
			snprintf(buf, sizeof(buf), "%.*g", digits, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		fputs(buf, f);
	}
}

int stune_prom_sample(struct stune_prom *w, const char *name, const char *const *labels, double value)
{
	if (w->error)
		return w->error;
	if (!w->n_families || !name || strcmp(name, w->families[w->n_families - 1]) || !labels_ok(labels))
		return fail(w, -EINVAL);
	fputs(name, w->f);
	for (size_t i = 0; labels && labels[i]; i += 2) {
		fprintf(w->f, "%s%s=\"", i ? "," : "{", labels[i]);
		int r = put_escaped(w, labels[i + 1], true);
		if (r < 0)
			return r;
		fputc('"', w->f);
	}
	if (labels && labels[0])
		fputc('}', w->f);
	fputc(' ', w->f);
	put_value(w->f, value);
	fputc('\n', w->f);
	return 0;
}

int stune_prom_text(struct stune_prom *w, const char **text, size_t *len)
{
	if (w->error)
		return w->error;
	if (fflush(w->f) != 0 || ferror(w->f))
		return fail(w, -ENOMEM);
	*text = w->buf ? w->buf : "";
	*len = w->len;
	return 0;
}

char *stune_prom_escape_label(const char *value)
{
	_cleanup_(stune_prom_freep) struct stune_prom *w = NULL;
	if (stune_prom_new(&w) < 0 || put_escaped(w, value, true) < 0 || fflush(w->f) != 0)
		return NULL;
	return strdup(w->buf ? w->buf : "");
}
