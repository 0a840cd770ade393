// SPDX-License-Identifier: GPL-2.0-or-later
/* The option tables of the commands with modes (modes.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/macro.h"
#include "modes.h"

struct option *mode_longopts(const struct mode_table *t)
{
	static const struct option global[] = {GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
	struct option *lo = calloc(t->n_opts + ELEMENTSOF(global), sizeof(*lo));
	if (!lo)
		return NULL;
	for (size_t i = 0; i < t->n_opts; i++)
		lo[i] = (struct option){t->opts[i].name, t->opts[i].has_arg, NULL, t->opts[i].val};
	memcpy(lo + t->n_opts, global, sizeof(global));
	return lo;
}

void mode_given(const struct mode_table *t, int val, uint64_t *given)
{
	for (size_t i = 0; i < t->n_opts && i < 64; i++)
		if (t->opts[i].val == val)
			*given |= UINT64_C(1) << i;
}

/* "report --run, report --flush": the modes of mask into buf. */
static const char *mode_names(char *buf, size_t size, const struct mode_table *t, unsigned mask)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t m = 0; m < t->n_modes && len < size; m++)
		if (mask & MODE(m))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", t->modes[m].name);
	return buf;
}

int mode_check(const struct mode_table *t, size_t m, uint64_t given, int nargs)
{
	const struct mode_def *d = &t->modes[m];
	for (size_t i = 0; i < t->n_opts && i < 64; i++) {
		if (!(given & (UINT64_C(1) << i)) || (t->opts[i].modes & MODE(m)))
			continue;
		char where[256];
		usage_error(t->cmd, "--%s does not go with %s; it goes with %s", t->opts[i].name, d->name,
			    mode_names(where, sizeof(where), t, t->opts[i].modes));
		return EXIT_USAGE;
	}
	if (nargs < d->min_args || (d->max_args >= 0 && nargs > d->max_args)) {
		usage_error(t->cmd, "%s", d->bad_args);
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

void mode_help(FILE *f, const struct mode_table *t)
{
	size_t width = 0;
	for (size_t m = 0; m < t->n_modes; m++)
		if (strlen(t->modes[m].name) > width)
			width = strlen(t->modes[m].name);
	fputs("Options by mode (the global options go with every mode; any other is refused):\n", f);
	for (size_t m = 0; m < t->n_modes; m++) {
		size_t col =
		    (size_t)fprintf(f, "  %s:%*s", t->modes[m].name, (int)(width - strlen(t->modes[m].name)), "");
		bool none = true;
		for (size_t i = 0; i < t->n_opts; i++) {
			if (!(t->opts[i].modes & MODE(m)))
				continue;
			size_t len = strlen(t->opts[i].name) + 3;
			if (col + len > 80)
				col = (size_t)fprintf(f, "\n  %-*s", (int)width + 1, "") - 1;
			col += (size_t)fprintf(f, " --%s", t->opts[i].name);
			none = false;
		}
		fputs(none ? " (none)\n" : "\n", f);
	}
}
