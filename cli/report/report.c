/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune report: options -> engine (cli/lib/report/: runner.c for --run,
 * session.c for ingest, --compare, save, spool and flush; the statistics in
 * cli/lib/stats/, the spool and the HTTP client in cli/lib/net/) ->
 * render.c -> exit code.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/userfile.h"
#include "core/config.h"
#include "core/statefile.h"
#include "core/root.h"
#include "core/strv.h"
#include "core/url.h"
#include "fleet/gate.h"
#include "report/fio.h"
#include "report/resultset.h"
#include "report/runner.h"
#include "report/session.h"
#include "net/http.h"
#include "tune/journal.h"
#include "query.h"
#include "render-html.h"
#include "render.h"
#include "cli.h"
#include "commands.h"
#include "html-file.h"
#include "modes.h"
#include "statedir.h"
#include "wrap.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

#define DEFAULT_STATE_DIR "/var/lib/scsitune"

enum {
	OPT_PHASE = 0x100,
	OPT_STATE_DIR,
	OPT_COMPARE,
	OPT_UPLOAD,
	OPT_FLUSH,
	OPT_AUTH_FILE,
	OPT_CA_FILE,
	OPT_CONFIG,
	OPT_UPLOAD_TIMEOUT,
	OPT_RUN,
	OPT_RUNS,
	OPT_DEVICE,
	OPT_RW,
	OPT_BS,
	OPT_IODEPTH,
	OPT_NUMJOBS,
	OPT_RUNTIME,
	OPT_JOB_FILE,
	OPT_DESTRUCTIVE,
	OPT_NODE,
	OPT_FIO,
	OPT_HOST_FACTS,
	OPT_QUERY,
	OPT_QUERY_API,
	OPT_HOSTS,
	OPT_HOSTS_FILE,
	OPT_SINCE,
	OPT_GATE,
	OPT_CONFIDENCE,
	OPT_QUERY_TIMEOUT,
	OPT_GROUP,
	OPT_HTML,
	OPT_ALLOW_MIXED
};
/* The modes of report, and which options go with which (modes.h): the refusals,
 * getopt's table and --help's "Options by mode" come from here. */
enum { M_FILES, M_RUN, M_FLUSH, M_QUERY, N_MODES };
static const struct mode_def report_modes[N_MODES] = {
    [M_FILES] = {"report FILE...", 1, -1, "report: no fio JSON file given (or --run)"},
    [M_RUN] = {"report --run", 0, 0, "--run makes its own fio outputs: no FILE"},
    [M_FLUSH] = {"report --flush", 0, 0, "--flush sends the spool only: no FILE"},
    [M_QUERY] = {"report --query", 0, 0, "--query reads the central service: no FILE"},
};
#define F_ MODE(M_FILES)
#define R_ MODE(M_RUN)
#define U_ MODE(M_FLUSH)
#define Q_ MODE(M_QUERY)
static const struct mode_opt report_opts_table[] = {
    {"run", no_argument, OPT_RUN, R_},
    {"flush", no_argument, OPT_FLUSH, U_},
    {"query", required_argument, OPT_QUERY, Q_},
    {"phase", required_argument, OPT_PHASE, F_ | R_ | Q_},
    {"state-dir", required_argument, OPT_STATE_DIR, F_ | R_ | U_},
    {"group", required_argument, OPT_GROUP, F_ | R_},
    {"compare", required_argument, OPT_COMPARE, F_ | R_ | Q_},
    {"upload", required_argument, OPT_UPLOAD, F_ | R_ | U_},
    {"auth-file", required_argument, OPT_AUTH_FILE, F_ | R_ | U_ | Q_},
    {"ca-file", required_argument, OPT_CA_FILE, F_ | R_ | U_ | Q_},
    {"upload-timeout", required_argument, OPT_UPLOAD_TIMEOUT, F_ | R_ | U_ | Q_},
    {"config", required_argument, OPT_CONFIG, F_ | R_ | U_ | Q_},
    {"html", required_argument, OPT_HTML, F_ | R_ | Q_},
    {"host-facts", no_argument, OPT_HOST_FACTS, F_},
    {"allow-mixed", no_argument, OPT_ALLOW_MIXED, F_ | R_},
    {"query-api", required_argument, OPT_QUERY_API, Q_},
    {"hosts", required_argument, OPT_HOSTS, Q_},
    {"hosts-file", required_argument, OPT_HOSTS_FILE, Q_},
    {"since", required_argument, OPT_SINCE, Q_},
    {"gate", required_argument, OPT_GATE, Q_},
    {"confidence", required_argument, OPT_CONFIDENCE, Q_},
    {"query-timeout", required_argument, OPT_QUERY_TIMEOUT, Q_},
    {"runs", required_argument, OPT_RUNS, R_},
    {"device", required_argument, OPT_DEVICE, R_},
    {"rw", required_argument, OPT_RW, R_},
    {"bs", required_argument, OPT_BS, R_},
    {"iodepth", required_argument, OPT_IODEPTH, R_},
    {"numjobs", required_argument, OPT_NUMJOBS, R_},
    {"runtime", required_argument, OPT_RUNTIME, R_},
    {"job-file", required_argument, OPT_JOB_FILE, R_},
    {"destructive", no_argument, OPT_DESTRUCTIVE, R_},
    {"node", required_argument, OPT_NODE, R_},
    {"fio", required_argument, OPT_FIO, R_},
};
#undef F_
#undef R_
#undef U_
#undef Q_
static const struct mode_table report_table = {"report", report_modes, N_MODES, report_opts_table,
					       ELEMENTSOF(report_opts_table)};

void help_report(FILE *f)
{
	fputs("Usage: scsitune report [options] FILE...\n"
	      "       scsitune report --run [--runs N] [--device DEV]... [job options]\n"
	      "                       [options]\n"
	      "       scsitune report --flush [--upload URL] [--state-dir DIR]\n"
	      "       scsitune report --query URL --phase NAME [--compare PHASE]\n"
	      "                       [--hosts H1,H2 | --hosts-file FILE] [--since DUR]\n"
	      "                       [--gate EXPR]\n"
	      "\nIngest fio JSON output (fio 2.x or 3.x, output format json or json+), one file\n"
	      "per run ('-' is standard input), and show per run: IOPS (read + write, summed\n"
	      "over all jobs), bandwidth, completion latency (mean, p50, p99, p99.9), errors;\n"
	      "across runs: avg, min-max, spread ((max - min) / max), sample standard\n"
	      "deviation and coefficient of variation.\n"
	      "\nOptions:\n"
	      "      --phase NAME         label the result set (e.g. baseline, tuned) and save\n"
	      "                           it under STATE_DIR/reports/NAME/\n"
	      "      --state-dir DIR      where result sets are saved (default\n"
	      "                           " DEFAULT_STATE_DIR ", inside the --sysroot tree when\n"
	      "                           one is given)\n"
	      "      --group N            the fio group N of each file: jobs of different\n"
	      "                           groups (stonewall) ran one after the other, so a\n"
	      "                           file with several is refused without it\n"
	      "      --compare PHASE|FILE compare with the newest saved set of PHASE, or a\n"
	      "                           saved result-set FILE: avg KIOPS, range, spread and\n"
	      "                           their change\n"
	      "      --upload URL         send each run as InfluxDB line protocol to the\n"
	      "                           write URL (VictoriaMetrics /write, InfluxDB\n"
	      "                           /write?db=DB, ...); spooled under STATE_DIR/spool/\n"
	      "                           until the server took it\n"
	      "      --flush              send only what is spooled (no FILE)\n"
	      "      --auth-file FILE     credentials: 'Bearer TOKEN', 'Token TOKEN' or\n"
	      "                           'user:password' (the file must not be readable by\n"
	      "                           others)\n"
	      "      --ca-file FILE       verify the server's TLS certificate against these CAs\n"
	      "      --upload-timeout S   seconds one upload attempt may take (default 30;\n"
	      "                           3 tries)\n"
	      "      --config FILE        settings file (default " STUNE_CONFIG_DEFAULT "\n"
	      "                           inside the --sysroot tree, or $SCSITUNE_CONFIG)\n"
	      "      --html FILE          also write the report (or with --query the fleet\n"
	      "                           view) as one self-contained HTML file (inline\n"
	      "                           charts, no script; written atomically)\n"
	      "      --allow-mixed        keep runs that are not one fio job (another bs,\n"
	      "                           rw, iodepth, numjobs, fio version): the set is\n"
	      "                           marked not comparable, never uploaded (without it\n"
	      "                           such a set is refused, exit 1)\n"
	      "      --host-facts         the FILEs were made on this host (or --sysroot tree):\n"
	      "                           record its provenance (host, kernel, HBA, payload,\n"
	      "                           profile and verify_state) as --run does\n"
	      "\nThe fleet view (--query): the points report --upload wrote, read back from the\n"
	      "service, with the same statistics per host, per cohort and for the selection:\n"
	      "      --query URL          VictoriaMetrics (http://vm:8428, .../api/v1/export,\n"
	      "                           .../api/v1/query) or InfluxDB 1.x (.../query?db=DB)\n"
	      "      --query-api API      export, prometheus or influxql (default: from the\n"
	      "                           URL)\n"
	      "      --hosts H1,H2,...    only these hosts (repeatable; default: every host)\n"
	      "      --hosts-file FILE    only the hosts in FILE, one per line\n"
	      "      --since DUR          the window: 90s, 30m, 12h, 7d, 2w (default 7d)\n"
	      "      --gate EXPR          conditions the selection must meet, else exit 4:\n"
	      "                           kiops>=+5%,spread<=15%,drifted=0; a change\n"
	      "                           (kiops>=+5%) is a one-sided rank test of the\n"
	      "                           runs (selection.kiops: of the hosts), not of\n"
	      "                           averages (see scsitune-report(8))\n"
	      "      --confidence PCT     the confidence each change test must reach\n"
	      "                           (default 95; 50 to 99.9)\n"
	      "      --query-timeout S    seconds one try may take (default 30; 3 tries)\n"
	      "\nRunning fio (--run; the outputs are kept in STATE_DIR/runs/):\n"
	      "      --run                run fio N times and report those runs (no FILE)\n"
	      "      --runs N             how many runs (default 3)\n"
	      "      --device DEV         a block device (or file) to read; repeatable\n"
	      "                           (default: the disks of the mpi3mr HBAs detect finds)\n"
	      "      --rw MODE            fio rw= (default randread; writing modes need\n"
	      "                           --destructive)\n"
	      "      --bs SIZE            block size (default 4k)\n"
	      "      --iodepth N[,N...]   queue depth per job (default 64); several (up to 8):\n"
	      "                           a sweep, one result set per depth (phase\n"
	      "                           PHASE.qdN), compared depth by depth\n"
	      "      --numjobs N          jobs (default 16)\n"
	      "      --runtime S          seconds per run, time based (default 60)\n"
	      "      --job-file FILE      a fio job file instead of the job above (it names\n"
	      "                           its devices)\n"
	      "      --destructive        allow writing jobs (otherwise fio runs read-only)\n"
	      "      --node N             bind fio to NUMA node N (default: the devices' HBA's\n"
	      "                           node)\n"
	      "      --fio PATH           the fio program (default: fio in PATH)\n\n",
	      f);
	mode_help(f, &report_table);
	fputc('\n', f);
	print_global_options(f);
	fputs("\nA file that is not fio output, or a run in which a fio job failed, is an error\n"
	      "(exit 1) and nothing is saved. An upload that did not get through keeps the\n"
	      "runs in the spool: exit 3 when the server could not be reached or failed (5xx),\n"
	      "1 when it refused them (4xx, TLS). --query: 1 when the service gave no usable\n"
	      "answer, 4 when the gate failed. See scsitune-report(8).\n",
	      f);
}

struct report_opts {
	const char *phase;
	const char *state_dir;
	const char *compare;
	const char *upload;
	const char *auth_file;
	const char *ca_file;
	const char *config;
	const char *html;      /* --html FILE */
	long upload_timeout_s; /* 0: the settings file's, else STUNE_UPLOAD_DEFAULT_TIMEOUT_S */
	bool flush;
	bool host_facts;  /* --host-facts: the FILEs were made on this host */
	bool allow_mixed; /* --allow-mixed: runs of different jobs kept, the set marked not comparable */
	bool group_set;	  /* --group N: that fio group of each file */
	unsigned group;
	struct query_opts q; /* --query and its options */
	int verbose;
	/* --run */
	bool run, node_set;
	unsigned runs;
	int node;
	const char *fio;
	bool state_dir_given;
	bool job_shape; /* a --run option the job file would ignore given */
	char **devices; /* NULL-terminated */
	size_t n_devices;
	struct stune_fio_job_opts job;
	/* --iodepth 32,64,128: a sweep, one result set per depth (phases PHASE.qdN); n_depths 1: one depth */
	unsigned depths[8];
	size_t n_depths;
};

/* One depth of a sweep, for the table after the last. */
struct sweep_row {
	unsigned iodepth;
	size_t runs, ref_runs;
	double avg, spread, ref_avg, change, median, low, high;
	bool has_ref, has_interval;
};

static bool parse_uint(const char *opt, const char *arg, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min || v > max) {
		usage_error("report", "%s: '%s' is not a number from %u to %u", opt, arg, min, max);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

/*
 * The settings file fills what the command line left unset. It is read only
 * when an upload is asked for (--upload, --flush) or --config names it.
 * --config FILE and $SCSITUNE_CONFIG (tests point it away from /etc) are host
 * paths; the default is etc/scsitune/scsitune.conf through the root layer, so
 * under --sysroot DIR it is the tree's, like every other system path.
 */
static bool load_config(const struct global_opts *g, struct report_opts *ro, struct stune_config **cfg)
{
	_cleanup_free_ char *err = NULL, *shown = NULL;
	const char *def = getenv("SCSITUNE_CONFIG");
	const char *path = ro->config ? ro->config : def && *def ? def : NULL;
	int r;
	if (!ro->config && !ro->upload && !ro->flush && !ro->q.url)
		return true;
	if (path)
		r = stune_config_load(path, !ro->config, cfg, &err);
	else {
		_cleanup_(stune_root_freep) struct stune_root *root = NULL;
		r = stune_root_new(g->sysroot, &root);
		if (r < 0) {
			error_msg("--sysroot %s: %s", g->sysroot, strerror(-r));
			return false;
		}
		if (stune_root_host_path(root, STUNE_CONFIG_PATH, &shown) < 0) {
			error_msg("out of memory");
			return false;
		}
		path = shown;
		r = stune_config_load_root(root, true, cfg, &err);
	}
	if (r < 0) {
		error_msg("%s%s%s", path, err ? ":" : ": ", err ? err : stune_user_file_strerror(r, 0));
		return false;
	}
	if (!ro->upload && !ro->q.url) /* the fleet view asks another URL */
		ro->upload = (*cfg)->upload_url;
	if (!ro->auth_file)
		ro->auth_file = (*cfg)->upload_auth_file;
	if (!ro->ca_file)
		ro->ca_file = (*cfg)->upload_ca_file;
	if (!ro->upload_timeout_s)
		ro->upload_timeout_s = (*cfg)->upload_timeout_s;
	if (!ro->upload_timeout_s)
		ro->upload_timeout_s = STUNE_UPLOAD_DEFAULT_TIMEOUT_S;
	return true;
}

/* Checks on the upload settings before anything is written. False after printing the error. */
static bool upload_prepare(const struct report_opts *ro, struct stune_auth **auth)
{
	_cleanup_free_ char *url = NULL, *err = NULL;
	int r = stune_upload_url(ro->upload, &url, &err);
	if (r < 0) {
		_cleanup_free_ char *shown = stune_url_shown(ro->upload); /* never a password, not even here */
		error_msg("--upload %s: %s", shown ? shown : "URL", err ? err : strerror(-r));
		return false;
	}
	if (ro->ca_file && (r = stune_upload_check_ca(ro->ca_file)) < 0) {
		error_msg("--ca-file %s: %s", ro->ca_file, stune_user_file_strerror(r, 0));
		return false;
	}
	if (ro->auth_file) {
		r = stune_auth_load(ro->auth_file, auth, &err);
		if (r < 0) {
			error_msg("--auth-file %s: %s", ro->auth_file, err ? err : strerror(-r));
			if (r == -ENOENT)
				hint_msg("%s", AUTH_FILE_NEXT);
			return false;
		}
	}
	return true;
}

/* --run's progress on a terminal: one line, rewritten. */
struct progress {
	bool tty;
};

static void fmt_secs(char *buf, size_t size, unsigned s)
{
	snprintf(buf, size, "%u:%02u", s / 60, s % 60);
}

static void progress_tick(void *data, const struct stune_run_progress *p)
{
	const struct progress *pg = data;
	char el[32], rem[32] = "-";
	if (!pg->tty)
		return;
	fmt_secs(el, sizeof(el), p->elapsed);
	if (p->per_run_s) {
		unsigned left_this = p->elapsed < p->per_run_s ? p->per_run_s - p->elapsed : 0;
		fmt_secs(rem, sizeof(rem), left_this + (p->n - p->k) * p->per_run_s);
	}
	fprintf(stderr, "\rscsitune: fio run %u of %u: elapsed %s, remaining ~%s (all runs)\033[K", p->k, p->n, el,
		rem);
	fflush(stderr);
}

static void progress_ended(void *data, const struct stune_run_progress *p)
{
	const struct progress *pg = data;
	(void)p;
	if (pg->tty)
		fputs("\r\033[K", stderr);
}

static void progress_done(void *data, const struct stune_run_progress *p, const struct stune_fio_run *run,
			  const char *file)
{
	(void)data;
	char kiops[32];
	out_fmt_dbl(kiops, sizeof(kiops), run->iops / 1000.0, 1);
	fprintf(stderr, "scsitune: fio run %u of %u done: %s KIOPS, %s\n", p->k, p->n, kiops, file);
}

/* Where apply's journal is: --state-dir, else the root's /var/lib/scsitune. NULL: out of memory. */
static char *journal_dir_of(const struct report_opts *ro, struct stune_ctx *ctx)
{
	char *dir = NULL;
	if (ro->state_dir_given)
		dir = strdup(ro->state_dir);
	else if (asprintf(&dir, "%s%s", stune_root_prefix(ctx->root), STUNE_STATE_DIR) < 0)
		dir = NULL;
	if (!dir)
		error_msg("out of memory");
	return dir;
}

/* report --host-facts FILE...: this host's provenance (the tree's under --sysroot), no fio run. */
static int host_facts(const struct global_opts *g, const struct report_opts *ro, struct stune_ctx *ctx,
		      struct stune_run *rs)
{
	_cleanup_free_ char *journal_dir = journal_dir_of(ro, ctx), *err = NULL;
	if (!journal_dir)
		return EXIT_ERROR;
	struct stune_run_opts o = {.state_dir = ro->state_dir,
				   .journal_dir = journal_dir,
				   .profile_dir = SCSITUNE_PROFILE_DIR,
				   .sysroot = g->sysroot != NULL};
	if (stune_run_host_facts(ctx, &o, rs, &err) < 0) {
		error_msg("%s", err ? err : "out of memory");
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* report --run: the engine runs fio N times; on success rs->files are the outputs. */
static int run_fio(const struct global_opts *g, const struct report_opts *ro, struct stune_ctx *ctx,
		   struct stune_run *rs)
{
	_cleanup_free_ char *journal_dir = journal_dir_of(ro, ctx), *err = NULL;
	if (!journal_dir)
		return EXIT_ERROR;
	struct stune_run_opts o = {.fio = ro->fio,
				   .job = ro->job,
				   .devices = ro->devices,
				   .n_devices = ro->n_devices,
				   .runs = ro->runs,
				   .node_set = ro->node_set,
				   .node = ro->node,
				   .state_dir = ro->state_dir,
				   .journal_dir = journal_dir,
				   .profile_dir = SCSITUNE_PROFILE_DIR,
				   .sysroot = g->sysroot != NULL};
	struct progress pg = {.tty = isatty(2)};
	struct stune_run_cb cb = {.tick = progress_tick, .ended = progress_ended, .done = progress_done, .data = &pg};
	int r = stune_run_fio(ctx, &o, &cb, rs, &err);
	if (r < 0) {
		error_msg("%s", err ? err : "out of memory");
		/* The engine names the option first when --fio's program is not there. */
		if (r == -ENOENT && ro->fio && err && !strncmp(err, "--fio ", 6))
			hint_msg("--fio names fio's program; Debian's is /usr/bin/fio (apt-get install fio)");
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static void flush_retry(void *data, const char *msg, unsigned seconds)
{
	const struct report_opts *ro = data;
	if (ro->verbose)
		note_msg("upload to %s: %s; retrying in %u s", ro->upload, msg, seconds);
}

static void flush_not_removed(void *data, const char *path, int err)
{
	(void)data;
	note_msg("warning: %s: sent but not removed: %s", path, strerror(-err));
}

static void flush_corrupt(void *data, const char *path, const char *aside, const char *why)
{
	(void)data;
	note_msg("warning: %s: corrupt batch set aside as %s (%s)", path, aside, why);
}

/* The state directory, when this report reads or writes it (saved sets, the spool, runs/, apply's
 * journal): trusted (core/trust.h), else one line and EXIT_ERROR. */
static int state_dir_check(const struct report_opts *ro)
{
	if (!(ro->phase || ro->upload || ro->flush || ro->run || ro->host_facts ||
	      (ro->compare && !stune_report_is_file_arg(ro->compare))))
		return CLI_GO_ON;
	_cleanup_free_ char *dir = NULL;
	_cleanup_(stune_trust_fault_clear) struct stune_trust_fault bad = {0};
	int r = stune_state_dir(NULL, ro->state_dir, false, &dir, &bad);
	if (r == -EPERM && bad.path)
		return cli_state_untrusted(NULL, ro->state_dir, &bad);
	if (r < 0) {
		error_msg("--state-dir %s: %s", ro->state_dir, strerror(-r));
		return EXIT_ERROR;
	}
	return CLI_GO_ON;
}

/* Send the spool (engine: stune_report_flush) and say what happened. */
static int flush_spool(const struct report_opts *ro, const struct stune_auth *auth)
{
	struct stune_upload u = {
	    .url = ro->upload, .ca_file = ro->ca_file, .auth = auth, .timeout_s = ro->upload_timeout_s};
	struct stune_flush_cb cb = {
	    .retry = flush_retry, .not_removed = flush_not_removed, .corrupt = flush_corrupt, .data = (void *)ro};
	struct stune_flush_result res;
	int r = stune_report_flush(ro->state_dir, &u, &cb, &res);
	int ret = r == 0 ? EXIT_OK : res.retryable ? EXIT_PENDING : EXIT_ERROR;
	if (r == -EBADMSG && res.corrupt) { /* every good batch sent */
		if (res.sent)
			note_msg("uploaded %zu point%s in %zu batch%s to %s", res.points, res.points == 1 ? "" : "s",
				 res.sent, res.sent == 1 ? "" : "es", ro->upload);
		error_msg("%s", res.err);
	} else if (r < 0 && res.batches == 0) /* the spool could not be listed */
		error_msg("%s", res.err ? res.err : strerror(-r));
	else if (r < 0) {
		/* Kept for a service that is away for now (exit 3): the command that sends them later. */
		struct global_opts none = {0};
		_cleanup_free_ char *again =
		    res.retryable ? cli_cmdline(&none, "report", "--flush", "", "--upload", ro->upload, "--state-dir",
						ro->state_dir, "--auth-file", ro->auth_file, NULL)
				  : NULL;
		error_msg("upload to %s: %s; not sent, kept in spool: %zu batch%s in %s/spool%s%s", ro->upload,
			  res.err ? res.err : strerror(-r), res.batches - res.sent,
			  res.batches - res.sent == 1 ? "" : "es", ro->state_dir, again ? "; to send it later: " : "",
			  again ? again : "");
	} else if (res.batches == 0)
		fprintf(stderr, "scsitune: spool is empty: nothing to upload\n");
	else
		note_msg("uploaded %zu point%s in %zu batch%s to %s", res.points, res.points == 1 ? "" : "s", res.sent,
			 res.sent == 1 ? "" : "es", ro->upload);
	stune_flush_result_clear(&res);
	return ret;
}

/* The options that take a file, URL or directory: not empty. */
static int path_opt(struct report_opts *ro, int c, const char *arg)
{
	if (!*arg) {
		usage_error("report", "%s: empty argument",
			    c == OPT_UPLOAD	 ? "--upload"
			    : c == OPT_AUTH_FILE ? "--auth-file"
			    : c == OPT_CA_FILE	 ? "--ca-file"
						 : "--config");
		return EXIT_USAGE;
	}
	*(c == OPT_UPLOAD      ? &ro->upload
	  : c == OPT_AUTH_FILE ? &ro->auth_file
	  : c == OPT_CA_FILE   ? &ro->ca_file
			       : &ro->config) = (char *)arg;
	return CLI_GO_ON;
}

/* --upload URL: a URL that cannot be one is a bad value on the command line, like the others (64). */
static int upload_opt(struct report_opts *ro, const char *arg)
{
	_cleanup_free_ char *url = NULL, *err = NULL;
	int r = *arg ? stune_upload_url(arg, &url, &err) : 0;
	if (r == -ENOMEM) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	if (r < 0) {
		_cleanup_free_ char *shown = stune_url_shown(arg); /* never a password, not even here */
		usage_error("report", "--upload %s: %s", shown ? shown : "URL", err ? err : strerror(-r));
		return EXIT_USAGE;
	}
	return path_opt(ro, OPT_UPLOAD, arg);
}

/* --device, --rw, --bs, --job-file, --fio: one line, not empty. */
static int job_text_opt(struct report_opts *ro, char ***devices, int c, const char *arg)
{
	if (!*arg || strchr(arg, '\n')) {
		const struct mode_opt *mo = report_opts_table;
		while (mo->val != c)
			mo++;
		usage_error("report", "--%s: empty or multi-line argument", mo->name);
		return EXIT_USAGE;
	}
	if (c == OPT_DEVICE) {
		char **nv = realloc(*devices, (ro->n_devices + 2) * sizeof(char *));
		if (!nv || !(nv[ro->n_devices] = strdup(arg))) {
			if (nv)
				*devices = nv;
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		*devices = nv;
		(*devices)[++ro->n_devices] = NULL;
		ro->job_shape = true;
	} else if (c == OPT_RW) {
		ro->job.rw = arg;
		ro->job_shape = true;
	} else if (c == OPT_BS) {
		ro->job.bs = arg;
		ro->job_shape = true;
	} else {
		*(c == OPT_JOB_FILE ? &ro->job.job_file : &ro->fio) = arg;
	}
	return CLI_GO_ON;
}

/* --iodepth N or a sweep N1,N2,...: at most 8 depths, each given once. */
static int iodepth_opt(struct report_opts *ro, const char *arg)
{
	_cleanup_free_ char *copy = strdup(arg);
	if (!copy) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	ro->n_depths = 0;
	for (char *tok, *p = copy; (tok = strsep(&p, ","));) {
		unsigned d;
		if (ro->n_depths == ELEMENTSOF(ro->depths)) {
			usage_error("report", "--iodepth %s: at most %zu depths in a sweep", arg,
				    ELEMENTSOF(ro->depths));
			return EXIT_USAGE;
		}
		if (!parse_uint("--iodepth", tok, 1, 65536, &d))
			return EXIT_USAGE;
		for (size_t k = 0; k < ro->n_depths; k++)
			if (ro->depths[k] == d) {
				usage_error("report", "--iodepth %s: %u given twice", arg, d);
				return EXIT_USAGE;
			}
		ro->depths[ro->n_depths++] = d;
	}
	ro->job.iodepth = ro->depths[0];
	ro->job_shape = true;
	return CLI_GO_ON;
}

/* The numeric --run options. */
static int job_num_opt(struct report_opts *ro, int c, const char *arg)
{
	if (c == OPT_RUNS) {
		if (!parse_uint("--runs", arg, 1, 1000, &ro->runs))
			return EXIT_USAGE;
		return CLI_GO_ON;
	}
	if (c == OPT_NODE) {
		unsigned node;
		if (!parse_uint("--node", arg, 0, 4095, &node))
			return EXIT_USAGE;
		ro->node = (int)node;
		ro->node_set = true;
		return CLI_GO_ON;
	}
	if (c == OPT_IODEPTH)
		return iodepth_opt(ro, arg);
	if (!parse_uint(c == OPT_NUMJOBS ? "--numjobs" : "--runtime", arg, 1, c == OPT_RUNTIME ? 86400 : 65536,
			c == OPT_NUMJOBS ? &ro->job.numjobs : &ro->job.runtime_s))
		return EXIT_USAGE;
	ro->job_shape = true;
	return CLI_GO_ON;
}

/* --query and the options that go with it: CLI_GO_ON to go on, else the exit code. */
static int query_opt(struct query_opts *q, int c, const char *arg)
{
	static const char *const names[] = {"--query", "--query-api", "--hosts", "--hosts-file", "--since", "--gate"};
	if (c == OPT_HOSTS)
		return query_hosts_opt(q, arg);
	if (c == OPT_CONFIDENCE) {
		if (stune_gate_parse_confidence(arg, &q->confidence) < 0) {
			usage_error("report", "--confidence: '%s' is not a percentage from %g to %g", arg,
				    STUNE_GATE_CONFIDENCE_MIN * 100, STUNE_GATE_CONFIDENCE_MAX * 100);
			return EXIT_USAGE;
		}
		q->confidence_given = true;
		return CLI_GO_ON;
	}
	if (c == OPT_QUERY_TIMEOUT) {
		if (stune_parse_upload_timeout(arg, &q->timeout_s) < 0) {
			usage_error("report", "--query-timeout: '%s' is not a number of seconds from %d to %d", arg,
				    STUNE_UPLOAD_TIMEOUT_MIN, STUNE_UPLOAD_TIMEOUT_MAX);
			return EXIT_USAGE;
		}
		return CLI_GO_ON;
	}
	if (!*arg || strchr(arg, '\n')) {
		usage_error("report", "%s: empty or multi-line argument", names[c - OPT_QUERY]);
		return EXIT_USAGE;
	}
	*(c == OPT_QUERY	? &q->url
	  : c == OPT_QUERY_API	? &q->api
	  : c == OPT_HOSTS_FILE ? &q->hosts_file
	  : c == OPT_SINCE	? &q->since
				: &q->gate) = arg;
	return CLI_GO_ON;
}

/* One option of report's own: CLI_GO_ON to go on, else the exit code. */
static int report_opt(struct report_opts *ro, char ***devices, int c, const char *arg)
{
	switch (c) {
	case 'h':
		help_report(stdout);
		return EXIT_OK;
	case OPT_PHASE:
		if (!stune_phase_valid(arg)) {
			usage_error("report", "--phase: invalid name '%s' (letters, digits, '.', '_', '-')", arg);
			return EXIT_USAGE;
		}
		ro->phase = arg;
		return CLI_GO_ON;
	case OPT_STATE_DIR:
		if (!*arg) {
			usage_error("report", "--state-dir: empty directory name");
			return EXIT_USAGE;
		}
		ro->state_dir = arg;
		ro->state_dir_given = true;
		return CLI_GO_ON;
	case OPT_COMPARE:
		if (!stune_report_is_file_arg(arg) && !stune_phase_valid(arg)) {
			usage_error("report", "--compare: '%s' is neither a phase name nor a file", arg);
			return EXIT_USAGE;
		}
		ro->compare = arg;
		return CLI_GO_ON;
	case OPT_UPLOAD:
		return upload_opt(ro, arg);
	case OPT_AUTH_FILE:
	case OPT_CA_FILE:
	case OPT_CONFIG:
		return path_opt(ro, c, arg);
	case OPT_FLUSH:
		ro->flush = true;
		return CLI_GO_ON;
	case OPT_HOST_FACTS:
		ro->host_facts = true;
		return CLI_GO_ON;
	case OPT_ALLOW_MIXED:
		ro->allow_mixed = true;
		return CLI_GO_ON;
	case OPT_HTML:
		if (!*arg || strchr(arg, '\n')) {
			usage_error("report", "--html: empty or multi-line file name");
			return EXIT_USAGE;
		}
		ro->html = arg;
		return CLI_GO_ON;
	case OPT_QUERY:
	case OPT_QUERY_API:
	case OPT_HOSTS:
	case OPT_HOSTS_FILE:
	case OPT_SINCE:
	case OPT_GATE:
	case OPT_CONFIDENCE:
	case OPT_QUERY_TIMEOUT:
		return query_opt(&ro->q, c, arg);
	case OPT_UPLOAD_TIMEOUT:
		if (stune_parse_upload_timeout(arg, &ro->upload_timeout_s) < 0) {
			usage_error("report", "--upload-timeout: '%s' is not a number of seconds from %d to %d", arg,
				    STUNE_UPLOAD_TIMEOUT_MIN, STUNE_UPLOAD_TIMEOUT_MAX);
			return EXIT_USAGE;
		}
		return CLI_GO_ON;
	case OPT_GROUP:
		if (!parse_uint("--group", arg, 0, 1000000, &ro->group))
			return EXIT_USAGE;
		ro->group_set = true;
		return CLI_GO_ON;
	case OPT_RUN:
		ro->run = true;
		return CLI_GO_ON;
	case OPT_DESTRUCTIVE:
		ro->job.destructive = true;
		return CLI_GO_ON;
	case OPT_RUNS:
	case OPT_IODEPTH:
	case OPT_NUMJOBS:
	case OPT_RUNTIME:
	case OPT_NODE:
		return job_num_opt(ro, c, arg);
	case OPT_DEVICE:
	case OPT_RW:
	case OPT_BS:
	case OPT_JOB_FILE:
	case OPT_FIO:
		return job_text_opt(ro, devices, c, arg);
	}
	return CLI_NOT_MINE; /* not report's own */
}

/* --run's options together: CLI_GO_ON to go on, else the exit code. */
static int check_run(struct report_opts *ro)
{
	if (ro->n_depths > 1 && ro->compare && stune_report_is_file_arg(ro->compare)) {
		usage_error("report",
			    "--iodepth %u,...: a sweep compares depth by depth with PHASE.qdN: --compare takes "
			    "a phase, not a file",
			    ro->depths[0]);
		return EXIT_USAGE;
	}
	if (ro->n_depths > 1 && ro->html) {
		usage_error("report",
			    "--html with an --iodepth sweep: one HTML report is one result set (run one depth)");
		return EXIT_USAGE;
	}
	char ph[300];
	for (size_t k = 0; ro->n_depths > 1 && k < 2; k++) {
		const char *base = k ? ro->compare : ro->phase;
		snprintf(ph, sizeof(ph), "%s.qd%u", base ? base : "x", ro->depths[0]);
		if (base && !stune_phase_valid(ph)) {
			usage_error("report", "--iodepth sweep: '%s' is not a valid phase (%s too long?)", ph,
				    k ? "--compare" : "--phase");
			return EXIT_USAGE;
		}
	}
	if (ro->job.job_file && ro->job_shape) {
		usage_error("report", "--job-file: the job file says the devices and job options (no --device, "
				      "--rw, --bs, --iodepth, --numjobs, --runtime)");
		return EXIT_USAGE;
	}
	if (!ro->job.destructive && stune_fio_rw_writes(ro->job.rw)) {
		usage_error("report", "--rw %s writes to the devices: refused without --destructive", ro->job.rw);
		return EXIT_USAGE;
	}
	if (ro->job.job_file) {
		bool writes = false;
		_cleanup_free_ char *line = NULL;
		int r = stune_fio_job_file_writes(ro->job.job_file, &writes, &line);
		if (r < 0) {
			error_msg("--job-file %s: %s", ro->job.job_file, stune_user_file_strerror(r, 0));
			return EXIT_ERROR;
		}
		if (writes && !ro->job.destructive) {
			usage_error("report", "--job-file %s: '%s' writes: refused without --destructive",
				    ro->job.job_file, line);
			return EXIT_USAGE;
		}
	}
	return CLI_GO_ON;
}

/* --flush's URL, from --upload or the settings file: CLI_GO_ON to go on, else the exit code. */
static int check_flush(const struct report_opts *ro)
{
	if (!ro->upload) {
		usage_error("report", "--flush: no --upload URL (nor url= in [upload] of the settings file)");
		return EXIT_USAGE;
	}
	return CLI_GO_ON;
}

static void ingest_bad(void *data, const char *msg)
{
	(void)data;
	error_msg("%s", msg);
}

/* The set's -o json document, rendered into memory: what --phase saves. */
static int render_saved(const struct stune_report_set *set, char **doc)
{
	size_t size = 0;
	FILE *m = open_memstream(doc, &size);
	if (!m)
		return -ENOMEM;
	struct out *o = out_new(OUT_JSON, m);
	if (!o) {
		fclose(m);
		return -ENOMEM;
	}
	render_report(o, set, NULL);
	int r = out_finish(o);
	out_free(o);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	return r;
}

struct html_doc {
	const struct stune_report_set *set;
	const struct stune_report_compare *cmp;
	const struct stune_saved_set *ref;
};

static int html_fill(FILE *f, void *data)
{
	const struct html_doc *d = data;
	return render_report_html(f, d->set, d->cmp, d->ref);
}

/*
 * The set: ingest, statistics, reference; then (everything that can fail on
 * input checked) save, spool, render, send. Returns the exit code.
 */
static void fill_row(struct sweep_row *row, const struct stune_report_set *set, const struct stune_report_compare *c,
		     bool compare)
{
	*row = (struct sweep_row){.runs = set->stats.n, .avg = set->stats.avg, .spread = set->stats.spread};
	if (!compare)
		return;
	row->has_ref = true;
	row->ref_runs = c->ref.n;
	row->ref_avg = c->ref.avg;
	row->change = c->cmp.avg_change;
	row->median = c->change_estimate;
	row->has_interval = c->has_low && c->has_high;
	row->low = c->change_low;
	row->high = c->change_high;
}

static int report_set(const struct global_opts *g, const struct report_opts *ro, struct stune_ctx *ctx,
		      char *const *files, size_t n, const struct stune_provenance *prov, const struct stune_auth *auth,
		      struct sweep_row *row)
{
	_cleanup_(stune_report_set_clear) struct stune_report_set set = {.phase = ro->phase,
									 .prov = prov,
									 .group_set = ro->group_set,
									 .group = ro->group,
									 .allow_mixed = ro->allow_mixed};
	_cleanup_(stune_saved_set_freep) struct stune_saved_set *ref = NULL;
	_cleanup_free_ char *saved = NULL, *doc = NULL, *err = NULL;
	_cleanup_(stune_report_compare_clear) struct stune_report_compare cmp = {0};
	int64_t now_ms = (int64_t)time(NULL) * 1000;
	int r = stune_report_ingest(ctx, files, n, &set, ingest_bad, NULL);
	if (r == -ENOMEM)
		error_msg("out of memory");
	if (r < 0 && set.n_unparsed)
		hint_msg("a run is what fio --output-format=json+ --output FILE writes, or report --run makes "
			 "(scsitune-report(8))");
	if (r < 0)
		return EXIT_ERROR;
	if ((r = stune_report_set_stats(&set)) < 0) {
		error_msg("statistics: %s", strerror(-r));
		return EXIT_ERROR;
	}
	if (ro->compare && (r = stune_report_reference(ro->state_dir, ro->compare, &set, &ref, &cmp, &err)) < 0) {
		error_msg("%s", err ? err : "out of memory");
		if (r == -ENOENT && stune_report_is_file_arg(ro->compare))
			hint_msg(
			    "--compare takes a phase that report --phase saved, or a file of it in %s/reports/PHASE/ "
			    "(scsitune-report(8))",
			    ro->state_dir);
		return EXIT_ERROR;
	}
	/* Said loudly: statistics across different jobs, or a change between them, mean nothing. */
	for (size_t i = 0; i < set.n_mismatch; i++)
		note_msg("warning: runs not comparable: %s", set.mismatch[i]);
	for (size_t i = 0; i < cmp.n_mismatch; i++)
		note_msg("warning: --compare %s: not comparable: %s", ro->compare, cmp.mismatch[i]);
	/* The HTML file first: when it cannot be written, nothing is saved or spooled. */
	if (ro->html &&
	    !report_html_write(ro->html, html_fill, &(struct html_doc){&set, ro->compare ? &cmp : NULL, ref}))
		return EXIT_ERROR;
	if (ro->phase) {
		if ((r = render_saved(&set, &doc)) < 0 ||
		    (r = stune_report_save(ro->state_dir, &set, doc, &saved)) < 0) {
			error_msg("--state-dir %s: saving the result set: %s", ro->state_dir,
				  stune_state_strerror(r, 0));
			return EXIT_ERROR;
		}
		fprintf(stderr, "scsitune: result set saved to %s\n", saved);
	}
	if (ro->upload) {
		_cleanup_free_ char *spooled = NULL;
		if ((r = stune_report_spool(ro->state_dir, &set, now_ms, &spooled)) < 0) {
			error_msg("--state-dir %s: spooling the upload: %s", ro->state_dir, stune_state_strerror(r, 0));
			return EXIT_ERROR;
		}
		if (g->verbose)
			fprintf(stderr, "scsitune: upload spooled to %s\n", spooled);
	}
	if (row)
		fill_row(row, &set, &cmp, ro->compare != NULL);
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	render_report(o, &set, ro->compare ? &cmp : NULL);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return ro->upload ? flush_spool(ro, auth) : EXIT_OK;
}

/* After the last depth, in text: each depth's KIOPS and, with --compare, its change against the same depth. */
static void sweep_table(const struct report_opts *ro, const struct sweep_row *rows, size_t n)
{
	char a[32], b[32];
	if (ro->compare)
		printf("\nQueue-depth sweep: %s.qdN against %s.qdN, depth by depth (avg KIOPS;\n"
		       "the median change with its 95 %% interval):\n"
		       "  iodepth  runs  %12s  %12s  change  median change\n",
		       ro->phase ? ro->phase : "this", ro->compare, ro->compare, ro->phase ? ro->phase : "this set");
	else
		printf("\nQueue-depth sweep (KIOPS avg, spread):\n  iodepth  runs   avg KIOPS  spread\n");
	for (size_t k = 0; k < n; k++) {
		const struct sweep_row *r = &rows[k];
		out_fmt_dbl(a, sizeof(a), r->avg, 1);
		if (!r->has_ref) {
			printf("  %7u  %4zu  %10s  %5.1f %%\n", r->iodepth, r->runs, a, r->spread * 100);
			continue;
		}
		out_fmt_dbl(b, sizeof(b), r->ref_avg, 1);
		printf("  %7u  %4zu  %12s  %12s  %+5.1f %%  %+.1f %%", r->iodepth, r->runs, b, a, r->change * 100,
		       r->median * 100);
		if (r->has_interval)
			printf(" (%+.1f %% to %+.1f %%)\n", r->low * 100, r->high * 100);
		else
			printf(" (too few runs)\n");
	}
}

/*
 * --iodepth N1,N2,...: each depth run and reported as its own result set
 * (phase PHASE.qdN, compared with PHASE_REF.qdN), then the table; -o json:
 * an array of the depths' documents. The worst exit code of the depths
 * (an error stops the sweep).
 */
static int run_sweep(const struct global_opts *g, const struct report_opts *ro, struct stune_ctx *ctx,
		     const struct stune_auth *auth)
{
	struct sweep_row rows[ELEMENTSOF(ro->depths)];
	char phase[256], cmp[256];
	int worst = EXIT_OK;
	bool json = g->format == OUT_JSON;
	if (json)
		fputs("[\n", stdout);
	for (size_t k = 0; k < ro->n_depths; k++) {
		struct report_opts d = *ro;
		d.job.iodepth = ro->depths[k];
		if (ro->phase && snprintf(phase, sizeof(phase), "%s.qd%u", ro->phase, d.job.iodepth) > 0)
			d.phase = phase;
		if (ro->compare && snprintf(cmp, sizeof(cmp), "%s.qd%u", ro->compare, d.job.iodepth) > 0)
			d.compare = cmp;
		if (!json)
			printf("%s--- iodepth %u (%zu of %zu)%s%s\n\n", k ? "\n" : "", d.job.iodepth, k + 1,
			       ro->n_depths, d.phase ? ": phase " : "", d.phase ? d.phase : "");
		fflush(stdout);
		_cleanup_(stune_run_clear) struct stune_run rs = {0};
		int ec = run_fio(g, &d, ctx, &rs);
		if (ec == EXIT_OK) {
			if (json && k)
				fputs(",\n", stdout);
			fflush(stdout);
			ec = report_set(g, &d, ctx, rs.files, rs.n_files, &rs.prov, auth, &rows[k]);
			rows[k].iodepth = d.job.iodepth;
		}
		if (ec != EXIT_OK && ec != EXIT_PENDING) {
			if (json)
				fputs("]\n", stdout);
			return ec;
		}
		worst = ec > worst ? ec : worst;
	}
	if (json)
		fputs("]\n", stdout);
	else
		sweep_table(ro, rows, ro->n_depths);
	return worst;
}

/*
 * The command line into *ro, checked against the mode table: an option that
 * does not go with the mode (--query, --run, --flush, or fio FILEs), or
 * arguments it does not take, is a usage error. CLI_GO_ON, or the exit code.
 */
static int report_options(struct global_opts *g, struct report_opts *ro, char ***devices, char ***query_hosts, int argc,
			  char **argv)
{
	_cleanup_free_ struct option *longopts = mode_longopts(&report_table);
	uint64_t given = 0;
	int c, ec;
	if (!longopts) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS, longopts, "report")) != -1) {
		mode_given(&report_table, c, &given);
		ec = report_opt(ro, devices, c, optarg);
		*query_hosts = ro->q.hosts;
		if (ec == CLI_GO_ON)
			continue;
		if (ec != CLI_NOT_MINE)
			return ec;
		if ((ec = command_opt(g, "report", c, optarg)))
			return ec;
	}
	size_t mode = ro->q.url ? M_QUERY : ro->run ? M_RUN : ro->flush ? M_FLUSH : M_FILES;
	return mode_check(&report_table, mode, given, argc - optind);
}

int cmd_report(struct global_opts *g, int argc, char **argv)
{
	struct report_opts ro = {.state_dir = DEFAULT_STATE_DIR,
				 .q = {.confidence = STUNE_GATE_CONFIDENCE},
				 .verbose = g->verbose,
				 .runs = STUNE_FIO_DEFAULT_RUNS,
				 .job = {.rw = STUNE_FIO_SEED_RW,
					 .bs = STUNE_FIO_SEED_BS,
					 .iodepth = STUNE_FIO_SEED_IODEPTH,
					 .numjobs = STUNE_FIO_SEED_NUMJOBS,
					 .runtime_s = STUNE_FIO_SEED_RUNTIME}};
	_cleanup_(stune_strv_freep) char **devices = NULL;
	_cleanup_(stune_strv_freep) char **query_hosts = NULL;
	int ec = report_options(g, &ro, &devices, &query_hosts, argc, argv);
	if (ec != CLI_GO_ON)
		return ec;
	ro.verbose = g->verbose;
	/* Under --sysroot everything follows the root, as for apply: saved sets and the spool go to the
	 * tree's /var/lib/scsitune, never this machine's. */
	_cleanup_free_ char *tree_state = NULL;
	if (g->sysroot && !ro.state_dir_given) {
		if (asprintf(&tree_state, "%s%s", g->sysroot, STUNE_STATE_DIR) < 0) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		ro.state_dir = tree_state;
	}
	if (ro.run && (ec = check_run(&ro)) != CLI_GO_ON)
		return ec;
	ro.devices = devices;
	_cleanup_(stune_config_freep) struct stune_config *cfg = NULL;
	if (!load_config(g, &ro, &cfg))
		return EXIT_ERROR;
	ro.q.html = ro.html;
	/* Under --sysroot the runs' identity is the tree's: FILEs uploaded without --host-facts would carry this
	 * machine's host name and kernel (issue 31). */
	if (g->sysroot && ro.upload && !ro.run && !ro.flush && !ro.q.url && !ro.host_facts) {
		usage_error("report",
			    "--upload under --sysroot: the runs would be tagged with this machine's host name "
			    "and kernel, not the tree's: give --host-facts (the tree's provenance)");
		return EXIT_USAGE;
	}
	/* A set that may mix jobs never reaches the fleet service: no gate may judge it. */
	if (ro.allow_mixed && ro.upload) {
		usage_error("report", "--allow-mixed: a set marked not comparable is never uploaded (no --upload, nor "
				      "url= in [upload] of the settings file)");
		return EXIT_USAGE;
	}
	if (ro.q.url)
		return report_query(g, &ro.q, ro.phase, ro.compare, ro.auth_file, ro.ca_file, ro.upload_timeout_s);
	if (ro.flush && (ec = check_flush(&ro)) != CLI_GO_ON)
		return ec;
	if ((ec = state_dir_check(&ro)) != CLI_GO_ON)
		return ec;
	/* "-" is standard input, which can be read once. */
	for (int i = optind, dash = 0; i < argc; i++)
		if (!strcmp(argv[i], "-") && dash++) {
			usage_error("report", "report: '-' (standard input) given more than once");
			return EXIT_USAGE;
		}
	if (ro.html && !ro.flush && !report_html_check(ro.html))
		return EXIT_ERROR;
	_cleanup_(stune_auth_freep) struct stune_auth *auth = NULL;
	if (ro.upload && !upload_prepare(&ro, &auth))
		return EXIT_ERROR;
	if (ro.flush)
		return flush_spool(&ro, auth);

	/* Ingest: logging only. --run: detect's model (the --sysroot tree's under --sysroot). */
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(stune_run_clear) struct stune_run rs = {0};
	if (!ro.run && !ro.host_facts)
		return report_set(g, &ro, ctx, argv + optind, (size_t)(argc - optind), NULL, auth, NULL);
	if (!ro.run) {
		if ((ec = host_facts(g, &ro, ctx, &rs)) != EXIT_OK)
			return ec;
		return report_set(g, &ro, ctx, argv + optind, (size_t)(argc - optind), &rs.prov, auth, NULL);
	}
	if (ro.n_depths > 1)
		return run_sweep(g, &ro, ctx, auth);
	if ((ec = run_fio(g, &ro, ctx, &rs)) != EXIT_OK)
		return ec;
	return report_set(g, &ro, ctx, rs.files, rs.n_files, &rs.prov, auth, NULL);
}
