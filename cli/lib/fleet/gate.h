/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `report --query --gate EXPR`: conditions on the fleet view that a rollout
 * wave must meet. EXPR is COND[,COND]...; COND is METRIC OP VALUE:
 *
 *   per compared host (every one must meet it; the ones that do not are named)
 *     kiops      with %: the change of avg KIOPS against --compare, in percent
 *                (kiops>=+5%); without %: the current avg KIOPS (kiops>=500)
 *     spread     the current set's spread, in percent (spread<=15%)
 *     cov        the current set's CoV, in percent (needs 2 runs per host)
 *   the selection (every compared host's runs pooled)
 *     selection.kiops, selection.spread, selection.cov: the same, once
 *   counts of hosts
 *     hosts      compared hosts           drifted  apart: drifted or not applied
 *     apart      every host shown apart   missing  asked for, without points
 *
 * OP is >=, <=, >, <, = (==) or !=. Unless EXPR names them, missing=0,
 * apart=0 and hosts>=1 are added: a host without data, a host set apart
 * (drifted, not applied, not comparable: never judged), or nothing to judge,
 * never passes; EXPR relaxes one only by naming it (apart<=1). Values are compared exactly as computed (not as rounded
 * for show).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"

struct stune_fleet;

enum stune_gate_metric {
	STUNE_GATE_KIOPS,
	STUNE_GATE_SPREAD,
	STUNE_GATE_COV,
	STUNE_GATE_SEL_KIOPS,
	STUNE_GATE_SEL_SPREAD,
	STUNE_GATE_SEL_COV,
	STUNE_GATE_HOSTS,
	STUNE_GATE_DRIFTED,
	STUNE_GATE_APART,
	STUNE_GATE_MISSING
};
enum stune_gate_op { STUNE_GATE_GE, STUNE_GATE_LE, STUNE_GATE_GT, STUNE_GATE_LT, STUNE_GATE_EQ, STUNE_GATE_NE };

struct stune_gate_cond {
	char *text; /* as written (normalised for the implicit ones) */
	enum stune_gate_metric metric;
	enum stune_gate_op op;
	double value;
	bool change;   /* kiops with %: the change against --compare */
	bool implicit; /* added: missing=0, apart=0, hosts>=1 */
};

struct stune_gate {
	struct stune_gate_cond *conds;
	size_t n;
};
void stune_gate_free(struct stune_gate *g);
DEFINE_CLEANUP_FUNC(struct stune_gate, stune_gate_free)

/*
 * Parse EXPR; compare: whether --compare is given (a change needs it).
 * -EINVAL with *err ("'spred<=15%': unknown metric 'spred' (...)").
 */
int stune_gate_parse(const char *expr, bool compare, struct stune_gate **out, char **err);

/* A host that did not meet a per-host condition, and its value. */
struct stune_gate_miss {
	size_t host;  /* index into the fleet's hosts */
	bool unknown; /* the value could not be computed (CoV of one run) */
	double value;
};
struct stune_gate_outcome {
	bool passed;
	bool per_host;
	bool have_value; /* selection and counts: the value seen */
	double value;
	struct stune_gate_miss *misses; /* per host: the hosts that did not meet it */
	size_t n_misses;
	size_t *names; /* counts: the hosts counted (drifted, apart, missing) */
	size_t n_names;
};
struct stune_gate_result {
	bool passed;
	struct stune_gate_outcome *o; /* one per condition */
	size_t n;
};
void stune_gate_result_free(struct stune_gate_result *r);
DEFINE_CLEANUP_FUNC(struct stune_gate_result, stune_gate_result_free)

int stune_gate_eval(const struct stune_gate *g, const struct stune_fleet *f, struct stune_gate_result **out);

const char *stune_gate_metric_name(enum stune_gate_metric m);
const char *stune_gate_op_name(enum stune_gate_op op);
