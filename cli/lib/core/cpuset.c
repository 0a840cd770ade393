/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/macro.h"

/* Larger than any CONFIG_NR_CPUS a distribution builds with (Debian: 8192). */
#define STUNE_MAX_CPUS 65536u

void stune_cpuset_clear(struct stune_cpuset *s)
{
	free(s->bits);
	s->bits = NULL;
	s->nwords = 0;
	s->valid = false;
}

int stune_cpuset_set(struct stune_cpuset *s, unsigned cpu)
{
	if (cpu >= STUNE_MAX_CPUS)
		return -ERANGE;
	size_t word = cpu / 64;
	if (word >= s->nwords) {
		/* Doubled, not grown a word at a time (a set parsed CPU by CPU would
		 * copy itself C/64 times); the words past the highest CPU are zero,
		 * which every reader of a set already allows for. */
		size_t n = word + 1 > 2 * s->nwords ? word + 1 : 2 * s->nwords;
		uint64_t *b = realloc(s->bits, n * sizeof(*b));
		if (!b)
			return -ENOMEM;
		memset(b + s->nwords, 0, (n - s->nwords) * sizeof(*b));
		s->bits = b;
		s->nwords = n;
	}
	s->bits[word] |= UINT64_C(1) << (cpu % 64);
	s->valid = true;
	return 0;
}

bool stune_cpuset_has(const struct stune_cpuset *s, unsigned cpu)
{
	size_t word = cpu / 64;
	return word < s->nwords && (s->bits[word] >> (cpu % 64)) & 1;
}

size_t stune_cpuset_count(const struct stune_cpuset *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nwords; i++)
		n += (size_t)__builtin_popcountll(s->bits[i]);
	return n;
}

unsigned stune_cpuset_end(const struct stune_cpuset *s)
{
	for (size_t i = s->nwords; i-- > 0;)
		if (s->bits[i])
			return (unsigned)(i * 64 + 64 - (size_t)__builtin_clzll(s->bits[i]));
	return 0;
}

int stune_cpuset_next(const struct stune_cpuset *s, unsigned from)
{
	for (size_t i = from / 64; i < s->nwords; i++) {
		uint64_t w = s->bits[i];
		if (i == from / 64)
			w &= ~UINT64_C(0) << (from % 64);
		if (w)
			return (int)(i * 64 + (size_t)__builtin_ctzll(w));
	}
	return -1;
}

bool stune_cpuset_equal(const struct stune_cpuset *a, const struct stune_cpuset *b)
{
	if (a->valid != b->valid)
		return false;
	size_t n = a->nwords > b->nwords ? a->nwords : b->nwords;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = i < a->nwords ? a->bits[i] : 0;
		uint64_t y = i < b->nwords ? b->bits[i] : 0;
		if (x != y)
			return false;
	}
	return true;
}

int stune_cpuset_copy(struct stune_cpuset *dst, const struct stune_cpuset *src)
{
	stune_cpuset_clear(dst);
	if (src->nwords) {
		dst->bits = malloc(src->nwords * sizeof(*dst->bits));
		if (!dst->bits)
			return -ENOMEM;
		memcpy(dst->bits, src->bits, src->nwords * sizeof(*dst->bits));
		dst->nwords = src->nwords;
	}
	dst->valid = src->valid;
	return 0;
}

static int parse_cpu(const char **p, unsigned *out)
{
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long v = strtoul(*p, &end, 10);
	if (errno || v >= STUNE_MAX_CPUS)
		return -ERANGE;
	*out = (unsigned)v;
	*p = end;
	return 0;
}

int stune_cpuset_parse_list(struct stune_cpuset *s, const char *text)
{
	struct stune_cpuset tmp = {0};
	const char *p = text;
	int r;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p && *p != '\n') {
		unsigned a, b;
		if ((r = parse_cpu(&p, &a)) < 0)
			goto fail;
		b = a;
		if (*p == '-') {
			p++;
			if ((r = parse_cpu(&p, &b)) < 0)
				goto fail;
			if (b < a) {
				r = -EINVAL;
				goto fail;
			}
		}
		for (unsigned c = a; c <= b; c++)
			if ((r = stune_cpuset_set(&tmp, c)) < 0)
				goto fail;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (!*p || *p == '\n') {
				r = -EINVAL;
				goto fail;
			}
		} else if (*p && *p != '\n') {
			r = -EINVAL;
			goto fail;
		}
	}
	if (*p == '\n' && p[1]) {
		r = -EINVAL;
		goto fail;
	}
	tmp.valid = true;
	stune_cpuset_clear(s);
	*s = tmp;
	return 0;
fail:
	stune_cpuset_clear(&tmp);
	return r;
}

int stune_cpuset_parse_mask(struct stune_cpuset *s, const char *text)
{
	struct stune_cpuset tmp = {0};
	size_t len = strcspn(text, "\n");
	size_t ngroups = 0;
	int r;

	if (len == 0 || (text[len] && text[len + 1]))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (text[i] == ',')
			ngroups++;
	ngroups++;

	/* Walk groups from the right: the last group holds CPUs 0-31. */
	size_t end = len, group = 0;
	while (group < ngroups) {
		size_t start = end;
		while (start > 0 && text[start - 1] != ',')
			start--;
		size_t glen = end - start;
		if (glen == 0 || glen > 8) {
			r = -EINVAL;
			goto fail;
		}
		uint32_t v = 0;
		for (size_t i = start; i < end; i++) {
			int c = (unsigned char)text[i];
			if (!isxdigit(c)) {
				r = -EINVAL;
				goto fail;
			}
			v = v << 4 | (uint32_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
		}
		for (unsigned b = 0; b < 32; b++)
			if (v >> b & 1)
				if ((r = stune_cpuset_set(&tmp, (unsigned)(group * 32 + b))) < 0)
					goto fail;
		group++;
		end = start ? start - 1 : 0;
	}
	tmp.valid = true;
	stune_cpuset_clear(s);
	*s = tmp;
	return 0;
fail:
	stune_cpuset_clear(&tmp);
	return r;
}

int stune_cpuset_format(const struct stune_cpuset *s, char **out)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	bool first = true;
	int cpu = stune_cpuset_next(s, 0);
	while (cpu >= 0) {
		int last = cpu;
		while (stune_cpuset_has(s, (unsigned)last + 1))
			last++;
		fprintf(f, "%s%d", first ? "" : ",", cpu);
		if (last > cpu)
			fprintf(f, "-%d", last);
		first = false;
		cpu = stune_cpuset_next(s, (unsigned)last + 1);
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}
