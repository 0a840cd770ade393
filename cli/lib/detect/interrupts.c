/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "detect/interrupts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/macro.h"

void stune_interrupts_clear(struct stune_interrupts *it)
{
	for (size_t i = 0; i < it->n_lines; i++) {
		free(it->lines[i].chip);
		free(it->lines[i].name);
	}
	free(it->lines);
	free(it->cpus);
	free(it->by_irq);
	*it = (struct stune_interrupts){0};
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int parse_header(const char *line, size_t len, struct stune_interrupts *it)
{
	const char *p = line, *end = line + len;
	while ((p = skip_ws(p)) < end) {
		unsigned cpu;
		int used;
		if (sscanf(p, "CPU%u%n", &cpu, &used) != 1)
			return -EINVAL;
		if (stune_grow(&it->cpus, it->n_cpus, sizeof(*it->cpus)) < 0)
			return -ENOMEM;
		it->cpus[it->n_cpus++] = cpu;
		p += used;
	}
	return it->n_cpus ? 0 : -EINVAL;
}

static int parse_line(const char *line, size_t len, struct stune_interrupts *it)
{
	_cleanup_free_ char *buf = strndup(line, len);
	if (!buf)
		return -ENOMEM;
	char *p = (char *)skip_ws(buf);
	if (!isdigit((unsigned char)*p))
		return 0; /* NMI:, LOC:, ERR: ... are not device IRQs */
	char *end;
	errno = 0;
	unsigned long irq = strtoul(p, &end, 10);
	if (errno || *end != ':' || irq > 0xffffff)
		return -EINVAL;
	p = end + 1;

	struct stune_irq_line l = {.irq = (unsigned)irq};
	for (size_t c = 0; c < it->n_cpus; c++) {
		p = (char *)skip_ws(p);
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		l.count += strtoull(p, &end, 10);
		p = end;
	}
	/* Chip name, then "HWIRQ-handler" (optional for some chips), then names. */
	p = (char *)skip_ws(p);
	size_t n = strcspn(p, " \t");
	if (n == 0)
		return -EINVAL;
	l.chip = strndup(p, n);
	if (!l.chip)
		return -ENOMEM;
	p = (char *)skip_ws(p + n);
	if (isdigit((unsigned char)*p)) {
		unsigned long long hw = strtoull(p, &end, 10);
		if (*end == '-') {
			l.hwirq = hw;
			l.has_hwirq = 1;
			p = end + strcspn(end, " \t");
			p = (char *)skip_ws(p);
		}
	}
	l.name = strdup(p);
	if (!l.name) {
		free(l.chip);
		return -ENOMEM;
	}
	if (stune_grow(&it->lines, it->n_lines, sizeof(*it->lines)) < 0) {
		free(l.chip);
		free(l.name);
		return -ENOMEM;
	}
	it->lines[it->n_lines++] = l;
	return 0;
}

static int by_irq_cmp(const void *a, const void *b, void *data)
{
	const struct stune_irq_line *lines = data;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if (lines[x].irq != lines[y].irq)
		return lines[x].irq < lines[y].irq ? -1 : 1;
	return (x > y) - (x < y);
}

int stune_interrupts_parse(const char *text, struct stune_interrupts *out, unsigned *bad_line)
{
	struct stune_interrupts it = {0};
	const char *p = text;
	unsigned lineno = 0;
	int r = 0;

	while (*p) {
		size_t len = strcspn(p, "\n");
		lineno++;
		r = lineno == 1 ? parse_header(p, len, &it) : parse_line(p, len, &it);
		if (r < 0) {
			if (bad_line)
				*bad_line = lineno;
			stune_interrupts_clear(&it);
			return r;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (lineno == 0) {
		if (bad_line)
			*bad_line = 1;
		return -EINVAL;
	}
	if (it.n_lines) {
		if (!(it.by_irq = malloc(it.n_lines * sizeof(*it.by_irq)))) {
			stune_interrupts_clear(&it);
			return -ENOMEM;
		}
		for (size_t i = 0; i < it.n_lines; i++)
			it.by_irq[i] = i;
		qsort_r(it.by_irq, it.n_lines, sizeof(*it.by_irq), by_irq_cmp, it.lines);
	}
	*out = it;
	return 0;
}

const struct stune_irq_line *stune_interrupts_find(const struct stune_interrupts *it, unsigned irq)
{
	if (!it->by_irq) {
		for (size_t i = 0; i < it->n_lines; i++)
			if (it->lines[i].irq == irq)
				return &it->lines[i];
		return NULL;
	}
	size_t lo = 0, hi = it->n_lines;
	while (lo < hi) { /* the first index whose IRQ is not below irq */
		size_t mid = lo + (hi - lo) / 2;
		if (it->lines[it->by_irq[mid]].irq < irq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < it->n_lines && it->lines[it->by_irq[lo]].irq == irq ? &it->lines[it->by_irq[lo]] : NULL;
}

int stune_irq_line_pci(const struct stune_irq_line *l, char bdf[16], unsigned *index)
{
	if (!l->has_hwirq || !strstr(l->chip, "PCI-MSI"))
		return -ENOENT;
	const char *dash = strstr(l->chip, "PCI-MSI");
	dash = strchr(dash + 7, '-'); /* PCI-MSI-BDF or PCI-MSIX-BDF */
	if (dash) {
		unsigned dom, bus, dev, fn;
		if (sscanf(dash + 1, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
			return -EINVAL;
		snprintf(bdf, 16, "%04x:%02x:%02x.%x", dom & 0xffff, bus & 0xff, dev & 0x1f, fn & 7);
		*index = (unsigned)l->hwirq;
		return 0;
	}
	/* drivers/pci/msi/irqdomain.c pci_msi_domain_calc_hwirq() */
	uint64_t hw = l->hwirq;
	unsigned devid = (unsigned)(hw >> 11) & 0xffff;
	snprintf(bdf, 16, "%04x:%02x:%02x.%x", (unsigned)(hw >> 27) & 0xffff, devid >> 8, (devid >> 3) & 0x1f,
		 devid & 7);
	*index = (unsigned)(hw & 0x7ff);
	return 0;
}
