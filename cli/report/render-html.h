/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

#include "report/session.h"
#include "render-query.h"

struct stune_saved_set;

/*
 * report --html: the result set (and the --compare reference when c is set;
 * ref: the reference's saved set, for its per-run KIOPS, or NULL) as one
 * self-contained HTML document written to f, and nothing else touched.
 * Returns 0, or -EIO when writing to f failed.
 */
int render_report_html(FILE *f, const struct stune_report_set *s, const struct stune_report_compare *c,
		       const struct stune_saved_set *ref);

/*
 * report --query --html: the fleet view as one self-contained HTML document
 * (the selection, the per-host avg KIOPS change sorted with its outliers
 * named, a chart per cohort, the hosts); gr NULL without --gate.
 */
int render_fleet_html(FILE *f, const struct stune_fleet *fl, const struct fleet_meta *m, const struct stune_gate *g,
		      const struct stune_gate_result *gr);
