/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fleet view (`report --query URL`): the points `report --upload` wrote,
 * read back from the central service, and the same statistics as the local
 * report (stats/stats.c) per host, per cohort and for the selection.
 *
 * Three query APIs, all POSTed as a form (a long host list fits):
 *   export      VictoriaMetrics /api/v1/export: JSON lines, one per series
 *   prometheus  /api/v1/query (VictoriaMetrics, its cluster's vmselect):
 *               an instant query of the range selector, raw samples
 *   influxql    InfluxDB 1.x /query?db=DB: SELECT ... GROUP BY *, epoch=ms
 * The field kiops (metric scsitune_fio_kiops) is read, with the tags of its
 * series (net/lineproto.h), and each run's completion latency percentiles
 * (read_clat_p50_ns, ..._p99_ns, ..._p99_9_ns and the write_ ones), and on
 * several devices the worst device's p99 and the fairness of their IOPS
 * (worst_clat_p99_ns, fairness), joined to its KIOPS by tags and time.
 *
 * Per host and phase the newest result set (the `set` tag; points without
 * one form one set) is taken: what `report --compare PHASE` takes from the
 * host's saved sets. Nothing here prints; errors are -errno with a one-line
 * *err that names what was wrong with the answer.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "stats/stats.h"

struct stune_auth;

enum stune_query_api { STUNE_QUERY_AUTO, STUNE_QUERY_EXPORT, STUNE_QUERY_PROMETHEUS, STUNE_QUERY_INFLUXQL };
const char *stune_query_api_name(enum stune_query_api a); /* "export", "prometheus", "influxql" */
/* "export", "prometheus", "influxql" -> the API; -EINVAL otherwise. */
int stune_query_api_parse(const char *s, enum stune_query_api *out);

/*
 * The URL to POST to and its API: a URL whose path ends in /api/v1/export,
 * /api/v1/query or /query says which (a URL without a path is
 * VictoriaMetrics': /api/v1/export is added); api given (not AUTO): the URL
 * is used as it is. -EPERM with *err for a URL with credentials in it
 * (core/url.h); -EINVAL with *err for one that is not http(s)://, has a
 * fragment, or whose API cannot be told; influxql without db= in the URL.
 */
int stune_query_url(const char *url, enum stune_query_api api, char **out, enum stune_query_api *out_api, char **err);

/* "7d", "12h", "30m", "90s", "2w" -> ms; 1 s to 3650 d, else -EINVAL. */
int stune_query_parse_since(const char *s, int64_t *ms);

/* The answer's cap for the APIs that answer one JSON document (Prometheus'
 * query, InfluxQL): a larger one is refused (narrow --hosts or --since). The
 * export API's answer is read line by line as it comes, with no cap on the
 * whole; a line (one series) over STUNE_QUERY_MAX_LINE is refused. */
#define STUNE_QUERY_MAX_ANSWER ((size_t)256 << 20)
#define STUNE_QUERY_MAX_LINE   ((size_t)16 << 20)
/* Host names: at most this many (--hosts, --hosts-file). */
#define STUNE_QUERY_MAX_HOSTS 100000
/* A host name: 1 to 253 printable characters. */
bool stune_query_host_valid(const char *h);

struct stune_query {
	const char *url; /* as given */
	enum stune_query_api api;
	const char *phase;   /* the current side (--phase) */
	const char *compare; /* the reference phase (--compare), or NULL */
	char *const *hosts;  /* NULL: every host in the answer */
	size_t n_hosts;
	int64_t start_ms, end_ms;
	const char *ca_file;
	const struct stune_auth *auth;
	long timeout_s; /* per try; 0: the upload's default */
};

/* The request's form body (application/x-www-form-urlencoded) for api. */
int stune_query_form(const struct stune_query *q, enum stune_query_api api, char **out);

/* The tags read back; NULL when a series has none (or an empty one). */
enum stune_qlabel {
	STUNE_QL_HOST,
	STUNE_QL_PHASE,
	STUNE_QL_SET,
	STUNE_QL_KERNEL,
	STUNE_QL_PAYLOAD,
	STUNE_QL_PROFILE,
	STUNE_QL_PROFILE_DIGEST,
	STUNE_QL_FIRMWARE,
	STUNE_QL_HBA_MODEL,
	STUNE_QL_VERIFY_STATE,
	STUNE_QL_RW,
	STUNE_QL_BS,
	STUNE_QL_IODEPTH,
	STUNE_QL_NUMJOBS,
	STUNE_QL_FILE,
	STUNE_QL_FIO_VERSION,
	STUNE_QL_OUTPUT_FORMAT,
	STUNE_QL_N
};
const char *stune_qlabel_name(enum stune_qlabel l); /* the tag's key */

/* The latency percentiles read with each run (the job's reads; a job that only writes: its writes). */
enum stune_qpct { STUNE_QPCT_P50, STUNE_QPCT_P99, STUNE_QPCT_P99_9, STUNE_QPCT_N };
const char *stune_qpct_name(enum stune_qpct k); /* "p50", "p99", "p99.9" */

/* The newest set of one phase on one host. */
struct stune_qside {
	const char *set; /* NULL: the points carry no set tag */
	size_t n;
	double *kiops; /* per run, in time order */
	int64_t *ts_ms;
	/* Completion latency per run, ns (NAN: the run has none); has_lat[k]: every run has it. */
	double *lat[STUNE_QPCT_N];
	bool has_lat[STUNE_QPCT_N];
	bool lat_write; /* the latencies are the writes' (a job that only writes) */
	/* Runs on several devices: per run the worst device's p99 (ns) and Jain's fairness of the devices'
	 * IOPS (NAN: the run has none); has_*: every run has it. */
	double *worst_p99, *fairness;
	bool has_worst_p99, has_fairness;
	struct stune_stats stats;
	const char *const *labels; /* the first run's tags (STUNE_QL_N) */
	/* A job option (STUNE_QL_RW...) whose tag differs between two runs of the set, and their values;
	 * -1: every run the same job. Such a set is not comparable with anything. */
	int mixed_opt;
	const char *mixed_a, *mixed_b;
};

/*
 * How a side's latency percentiles were made, from its tags: "fio" (one
 * job: fio's own), "merged-bins" (several jobs, json+: exact, from the merged
 * histograms), "max-of-jobs" (several jobs, json output: the largest job's
 * percentile, an upper bound), "unknown" (tags missing: an older upload).
 */
const char *stune_qside_lat_source(const struct stune_qside *s);

enum stune_qhost_status {
	STUNE_QHOST_COMPARED, /* averaged in */
	STUNE_QHOST_APART,    /* shown apart, never averaged in: reason */
	STUNE_QHOST_MISSING   /* asked for, but a phase has no points */
};
enum stune_qapart { STUNE_QAPART_NONE, STUNE_QAPART_DRIFTED, STUNE_QAPART_NOT_APPLIED, STUNE_QAPART_INCOMPARABLE };

struct stune_qhost {
	char *name;
	enum stune_qhost_status status;
	enum stune_qapart apart;
	char *reason; /* apart or missing: why */
	bool has_cur, has_ref;
	struct stune_qside cur, ref;
	bool has_cmp;
	struct stune_stats_cmp cmp;
	size_t cohort; /* 1-based index into the cohorts; 0: none */
	/* With --compare and both sides: what differs between them (STUNE_QL_KERNEL, _PAYLOAD,
	 * _PROFILE (by digest, else name), _FIRMWARE), in that order; none: no treatment (an A/A
	 * comparison). */
	enum stune_qlabel treatment[4];
	size_t n_treatment;
};

/* Compared hosts with the same kernel, payload, profile (digest) and firmware. */
struct stune_qcohort {
	const char *kernel, *payload, *profile, *profile_digest, *firmware;
	size_t n_hosts;
	bool has_cur, has_ref, has_cmp;
	struct stune_stats cur, ref; /* the hosts' runs pooled */
	struct stune_stats_cmp cmp;
	/* With --compare: a host whose treatment every other host with both sides shares (NULL: none has
	 * both); treatment_mixed: their treatments differ. */
	const struct stune_qhost *treated_like;
	bool treatment_mixed;
};

struct stune_qseries;
struct stune_label_pool;

struct stune_fleet {
	enum stune_query_api api;
	char *url; /* the URL queried */
	struct stune_qhost *hosts;
	size_t n_hosts;
	struct stune_qcohort *cohorts;
	size_t n_cohorts;
	size_t n_compared, n_apart, n_drifted, n_missing;
	/* The selection: every compared host's runs pooled. */
	bool has_cur, has_ref, has_cmp;
	struct stune_stats cur, ref;
	struct stune_stats_cmp cmp;
	size_t n_series, n_points, n_duplicates;
	/* What the hosts point into: the KIOPS series, and the latency series (sorted by tags and metric). */
	struct stune_qseries *series;
	struct stune_label_pool *labels; /* the series' label values (query.c) */
	struct stune_qseries *lat_series;
	size_t n_lat_series;
};
void stune_fleet_free(struct stune_fleet *f);
DEFINE_CLEANUP_FUNC(struct stune_fleet, stune_fleet_free)

/*
 * An answer's body (as the service sent it) into the fleet view for q. An
 * answer that is not what the API returns, or holds a bad value, is -EBADMSG
 * with *err saying where ("line 3: truncated JSON"); an InfluxDB answer
 * marked partial, an error the service reported, likewise; an answer
 * without a single point of q's phases is -ENODATA.
 */
int stune_fleet_from_answer(const struct stune_query *q, enum stune_query_api api, const char *body, size_t len,
			    struct stune_fleet **out, char **err);

/* The same for an export answer given in the pieces the network gave it
 * (lens[i] bytes each, in order): what stune_query_run does as the answer
 * comes; any cut, even inside a line or a character, gives the same view. */
int stune_fleet_from_export_pieces(const struct stune_query *q, const char *const *pieces, const size_t *lens, size_t n,
				   struct stune_fleet **out, char **err);

/* Retries: announced as for the upload's flush (message, seconds until the next try). */
struct stune_query_cb {
	void (*retry)(void *data, const char *msg, unsigned seconds);
	void *data;
};

/*
 * Ask the service (up to 3 tries, 1 s and 2 s apart, while the failure is
 * worth retrying: no connection, timeout, 5xx, 429) and build the fleet
 * view. -EAGAIN: the service could not be reached or failed every try;
 * -EPROTO: it refused (4xx, TLS); -EFBIG: the answer is over the cap (a
 * document API's) or a line of the export over STUNE_QUERY_MAX_LINE; the
 * answer's own errors as for stune_fleet_from_answer.
 */
int stune_query_run(const struct stune_query *q, const struct stune_query_cb *cb, struct stune_fleet **out, char **err);
