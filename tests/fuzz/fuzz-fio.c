/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fio JSON output (report FILE): the parser, then what report computes from a run. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "report/fio.h"
#include "stats/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stune_fio_run *run = NULL;
	char *err = NULL;
	int r = stune_fio_parse_buf(NULL, "fuzz.json", (const char *)data, size, &run, &err);
	fuzz_check_message(r, err);
	free(err);
	if (r < 0)
		return 0;
	/* What the parser promises: finite totals, counts within int64 (the line protocol's integers). */
	fuzz_check(isfinite(run->iops) && isfinite(run->bw_kib_s), "iops %g bw %g", run->iops, run->bw_kib_s);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++) {
		const struct stune_fio_io *t = &run->total[d];
		fuzz_check(t->io_bytes < (UINT64_C(1) << 63) && t->total_ios < (UINT64_C(1) << 63),
			   "io_bytes %llu total_ios %llu", (unsigned long long)t->io_bytes,
			   (unsigned long long)t->total_ios);
		fuzz_check(isfinite(t->clat.mean_ns), "clat mean %g", t->clat.mean_ns);
		fuzz_check(stune_hist_total(&t->clat.bins) < (UINT64_C(1) << 63), "bins total");
	}
	fuzz_check(run->timestamp_ms >= 0, "timestamp_ms %lld", (long long)run->timestamp_ms);
	double kiops[2] = {run->iops / 1000.0, run->iops / 1000.0};
	struct stune_stats st;
	fuzz_check(stune_stats_compute(kiops, 2, &st) == 0, "statistics of a parsed run");
	stune_fio_run_free(run);
	return 0;
}
