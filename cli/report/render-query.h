/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "fleet/gate.h"
#include "fleet/query.h"
#include "out.h"

#define STUNE_QUERY_SCHEMA_VERSION 1

/* What was asked, for the header. */
struct fleet_meta {
	const char *phase, *compare, *since, *gate_expr;
	int64_t start_ms, end_ms;
	size_t hosts_asked; /* 0: every host of the answer */
	bool hosts_given;
};

/* The fleet view document (schema/report-query.schema.json); gate NULL without --gate. */
void render_fleet(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m, const struct stune_gate *g,
		  const struct stune_gate_result *gr);
/* A change test in words: "shown", "not shown", "too few"; its estimate and bound ("+13.8 %, at least
 * +9.1 %"); why it did (not) pass ("not shown at 95 %: 71.3 % reached (6 and 6 runs)"). */
const char *gate_verdict_name(enum stune_gate_verdict v);
void gate_test_estimate(char *buf, size_t size, const struct stune_gate_test *t);
void gate_test_reason(char *buf, size_t size, const struct stune_gate_test *t, double confidence);
/* One line for stderr: the conditions that failed and their hosts (at most 10 named each). */
/* A treatment item's value on one side ("none" when unset; a profile by name and digest) into buf. */
const char *query_treat_value(char *buf, size_t size, const struct stune_qside *s, enum stune_qlabel l);
char *gate_failure_line(const struct stune_fleet *f, const struct stune_gate *g, const struct stune_gate_result *gr);
