/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "lib/fio.h"
#include "lib/stats.h"
#include "out.h"

/* One result set: the runs of one configuration, one fio file per run. */
struct report_set {
	const char *phase; /* NULL: unlabelled */
	struct stune_fio_run **runs;
	size_t n_runs;
	double *kiops;		  /* per run: (read + write IOPS summed over all jobs) / 1000 */
	struct stune_stats stats; /* over kiops */
};

/* --compare: the reference set against this one. */
struct report_compare {
	const char *ref_label;	/* phase, or the file name */
	const char *ref_source; /* the saved file */
	struct stune_stats ref;
	const char *cur_label;
	struct stune_stats_cmp cmp;
};

/* The result-set document (schema_version, phase, runs, summary), plus "compare" when c is set. */
void render_report(struct out *o, const struct report_set *s, const struct report_compare *c);
