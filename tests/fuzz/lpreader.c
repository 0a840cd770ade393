/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "lpreader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const char *s, *end;
	const char *why;
};

/* A measurement, tag key, tag value or field key: up to an unescaped stop
 * character. esc: the characters a backslash escapes here. */
static char *token(struct cur *c, const char *stops, const char *esc)
{
	char *out = malloc((size_t)(c->end - c->s) + 1), *o = out;
	if (!out)
		abort();
	while (c->s < c->end && !strchr(stops, *c->s)) {
		if (*c->s == '\\' && c->s + 1 < c->end && strchr(esc, c->s[1])) {
			*o++ = c->s[1];
			c->s += 2;
			continue;
		}
		if (*c->s == '\\') {
			/* A backslash before anything else is itself; but then it cannot end the token
			 * (the parser would take the next character as escaped). */
			if (c->s + 1 >= c->end || strchr(stops, c->s[1])) {
				c->why = "a backslash at the end of a token";
				free(out);
				return NULL;
			}
		}
		if (*c->s == '\n' || *c->s == '\r') {
			c->why = "a line break inside a token";
			free(out);
			return NULL;
		}
		*o++ = *c->s++;
	}
	*o = '\0';
	if (o == out) {
		c->why = "an empty name or tag value";
		free(out);
		return NULL;
	}
	return out;
}

static int field_value(struct cur *c, struct lp_point *p, size_t i)
{
	const char *start = c->s;
	if (c->s < c->end && *c->s == '"') {
		char *out = malloc((size_t)(c->end - c->s) + 1), *o = out;
		if (!out)
			abort();
		for (c->s++; c->s < c->end && *c->s != '"'; c->s++) {
			if (*c->s == '\\' && c->s + 1 < c->end && (c->s[1] == '"' || c->s[1] == '\\'))
				c->s++;
			*o++ = *c->s;
		}
		if (c->s >= c->end) {
			free(out);
			c->why = "an unterminated string field";
			return -1;
		}
		c->s++;
		*o = '\0';
		p->field_type[i] = LP_STRING;
		p->field_string[i] = out;
		return 0;
	}
	while (c->s < c->end && *c->s != ',' && *c->s != ' ')
		c->s++;
	size_t n = (size_t)(c->s - start);
	char buf[128];
	if (n == 0 || n >= sizeof(buf)) {
		c->why = "an empty or overlong field value";
		return -1;
	}
	memcpy(buf, start, n);
	buf[n] = '\0';
	static const char *const t[] = {"t", "T", "true", "True", "TRUE"}, *const f[] = {"f", "F", "false", "False",
											 "FALSE"};
	for (size_t k = 0; k < 5; k++)
		if (!strcmp(buf, t[k]) || !strcmp(buf, f[k])) {
			p->field_type[i] = LP_BOOL;
			p->field_bool[i] = !strcmp(buf, t[k]);
			return 0;
		}
	/* [-+]digits[i] or a decimal float: [-+]digits[.digits][e[-+]digits] */
	const char *q = buf + (buf[0] == '-' || buf[0] == '+');
	size_t digits = strspn(q, "0123456789");
	if (digits && q[digits] == 'i' && q[digits + 1] == '\0') {
		buf[n - 1] = '\0';
		char *end;
		errno = 0;
		long long v = strtoll(buf, &end, 10);
		if (errno || *end) {
			c->why = "an integer out of int64";
			return -1;
		}
		p->field_type[i] = LP_INT;
		p->field_int[i] = v;
		return 0;
	}
	const char *r = q + digits;
	size_t frac = 0;
	if (*r == '.') {
		frac = strspn(r + 1, "0123456789");
		r += 1 + frac;
	}
	if (!digits && !frac) {
		c->why = "a field value that is no number, string or boolean";
		return -1;
	}
	if (*r == 'e' || *r == 'E') {
		r++;
		r += *r == '-' || *r == '+';
		size_t e = strspn(r, "0123456789");
		if (!e) {
			c->why = "an exponent without digits";
			return -1;
		}
		r += e;
	}
	if (*r) {
		c->why = "garbage after a number";
		return -1;
	}
	p->field_type[i] = LP_FLOAT;
	p->field_float[i] = strtod(buf, NULL);
	return 0;
}

int lp_parse(const char *line, size_t len, struct lp_point *p, const char **why)
{
	struct cur c = {.s = line, .end = line + len};
	*p = (struct lp_point){0};
	if (len && *line == '#') {
		*why = "a comment";
		return -1;
	}
	if (!(p->measurement = token(&c, ", ", ", ")))
		goto bad;
	while (c.s < c.end && *c.s == ',') {
		c.s++;
		if (p->n_tags == LP_MAX) {
			c.why = "too many tags";
			goto bad;
		}
		size_t i = p->n_tags;
		if (!(p->tag_key[i] = token(&c, ",= ", ",= ")))
			goto bad;
		p->n_tags++;
		if (c.s >= c.end || *c.s != '=') {
			c.why = "a tag without '='";
			goto bad;
		}
		c.s++;
		if (!(p->tag_value[i] = token(&c, ",= ", ",= ")))
			goto bad;
		if (i > 0 && strcmp(p->tag_key[i - 1], p->tag_key[i]) >= 0) {
			c.why = "tags not sorted by key, or a tag twice";
			goto bad;
		}
	}
	if (c.s >= c.end || *c.s != ' ') {
		c.why = "no space before the fields";
		goto bad;
	}
	c.s++;
	for (;;) {
		if (p->n_fields == LP_MAX) {
			c.why = "too many fields";
			goto bad;
		}
		size_t i = p->n_fields;
		if (!(p->field_key[i] = token(&c, ",= ", ",= ")))
			goto bad;
		p->n_fields++;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(p->field_key[k], p->field_key[i])) {
				c.why = "a field twice";
				goto bad;
			}
		if (c.s >= c.end || *c.s != '=') {
			c.why = "a field without '='";
			goto bad;
		}
		c.s++;
		if (field_value(&c, p, i) < 0)
			goto bad;
		if (c.s < c.end && *c.s == ',') {
			c.s++;
			continue;
		}
		break;
	}
	if (c.s >= c.end || *c.s != ' ') {
		c.why = "no timestamp";
		goto bad;
	}
	c.s++;
	{
		size_t n = (size_t)(c.end - c.s);
		char buf[32];
		const char *d = c.s + (n && *c.s == '-');
		if (n == 0 || n >= sizeof(buf) || strspn(d, "0123456789") != (size_t)(c.end - d)) {
			c.why = "a timestamp that is not an integer";
			goto bad;
		}
		memcpy(buf, c.s, n);
		buf[n] = '\0';
		errno = 0;
		p->timestamp = strtoll(buf, NULL, 10);
		if (errno) {
			c.why = "a timestamp out of int64";
			goto bad;
		}
	}
	return 0;
bad:
	*why = c.why;
	lp_point_clear(p);
	return -1;
}

void lp_point_clear(struct lp_point *p)
{
	free(p->measurement);
	for (size_t i = 0; i < p->n_tags; i++) {
		free(p->tag_key[i]);
		free(p->tag_value[i]);
	}
	for (size_t i = 0; i < p->n_fields; i++) {
		free(p->field_key[i]);
		if (p->field_type[i] == LP_STRING)
			free(p->field_string[i]);
	}
	*p = (struct lp_point){0};
}

const char *lp_tag(const struct lp_point *p, const char *key)
{
	for (size_t i = 0; i < p->n_tags; i++)
		if (!strcmp(p->tag_key[i], key))
			return p->tag_value[i];
	return NULL;
}

int lp_field(const struct lp_point *p, const char *key)
{
	for (size_t i = 0; i < p->n_fields; i++)
		if (!strcmp(p->field_key[i], key))
			return (int)i;
	return -1;
}
