/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prometheus text exposition format 0.0.4, as node_exporter's textfile
 * collector reads it: a family is "# HELP", "# TYPE NAME gauge" and its
 * samples, one after another; a sample is NAME{label="value",...} VALUE, never
 * with a timestamp (the collector skips a whole file that has one). Label
 * values are made valid UTF-8 (core/utf8.c: a bad byte is U+FFFD) and escaped
 * as the format says (\\ \" \n); HELP text escapes \\ and \n. The writer keeps
 * the first error: every call after it does nothing and returns it.
 */
#pragma once

#include <stddef.h>

#include "core/macro.h"

struct stune_prom;

int stune_prom_new(struct stune_prom **out);
void stune_prom_free(struct stune_prom *w);
DEFINE_CLEANUP_FUNC(struct stune_prom, stune_prom_free)

/*
 * Begin the gauge family name with its help: -EINVAL for a name that is not
 * a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or a family begun before.
 */
int stune_prom_gauge(struct stune_prom *w, const char *name, const char *help);
/*
 * One sample of the family begun last: labels are name, value pairs ending
 * with NULL (labels itself may be NULL: none); a NULL value is "". -EINVAL for
 * another family's name, a label name that is not one ([a-zA-Z_][a-zA-Z0-9_]*,
 * not starting with "__") or given twice. NaN and infinities as the format
 * spells them (NaN, +Inf, -Inf); integers without a fraction.
 */
int stune_prom_sample(struct stune_prom *w, const char *name, const char *const *labels, double value);
/* The text so far (NUL-terminated, len bytes), or the first error. Stays the writer's. */
int stune_prom_text(struct stune_prom *w, const char **text, size_t *len);

/* A label value as the format writes it between the quotes; NULL without memory. Caller frees. */
char *stune_prom_escape_label(const char *value);
