/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fleet/gate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strv.h"
#include "fleet/query.h"
#include "stats/rank.h"

static const char *const metric_names[] = {
    [STUNE_GATE_KIOPS] = "kiops",
    [STUNE_GATE_P50] = "p50",
    [STUNE_GATE_P99] = "p99",
    [STUNE_GATE_P99_9] = "p99.9",
    [STUNE_GATE_WORST_P99] = "worst_p99",
    [STUNE_GATE_FAIRNESS] = "fairness",
    [STUNE_GATE_SPREAD] = "spread",
    [STUNE_GATE_COV] = "cov",
    [STUNE_GATE_SEL_KIOPS] = "selection.kiops",
    [STUNE_GATE_SEL_P50] = "selection.p50",
    [STUNE_GATE_SEL_P99] = "selection.p99",
    [STUNE_GATE_SEL_P99_9] = "selection.p99.9",
    [STUNE_GATE_SEL_SPREAD] = "selection.spread",
    [STUNE_GATE_SEL_COV] = "selection.cov",
    [STUNE_GATE_HOSTS] = "hosts",
    [STUNE_GATE_DRIFTED] = "drifted",
    [STUNE_GATE_APART] = "apart",
    [STUNE_GATE_MISSING] = "missing",
};
#define METRIC_LIST                                                                                       \
	"kiops, p50, p99, p99.9, worst_p99, fairness, spread, cov, selection.kiops, selection.p50, ..., " \
	"selection.spread, selection.cov, hosts, drifted, apart, missing"

const char *stune_gate_metric_name(enum stune_gate_metric m)
{
	return metric_names[m];
}

static const char *const op_names[] = {
    [STUNE_GATE_GE] = ">=", [STUNE_GATE_LE] = "<=", [STUNE_GATE_GT] = ">",
    [STUNE_GATE_LT] = "<",  [STUNE_GATE_EQ] = "=",  [STUNE_GATE_NE] = "!=",
};

const char *stune_gate_op_name(enum stune_gate_op op)
{
	return op_names[op];
}

void stune_gate_free(struct stune_gate *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->conds[i].text);
	free(g->conds);
	free(g);
}

static bool is_count(enum stune_gate_metric m)
{
	return m >= STUNE_GATE_HOSTS;
}

static bool is_kiops(enum stune_gate_metric m)
{
	return m == STUNE_GATE_KIOPS || m == STUNE_GATE_SEL_KIOPS;
}

/* A latency percentile's index (enum stune_qpct); -1: not a latency. */
static int latency_of(enum stune_gate_metric m)
{
	if (m >= STUNE_GATE_P50 && m <= STUNE_GATE_P99_9)
		return (int)(m - STUNE_GATE_P50);
	if (m >= STUNE_GATE_SEL_P50 && m <= STUNE_GATE_SEL_P99_9)
		return (int)(m - STUNE_GATE_SEL_P50);
	return -1;
}

/* METRIC OP at the start of c into out; *rest: what follows the operator (spaces skipped). */
static int parse_metric_op(char *c, struct stune_gate_cond *out, char **rest, char **err)
{
	size_t ml = strspn(c, "abcdefghijklmnopqrstuvwxyz_.0123456789");
	char *p = c + ml;
	while (*p == ' ')
		p++;
	if (ml == 0)
		return stune_errf(err, -EINVAL, "'%s': no metric (" METRIC_LIST ")", c);
	size_t m = 0;
	while (m < ELEMENTSOF(metric_names) && (strlen(metric_names[m]) != ml || strncmp(c, metric_names[m], ml)))
		m++;
	if (m == ELEMENTSOF(metric_names))
		return stune_errf(err, -EINVAL, "'%s': unknown metric '%.*s' (" METRIC_LIST ")", c, (int)ml, c);
	out->metric = (enum stune_gate_metric)m;
	static const struct {
		const char *s;
		enum stune_gate_op op;
	} ops[] = {{">=", STUNE_GATE_GE}, {"<=", STUNE_GATE_LE}, {"==", STUNE_GATE_EQ}, {"!=", STUNE_GATE_NE},
		   {">", STUNE_GATE_GT},  {"<", STUNE_GATE_LT},	 {"=", STUNE_GATE_EQ}};
	size_t o = 0;
	while (o < ELEMENTSOF(ops) && strncmp(p, ops[o].s, strlen(ops[o].s)))
		o++;
	if (o == ELEMENTSOF(ops))
		return stune_errf(err, -EINVAL, "'%s': no operator after '%s' (>=, <=, >, <, =, !=)", c,
				  metric_names[m]);
	out->op = ops[o].op;
	p += strlen(ops[o].s);
	while (*p == ' ')
		p++;
	*rest = p;
	return 0;
}

/* A change condition (v in %): one-sided, against --compare, above -100 %. */
static int check_change(const char *c, bool compare, const struct stune_gate_cond *out, double v, char **err)
{
	if (!compare)
		return stune_errf(err, -EINVAL, "'%s': a change in %% needs --compare PHASE", c);
	if (out->op == STUNE_GATE_EQ || out->op == STUNE_GATE_NE)
		return stune_errf(
		    err, -EINVAL,
		    "'%s': a change is a one-sided test (%s>=+5%%, %s>-2%%, %s<=+10%%): use >=, >, <= or <", c,
		    metric_names[out->metric], metric_names[out->metric], metric_names[out->metric]);
	if (!(v > -100))
		return stune_errf(err, -EINVAL, "'%s': a change is above -100%%", c);
	return 0;
}

/* METRIC OP VALUE, in c (already trimmed, NUL-terminated). */
static int parse_cond(char *c, bool compare, struct stune_gate_cond *out, char **err)
{
	char *p = NULL;
	int r = parse_metric_op(c, out, &p, err);
	if (r < 0)
		return r;
	const char *name = metric_names[out->metric], *num = p;
	bool sign = *p == '+' || *p == '-';
	char *end;
	errno = 0;
	double v = strtod(p, &end);
	bool plain = end > p && isdigit((unsigned char)p[sign]);
	for (const char *k = p; plain && k < end; k++)
		plain = isdigit((unsigned char)*k) || *k == '.' || k == p;
	if (!plain || errno || !isfinite(v))
		return stune_errf(err, -EINVAL, "'%s': '%s' is not a number", c, num);
	bool pct = *end == '%';
	if (pct)
		end++;
	while (*end == ' ')
		end++;
	/* An absolute KIOPS threshold carries its unit: a bare number is one character from a change. */
	bool unit = is_kiops(out->metric) && !pct && !strncasecmp(end, "kiops", 5);
	if (unit)
		for (end += 5; *end == ' ';)
			end++;
	if (*end)
		return stune_errf(err, -EINVAL, "'%s': unexpected '%s' after the value", c, end);
	if (is_kiops(out->metric) && !pct && !sign && !unit)
		return stune_errf(
		    err, -EINVAL,
		    "'%s': a bare number: did you mean a change, %s%s+%s%%? An absolute avg KIOPS carries "
		    "its unit (%s%s%skiops)",
		    c, name, op_names[out->op], num, name, op_names[out->op], num);
	bool lat = latency_of(out->metric) >= 0 || out->metric == STUNE_GATE_WORST_P99;
	if (is_count(out->metric)) {
		if (pct || sign || v != floor(v))
			return stune_errf(err, -EINVAL, "'%s': %s is a number of hosts (a whole number, no sign or %%)",
					  c, name);
	} else if (out->metric == STUNE_GATE_FAIRNESS && !pct) {
		if (sign || v > 1)
			return stune_errf(
			    err, -EINVAL,
			    "'%s': fairness is Jain's index, 0 to 1, without a sign (fairness>=0.9), or its "
			    "change in %% (fairness>=-2%%)",
			    c);
	} else if (lat && !pct) {
		return stune_errf(err, -EINVAL,
				  "'%s': a latency is gated by its change against --compare, in %% (%s<=+10%%)", c,
				  name);
	} else if (pct && (lat || is_kiops(out->metric) || out->metric == STUNE_GATE_FAIRNESS)) {
		out->change = true;
		if ((r = check_change(c, compare, out, v, err)) < 0)
			return r;
	} else if (sign) {
		return stune_errf(err, -EINVAL,
				  is_kiops(out->metric)
				      ? "'%s': avg KIOPS has no sign (a change is written with %%: kiops>=+5%%)"
				      : "'%s': %s is a percentage without a sign (spread<=15%%)",
				  c, name);
	}
	out->value = v;
	return (out->text = strdup(c)) ? 0 : -ENOMEM;
}

static int add_implicit(struct stune_gate *g, enum stune_gate_metric m, enum stune_gate_op op, double v)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->conds[i].metric == m)
			return 0;
	struct stune_gate_cond *c = &g->conds[g->n];
	*c = (struct stune_gate_cond){.metric = m, .op = op, .value = v, .implicit = true};
	if (asprintf(&c->text, "%s%s%.0f", metric_names[m], op_names[op], v) < 0) {
		c->text = NULL;
		return -ENOMEM;
	}
	g->n++;
	return 0;
}

int stune_gate_parse_confidence(const char *s, double *out)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	double v = strtod(s, &end);
	if (*end == '%')
		end++;
	if (errno || *end || !(v / 100 >= STUNE_GATE_CONFIDENCE_MIN && v / 100 <= STUNE_GATE_CONFIDENCE_MAX))
		return -EINVAL;
	*out = v / 100;
	return 0;
}

int stune_gate_parse(const char *expr, bool compare, double confidence, struct stune_gate **out, char **err)
{
	*err = NULL;
	if (!(confidence >= STUNE_GATE_CONFIDENCE_MIN && confidence <= STUNE_GATE_CONFIDENCE_MAX))
		return stune_errf(err, -EINVAL, "a confidence of %g %% is outside %g-%g %%", confidence * 100,
				  STUNE_GATE_CONFIDENCE_MIN * 100, STUNE_GATE_CONFIDENCE_MAX * 100);
	size_t max = 4; /* one condition, and the implicit ones */
	for (const char *p = expr; *p; p++)
		max += *p == ',';
	_cleanup_free_ char *copy = strdup(expr);
	_cleanup_(stune_gate_freep) struct stune_gate *g = calloc(1, sizeof(*g));
	if (!copy || !g || !(g->conds = calloc(max, sizeof(*g->conds))))
		return -ENOMEM;
	char *tok;
	bool trailing = *expr && expr[strlen(expr) - 1] == ',';
	for (char *s = copy; (tok = strsep(&s, ","));) {
		while (isspace((unsigned char)*tok))
			tok++;
		size_t n = strlen(tok);
		while (n > 0 && isspace((unsigned char)tok[n - 1]))
			tok[--n] = '\0';
		if (!*tok)
			return stune_errf(err, -EINVAL, "'%s': an empty condition%s", expr,
					  trailing ? " after the last ','" : "");
		int r = parse_cond(tok, compare, &g->conds[g->n], err);
		if (r < 0)
			return r;
		g->n++;
	}
	int r = add_implicit(g, STUNE_GATE_MISSING, STUNE_GATE_EQ, 0);
	if (r < 0 || (r = add_implicit(g, STUNE_GATE_APART, STUNE_GATE_EQ, 0)) < 0 ||
	    (r = add_implicit(g, STUNE_GATE_HOSTS, STUNE_GATE_GE, 1)) < 0)
		return r;
	g->confidence = confidence;
	*out = steal_pointer(&g);
	return 0;
}

void stune_gate_result_free(struct stune_gate_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->o[i].misses);
		free(r->o[i].names);
		free(r->o[i].tests);
		free(r->o[i].tested);
	}
	free(r->o);
	free(r);
}

static bool holds(enum stune_gate_op op, double a, double b)
{
	switch (op) {
	case STUNE_GATE_GE:
		return a >= b;
	case STUNE_GATE_LE:
		return a <= b;
	case STUNE_GATE_GT:
		return a > b;
	case STUNE_GATE_LT:
		return a < b;
	case STUNE_GATE_EQ:
		return a == b;
	case STUNE_GATE_NE:
		return a != b;
	}
	return false;
}

static bool is_upper(enum stune_gate_op op)
{
	return op == STUNE_GATE_LE || op == STUNE_GATE_LT;
}

/* The test's answer for the condition's direction (upper: the sides were swapped, the change inverted). */
static void fill_test(const struct stune_shift_test *t, bool upper, size_t n_ref, size_t n_cur,
		      struct stune_gate_test *out)
{
	*out = (struct stune_gate_test){
	    .verdict = !t->enough		   ? STUNE_GATE_TOO_FEW
		       : t->p <= 1 - t->confidence ? STUNE_GATE_SHOWN
						   : STUNE_GATE_NOT_SHOWN,
	    .upper = upper,
	    .estimate = upper ? 1 / (1 + t->estimate) - 1 : t->estimate,
	    .bound = !isfinite(t->lower) ? NAN
		     : upper		 ? 1 / (1 + t->lower) - 1
					 : t->lower,
	    .reached = 1 - t->p,
	    .best = 1 - t->best_p,
	    .n_ref = n_ref,
	    .n_cur = n_cur,
	};
}

int stune_gate_host_test(enum stune_gate_op op, double value, double confidence, const double *ref, size_t m,
			 const double *cur, size_t n, struct stune_gate_test *out)
{
	if (op == STUNE_GATE_EQ || op == STUNE_GATE_NE || !(value > -100))
		return -EINVAL;
	double d = value / 100;
	bool upper = is_upper(op);
	struct stune_shift_test t;
	/* Below (1 + d) times the reference: the reference runs above the current ones scaled by 1 / (1 + d). */
	int r = upper ? stune_shift_test(cur, n, ref, m, 1 / (1 + d) - 1, confidence, &t)
		      : stune_shift_test(ref, m, cur, n, d, confidence, &t);
	if (r < 0)
		return r;
	fill_test(&t, upper, m, n, out);
	return 0;
}

int stune_gate_selection_test(enum stune_gate_op op, double value, double confidence, const double *x, size_t n,
			      struct stune_gate_test *out)
{
	if (op == STUNE_GATE_EQ || op == STUNE_GATE_NE || !(value > -100) || n == 0)
		return -EINVAL;
	double d = value / 100;
	bool upper = is_upper(op);
	_cleanup_free_ double *neg = NULL;
	if (upper) {
		if (!(neg = malloc(n * sizeof(*neg))))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			neg[i] = -x[i];
	}
	struct stune_shift_test t;
	int r = stune_signed_rank_test(upper ? neg : x, n, upper ? 1 / (1 + d) - 1 : d, confidence, &t);
	if (r < 0)
		return r;
	fill_test(&t, upper, 0, n, out);
	return 0;
}

/* The runs a condition tests on a side: KIOPS, or a latency percentile; NULL when a run lacks it. */
static const double *side_values(const struct stune_gate_cond *c, const struct stune_qside *s)
{
	int k = latency_of(c->metric);
	if (c->metric == STUNE_GATE_WORST_P99)
		return s->has_worst_p99 ? s->worst_p99 : NULL;
	if (c->metric == STUNE_GATE_FAIRNESS)
		return s->has_fairness ? s->fairness : NULL;
	return k < 0 ? s->kiops : s->has_lat[k] ? s->lat[k] : NULL;
}

/* A compared host's change test for c; 0 when the host has no runs (or no such latency) on a side. */
static int host_change(const struct stune_gate_cond *c, double confidence, const struct stune_qhost *h,
		       struct stune_gate_test *t)
{
	const double *ref = side_values(c, &h->ref), *cur = side_values(c, &h->cur);
	if (!h->has_cmp || !h->cur.n || !h->ref.n || !ref || !cur)
		return 0;
	int r = stune_gate_host_test(c->op, c->value, confidence, ref, h->ref.n, cur, h->cur.n, t);
	return r < 0 ? r : 1;
}

/* The selection's change: its hosts as units (one host: its runs). */
static int selection_change(const struct stune_gate_cond *c, double confidence, const struct stune_fleet *f,
			    struct stune_gate_outcome *o)
{
	_cleanup_free_ double *x = calloc(f->n_hosts ? f->n_hosts : 1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	size_t n = 0, one = 0;
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct stune_qhost *h = &f->hosts[i];
		struct stune_gate_test t;
		if (h->status != STUNE_QHOST_COMPARED)
			continue;
		/* Each host's change: its Hodges-Lehmann estimate (the same whatever the condition's value). */
		int r =
		    host_change(&(struct stune_gate_cond){.metric = c->metric, .op = STUNE_GATE_GE}, confidence, h, &t);
		if (r < 0)
			return r;
		if (r) {
			x[n++] = log1p(t.estimate);
			one = i;
		}
	}
	if (!n)
		return 0;
	int r = n == 1 ? host_change(c, confidence, &f->hosts[one], &o->sel)
		       : stune_gate_selection_test(c->op, c->value, confidence, x, n, &o->sel);
	if (r < 0)
		return r;
	o->has_sel = o->have_value = true;
	o->value = o->sel.estimate * 100;
	o->passed = o->sel.verdict == STUNE_GATE_SHOWN;
	return 0;
}

/* A per-host value; false when it cannot be computed. */
static bool host_value(const struct stune_gate_cond *c, const struct stune_qhost *h, double *v)
{
	switch (c->metric) {
	case STUNE_GATE_KIOPS:
		*v = h->cur.stats.avg;
		return true;
	case STUNE_GATE_FAIRNESS:
		/* The median run's: one run whose devices were unevenly served does not decide. */
		return h->cur.has_fairness && stune_median(h->cur.fairness, h->cur.n, v) == 0;
	case STUNE_GATE_SPREAD:
		*v = h->cur.stats.spread * 100;
		return true;
	case STUNE_GATE_COV:
		*v = h->cur.stats.cov * 100;
		return h->cur.stats.has_stddev;
	default:
		return false;
	}
}

static bool selection_value(const struct stune_gate_cond *c, const struct stune_fleet *f, double *v)
{
	if (!f->has_cur)
		return false;
	switch (c->metric) {
	case STUNE_GATE_SEL_KIOPS:
		*v = f->cur.avg;
		return true;
	case STUNE_GATE_SEL_SPREAD:
		*v = f->cur.spread * 100;
		return true;
	case STUNE_GATE_SEL_COV:
		*v = f->cur.cov * 100;
		return f->cur.has_stddev;
	default:
		return false;
	}
}

static bool counted(enum stune_gate_metric m, const struct stune_qhost *h)
{
	switch (m) {
	case STUNE_GATE_HOSTS:
		return h->status == STUNE_QHOST_COMPARED;
	case STUNE_GATE_DRIFTED:
		return h->apart == STUNE_QAPART_DRIFTED || h->apart == STUNE_QAPART_NOT_APPLIED;
	case STUNE_GATE_APART:
		return h->status == STUNE_QHOST_APART;
	case STUNE_GATE_MISSING:
		return h->status == STUNE_QHOST_MISSING;
	default:
		return false;
	}
}

static int eval_one(const struct stune_gate_cond *c, double confidence, const struct stune_fleet *f,
		    struct stune_gate_outcome *o)
{
	if (c->metric >= STUNE_GATE_SEL_KIOPS && c->metric <= STUNE_GATE_SEL_P99_9 && c->change)
		return selection_change(c, confidence, f, o);
	if (c->metric <= STUNE_GATE_COV) {
		size_t nh = f->n_hosts ? f->n_hosts : 1;
		o->per_host = true;
		if (!(o->misses = calloc(nh, sizeof(*o->misses))))
			return -ENOMEM;
		if (c->change &&
		    (!(o->tests = calloc(nh, sizeof(*o->tests))) || !(o->tested = calloc(nh, sizeof(bool)))))
			return -ENOMEM;
		for (size_t i = 0; i < f->n_hosts; i++) {
			const struct stune_qhost *h = &f->hosts[i];
			double v = 0;
			if (h->status != STUNE_QHOST_COMPARED)
				continue;
			bool known, met;
			if (c->change) {
				int r = host_change(c, confidence, h, &o->tests[i]);
				if (r < 0)
					return r;
				o->tested[i] = known = r > 0;
				v = known ? o->tests[i].estimate * 100 : 0;
				met = known && o->tests[i].verdict == STUNE_GATE_SHOWN;
			} else {
				known = host_value(c, h, &v);
				met = known && holds(c->op, v, c->value);
			}
			if (!met)
				o->misses[o->n_misses++] =
				    (struct stune_gate_miss){.host = i, .unknown = !known, .value = v};
		}
		o->passed = o->n_misses == 0;
		return 0;
	}
	if (c->metric <= STUNE_GATE_SEL_COV) {
		o->have_value = selection_value(c, f, &o->value);
		o->passed = o->have_value && holds(c->op, o->value, c->value);
		return 0;
	}
	if (!(o->names = calloc(f->n_hosts ? f->n_hosts : 1, sizeof(*o->names))))
		return -ENOMEM;
	for (size_t i = 0; i < f->n_hosts; i++)
		if (counted(c->metric, &f->hosts[i]))
			o->names[o->n_names++] = i;
	o->have_value = true;
	o->value = (double)o->n_names;
	o->passed = holds(c->op, o->value, c->value);
	return 0;
}

int stune_gate_eval(const struct stune_gate *g, const struct stune_fleet *f, struct stune_gate_result **out)
{
	_cleanup_(stune_gate_result_freep) struct stune_gate_result *r = calloc(1, sizeof(*r));
	if (!r || !(r->o = calloc(g->n ? g->n : 1, sizeof(*r->o))))
		return -ENOMEM;
	r->passed = true;
	for (size_t i = 0; i < g->n; i++) {
		int e = eval_one(&g->conds[i], g->confidence, f, &r->o[i]);
		r->n++;
		if (e < 0)
			return e;
		r->passed = r->passed && r->o[i].passed;
	}
	*out = steal_pointer(&r);
	return 0;
}
