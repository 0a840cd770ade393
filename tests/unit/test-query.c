/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fleet view's engine without a service (cli/lib/fleet/query.c, gate.c):
 * the three APIs' answers as VictoriaMetrics and InfluxDB 1.x write them
 * (shapes taken from the servers in the fleet tier), bad answers of each
 * kind, the newest set per host and phase, statistics equal to stats.c's on
 * the same runs, hosts apart and missing, cohorts, the request each API
 * gets, and --gate's grammar and verdicts.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/gate.h"
#include "fleet/query.h"
#include "stats/stats.h"
#include "tap.h"

#define TAGS(host, phase, set, vs)                                                                             \
	"\"host\":\"" host "\",\"phase\":\"" phase "\",\"set\":\"" set "\",\"kernel\":\"6.1.0-57-amd64\","     \
	"\"payload\":\"scsitune-0.1\",\"profile\":\"numa\",\"profile_digest\":\"cda3\",\"firmware\":\"8.9\","  \
	"\"verify_state\":\"" vs "\",\"rw\":\"randread\",\"bs\":\"4k\",\"iodepth\":\"64\",\"numjobs\":\"16\"," \
	"\"ioengine\":\"libaio\",\"db\":\"x\""

#define LINE(host, phase, set, vs, file, v, ts)                                                                   \
	"{\"metric\":{\"__name__\":\"scsitune_fio_kiops\"," TAGS(host, phase, set, vs) ",\"file\":\"" file "\"}," \
										       "\"values\":[" v           \
										       "],\"timestamps\":[" ts "]}\n"

/* Two hosts; h1 has an older baseline set that must not count; h2 is drifted. */
static const char export_answer[] = LINE("h1", "baseline", "20261201T100000Z", "none-applied", "b1.json", "4200",
					 "1796119200000") LINE("h1", "baseline", "20261201T100000Z", "none-applied",
							       "b2.json", "6700", "1796119202000")
    LINE("h1", "baseline", "20261201T100000Z", "none-applied", "b3.json", "6500",
	 "1796119204000") LINE("h1", "baseline", "20261101T100000Z", "none-applied", "old.json", "1", "1793527200000")
	LINE("h1", "tuned", "20261201T110000Z", "in-effect", "t1.json", "7000", "1796122800000")
	    LINE("h1", "tuned", "20261201T110000Z", "in-effect", "t2.json", "7700,7700", "1796122802000,1796122802000")
		LINE("h1", "tuned", "20261201T110000Z", "in-effect", "t3.json", "7350", "1796122804000")
		    LINE("h2", "baseline", "20261201T100000Z", "none-applied", "b1.json", "5000", "1796119200000")
			LINE("h2", "tuned", "20261201T110000Z", "drifted", "t1.json", "9000", "1796122800000");

static struct stune_query query(char *const *hosts, size_t n)
{
	return (struct stune_query){.url = "http://vm:8428",
				    .api = STUNE_QUERY_EXPORT,
				    .phase = "tuned",
				    .compare = "baseline",
				    .hosts = hosts,
				    .n_hosts = n,
				    .start_ms = 1793000000000,
				    .end_ms = 1797000000000};
}

static const struct stune_qhost *host(const struct stune_fleet *f, const char *name)
{
	for (size_t i = 0; i < f->n_hosts; i++)
		if (!strcmp(f->hosts[i].name, name))
			return &f->hosts[i];
	return NULL;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* The export answer parsed for the hosts asked for (all when none); NULL when refused (checked). */
static struct stune_fleet *export_fleet(char *const *hosts, size_t n)
{
	struct stune_query q = query(hosts, n);
	struct stune_fleet *f = NULL;
	char *err = NULL;
	CHECK(stune_fleet_from_answer(&q, STUNE_QUERY_EXPORT, export_answer, strlen(export_answer), &f, &err) == 0);
	CHECK_MSG(f, "export: %s", err ? err : "(null)");
	free(err);
	return f;
}

CASE(export_newest_set, "the export answer: two hosts, the newest set per host and phase, a duplicate counted once")
{
	struct stune_fleet *f = export_fleet(NULL, 0);
	if (!f)
		return;
	CHECK(f->n_hosts == 2 && f->n_series == 9);
	CHECK(f->n_duplicates == 1 && f->n_points == 9);
	const struct stune_qhost *h1 = host(f, "h1");
	CHECK(h1 && h1->status == STUNE_QHOST_COMPARED && h1->cohort == 1);
	CHECK(h1 && h1->ref.n == 3 && !strcmp(h1->ref.set, "20261201T100000Z"));
	CHECK(h1 && h1->cur.kiops[0] == 7000 && h1->cur.kiops[1] == 7700 && h1->cur.kiops[2] == 7350);
	stune_fleet_free(f);
}

/* The same view, field by field, that the whole answer gives. */
static bool same_view(const struct stune_fleet *a, const struct stune_fleet *b)
{
	if (a->n_hosts != b->n_hosts || a->n_series != b->n_series || a->n_points != b->n_points ||
	    a->n_duplicates != b->n_duplicates || a->has_cmp != b->has_cmp ||
	    (a->has_cmp && !near(a->cmp.avg_change, b->cmp.avg_change)))
		return false;
	for (size_t i = 0; i < a->n_hosts; i++) {
		const struct stune_qhost *x = &a->hosts[i], *y = &b->hosts[i];
		if (strcmp(x->name, y->name) || x->status != y->status || x->cur.n != y->cur.n || x->ref.n != y->ref.n)
			return false;
		for (size_t k = 0; k < x->cur.n; k++)
			if (x->cur.kiops[k] != y->cur.kiops[k])
				return false;
	}
	return true;
}

CASE(export_pieces, "the export answer as the network cuts it: two pieces at every byte, and 1-byte pieces, the "
		    "same view; a cut line at the end still parsed; a line cut short refused")
{
	struct stune_query q = query(NULL, 0);
	struct stune_fleet *whole = export_fleet(NULL, 0), *f = NULL;
	char *err = NULL;
	size_t len = strlen(export_answer), bad = 0;
	if (!whole)
		return;
	for (size_t cut = 0; cut <= len; cut++) {
		const char *pieces[] = {export_answer, export_answer + cut};
		size_t lens[] = {cut, len - cut};
		if (stune_fleet_from_export_pieces(&q, pieces, lens, 2, &f, &err) != 0 || !same_view(whole, f))
			bad++;
		stune_fleet_free(f);
		f = NULL;
		free(err);
		err = NULL;
	}
	CHECK_MSG(bad == 0, "%zu of %zu cuts gave another view", bad, len + 1);
	const char **ones = calloc(len, sizeof(*ones));
	size_t *lens = calloc(len, sizeof(*lens));
	for (size_t i = 0; ones && lens && i < len; i++) {
		ones[i] = export_answer + i;
		lens[i] = 1;
	}
	CHECK(ones && lens && stune_fleet_from_export_pieces(&q, ones, lens, len, &f, &err) == 0 &&
	      same_view(whole, f));
	stune_fleet_free(f);
	f = NULL;
	free(ones);
	free(lens);
	/* The last line without its newline: parsed; cut inside its JSON: refused, the line named. */
	char *trimmed = strdup(export_answer);
	size_t tl = strlen(trimmed);
	while (tl && trimmed[tl - 1] == '\n')
		trimmed[--tl] = '\0';
	const char *p1[] = {trimmed};
	size_t l1[] = {tl};
	CHECK(stune_fleet_from_export_pieces(&q, p1, l1, 1, &f, &err) == 0 && same_view(whole, f));
	stune_fleet_free(f);
	f = NULL;
	l1[0] = tl - 3;
	CHECK(stune_fleet_from_export_pieces(&q, p1, l1, 1, &f, &err) == -EBADMSG && !f);
	CHECK_MSG(err && strstr(err, "truncated JSON"), "%s", err ? err : "(null)");
	free(err);
	free(trimmed);
	stune_fleet_free(whole);
}

CASE(export_stats, "the export answer's statistics: the same as stats/stats.c's on the same runs, per host and fleet")
{
	struct stune_fleet *f = export_fleet(NULL, 0);
	if (!f)
		return;
	const struct stune_qhost *h1 = host(f, "h1");
	/* The same statistics as stats/stats.c on the same runs (the seed table's). */
	double base[] = {4200, 6700, 6500}, tuned[] = {7000, 7700, 7350};
	struct stune_stats sb, st;
	struct stune_stats_cmp c;
	CHECK(stune_stats_compute(base, 3, &sb) == 0);
	CHECK(stune_stats_compute(tuned, 3, &st) == 0);
	CHECK(stune_stats_compare(&sb, &st, &c) == 0);
	CHECK(h1 && near(h1->ref.stats.avg, sb.avg) && near(h1->ref.stats.spread, sb.spread) &&
	      near(h1->ref.stats.cov, sb.cov));
	CHECK(h1 && near(h1->cur.stats.avg, st.avg) && near(h1->cmp.avg_change, c.avg_change) &&
	      near(h1->cmp.spread_change, c.spread_change));
	CHECK(f->has_cmp && near(f->cmp.avg_change, c.avg_change) && near(f->cur.avg, st.avg));
	stune_fleet_free(f);
}

CASE(export_drifted_apart, "a drifted host is apart, never averaged in: the selection and the cohort hold h1 only")
{
	struct stune_fleet *f = export_fleet(NULL, 0);
	if (!f)
		return;
	const struct stune_qhost *h2 = host(f, "h2");
	CHECK(h2 && h2->status == STUNE_QHOST_APART && h2->apart == STUNE_QAPART_DRIFTED && h2->cohort == 0);
	/* The selection and the cohort hold h1 only: a drifted host is never averaged in. */
	CHECK(f->n_compared == 1 && f->n_drifted == 1 && f->n_cohorts == 1 && f->cohorts[0].n_hosts == 1);
	CHECK(f->n_cohorts >= 1 && f->cohorts[0].kernel && !strcmp(f->cohorts[0].kernel, "6.1.0-57-amd64"));
	stune_fleet_free(f);
}

CASE(gate_verdicts, "gates on the export answer: each condition's verdict (changes, values, selection, host counts); "
		    "its drifted host fails the implicit apart=0 unless the gate relaxes it")
{
	struct stune_fleet *f = export_fleet(NULL, 0);
	char *err = NULL;
	if (!f)
		return;
	struct {
		const char *expr;
		bool pass;
	} gates[] = {
	    {"kiops>=+4%", false}, /* h2 drifted: apart, never judged; the implicit apart=0 */
	    {"kiops>=+4%,apart<=1", true},
	    /* 3 runs a side: every tuned run above every baseline run by 4.5 % or more (7000 / 6700), so
	     * +4 % is shown at 95 % (p = 1/20) and +5 % is not (one pair of nine below: p = 2/20). */
	    {"kiops>=+5%,apart<=1", false},
	    {"kiops<=+90%,apart<=1", true}, /* 7700 / 4200: +83 % */
	    {"kiops<=+10%,apart<=1", false},
	    {"kiops>=+30%,apart<=1", false},
	    {"spread<=10%,apart<=1", true},
	    {"spread<9,apart<=1", false},
	    {"drifted=0,apart<=1", false},
	    {"drifted<=1,apart<=1", true},
	    {"kiops>=7000kiops,apart<=1", true},
	    /* One compared host: the selection's change is that host's runs' test. */
	    {"selection.kiops>=+4%,apart<=1", true},
	    {"selection.kiops>=+5%,apart<=1", false},
	    {"selection.kiops>=7000 KIOPS,apart<=1", true},
	    {"selection.spread<=5%,apart<=1", false},
	    {"hosts>=2,apart<=1", false},
	    {"apart=1,kiops>+4%", true},
	    {"cov<=5%,apart<=1", true},
	};
	for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++) {
		struct stune_gate *g = NULL;
		struct stune_gate_result *r = NULL;
		free(err);
		err = NULL;
		CHECK(stune_gate_parse(gates[i].expr, true, STUNE_GATE_CONFIDENCE, &g, &err) == 0);
		CHECK_MSG(g, "gate %s: %s", gates[i].expr, err ? err : "(null)");
		if (!g)
			continue;
		CHECK(stune_gate_eval(g, f, &r) == 0);
		CHECK_MSG(r && r->passed == gates[i].pass, "gate %s: %s, want %s", gates[i].expr,
			  !r	      ? "no result"
			  : r->passed ? "passed"
				      : "failed",
			  gates[i].pass ? "passed" : "failed");
		stune_gate_result_free(r);
		stune_gate_free(g);
	}
	stune_fleet_free(f);
	free(err);
}

CASE(missing_host, "asked for h1 and h3: h3 is missing, and the implicit missing=0 fails the gate")
{
	char *asked[] = {"h3", "h1", NULL};
	struct stune_fleet *f2 = export_fleet(asked, 2);
	char *err = NULL;
	if (!f2)
		return;
	CHECK(f2->n_hosts == 2 && !strcmp(f2->hosts[0].name, "h3") && f2->hosts[0].status == STUNE_QHOST_MISSING);
	CHECK(f2->n_compared == 1 && f2->n_missing == 1);
	struct stune_gate *g = NULL;
	struct stune_gate_result *r = NULL;
	CHECK(stune_gate_parse("kiops>=+4%", true, STUNE_GATE_CONFIDENCE, &g, &err) == 0 && g && g->n == 4);
	CHECK(g && stune_gate_eval(g, f2, &r) == 0 && r && !r->passed && r->o[0].passed && !r->o[1].passed);
	stune_gate_result_free(r);
	stune_gate_free(g);
	stune_fleet_free(f2);
	free(err);
}

CASE(prometheus_answer, "a Prometheus matrix answer: fractional seconds kept as ms, the statistics computed")
{
	static const char prom[] =
	    "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
	    "{\"metric\":{\"__name__\":\"scsitune_fio_kiops\",\"host\":\"h1\",\"phase\":\"tuned\",\"set\":\"S2\"},"
	    "\"values\":[[1796122800,\"7000\"],[1796122802.5,\"7700\"]]},"
	    "{\"metric\":{\"host\":\"h1\",\"phase\":\"baseline\",\"set\":\"S1\"},\"values\":[[1796119200,\"6000\"]]}]}"
	    "}";
	struct stune_query q = query(NULL, 0);
	struct stune_fleet *f = NULL;
	char *err = NULL;
	CHECK(stune_fleet_from_answer(&q, STUNE_QUERY_PROMETHEUS, prom, strlen(prom), &f, &err) == 0);
	CHECK(f && f->n_hosts == 1 && f->hosts[0].cur.n == 2 && f->hosts[0].cur.ts_ms[1] == 1796122802500);
	CHECK(f && near(f->hosts[0].cur.stats.avg, 7350) && f->hosts[0].status == STUNE_QHOST_COMPARED);
	stune_fleet_free(f);
	free(err);
}

CASE(influxql_answer, "an InfluxDB 1.x answer: ms times, a fractional KIOPS kept, an empty tag is no tag")
{
	static const char influx[] =
	    "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"scsitune_fio\",\"tags\":{\"host\":\"h1\","
	    "\"phase\":\"tuned\",\"set\":\"S2\",\"payload\":\"\"},\"columns\":[\"time\",\"kiops\"],"
	    "\"values\":[[1796122800000,7000],[1796122802500,7700.5]]},{\"name\":\"scsitune_fio\",\"tags\":{\"host\":"
	    "\"h1\",\"phase\":\"baseline\",\"set\":\"S1\"},\"columns\":[\"time\",\"kiops\"],\"values\":[[1796119200000,"
	    "6000]]}]}]}";
	struct stune_query q = query(NULL, 0);
	struct stune_fleet *f = NULL;
	char *err = NULL;
	CHECK(stune_fleet_from_answer(&q, STUNE_QUERY_INFLUXQL, influx, strlen(influx), &f, &err) == 0);
	CHECK(f && f->n_hosts == 1 && f->hosts[0].cur.n == 2 && near(f->hosts[0].cur.kiops[1], 7700.5));
	CHECK(f && f->hosts[0].cur.labels[STUNE_QL_PAYLOAD] == NULL); /* an empty tag is no tag */
	stune_fleet_free(f);
	free(err);
}

/* Each bad answer: refused (never a view), and the message says why. */
struct bad_answer {
	enum stune_query_api api;
	const char *body, *want;
	int r;
};

static const struct bad_answer bad_export[] = {
    {STUNE_QUERY_EXPORT, "", "no point", -ENODATA},
    {STUNE_QUERY_EXPORT, "\n\n", "no point", -ENODATA},
    {STUNE_QUERY_EXPORT, "{\"metric\":{\"host\":\"h1\",\"phase\":\"tuned\"},\"values\":[1],\"timest",
     "line 1: truncated JSON", -EBADMSG},
    {STUNE_QUERY_EXPORT, "<html>502 Bad Gateway</html>\n", "line 1: not JSON", -EBADMSG},
    {STUNE_QUERY_EXPORT, "{\"metric\":{\"host\":\"h1\",\"phase\":\"tuned\"},\"values\":[1,2],\"timestamps\":[1]}",
     "not two arrays of one length", -EBADMSG},
    {STUNE_QUERY_EXPORT, "{\"metric\":{\"phase\":\"tuned\"},\"values\":[1],\"timestamps\":[1]}",
     "without a host or phase tag", -EBADMSG},
    {STUNE_QUERY_EXPORT, "{\"metric\":{\"host\":\"h1\",\"phase\":\"tuned\"},\"values\":[\"x\"],\"timestamps\":[1]}",
     "sample 1 is not a finite number", -EBADMSG},
    {STUNE_QUERY_EXPORT,
     "{\"metric\":{\"__name__\":\"scsitune_fio_iops\",\"host\":\"h\",\"phase\":\"tuned\"},\"values\":[1],"
     "\"timestamps\":[1]}",
     "not scsitune_fio_kiops", -EBADMSG},
    {STUNE_QUERY_EXPORT, "{\"metric\":{\"host\":\"h1\",\"phase\":\"other\"},\"values\":[1],\"timestamps\":[1]}\n",
     "no point of phase tuned or baseline", -ENODATA},
};

static const struct bad_answer bad_prometheus[] = {
    {STUNE_QUERY_PROMETHEUS, "", "empty answer", -EBADMSG},
    {STUNE_QUERY_PROMETHEUS, "{\"status\":\"error\",\"error\":\"bad query\"}", "status error: bad query", -EBADMSG},
    {STUNE_QUERY_PROMETHEUS, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
     "not matrix", -EBADMSG},
    {STUNE_QUERY_PROMETHEUS, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", "no point",
     -ENODATA},
    {STUNE_QUERY_PROMETHEUS, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[", "truncated",
     -EBADMSG},
};

static const struct bad_answer bad_influxql[] = {
    {STUNE_QUERY_INFLUXQL, "{\"results\":[{\"statement_id\":0}]}", "no point", -ENODATA},
    {STUNE_QUERY_INFLUXQL, "{\"error\":\"database not found: x\"}", "database not found", -EBADMSG},
    {STUNE_QUERY_INFLUXQL, "{\"results\":[{\"statement_id\":0,\"error\":\"boom\"}]}", "results[0]: error: boom",
     -EBADMSG},
    {STUNE_QUERY_INFLUXQL, "{\"results\":[{\"statement_id\":0,\"partial\":true,\"series\":[]}]}", "partial", -EBADMSG},
    {STUNE_QUERY_INFLUXQL,
     "{\"results\":[{\"series\":[{\"tags\":{\"host\":\"h\",\"phase\":\"tuned\"},\"columns\":[\"time\","
     "\"kiops\"],"
     "\"values\":[[1,null]]}]}]}",
     "row 1 is not [time in ms, kiops, ...]", -EBADMSG},
    {STUNE_QUERY_INFLUXQL, "{\"results\":[]} trailing", "text after", -EBADMSG},
};

static void check_bad(const struct bad_answer *bad, size_t n)
{
	struct stune_query q = query(NULL, 0);
	for (size_t i = 0; i < n; i++) {
		struct stune_fleet *f = NULL;
		char *err = NULL;
		int r = stune_fleet_from_answer(&q, bad[i].api, bad[i].body, strlen(bad[i].body), &f, &err);
		CHECK_MSG(r == bad[i].r && !f && err && strstr(err, bad[i].want),
			  "bad answer %zu: r=%d want %d, err '%s' want '%s'", i, r, bad[i].r, err ? err : "(null)",
			  bad[i].want);
		stune_fleet_free(f);
		free(err);
	}
}

CASE(bad_export, "bad export answers (empty, truncated, not JSON, uneven arrays, no tags, not numbers, another "
		 "metric or phase): refused with why")
{
	check_bad(bad_export, sizeof(bad_export) / sizeof(bad_export[0]));
}

CASE(bad_prometheus, "bad Prometheus answers (empty, status error, not a matrix, no result, truncated): refused "
		     "with why")
{
	check_bad(bad_prometheus, sizeof(bad_prometheus) / sizeof(bad_prometheus[0]));
}

CASE(bad_influxql, "bad InfluxDB answers (no series, an error, partial, a bad row, text after): refused with why")
{
	check_bad(bad_influxql, sizeof(bad_influxql) / sizeof(bad_influxql[0]));
}

CASE(gate_grammar_refused, "--gate's grammar: each malformed condition refused, the message says what is wrong")
{
	const char *bad[][2] = {
	    {"", "empty condition"},
	    {"kiops>=+5%,", "empty condition"},
	    {"spred<=15%", "unknown metric 'spred'"},
	    {"kiops=>5", "not a number"},
	    {"kiops", "no operator"},
	    {"spread<=-1%", "without a sign"},
	    {"drifted=0.5", "a number of hosts"},
	    {"drifted=1%", "a number of hosts"},
	    {"kiops>=+5", "avg KIOPS has no sign"},
	    {"kiops>=5%x", "unexpected 'x'"},
	    /* One character from +5 %: a bare number is refused, the change suggested. */
	    {"kiops>=5", "a bare number: did you mean a change, kiops>=+5%? An absolute avg KIOPS carries its unit "
			 "(kiops>=5kiops)"},
	    {"selection.kiops<500", "did you mean a change, selection.kiops<+500%?"},
	    {"kiops>=nan", "not a number"},
	    {"cov<=1e3", "not a number"},
	    {"kiops!=+17.5%", "a change is a one-sided test"},
	    {"kiops=+5%", "use >=, >, <= or <"},
	    {"kiops>=-100%", "above -100%"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct stune_gate *g = NULL;
		char *err = NULL;
		int r = stune_gate_parse(bad[i][0], true, STUNE_GATE_CONFIDENCE, &g, &err);
		CHECK_MSG(r == -EINVAL && !g && err && strstr(err, bad[i][1]), "gate '%s': r=%d err '%s', want '%s'",
			  bad[i][0], r, err ? err : "(null)", bad[i][1]);
		stune_gate_free(g);
		free(err);
	}
}

CASE(gate_grammar, "--gate: a change needs --compare; spaces trimmed, values read, the implicit conditions added")
{
	struct stune_gate *g = NULL;
	char *err = NULL;
	CHECK(stune_gate_parse("kiops>=+5%", false, STUNE_GATE_CONFIDENCE, &g, &err) == -EINVAL && err &&
	      strstr(err, "needs --compare"));
	free(err);
	err = NULL;
	CHECK(stune_gate_parse(" kiops >= +5% , spread<=15 ,missing<=2", true, STUNE_GATE_CONFIDENCE, &g, &err) == 0);
	CHECK(g && g->n == 5 && !strcmp(g->conds[0].text, "kiops >= +5%") && g->conds[0].change &&
	      g->conds[1].value == 15 && !g->conds[2].implicit && g->conds[3].implicit &&
	      !strcmp(g->conds[3].text, "apart=0") && g->conds[4].implicit && !strcmp(g->conds[4].text, "hosts>=1"));
	stune_gate_free(g);
	free(err);
}

CASE(request_forms, "the request each API gets: the export match, the InfluxQL hosts, the Prometheus range")
{
	char *hosts[] = {"db.01", "we\"ird", NULL};
	struct stune_query q = query(hosts, 2);
	char *form = NULL;
	CHECK(stune_query_form(&q, STUNE_QUERY_EXPORT, &form) == 0);
	/* {__name__=~"scsitune_fio_(kiops|read_clat_p50_ns|...|fairness)",phase=~"tuned|baseline",host=~"db\\.01|we\"ird"}
	 */
	CHECK_STR(form, "match%5B%5D=%7B__name__%3D~%22scsitune_fio_%28kiops%7Cread_clat_p50_ns%7Cread_clat_p99_ns%"
			"7Cread_clat_p99_9_ns%7Cwrite_clat_p50_ns%7Cwrite_clat_p99_ns%7Cwrite_clat_p99_9_ns%"
			"7Cworst_clat_p99_ns%7Cfairness%29%22%"
			"2Cphase%3D~%22tuned%7Cbaseline%22%2Chost%3D~%22db%5C%5C.01%7Cwe%5C%22ird%22%7D&start="
			"1793000000.000&end=1797000000.000");
	free(form);
	form = NULL;
	CHECK(stune_query_form(&q, STUNE_QUERY_INFLUXQL, &form) == 0);
	CHECK(form &&
	      strstr(form,
		     "%22host%22%20%3D%20%27db.01%27%20OR%20%22host%22%20%3D%20%27we%22ird%27%29%20GROUP%20BY%20%2A"));
	free(form);
	form = NULL;
	CHECK(stune_query_form(&q, STUNE_QUERY_PROMETHEUS, &form) == 0);
	CHECK(form && strstr(form, "%5B4000000s%5D&time=1797000000.000"));
	free(form);
}

CASE(query_url, "the API told by the URL: export, Prometheus, InfluxDB with its db and ms; others refused with why")
{
	char *url = NULL, *err = NULL;
	enum stune_query_api api;
	CHECK(stune_query_url("http://vm:8428", STUNE_QUERY_AUTO, &url, &api, &err) == 0 && api == STUNE_QUERY_EXPORT);
	CHECK_STR(url, "http://vm:8428/api/v1/export");
	free(url);
	url = NULL;
	CHECK(stune_query_url("https://vm/select/0/prometheus/api/v1/query", STUNE_QUERY_AUTO, &url, &api, &err) == 0 &&
	      api == STUNE_QUERY_PROMETHEUS);
	free(url);
	url = NULL;
	CHECK(stune_query_url("http://ix:8086/query?db=s", STUNE_QUERY_AUTO, &url, &api, &err) == 0 &&
	      api == STUNE_QUERY_INFLUXQL);
	CHECK_STR(url, "http://ix:8086/query?db=s&epoch=ms");
	free(url);
	url = NULL;
	CHECK(stune_query_url("http://ix:8086/query", STUNE_QUERY_AUTO, &url, &api, &err) == -EINVAL && err &&
	      strstr(err, "?db="));
	free(err);
	err = NULL;
	CHECK(stune_query_url("http://x/other", STUNE_QUERY_AUTO, &url, &api, &err) == -EINVAL && err &&
	      strstr(err, "--query-api"));
	free(err);
	err = NULL;
	CHECK(stune_query_url("ftp://x/", STUNE_QUERY_AUTO, &url, &api, &err) == -EINVAL);
	free(err);
}

CASE(since_and_hosts, "--since: a positive count and one unit, at most ten years; a host name not empty, no blanks")
{
	int64_t ms;
	CHECK(stune_query_parse_since("7d", &ms) == 0 && ms == 7 * 86400000LL);
	CHECK(stune_query_parse_since("90s", &ms) == 0 && ms == 90000);
	CHECK(stune_query_parse_since("0d", &ms) == -EINVAL && stune_query_parse_since("7", &ms) == -EINVAL &&
	      stune_query_parse_since("3651d", &ms) == -EINVAL && stune_query_parse_since("-1d", &ms) == -EINVAL &&
	      stune_query_parse_since("7dd", &ms) == -EINVAL);
	CHECK(stune_query_host_valid("stor-ds01.example") && !stune_query_host_valid("a b") &&
	      !stune_query_host_valid("") && !stune_query_host_valid("a\tb"));
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
