/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

#include "report/session.h"

struct stune_saved_set;

/*
 * report --html: the result set (and the --compare reference when c is set;
 * ref: the reference's saved set, for its per-run KIOPS, or NULL) as one
 * self-contained HTML document written to f, and nothing else touched.
 * Returns 0, or -EIO when writing to f failed.
 */
int render_report_html(FILE *f, const struct stune_report_set *s, const struct stune_report_compare *c,
		       const struct stune_saved_set *ref);
