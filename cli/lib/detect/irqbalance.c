/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "detect/irqbalance.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/root.h"
#include "detect/gather.h"

/* Where the value of an active "[export ]IRQBALANCE_ARGS=" line starts, else NULL. */
static const char *assignment(const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) > 7 && !strncmp(p, "export", 6) && (p[6] == ' ' || p[6] == '\t')) {
		p += 7;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	size_t vl = strlen(STUNE_IRQBALANCE_VAR);
	if ((size_t)(end - p) > vl && !strncmp(p, STUNE_IRQBALANCE_VAR, vl) && p[vl] == '=')
		return p + vl + 1;
	return NULL;
}

/* The value of v..end: one "..." or '...' string, or a bare word list; -EINVAL when not plain. */
static int plain_value(const char *v, const char *end, char **out)
{
	while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	const char *a = v, *b = end;
	if (b > a && (*a == '"' || *a == '\'')) {
		if (b - a < 2 || b[-1] != *a)
			return -EINVAL;
		a++;
		b--;
	}
	for (const char *p = a; p < b; p++)
		if (strchr("$`\\\"'", *p))
			return -EINVAL;
	return (*out = strndup(a, (size_t)(b - a))) ? 0 : -ENOMEM;
}

int stune_irqbalance_args(const char *text, char **args)
{
	const char *last = NULL, *last_end = NULL;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *v = assignment(line, len);
		if (v) {
			last = v;
			last_end = line + len;
		}
		line = nl ? nl + 1 : NULL;
	}
	*args = NULL;
	return last ? plain_value(last, last_end, args) : 0;
}

static bool is_irq(const char *num, unsigned irq)
{
	char *end;
	return num && *num && strtoul(num, &end, 10) == irq && !*end;
}

bool stune_irqbalance_bans(const char *args, unsigned irq)
{
	_cleanup_free_ char *copy = args ? strdup(args) : NULL;
	char *save = NULL, *w;
	if (!copy)
		return false;
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!strncmp(w, "--banirq=", 9) && is_irq(w + 9, irq))
			return true;
		if ((!strcmp(w, "--banirq") || !strcmp(w, "-i")) && is_irq(strtok_r(NULL, " \t", &save), irq))
			return true;
	}
	return false;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

int stune_irqbalance_banned(const char *args, unsigned **irqs, size_t *n_out)
{
	*irqs = NULL;
	*n_out = 0;
	if (!args)
		return 0;
	_cleanup_free_ char *copy = strdup(args);
	if (!copy)
		return -ENOMEM;
	_cleanup_free_ unsigned *v = NULL;
	size_t n = 0;
	char *save = NULL;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		const char *num = NULL;
		if (!strncmp(w, "--banirq=", 9))
			num = w + 9;
		else if (!strcmp(w, "--banirq") || !strcmp(w, "-i"))
			num = strtok_r(NULL, " \t", &save);
		if (!num || !*num)
			continue;
		char *end;
		unsigned long x = strtoul(num, &end, 10);
		if (*end || x > UINT_MAX) /* what stune_irqbalance_bans() matches no IRQ with */
			continue;
		if (stune_grow(&v, n, sizeof(*v)) < 0)
			return -ENOMEM;
		v[n++] = (unsigned)x;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_unsigned);
	size_t u = 0;
	for (size_t i = 0; i < n; i++)
		if (u == 0 || v[u - 1] != v[i])
			v[u++] = v[i];
	*irqs = steal_pointer(&v);
	*n_out = u;
	return 0;
}

bool stune_irqbalance_banned_has(const unsigned *irqs, size_t n, unsigned irq)
{
	return n && bsearch(&irq, irqs, n, sizeof(*irqs), cmp_unsigned);
}

int stune_irqbalance_edit(const char *text, const char *args, const char *comment, char **out)
{
	/* The last active line, if any: replaced in place. */
	const char *at = NULL, *at_end = NULL;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (assignment(line, len)) {
			at = line;
			at_end = line + len;
		}
		line = nl ? nl + 1 : NULL;
	}
	char *s = NULL;
	int n;
	if (at)
		n = asprintf(&s, "%.*s# %s\n%s=\"%s\"%s", (int)(at - text), text, comment, STUNE_IRQBALANCE_VAR, args,
			     at_end);
	else {
		size_t tl = strlen(text);
		n = asprintf(&s, "%s%s# %s\n%s=\"%s\"", text, tl && text[tl - 1] != '\n' ? "\n" : "", comment,
			     STUNE_IRQBALANCE_VAR, args);
	}
	if (n < 0)
		return -ENOMEM;
	*out = s;
	return 0;
}

int stune_scan_irqbalance(struct stune_ctx *ctx, struct stune_topology *t)
{
	struct stune_irqbalance *ib = &t->irqbalance;
	_cleanup_free_ char *text = NULL;
	int r = stune_root_read(ctx->root, STUNE_IRQBALANCE_DEFAULTS, &text);
	if (r == -ENOMEM)
		return r;
	ib->defaults = r != -ENOENT;
	ib->args_err = r == -ENOENT ? 0 : r;
	if (r >= 0 && (r = stune_irqbalance_args(text, &ib->args)) < 0) {
		if (r == -ENOMEM)
			return r;
		ib->args_err = r;
	}
	ib->systemd = stune_root_exists(ctx->root, "run/systemd/system");
	/* A running daemon: its comm is "irqbalance". */
	_cleanup_closedir_ DIR *d = NULL;
	if (stune_root_opendir(ctx->root, "proc", &d) < 0)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (pid <= 0 || *end)
			continue;
		_cleanup_free_ char *comm = NULL;
		if (stune_root_readf(ctx->root, &comm, "proc/%ld/comm", pid) == 0 && !strcmp(comm, "irqbalance")) {
			ib->pid = pid;
			break;
		}
	}
	return 0;
}
