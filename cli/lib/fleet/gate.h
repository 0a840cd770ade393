/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `report --query --gate EXPR`: conditions on the fleet view that a rollout
 * wave must meet. EXPR is COND[,COND]...; COND is METRIC OP VALUE:
 *
 *   per compared host (every one must meet it; the ones that do not are named)
 *     kiops      with %: the change against --compare, in percent, as a
 *                one-sided test (kiops>=+5%: the tuned runs shown above the
 *                baseline runs scaled by 1.05, at the gate's confidence);
 *                without %: the current avg KIOPS with its unit
 *                (kiops>=500kiops), a threshold; a bare number is refused
 *     p50, p99, p99.9  the change of a completion latency percentile per run
 *                (the job's reads; a write-only job's writes), always with %,
 *                as a one-sided test of the runs (p99<=+10%: shown below 1.10
 *                times the baseline's)
 *     worst_p99  runs on several devices: the change of the worst device's p99
 *                per run, with % (worst_p99<=+10%), a test like p99
 *     fairness   runs on several devices: Jain's index of the devices' IOPS;
 *                without %: the median run's, a threshold (fairness>=0.9);
 *                with %: its change, a test of the runs (fairness>=-2%)
 *     spread     the current set's spread, in percent (spread<=15%)
 *     cov        the current set's CoV, in percent (needs 2 runs per host)
 *   the selection
 *     selection.kiops  with %: the hosts are the units: a one-sided test of
 *                their per-host changes (one host: its runs, as kiops);
 *                without %: every compared host's runs pooled, avg KIOPS
 *     selection.p50, selection.p99, selection.p99.9: the hosts as units
 *     selection.spread, selection.cov: every compared host's runs pooled
 *   counts of hosts
 *     hosts      compared hosts           drifted  apart: drifted or not applied
 *     apart      every host shown apart   missing  asked for, without points
 *
 * OP is >=, <=, >, <, = (==) or !=; a change takes only >=, >, <= and < (a
 * test shows one direction). Unless EXPR names them, missing=0, apart=0 and
 * hosts>=1 are added: a host without data, a host set apart (drifted, not
 * applied, not comparable: never judged), or nothing to judge, never passes;
 * EXPR relaxes one only by naming it (apart<=1). Thresholds are compared
 * exactly as computed (not as rounded for show).
 *
 * The tests (stats/rank.h): per host, the one-sided Mann-Whitney U test of
 * the runs with the shift, and its Hodges-Lehmann estimate and confidence
 * bound; for a selection, the one-sided Wilcoxon signed-rank test of the
 * hosts' log changes (each host's Hodges-Lehmann estimate) and its
 * Hodges-Lehmann estimate and bound. A change is shown when the test's p is
 * at most 1 - confidence; counts that cannot reach the confidence at all
 * (3 and 2 runs, 4 hosts at 95 %) are "too few", never a pass.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"

struct stune_fleet;

/* The per-host metrics first, then the selection's (the same order), then the counts. */
enum stune_gate_metric {
	STUNE_GATE_KIOPS,
	STUNE_GATE_P50,
	STUNE_GATE_P99,
	STUNE_GATE_P99_9,
	STUNE_GATE_WORST_P99,
	STUNE_GATE_FAIRNESS,
	STUNE_GATE_SPREAD,
	STUNE_GATE_COV,
	STUNE_GATE_SEL_KIOPS,
	STUNE_GATE_SEL_P50,
	STUNE_GATE_SEL_P99,
	STUNE_GATE_SEL_P99_9,
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
	bool change;   /* kiops with %, a latency: the change against --compare (a test) */
	bool implicit; /* added: missing=0, apart=0, hosts>=1 */
};

struct stune_gate {
	struct stune_gate_cond *conds;
	size_t n;
	double confidence; /* of each change test (0.95) */
};
void stune_gate_free(struct stune_gate *g);
DEFINE_CLEANUP_FUNC(struct stune_gate, stune_gate_free)

/* The confidence of the change tests unless --confidence says otherwise, and its bounds. */
#define STUNE_GATE_CONFIDENCE	  0.95
#define STUNE_GATE_CONFIDENCE_MIN 0.5
#define STUNE_GATE_CONFIDENCE_MAX 0.999
/* "95", "95%", "99.5": a percentage within the bounds into a fraction; -EINVAL otherwise. */
int stune_gate_parse_confidence(const char *s, double *out);

/*
 * Parse EXPR; compare: whether --compare is given (a change needs it);
 * confidence: of the change tests. -EINVAL with *err ("'spred<=15%':
 * unknown metric 'spred' (...)").
 */
int stune_gate_parse(const char *expr, bool compare, double confidence, struct stune_gate **out, char **err);

/* A change condition's test, for one host (its runs) or the selection (its hosts). */
enum stune_gate_verdict {
	STUNE_GATE_SHOWN,     /* the test shows the change at the confidence */
	STUNE_GATE_NOT_SHOWN, /* it does not */
	STUNE_GATE_TOO_FEW    /* these counts cannot reach the confidence at all */
};
struct stune_gate_test {
	enum stune_gate_verdict verdict;
	bool upper;	     /* <= and <: the change shown below the value (the bound is an upper one) */
	double estimate;     /* the change (Hodges-Lehmann), fraction */
	double bound;	     /* its one-sided bound at the confidence, fraction; NAN: too few */
	double reached;	     /* the confidence the data reach: 1 - p */
	double best;	     /* the most these counts can reach: 1 - the smallest p */
	size_t n_ref, n_cur; /* runs per side; the selection: hosts (n_cur), n_ref 0 */
};
/*
 * The per-host test of a change condition (op, value in percent) at
 * confidence on the runs ref[m] and cur[n] (KIOPS, positive and finite);
 * the selection's on the hosts' log changes x[n]. -EINVAL for an op a
 * change does not take or a bad value; -ENOMEM.
 */
int stune_gate_host_test(enum stune_gate_op op, double value, double confidence, const double *ref, size_t m,
			 const double *cur, size_t n, struct stune_gate_test *out);
int stune_gate_selection_test(enum stune_gate_op op, double value, double confidence, const double *x, size_t n,
			      struct stune_gate_test *out);

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
	/* A change condition: per host, one test per host of the fleet (compared hosts only: tested[i]);
	 * the selection, one (value: its estimate in percent). */
	struct stune_gate_test *tests;
	bool *tested;
	struct stune_gate_test sel;
	bool has_sel;
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
