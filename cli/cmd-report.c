/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune report: ingest fio JSON output (one file per run), statistics, save, compare. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lib/config.h"
#include "lib/fio.h"
#include "lib/lineproto.h"
#include "lib/resultset.h"
#include "lib/stats.h"
#include "lib/upload.h"
#include "render-report.h"
#include "scsitune.h"

#define DEFAULT_STATE_DIR "/var/lib/scsitune"

void help_report(FILE *f)
{
	fputs("Usage: scsitune report [options] FILE...\n"
	      "       scsitune report --flush [--upload URL] [--state-dir DIR]\n"
	      "\nIngest fio JSON output (fio 3.x output format json or json+), one file per run,\n"
	      "and show per run: IOPS (read + write, summed over all jobs), bandwidth, completion\n"
	      "latency (mean, p50, p99, p99.9), errors; across runs: avg, min-max, spread\n"
	      "((max - min) / max), sample standard deviation and coefficient of variation.\n"
	      "\nOptions:\n"
	      "      --phase NAME         label the result set (e.g. baseline, tuned) and save it\n"
	      "                           under STATE_DIR/reports/NAME/\n"
	      "      --state-dir DIR      where result sets are saved (default " DEFAULT_STATE_DIR ")\n"
	      "      --compare PHASE|FILE compare with the newest saved set of PHASE, or a saved\n"
	      "                           result-set FILE: avg KIOPS, range, spread and their change\n"
	      "      --upload URL         send each run as InfluxDB line protocol to the write URL\n"
	      "                           (VictoriaMetrics /write, InfluxDB /write?db=DB, ...);\n"
	      "                           spooled under STATE_DIR/spool/ until the server took it\n"
	      "      --flush              send only what is spooled (no FILE)\n"
	      "      --auth-file FILE     credentials: 'Bearer TOKEN', 'Token TOKEN' or 'user:password'\n"
	      "                           (the file must not be readable by others)\n"
	      "      --ca-file FILE       verify the server's TLS certificate against these CAs\n"
	      "      --config FILE        settings file (default " STUNE_CONFIG_DEFAULT ")\n\n",
	      f);
	print_global_options(f);
	fputs("\nA file that is not fio output, or a run in which a fio job failed, is an error\n"
	      "(exit 1) and nothing is saved. An upload that did not get through keeps the\n"
	      "runs in the spool: exit 3 when the server could not be reached or failed (5xx),\n"
	      "1 when it refused them (4xx, TLS). See scsitune-report(8).\n",
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
	bool flush;
};

static void runs_free(struct stune_fio_run **runs, size_t n)
{
	for (size_t i = 0; runs && i < n; i++)
		stune_fio_run_free(runs[i]);
	free(runs);
}

/* Parse every file; each bad one gets its own line. Returns false if any was bad. */
static bool ingest(struct stune_ctx *ctx, char **files, size_t n, struct stune_fio_run **runs)
{
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *err = NULL;
		int r = stune_fio_parse_file(ctx, files[i], &runs[i], &err);
		if (r < 0) {
			error_msg("%s: %s", files[i], err ? err : strerror(-r));
			ok = false;
			continue;
		}
		const struct stune_fio_run *run = runs[i];
		if (run->n_failed > 0) {
			const struct stune_fio_job *j = &run->jobs[run->first_failed_job];
			error_msg("%s: fio job %zu '%s' failed with error %d (%s)%s", files[i], run->first_failed_job,
				  j->name, j->error, strerror(j->error),
				  run->n_failed > 1 ? ", and more jobs failed" : "");
			ok = false;
		}
	}
	return ok;
}

static bool is_file_arg(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

/* Load the --compare reference. False after printing the error. */
static bool load_reference(const struct report_opts *ro, struct stune_saved_set **ref)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	int r;
	if (is_file_arg(ro->compare)) {
		path = strdup(ro->compare);
		if (!path) {
			error_msg("out of memory");
			return false;
		}
	} else {
		r = stune_resultset_find(ro->state_dir, ro->compare, &path);
		if (r == -ENOENT) {
			error_msg("--compare %s: no saved result set for phase '%s' in %s/reports/%s", ro->compare,
				  ro->compare, ro->state_dir, ro->compare);
			return false;
		}
		if (r < 0) {
			error_msg("--compare %s: %s/reports/%s: %s", ro->compare, ro->state_dir, ro->compare,
				  strerror(-r));
			return false;
		}
	}
	r = stune_saved_set_load(path, ref, &err);
	if (r < 0) {
		error_msg("--compare %s: %s: %s", ro->compare, path, err ? err : strerror(-r));
		return false;
	}
	return true;
}

/* The result set as its saved document (no comparison in it). */
static int save(const struct report_opts *ro, const struct report_set *set, char **saved)
{
	char *doc = NULL;
	size_t size = 0;
	int64_t start = 0;
	int r;

	for (size_t i = 0; i < set->n_runs; i++)
		if (set->runs[i]->timestamp_ms > 0 && (start == 0 || set->runs[i]->timestamp_ms < start))
			start = set->runs[i]->timestamp_ms;
	if (start == 0) /* no run says when it started: name the set after now */
		start = (int64_t)time(NULL) * 1000;
	_cleanup_free_ char *name = NULL;
	if ((r = stune_resultset_name(start, &name)) < 0)
		return r;
	FILE *m = open_memstream(&doc, &size);
	if (!m)
		return -ENOMEM;
	struct out *o = out_new(OUT_JSON, m);
	if (!o) {
		fclose(m);
		free(doc);
		return -ENOMEM;
	}
	render_report(o, set, NULL);
	r = out_finish(o);
	out_free(o);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = stune_resultset_save(ro->state_dir, ro->phase, name, doc, saved);
	free(doc);
	return r;
}

/*
 * The settings file fills what the command line left unset. It is read only
 * when an upload is asked for (--upload, --flush) or --config names it.
 */
static bool load_config(struct report_opts *ro, struct stune_config **cfg)
{
	_cleanup_free_ char *err = NULL;
	const char *path = ro->config ? ro->config : STUNE_CONFIG_DEFAULT;
	if (!ro->config && !ro->upload && !ro->flush)
		return true;
	int r = stune_config_load(path, !ro->config, cfg, &err);
	if (r < 0) {
		error_msg("%s%s%s", path, err ? ":" : ": ", err ? err : strerror(-r));
		return false;
	}
	if (!ro->upload)
		ro->upload = (*cfg)->upload_url;
	if (!ro->auth_file)
		ro->auth_file = (*cfg)->upload_auth_file;
	if (!ro->ca_file)
		ro->ca_file = (*cfg)->upload_ca_file;
	return true;
}

/* The set's runs as one spooled batch of line protocol. */
static int spool_set(const struct report_opts *ro, const struct report_set *set, int64_t now_ms, char **path)
{
	struct utsname u;
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	bool have_uname = uname(&u) == 0;
	struct stune_lp_facts facts = {
	    .host = host, .kernel = have_uname ? u.release : NULL, .phase = ro->phase, .fallback_ms = now_ms};
	_cleanup_free_ char *lines = NULL;
	size_t len = 0;
	int r = stune_lp_encode(set->runs, set->n_runs, &facts, &lines, &len);
	if (r < 0)
		return r;
	return stune_spool_add(ro->state_dir, lines, len, path);
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/*
 * Send every spooled batch, oldest name first; a batch is deleted only after a
 * 2xx. Up to 3 tries per batch (1 s, 2 s apart) while the failure is
 * retryable; the first batch that does not get through stops the flush.
 */
static int flush_spool(const struct global_opts *g, const struct report_opts *ro, const struct stune_auth *auth)
{
	char **paths = NULL;
	size_t n = 0, sent = 0, points = 0;
	int r = stune_spool_list(ro->state_dir, &paths, &n);
	if (r < 0) {
		error_msg("--state-dir %s: reading %s/spool: %s", ro->state_dir, ro->state_dir, strerror(-r));
		return EXIT_ERROR;
	}
	struct stune_upload u = {.url = ro->upload, .ca_file = ro->ca_file, .auth = auth};
	_cleanup_free_ char *err = NULL;
	int ret = EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *body = NULL;
		size_t len = 0;
		if ((r = stune_spool_read(paths[i], &body, &len)) < 0) {
			free(err);
			if (asprintf(&err, "%s: %s", paths[i], strerror(-r)) < 0)
				err = NULL;
			ret = EXIT_ERROR;
			break;
		}
		for (int t = 0; t < 3; t++) {
			free(err);
			err = NULL;
			r = stune_upload_send(&u, body, len, &err);
			if (r != -EAGAIN || t == 2)
				break;
			if (g->verbose)
				fprintf(stderr, "scsitune: upload to %s: %s; retrying in %d s\n", ro->upload,
					err ? err : strerror(-r), 1 << t);
			sleep(1u << t);
		}
		if (r < 0) {
			ret = r == -EAGAIN ? EXIT_PENDING : EXIT_ERROR;
			break;
		}
		if ((r = stune_spool_remove(paths[i])) < 0)
			fprintf(stderr, "scsitune: warning: %s: sent but not removed: %s\n", paths[i], strerror(-r));
		sent++;
		points += count_lines(body, len);
	}
	if (ret != EXIT_OK)
		error_msg("upload to %s: %s; not sent, kept in spool: %zu batch%s in %s/spool", ro->upload,
			  err ? err : strerror(-r), n - sent, n - sent == 1 ? "" : "es", ro->state_dir);
	else if (n == 0)
		fprintf(stderr, "scsitune: spool is empty: nothing to upload\n");
	else
		fprintf(stderr, "scsitune: uploaded %zu point%s in %zu batch%s to %s\n", points, points == 1 ? "" : "s",
			sent, sent == 1 ? "" : "es", ro->upload);
	stune_spool_list_free(paths, n);
	return ret;
}

/* Checks on the upload settings before anything is written. False after printing the error. */
static bool upload_prepare(const struct report_opts *ro, struct stune_auth **auth)
{
	_cleanup_free_ char *url = NULL, *err = NULL;
	int r = stune_upload_url(ro->upload, &url, &err);
	if (r < 0) {
		error_msg("--upload %s: %s", ro->upload, err ? err : strerror(-r));
		return false;
	}
	if (ro->ca_file && access(ro->ca_file, R_OK) < 0) {
		error_msg("--ca-file %s: %s", ro->ca_file, strerror(errno));
		return false;
	}
	if (ro->auth_file) {
		r = stune_auth_load(ro->auth_file, auth, &err);
		if (r < 0) {
			error_msg("--auth-file %s: %s", ro->auth_file, err ? err : strerror(-r));
			return false;
		}
	}
	return true;
}

int cmd_report(struct global_opts *g, int argc, char **argv)
{
	enum {
		OPT_PHASE = 0x100,
		OPT_STATE_DIR,
		OPT_COMPARE,
		OPT_UPLOAD,
		OPT_FLUSH,
		OPT_AUTH_FILE,
		OPT_CA_FILE,
		OPT_CONFIG
	};
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"phase", required_argument, NULL, OPT_PHASE},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"compare", required_argument, NULL, OPT_COMPARE},
						 {"upload", required_argument, NULL, OPT_UPLOAD},
						 {"flush", no_argument, NULL, OPT_FLUSH},
						 {"auth-file", required_argument, NULL, OPT_AUTH_FILE},
						 {"ca-file", required_argument, NULL, OPT_CA_FILE},
						 {"config", required_argument, NULL, OPT_CONFIG},
						 {NULL, 0, NULL, 0}};
	struct report_opts ro = {.state_dir = DEFAULT_STATE_DIR};
	int c;

	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help_report(stdout);
			return EXIT_OK;
		case OPT_PHASE:
			if (!stune_phase_valid(optarg)) {
				usage_error("report", "--phase: invalid name '%s' (letters, digits, '.', '_', '-')",
					    optarg);
				return EXIT_USAGE;
			}
			ro.phase = optarg;
			continue;
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("report", "--state-dir: empty directory name");
				return EXIT_USAGE;
			}
			ro.state_dir = optarg;
			continue;
		case OPT_COMPARE:
			if (!is_file_arg(optarg) && !stune_phase_valid(optarg)) {
				usage_error("report", "--compare: '%s' is neither a phase name nor a file", optarg);
				return EXIT_USAGE;
			}
			ro.compare = optarg;
			continue;
		case OPT_UPLOAD:
		case OPT_AUTH_FILE:
		case OPT_CA_FILE:
		case OPT_CONFIG:
			if (!*optarg) {
				usage_error("report", "%s: empty argument",
					    c == OPT_UPLOAD	 ? "--upload"
					    : c == OPT_AUTH_FILE ? "--auth-file"
					    : c == OPT_CA_FILE	 ? "--ca-file"
								 : "--config");
				return EXIT_USAGE;
			}
			*(c == OPT_UPLOAD      ? &ro.upload
			  : c == OPT_AUTH_FILE ? &ro.auth_file
			  : c == OPT_CA_FILE   ? &ro.ca_file
					       : &ro.config) = optarg;
			continue;
		case OPT_FLUSH:
			ro.flush = true;
			continue;
		}
		int r = global_opt(g, c, optarg);
		if (r < 0)
			return EXIT_USAGE;
		if (r == 0) {
			fputs("Try 'scsitune report --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	_cleanup_(stune_config_freep) struct stune_config *cfg = NULL;
	if (!load_config(&ro, &cfg))
		return EXIT_ERROR;
	if (ro.flush) {
		if (optind < argc) {
			usage_error("report", "--flush sends the spool only: no FILE");
			return EXIT_USAGE;
		}
		if (!ro.upload) {
			usage_error("report", "--flush: no --upload URL (nor url= in [upload] of the settings file)");
			return EXIT_USAGE;
		}
		if (ro.phase || ro.compare) {
			usage_error("report", "--flush: no --phase or --compare");
			return EXIT_USAGE;
		}
	} else if (optind >= argc) {
		usage_error("report", "report: no fio JSON file given");
		return EXIT_USAGE;
	}
	_cleanup_(stune_auth_freep) struct stune_auth *auth = NULL;
	if (ro.upload && !upload_prepare(&ro, &auth))
		return EXIT_ERROR;
	if (ro.flush)
		return flush_spool(g, &ro, auth);
	int64_t now_ms = (int64_t)time(NULL) * 1000;

	/* Logging only: report reads no sysfs (provenance from detect comes later). */
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;

	size_t n = (size_t)(argc - optind);
	struct report_set set = {.phase = ro.phase, .n_runs = n};
	set.runs = calloc(n, sizeof(*set.runs));
	_cleanup_free_ double *kiops = set.kiops = calloc(n, sizeof(double));
	if (!set.runs || !set.kiops) {
		free(set.runs);
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	int ret = EXIT_ERROR, r;
	_cleanup_(stune_saved_set_freep) struct stune_saved_set *ref = NULL;
	_cleanup_free_ char *saved = NULL;
	_cleanup_(out_freep) struct out *o = NULL;
	struct report_compare cmp;
	if (!ingest(ctx, argv + optind, n, set.runs))
		goto out;
	for (size_t i = 0; i < n; i++)
		set.kiops[i] = set.runs[i]->iops / 1000.0;
	r = stune_stats_compute(set.kiops, n, &set.stats);
	if (r < 0) {
		error_msg("statistics: %s", strerror(-r));
		goto out;
	}

	/* Everything that can fail on input is checked before anything is written. */
	cmp = (struct report_compare){.cur_label = ro.phase ? ro.phase : "this set"};
	if (ro.compare) {
		if (!load_reference(&ro, &ref))
			goto out;
		if ((r = stune_stats_compute(ref->kiops, ref->n, &cmp.ref)) < 0 ||
		    (r = stune_stats_compare(&cmp.ref, &set.stats, &cmp.cmp)) < 0) {
			error_msg("--compare %s: %s: reference has no usable runs", ro.compare, ref->path);
			goto out;
		}
		cmp.ref_label = ref->phase ? ref->phase : ref->path;
		cmp.ref_source = ref->path;
	}
	if (ro.phase) {
		r = save(&ro, &set, &saved);
		if (r < 0) {
			error_msg("--state-dir %s: saving the result set: %s", ro.state_dir, strerror(-r));
			goto out;
		}
		fprintf(stderr, "scsitune: result set saved to %s\n", saved);
	}
	if (ro.upload) {
		_cleanup_free_ char *spooled = NULL;
		r = spool_set(&ro, &set, now_ms, &spooled);
		if (r < 0) {
			error_msg("--state-dir %s: spooling the upload: %s", ro.state_dir, strerror(-r));
			goto out;
		}
		if (g->verbose)
			fprintf(stderr, "scsitune: upload spooled to %s\n", spooled);
	}

	o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		goto out;
	}
	render_report(o, &set, ro.compare ? &cmp : NULL);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		goto out;
	}
	ret = ro.upload ? flush_spool(g, &ro, auth) : EXIT_OK;
out:
	runs_free(set.runs, n);
	return ret;
}
