/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prom/text.c: Prometheus's text format 0.0.4 as scsitune metrics writes it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prom/text.h"
#include "tap.h"

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The writer's text after fn ran on it, or NULL (the error in *r). */
static char *text_of(void (*fn)(struct stune_prom *w), int *r)
{
	struct stune_prom *w = NULL;
	const char *t = NULL;
	size_t len = 0;
	char *out = NULL;
	if ((*r = stune_prom_new(&w)) == 0) {
		fn(w);
		if ((*r = stune_prom_text(w, &t, &len)) == 0)
			out = strdup(t);
		if (out && strlen(out) != len)
			*r = -EBADMSG;
	}
	stune_prom_free(w);
	return out;
}

static void esc_is(const char *in, const char *want)
{
	char *got = stune_prom_escape_label(in);
	CHECK_STR(got, want);
	free(got);
}

CASE(escape_label, "a label value escapes backslash, double quote and newline, and nothing else")
{
	esc_is("plain", "plain");
	esc_is("a\"b", "a\\\"b");
	esc_is("C:\\dir", "C:\\\\dir");
	esc_is("two\nlines", "two\\nlines");
	esc_is("\\\"\n", "\\\\\\\"\\n");
	esc_is("tab\there", "tab\there"); /* the format escapes only those three */
	esc_is("", "");
	esc_is(NULL, "");
}

CASE(escape_utf8, "a label value that is not UTF-8 is made valid: each bad byte U+FFFD, valid text kept")
{
	esc_is("caf\xc3\xa9", "caf\xc3\xa9");
	esc_is("caf\xe9", "caf\xef\xbf\xbd");
	esc_is("\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd");
	esc_is("\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"); /* truncated: each byte */
	esc_is("a\"\xff\n", "a\\\"\xef\xbf\xbd\\n");
}

static void one_family(struct stune_prom *w)
{
	stune_prom_gauge(w, "x_info", "Help with a \\ and a\nnewline, and a \"quote\".");
	stune_prom_sample(w, "x_info", L("name", "say \"hi\"\\\n", "raw", "\xff"), 1);
	stune_prom_sample(w, "x_info", NULL, 2);
}

CASE(family, "a family: HELP (\\\\ and \\n escaped, a quote not), TYPE gauge, samples with escaped labels")
{
	int r;
	char *t = text_of(one_family, &r);
	CHECK(r == 0);
	CHECK_STR(t, "# HELP x_info Help with a \\\\ and a\\nnewline, and a \"quote\".\n"
		     "# TYPE x_info gauge\n"
		     "x_info{name=\"say \\\"hi\\\"\\\\\\n\",raw=\"\xef\xbf\xbd\"} 1\n"
		     "x_info 2\n");
	free(t);
}

static void values(struct stune_prom *w)
{
	stune_prom_gauge(w, "v", "values");
	stune_prom_sample(w, "v", NULL, 0);
	stune_prom_sample(w, "v", NULL, -3);
	stune_prom_sample(w, "v", NULL, 46060.44);
	stune_prom_sample(w, "v", NULL, 0.1);
	stune_prom_sample(w, "v", NULL, 1796421567.348);
	stune_prom_sample(w, "v", NULL, NAN);
	stune_prom_sample(w, "v", NULL, INFINITY);
	stune_prom_sample(w, "v", NULL, -INFINITY);
	stune_prom_sample(w, "v", NULL, 1e300);
}

CASE(values, "values: integers without a fraction, the shortest digits that read back, NaN, +Inf, -Inf; no timestamp")
{
	int r;
	char *t = text_of(values, &r);
	CHECK(r == 0);
	CHECK_STR(t, "# HELP v values\n# TYPE v gauge\nv 0\nv -3\nv 46060.44\nv 0.1\nv 1796421567.348\nv NaN\nv +Inf\n"
		     "v -Inf\nv 1e+300\n");
	free(t);
}

static void sample_first(struct stune_prom *w)
{
	stune_prom_sample(w, "a", NULL, 1);
}
static void other_family(struct stune_prom *w)
{
	stune_prom_gauge(w, "a", "a");
	stune_prom_gauge(w, "b", "b");
	stune_prom_sample(w, "a", NULL, 1); /* a's samples must come before b begins */
}
static void twice(struct stune_prom *w)
{
	stune_prom_gauge(w, "a", "a");
	stune_prom_gauge(w, "b", "b");
	stune_prom_gauge(w, "a", "a");
}
static void bad_name(struct stune_prom *w)
{
	stune_prom_gauge(w, "9lives", "a");
}
static void bad_label(struct stune_prom *w)
{
	stune_prom_gauge(w, "a", "a");
	stune_prom_sample(w, "a", L("bad-name", "v"), 1);
}
static void reserved_label(struct stune_prom *w)
{
	stune_prom_gauge(w, "a", "a");
	stune_prom_sample(w, "a", L("__name__", "v"), 1);
}
static void label_twice(struct stune_prom *w)
{
	stune_prom_gauge(w, "a", "a");
	stune_prom_sample(w, "a", L("x", "1", "x", "2"), 1);
}
static void colon_label(struct stune_prom *w)
{
	stune_prom_gauge(w, "a:b", "a colon is fine in a metric name");
	stune_prom_sample(w, "a:b", L("c:d", "1"), 1); /* not in a label name */
}

CASE(refused, "a sample before its family, another family's sample, a family twice, bad names: -EINVAL, kept")
{
	void (*bad[])(struct stune_prom *) = {sample_first, other_family,   twice,	 bad_name,
					      bad_label,    reserved_label, label_twice, colon_label};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = 0;
		char *t = text_of(bad[i], &r);
		CHECK_MSG(r == -EINVAL && !t, "case %zu: r = %d", i, r);
		free(t);
	}
}

static void after_error(struct stune_prom *w)
{
	stune_prom_gauge(w, "bad name", "x");
	CHECK(stune_prom_gauge(w, "good", "x") == -EINVAL); /* the first error stays */
	CHECK(stune_prom_sample(w, "good", NULL, 1) == -EINVAL);
}

CASE(sticky, "after an error every call returns it and writes nothing")
{
	int r;
	char *t = text_of(after_error, &r);
	CHECK(r == -EINVAL && !t);
	free(t);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
