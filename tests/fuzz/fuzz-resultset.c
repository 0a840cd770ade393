/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Saved result sets (report --compare PHASE|FILE): the loader, then the statistics --compare computes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "report/internal.h"
#include "report/resultset.h"
#include "stats/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/set.json", fuzz_dir());
	fuzz_write(NULL, "set.json", data, size);
	struct stune_saved_set *s = NULL;
	char *err = NULL;
	int r = stune_saved_set_load(path, &s, &err);
	fuzz_check_message(r, err);
	free(err);
	if (r < 0)
		return 0;
	fuzz_check(s->n > 0, "a set without runs loads");
	for (size_t i = 0; i < s->n; i++)
		fuzz_check(isfinite(s->kiops[i]), "kiops[%zu] = %g", i, s->kiops[i]);
	struct stune_stats st;
	(void)stune_stats_compute(s->kiops, s->n, &st);
	stune_saved_set_free(s);
	return 0;
}
