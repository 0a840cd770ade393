/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report --query's answers: VictoriaMetrics /api/v1/export (JSON lines) and
 * /api/v1/query (Prometheus), InfluxDB 1.x /query (InfluxQL). The first byte
 * picks the API, the rest is the body.
 */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "fleet/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	static const enum stune_query_api apis[3] = {STUNE_QUERY_EXPORT, STUNE_QUERY_PROMETHEUS, STUNE_QUERY_INFLUXQL};
	enum stune_query_api api = apis[data[0] % 3];
	char *body = fuzz_str(data + 1, size - 1);
	struct stune_query q = {.url = "http://127.0.0.1:8428",
				.api = api,
				.phase = "tuned",
				.compare = "baseline",
				.start_ms = 0,
				.end_ms = INT64_MAX};
	struct stune_fleet *f = NULL;
	char *err = NULL;
	int r = stune_fleet_from_answer(&q, api, body, size - 1, &f, &err);
	fuzz_check_message(r, err);
	if (r == 0) {
		for (size_t i = 0; i < f->n_hosts; i++)
			for (size_t k = 0; k < f->hosts[i].cur.n; k++)
				fuzz_check(isfinite(f->hosts[i].cur.kiops[k]), "kiops not finite");
		stune_fleet_free(f);
	}
	free(err);
	free(body);
	return 0;
}
