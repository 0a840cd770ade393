/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report --query: the fleet view, text (80 columns) and JSON from one renderer. */
#include "render-query.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIDTH 80

static void fmt_time(char *buf, size_t size, int64_t ms, bool iso)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (ms <= 0 || !gmtime_r(&t, &tm) ||
	    (iso ? strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) : strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm)) ==
		0)
		buf[0] = '\0';
}

/* Display columns of a UTF-8 string (continuation bytes take none). */
static size_t cols(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Text items joined by sep, wrapped at WIDTH with indent columns of indent on every new line. */
struct wrap {
	struct out *o;
	size_t col, indent;
	bool first;
};

static void wrap_item(struct wrap *w, const char *sep, const char *item)
{
	size_t need = (w->first ? 0 : cols(sep)) + cols(item);
	if (!w->first && w->col + need > WIDTH) {
		out_text(w->o, "%s\n%*s", sep[0] == ',' ? "," : "", (int)w->indent, "");
		w->col = w->indent;
		need = cols(item);
	} else if (!w->first) {
		out_text(w->o, "%s", sep);
	}
	out_text(w->o, "%s", item);
	w->col += need;
	w->first = false;
}

static void render_stats(struct out *o, const char *key, const struct stune_stats *st, bool has)
{
	if (!has) {
		out_str(o, key, NULL, NULL);
		return;
	}
	out_obj_begin(o, key);
	out_int(o, "runs", NULL, (long long)st->n);
	out_dbl(o, "avg_kiops", NULL, st->avg, 1);
	out_dbl(o, "min_kiops", NULL, st->min, 1);
	out_dbl(o, "max_kiops", NULL, st->max, 1);
	out_dbl(o, "spread_pct", NULL, st->spread * 100, 1);
	out_dbl(o, "stddev_kiops", NULL, st->has_stddev ? st->stddev : NAN, 1);
	out_dbl(o, "cov_pct", NULL, st->has_stddev ? st->cov * 100 : NAN, 1);
	out_obj_end(o);
}

/* Words wrapped at WIDTH, every line indented. */
static void wrap_words(struct out *o, size_t indent, const char *text)
{
	struct wrap w = {.o = o, .indent = indent, .first = true};
	char word[256];
	out_text(o, "%*s", (int)indent, "");
	w.col = indent;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");
		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		if (n)
			wrap_item(&w, " ", word);
		p += n;
		while (*p == ' ')
			p++;
	}
	out_text(o, "\n");
}

/* One table row: label, runs, avg, range, spread, CoV. */
static void stats_row(struct out *o, const char *label, const struct stune_stats *st)
{
	char avg[32], mn[32], mx[32], range[80], cov[32];
	out_fmt_dbl(avg, sizeof(avg), st->avg, 1);
	out_fmt_dbl(mn, sizeof(mn), st->min, 1);
	out_fmt_dbl(mx, sizeof(mx), st->max, 1);
	snprintf(range, sizeof(range), "%s – %s", mn, mx);
	if (st->has_stddev)
		snprintf(cov, sizeof(cov), "%.1f %%", st->cov * 100);
	else
		snprintf(cov, sizeof(cov), "-");
	/* "–" is 3 bytes for 1 column: widen the field by 2. */
	out_text(o, "  %-10s %5zu  %10s  %-23s %6.1f %%  %7s\n", label, st->n, avg, range, st->spread * 100, cov);
}

static void table_head(struct out *o)
{
	out_text(o, "  %-10s %5s  %10s  %-23s %8s  %7s\n", "", "runs", "avg KIOPS", "min – max KIOPS", "spread", "CoV");
}

static void render_cmp(struct out *o, const struct stune_stats_cmp *c, bool has, const char *indent)
{
	if (!has) {
		out_str(o, "compare", NULL, NULL);
		return;
	}
	out_obj_begin(o, "compare");
	out_dbl(o, "avg_change_pct", NULL, c->avg_change * 100, 1);
	out_dbl(o, "spread_change_points", NULL, c->spread_change * 100, 1);
	out_obj_end(o);
	out_text(o, "%schange: avg %+.1f %%, spread %+.1f points\n", indent, c->avg_change * 100,
		 c->spread_change * 100);
}

static void render_facts(struct out *o, const char *const *l)
{
	static const enum stune_qlabel keys[] = {
	    STUNE_QL_KERNEL,   STUNE_QL_PAYLOAD,   STUNE_QL_PROFILE,	  STUNE_QL_PROFILE_DIGEST,
	    STUNE_QL_FIRMWARE, STUNE_QL_HBA_MODEL, STUNE_QL_VERIFY_STATE, STUNE_QL_FIO_VERSION,
	    STUNE_QL_RW,       STUNE_QL_BS,	   STUNE_QL_IODEPTH,	  STUNE_QL_NUMJOBS};
	out_obj_begin(o, "facts");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		out_str(o, stune_qlabel_name(keys[i]), NULL, l[keys[i]]);
	out_obj_end(o);
}

static void render_side(struct out *o, const char *key, const char *phase, const struct stune_qside *s, bool has)
{
	char t[32];
	if (!has) {
		out_str(o, key, NULL, NULL);
		return;
	}
	out_obj_begin(o, key);
	out_str(o, "phase", NULL, phase);
	out_str(o, "set", NULL, s->set);
	render_stats(o, "summary", &s->stats, true);
	out_arr_begin(o, "runs");
	for (size_t i = 0; i < s->n; i++) {
		out_obj_begin(o, NULL);
		out_dbl_exact(o, "kiops", NULL, s->kiops[i], 1);
		out_dbl(o, "p50_ns", NULL, s->lat[STUNE_QPCT_P50] ? s->lat[STUNE_QPCT_P50][i] : NAN, 0);
		out_dbl(o, "p99_ns", NULL, s->lat[STUNE_QPCT_P99] ? s->lat[STUNE_QPCT_P99][i] : NAN, 0);
		out_dbl(o, "p99_9_ns", NULL, s->lat[STUNE_QPCT_P99_9] ? s->lat[STUNE_QPCT_P99_9][i] : NAN, 0);
		out_dbl(o, "worst_p99_ns", NULL, s->worst_p99 ? s->worst_p99[i] : NAN, 0);
		out_dbl(o, "fairness", NULL, s->fairness ? s->fairness[i] : NAN, 3);
		out_int(o, "start_time_ms", NULL, s->ts_ms[i]);
		fmt_time(t, sizeof(t), s->ts_ms[i], true);
		out_str(o, "start_time", NULL, *t ? t : NULL);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_begin(o, "latency");
	out_str(o, "of", NULL, s->lat_write ? "write" : "read");
	out_str(o, "source", NULL, stune_qside_lat_source(s));
	out_obj_end(o);
	render_facts(o, s->labels);
	out_obj_end(o);
}

/* The per-run KIOPS of a side, wrapped: "  baseline set S, per run: 1.0 2.0 ...". */
static void per_run_text(struct out *o, const char *phase, const struct stune_qside *s)
{
	char head[160], num[32];
	snprintf(head, sizeof(head), "  %s, set %s, KIOPS per run:", phase, s->set ? s->set : "(none)");
	struct wrap w = {.o = o, .indent = 4, .first = true};
	wrap_item(&w, "", head);
	for (size_t i = 0; i < s->n; i++) {
		out_fmt_dbl(num, sizeof(num), s->kiops[i], 1);
		wrap_item(&w, " ", num);
	}
	out_text(o, "\n");
}

static const char *status_name(enum stune_qhost_status s)
{
	return s == STUNE_QHOST_COMPARED ? "compared" : s == STUNE_QHOST_APART ? "apart" : "missing";
}

static const char *apart_name(enum stune_qapart a)
{
	switch (a) {
	case STUNE_QAPART_DRIFTED:
		return "drifted";
	case STUNE_QAPART_NOT_APPLIED:
		return "not-applied";
	case STUNE_QAPART_INCOMPARABLE:
		return "not-comparable";
	default:
		return NULL;
	}
}

const char *query_treat_value(char *buf, size_t size, const struct stune_qside *s, enum stune_qlabel l)
{
	const char *v = s->labels[l];
	if (l == STUNE_QL_PROFILE && s->labels[STUNE_QL_PROFILE_DIGEST])
		snprintf(buf, size, "%s (sha256 %.12s)", v ? v : "?", s->labels[STUNE_QL_PROFILE_DIGEST]);
	else
		snprintf(buf, size, "%s", v ? v : "none");
	return buf;
}

/* The treatment's items as "treatment": [...] and a text line, or none (A/A). */
static void treatment_items(struct out *o, const struct stune_qhost *h, const struct fleet_meta *m)
{
	out_arr_begin(o, "treatment");
	out_text(o, "  treatment: ");
	struct wrap w = {.o = o, .indent = 4, .first = true, .col = 13};
	char a[160], b[160], item[400];
	for (size_t i = 0; i < h->n_treatment; i++) {
		enum stune_qlabel l = h->treatment[i];
		out_obj_begin(o, NULL);
		out_str(o, "what", NULL, stune_qlabel_name(l));
		out_str(o, "reference", NULL, query_treat_value(a, sizeof(a), &h->ref, l));
		out_str(o, "current", NULL, query_treat_value(b, sizeof(b), &h->cur, l));
		out_obj_end(o);
		snprintf(item, sizeof(item), "%s %s → %s", stune_qlabel_name(l), a, b);
		wrap_item(&w, "; ", item);
	}
	if (!h->n_treatment)
		out_text(o, "none: nothing differs from %s (an A/A comparison)", m->compare);
	out_text(o, "\n");
	out_arr_end(o);
}

/* What differs between the two sides (with --compare and both): the treatment, or none (A/A). */
static void render_treatment(struct out *o, const struct stune_qhost *h, const struct fleet_meta *m)
{
	if (!m->compare || !h->has_cur || !h->has_ref)
		out_str(o, "treatment", NULL, NULL);
	else
		treatment_items(o, h, m);
}

/* A cohort's treatment: its hosts' one, or null and said when theirs differ. */
static void render_cohort_treatment(struct out *o, const struct stune_qcohort *c, const struct fleet_meta *m)
{
	out_bool(o, "treatment_mixed", NULL, c->treatment_mixed ? STUNE_YES : STUNE_NO);
	if (!m->compare || !c->treated_like || c->treatment_mixed) {
		out_str(o, "treatment", NULL, NULL);
		if (c->treatment_mixed)
			out_text(o, "  treatment: the hosts' treatments differ (see each host)\n");
		return;
	}
	treatment_items(o, c->treated_like, m);
}

static void render_host(struct out *o, const struct stune_qhost *h, const struct fleet_meta *m)
{
	out_obj_begin(o, NULL);
	out_str(o, "host", "\n%s", h->name);
	out_str(o, "status", ": %s", status_name(h->status));
	out_str(o, "apart", NULL, apart_name(h->apart));
	if (h->cohort)
		out_int(o, "cohort", ", cohort %s", (long long)h->cohort);
	else
		out_str(o, "cohort", NULL, NULL);
	out_text(o, "\n");
	out_str(o, "reason", NULL, h->reason);
	if (h->reason)
		wrap_words(o, 2, h->reason);
	if (h->has_cur || h->has_ref) {
		const char *const *l = h->has_cur ? h->cur.labels : h->ref.labels;
		struct wrap w = {.o = o, .indent = 4, .first = true};
		char item[512];
		out_text(o, "  ");
		w.col = 2;
		snprintf(item, sizeof(item), "kernel %s", l[STUNE_QL_KERNEL] ? l[STUNE_QL_KERNEL] : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "payload %s", l[STUNE_QL_PAYLOAD] ? l[STUNE_QL_PAYLOAD] : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "firmware %s", l[STUNE_QL_FIRMWARE] ? l[STUNE_QL_FIRMWARE] : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "profile %s%s%.12s%s", l[STUNE_QL_PROFILE] ? l[STUNE_QL_PROFILE] : "-",
			 l[STUNE_QL_PROFILE_DIGEST] ? " (sha256 " : "",
			 l[STUNE_QL_PROFILE_DIGEST] ? l[STUNE_QL_PROFILE_DIGEST] : "",
			 l[STUNE_QL_PROFILE_DIGEST] ? ")" : "");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "verify %s", l[STUNE_QL_VERIFY_STATE] ? l[STUNE_QL_VERIFY_STATE] : "-");
		wrap_item(&w, ", ", item);
		out_text(o, "\n");
	}
	render_treatment(o, h, m);
	if (h->has_cur || h->has_ref)
		table_head(o);
	if (m->compare && h->has_ref)
		stats_row(o, m->compare, &h->ref.stats);
	if (h->has_cur)
		stats_row(o, m->phase, &h->cur.stats);
	render_side(o, "reference", m->compare, &h->ref, h->has_ref);
	render_side(o, "current", m->phase, &h->cur, h->has_cur);
	render_cmp(o, &h->cmp, h->has_cmp, "  ");
	if (m->compare && h->has_ref)
		per_run_text(o, m->compare, &h->ref);
	if (h->has_cur)
		per_run_text(o, m->phase, &h->cur);
	out_obj_end(o);
}

static void render_header(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m)
{
	char a[40], b[40];
	out_obj_begin(o, "query");
	out_str(o, "url", NULL, f->url);
	out_str(o, "api", NULL, stune_query_api_name(f->api));
	out_str(o, "phase", "Fleet view: phase %s", m->phase);
	out_str(o, "compare", m->compare ? " against %s" : NULL, m->compare);
	out_text(o, "\n(per host, the newest result set of each phase)\n");
	out_text(o, "Service: %s (%s)\n", f->url, stune_query_api_name(f->api));
	out_str(o, "since", NULL, m->since);
	fmt_time(a, sizeof(a), m->start_ms, true);
	out_str(o, "start_time", NULL, a);
	fmt_time(b, sizeof(b), m->end_ms, true);
	out_str(o, "end_time", NULL, b);
	fmt_time(a, sizeof(a), m->start_ms, false);
	fmt_time(b, sizeof(b), m->end_ms, false);
	out_text(o, "Window: %s to %s (--since %s)\n", a, b, m->since);
	if (m->hosts_given)
		out_int(o, "hosts_asked", "Hosts asked: %s", (long long)m->hosts_asked);
	else {
		out_text(o, "Hosts asked: every host in the answer");
		out_str(o, "hosts_asked", NULL, NULL);
	}
	out_int(o, "series", "\nRead %s series", (long long)f->n_series);
	out_int(o, "points", ", %s points", (long long)f->n_points);
	out_int(o, "duplicates", " (%s duplicates dropped)\n", (long long)f->n_duplicates);
	out_obj_end(o);
	out_text(o, "KIOPS: thousands of I/O per second, read + write, all jobs summed;\n"
		    "spread = (max − min) / max; CoV = sample stddev / avg (as scsitune report).\n");
}

static void render_cohorts(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m)
{
	char item[512];
	out_arr_begin(o, "cohorts");
	if (f->n_cohorts)
		out_text(o,
			 "\nCohorts of the compared hosts, by the %s set's kernel, payload, profile and\nfirmware:\n",
			 m->phase);
	for (size_t k = 0; k < f->n_cohorts; k++) {
		const struct stune_qcohort *c = &f->cohorts[k];
		out_obj_begin(o, NULL);
		out_int(o, "cohort", "  %s:", (long long)(k + 1));
		out_int(o, "hosts", " %s host(s)", (long long)c->n_hosts);
		out_str(o, "kernel", NULL, c->kernel);
		out_str(o, "payload", NULL, c->payload);
		out_str(o, "profile", NULL, c->profile);
		out_str(o, "profile_digest", NULL, c->profile_digest);
		out_str(o, "firmware", NULL, c->firmware);
		struct wrap w = {.o = o, .indent = 6, .first = false};
		w.col = 14;
		snprintf(item, sizeof(item), "kernel %s", c->kernel ? c->kernel : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "payload %s", c->payload ? c->payload : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "firmware %s", c->firmware ? c->firmware : "-");
		wrap_item(&w, ", ", item);
		snprintf(item, sizeof(item), "profile %s%s%.12s%s", c->profile ? c->profile : "-",
			 c->profile_digest ? " (sha256 " : "", c->profile_digest ? c->profile_digest : "",
			 c->profile_digest ? ")" : "");
		wrap_item(&w, ", ", item);
		out_text(o, "\n");
		render_cohort_treatment(o, c, m);
		table_head(o);
		if (m->compare && c->has_ref)
			stats_row(o, m->compare, &c->ref);
		if (c->has_cur)
			stats_row(o, m->phase, &c->cur);
		render_stats(o, "reference", &c->ref, c->has_ref);
		render_stats(o, "current", &c->cur, c->has_cur);
		render_cmp(o, &c->cmp, c->has_cmp, "  ");
		out_obj_end(o);
	}
	out_arr_end(o);
}

static void render_selection(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m)
{
	out_obj_begin(o, "selection");
	out_int(o, "hosts", "\nSelection: %s compared host(s), runs pooled", (long long)f->n_compared);
	out_text(o, " (never a host shown apart or missing)\n");
	if (f->has_cur || f->has_ref)
		table_head(o);
	if (m->compare && f->has_ref)
		stats_row(o, m->compare, &f->ref);
	if (f->has_cur)
		stats_row(o, m->phase, &f->cur);
	render_stats(o, "reference", &f->ref, f->has_ref);
	render_stats(o, "current", &f->cur, f->has_cur);
	render_cmp(o, &f->cmp, f->has_cmp, "  ");
	out_obj_end(o);
	out_obj_begin(o, "counts");
	out_int(o, "compared", NULL, (long long)f->n_compared);
	out_int(o, "apart", NULL, (long long)f->n_apart);
	out_int(o, "drifted", NULL, (long long)f->n_drifted);
	out_int(o, "missing", NULL, (long long)f->n_missing);
	out_obj_end(o);
	for (int pass = 0; pass < 2; pass++) {
		enum stune_qhost_status st = pass ? STUNE_QHOST_MISSING : STUNE_QHOST_APART;
		size_t n = pass ? f->n_missing : f->n_apart;
		if (!n)
			continue;
		out_text(o,
			 pass ? "\nMissing: no points to compare (%zu):\n" : "\nShown apart, not averaged in (%zu):\n",
			 n);
		for (size_t i = 0; i < f->n_hosts; i++) {
			if (f->hosts[i].status != st)
				continue;
			out_text(o, "  %s:\n", f->hosts[i].name);
			wrap_words(o, 4, f->hosts[i].reason);
		}
	}
}

static const char *scope_name(enum stune_gate_metric m)
{
	return m <= STUNE_GATE_COV ? "host" : m <= STUNE_GATE_SEL_COV ? "selection" : "count";
}

/* A condition's value as shown: change with sign, percentages, KIOPS, counts. */
static void fmt_value(char *buf, size_t size, const struct stune_gate_cond *c, double v)
{
	if (c->metric >= STUNE_GATE_HOSTS)
		snprintf(buf, size, "%.0f", v);
	else if (c->metric == STUNE_GATE_FAIRNESS && !c->change)
		snprintf(buf, size, "%.3f", v);
	else if (c->change)
		snprintf(buf, size, "%+.2f %%", v);
	else if (c->metric == STUNE_GATE_KIOPS || c->metric == STUNE_GATE_SEL_KIOPS)
		snprintf(buf, size, "%.2f KIOPS", v);
	else
		snprintf(buf, size, "%.2f %%", v);
}

const char *gate_verdict_name(enum stune_gate_verdict v)
{
	return v == STUNE_GATE_SHOWN ? "shown" : v == STUNE_GATE_NOT_SHOWN ? "not shown" : "too few";
}

/* What a test's counts are: "6 and 6 runs", "8 hosts". */
static void test_units(char *buf, size_t size, const struct stune_gate_test *t)
{
	if (t->n_ref)
		snprintf(buf, size, "%zu and %zu runs", t->n_ref, t->n_cur);
	else
		snprintf(buf, size, "%zu hosts", t->n_cur);
}

void gate_test_estimate(char *buf, size_t size, const struct stune_gate_test *t)
{
	if (isnan(t->bound))
		snprintf(buf, size, "%+.1f %%", t->estimate * 100);
	else
		snprintf(buf, size, "%+.1f %%, at %s %+.1f %%", t->estimate * 100, t->upper ? "most" : "least",
			 t->bound * 100);
}

void gate_test_reason(char *buf, size_t size, const struct stune_gate_test *t, double confidence)
{
	char u[64];
	test_units(u, sizeof(u), t);
	if (t->verdict == STUNE_GATE_TOO_FEW)
		snprintf(buf, size, "too few %s for %g %%: %s reach at most %.1f %%", t->n_ref ? "runs" : "hosts",
			 confidence * 100, u, t->best * 100);
	else
		snprintf(buf, size, "%s at %g %%: %.1f %% reached (%s)", gate_verdict_name(t->verdict),
			 confidence * 100, t->reached * 100, u);
}

static void render_test_json(struct out *o, const char *host, const struct stune_gate_test *t, double confidence)
{
	char reason[160];
	out_obj_begin(o, NULL);
	out_str(o, "host", NULL, host);
	out_str(o, "verdict", NULL, gate_verdict_name(t->verdict));
	out_dbl(o, "estimate_pct", NULL, t->estimate * 100, 2);
	out_str(o, "bound", NULL, t->upper ? "upper" : "lower");
	out_dbl(o, "bound_pct", NULL, t->bound * 100, 2);
	out_dbl(o, "reached_pct", NULL, t->reached * 100, 2);
	out_dbl(o, "best_pct", NULL, t->best * 100, 2);
	if (t->n_ref) {
		out_int(o, "reference_runs", NULL, (long long)t->n_ref);
		out_int(o, "current_runs", NULL, (long long)t->n_cur);
		out_str(o, "hosts", NULL, NULL);
	} else {
		out_str(o, "reference_runs", NULL, NULL);
		out_str(o, "current_runs", NULL, NULL);
		out_int(o, "hosts", NULL, (long long)t->n_cur);
	}
	gate_test_reason(reason, sizeof(reason), t, confidence);
	out_str(o, "reason", NULL, reason);
	out_obj_end(o);
}

/* A latency condition on runs whose percentiles are not exact: said under the host's line. */
static void latency_note(struct out *o, const struct stune_gate_cond *c, const struct stune_qhost *h)
{
	if (c->metric < STUNE_GATE_P50 || c->metric > STUNE_GATE_P99_9)
		return;
	const char *src[2] = {stune_qside_lat_source(&h->ref), stune_qside_lat_source(&h->cur)};
	for (int k = 0; k < 2; k++) {
		if (!strcmp(src[k], "max-of-jobs")) {
			out_text(
			    o,
			    "            %s: an upper bound (json output of several jobs: the largest job's; json+ "
			    "gives the merged histograms' exact value)\n",
			    stune_gate_metric_name(c->metric));
			return;
		}
		if (!strcmp(src[k], "unknown")) {
			out_text(o, "            %s: how it was made is unknown (the runs' tags do not say)\n",
				 stune_gate_metric_name(c->metric));
			return;
		}
	}
}

/* One text line per tested host (the ones that did not show it first), at most 20:
 *   h1: +17.6 %, at least +15.9 % (95.0 % reached; 3+3 runs)
 *   h2: +3.1 %, at least -1.2 % (71.3 % reached; 3+3 runs): not shown
 *   h3: +3.1 % (2+2 runs reach at most 83.3 %): too few runs */
#define GATE_HOST_LINES 20
static void render_host_tests(struct out *o, const struct stune_fleet *f, const struct stune_gate_cond *c,
			      const struct stune_gate_outcome *oc)
{
	char est[96];
	size_t shown = 0, total = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < f->n_hosts; i++) {
			if (!oc->tested[i] || (oc->tests[i].verdict == STUNE_GATE_SHOWN) != (pass == 1))
				continue;
			total++;
			if (shown >= GATE_HOST_LINES)
				continue;
			shown++;
			const struct stune_gate_test *t = &oc->tests[i];
			gate_test_estimate(est, sizeof(est), t);
			if (t->verdict == STUNE_GATE_TOO_FEW)
				out_text(o, "          %s: %s (%zu+%zu runs reach at most %.1f %%): too few runs\n",
					 f->hosts[i].name, est, t->n_ref, t->n_cur, t->best * 100);
			else
				out_text(o, "          %s: %s (%.1f %% reached; %zu+%zu runs)%s\n", f->hosts[i].name,
					 est, t->reached * 100, t->n_ref, t->n_cur,
					 t->verdict == STUNE_GATE_SHOWN ? "" : ": not shown");
			latency_note(o, c, &f->hosts[i]);
		}
	if (total > shown)
		out_text(o, "          and %zu more (-o json lists each)\n", total - shown);
}

/* A change condition's test (JSON "test"): which, on what, at what confidence, which direction; null otherwise. */
static void render_test_kind(struct out *o, const struct stune_gate *g, const struct stune_gate_cond *c,
			     const struct stune_gate_outcome *oc)
{
	if (!c->change) {
		out_str(o, "test", NULL, NULL);
		return;
	}
	bool hosts_units = oc->has_sel && !oc->sel.n_ref;
	out_obj_begin(o, "test");
	out_str(o, "method", NULL, hosts_units ? "wilcoxon-signed-rank" : "mann-whitney-u");
	out_str(o, "units", NULL, hosts_units ? "hosts" : "runs");
	out_dbl(o, "confidence_pct", NULL, g->confidence * 100, 2);
	out_str(o, "direction", NULL, c->op == STUNE_GATE_LE || c->op == STUNE_GATE_LT ? "below" : "above");
	out_obj_end(o);
}

static void render_outcome(struct out *o, const struct stune_fleet *f, const struct stune_gate *g, size_t k,
			   const struct stune_gate_outcome *oc)
{
	const struct stune_gate_cond *c = &g->conds[k];
	char v[64], item[640], est[96], reason[160];
	bool sel_change = c->change && c->metric >= STUNE_GATE_SEL_KIOPS && c->metric <= STUNE_GATE_SEL_COV;
	out_obj_begin(o, NULL);
	out_str(o, "condition", NULL, c->text);
	out_text(o, "  %-5s %s%s", oc->passed ? "ok" : "FAIL", c->text, c->implicit ? " (added)" : "");
	out_bool(o, "implicit", NULL, c->implicit ? STUNE_YES : STUNE_NO);
	out_str(o, "scope", NULL, scope_name(c->metric));
	out_bool(o, "passed", NULL, oc->passed ? STUNE_YES : STUNE_NO);
	out_dbl(o, "value", NULL, oc->have_value ? oc->value : NAN, 3);
	render_test_kind(o, g, c, oc);
	struct wrap w = {.o = o, .indent = 8, .first = false};
	w.col = 8 + cols(c->text) + (c->implicit ? 8 : 0);
	out_arr_begin(o, "hosts");
	if (sel_change) {
		if (!oc->has_sel) {
			out_text(o, ": unknown (no compared host)");
		} else {
			gate_test_estimate(est, sizeof(est), &oc->sel);
			gate_test_reason(reason, sizeof(reason), &oc->sel, g->confidence);
			out_text(o, ": %s (%s)\n          %s", est,
				 oc->sel.n_ref ? "one host: its runs as units" : "the hosts as units", reason);
		}
	} else if (oc->per_host) {
		if (!oc->n_misses)
			out_text(o, ": every compared host (%zu)", f->n_compared);
		if (!oc->n_misses && c->change)
			out_text(o, " shown at %g %%", g->confidence * 100);
		else
			out_text(o, ":");
		for (size_t i = 0; i < oc->n_misses; i++) {
			const struct stune_gate_miss *mi = &oc->misses[i];
			const struct stune_gate_test *t =
			    oc->tested && oc->tested[mi->host] ? &oc->tests[mi->host] : NULL;
			if (t)
				gate_test_reason(reason, sizeof(reason), t, g->confidence);
			out_obj_begin(o, NULL);
			out_str(o, "host", NULL, f->hosts[mi->host].name);
			out_dbl(o, "value", NULL, mi->unknown ? NAN : mi->value, 3);
			out_str(o, "reason", NULL, t ? reason : NULL);
			out_obj_end(o);
			if (c->change)
				continue; /* one line per host below */
			if (mi->unknown)
				snprintf(v, sizeof(v), "unknown");
			else
				fmt_value(v, sizeof(v), c, mi->value);
			snprintf(item, sizeof(item), "%s%s (%s)", i ? "" : " ", f->hosts[mi->host].name, v);
			wrap_item(&w, i ? ", " : "", item);
		}
		if (c->change && oc->n_misses)
			out_text(o, " %zu of %zu compared host%s not shown at %g %%", oc->n_misses, f->n_compared,
				 f->n_compared == 1 ? "" : "s", g->confidence * 100);
	} else {
		if (oc->have_value)
			fmt_value(v, sizeof(v), c, oc->value);
		else
			snprintf(v, sizeof(v), "unknown (no compared host)");
		out_text(o, ": %s", v);
		for (size_t i = 0; i < oc->n_names && c->metric != STUNE_GATE_HOSTS; i++) {
			const struct stune_qhost *h = &f->hosts[oc->names[i]];
			out_obj_begin(o, NULL);
			out_str(o, "host", NULL, h->name);
			out_str(o, "value", NULL, NULL);
			out_str(o, "reason", NULL, h->reason);
			out_obj_end(o);
			/* apart and missing: each host with its reason */
			snprintf(item, sizeof(item), "%s%s%s%s%s", i ? "" : " (", h->name, h->reason ? " (" : "",
				 h->reason ? h->reason : "", h->reason ? ")" : "");
			wrap_item(&w, i ? ", " : "", item);
		}
		if (oc->n_names && c->metric != STUNE_GATE_HOSTS)
			out_text(o, ")");
	}
	out_arr_end(o);
	out_text(o, "\n");
	if (c->change && oc->per_host)
		render_host_tests(o, f, c, oc);
	for (size_t i = 0; c->change && i < oc->n_misses; i++)
		if (oc->misses[i].unknown)
			out_text(o, "          %s: unknown (its runs on a side lack %s)\n",
				 f->hosts[oc->misses[i].host].name, stune_gate_metric_name(c->metric));
	/* Every test made: each compared host's (per host), or the selection's. */
	out_arr_begin(o, "tests");
	if (sel_change && oc->has_sel)
		render_test_json(o, NULL, &oc->sel, g->confidence);
	for (size_t i = 0; c->change && oc->per_host && i < f->n_hosts; i++)
		if (oc->tested[i])
			render_test_json(o, f->hosts[i].name, &oc->tests[i], g->confidence);
	out_arr_end(o);
	out_obj_end(o);
}

static void render_gate(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m,
			const struct stune_gate *g, const struct stune_gate_result *gr)
{
	if (!g) {
		out_str(o, "gate", NULL, NULL);
		return;
	}
	out_obj_begin(o, "gate");
	out_str(o, "expr", "\nGate %s", m->gate_expr);
	out_bool(o, "passed", NULL, gr->passed ? STUNE_YES : STUNE_NO);
	out_dbl(o, "confidence_pct", NULL, g->confidence * 100, 2);
	out_text(o, ": %s\n", gr->passed ? "passed" : "FAILED (exit 4)");
	out_arr_begin(o, "conditions");
	for (size_t i = 0; i < g->n; i++)
		render_outcome(o, f, g, i, &gr->o[i]);
	out_arr_end(o);
	out_obj_end(o);
}

void render_fleet(struct out *o, const struct stune_fleet *f, const struct fleet_meta *m, const struct stune_gate *g,
		  const struct stune_gate_result *gr)
{
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_QUERY_SCHEMA_VERSION);
	render_header(o, f, m);
	out_arr_begin(o, "hosts");
	for (size_t i = 0; i < f->n_hosts; i++)
		render_host(o, &f->hosts[i], m);
	out_arr_end(o);
	render_selection(o, f, m);
	render_cohorts(o, f, m);
	render_gate(o, f, m, g, gr);
	out_obj_end(o);
}

char *gate_failure_line(const struct stune_fleet *f, const struct stune_gate *g, const struct stune_gate_result *gr)
{
	char *buf = NULL, v[64];
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	if (!m)
		return NULL;
	bool first = true;
	for (size_t i = 0; i < g->n; i++) {
		const struct stune_gate_outcome *oc = &gr->o[i];
		const struct stune_gate_cond *c = &g->conds[i];
		if (oc->passed)
			continue;
		fprintf(m, "%s%s", first ? "" : "; ", c->text);
		first = false;
		size_t n = oc->per_host ? oc->n_misses : c->metric == STUNE_GATE_HOSTS ? 0 : oc->n_names;
		char reason[160], est[96];
		if (oc->has_sel) {
			gate_test_estimate(est, sizeof(est), &oc->sel);
			gate_test_reason(reason, sizeof(reason), &oc->sel, g->confidence);
			fprintf(m, " (%s: %s)", est, reason);
			continue;
		}
		if (!oc->per_host) {
			if (oc->have_value)
				fmt_value(v, sizeof(v), c, oc->value);
			fprintf(m, " (%s%s", oc->have_value ? v : "unknown", n ? ": " : "");
		} else {
			fputs(" (", m);
		}
		for (size_t k = 0; k < n && k < 10; k++) {
			size_t h = oc->per_host ? oc->misses[k].host : oc->names[k];
			fprintf(m, "%s%s", k ? ", " : "", f->hosts[h].name);
			if (!oc->per_host && f->hosts[h].reason)
				fprintf(m, " (%s)", f->hosts[h].reason);
			if (oc->per_host && oc->tested && oc->tested[h]) {
				gate_test_reason(reason, sizeof(reason), &oc->tests[h], g->confidence);
				fprintf(m, " %+.1f %%: %s", oc->tests[h].estimate * 100, reason);
			} else if (oc->per_host) {
				if (oc->misses[k].unknown)
					snprintf(v, sizeof(v), "unknown");
				else
					fmt_value(v, sizeof(v), c, oc->misses[k].value);
				fprintf(m, " %s", v);
			}
		}
		if (n > 10)
			fprintf(m, ", and %zu more", n - 10);
		fputc(')', m);
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
