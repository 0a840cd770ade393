/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune report: ingest fio JSON output (one file per run), statistics, save, compare. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/fio.h"
#include "lib/resultset.h"
#include "lib/stats.h"
#include "render-report.h"
#include "scsitune.h"

#define DEFAULT_STATE_DIR "/var/lib/scsitune"

void help_report(FILE *f)
{
	fputs("Usage: scsitune report [options] FILE...\n"
	      "\nIngest fio JSON output (fio 3.x output format json or json+), one file per run,\n"
	      "and show per run: IOPS (read + write, summed over all jobs), bandwidth, completion\n"
	      "latency (mean, p50, p99, p99.9), errors; across runs: avg, min-max, spread\n"
	      "((max - min) / max), sample standard deviation and coefficient of variation.\n"
	      "\nOptions:\n"
	      "      --phase NAME         label the result set (e.g. baseline, tuned) and save it\n"
	      "                           under STATE_DIR/reports/NAME/\n"
	      "      --state-dir DIR      where result sets are saved (default " DEFAULT_STATE_DIR ")\n"
	      "      --compare PHASE|FILE compare with the newest saved set of PHASE, or a saved\n"
	      "                           result-set FILE: avg KIOPS, range, spread and their change\n\n",
	      f);
	print_global_options(f);
	fputs("\nA file that is not fio output, or a run in which a fio job failed, is an error\n"
	      "(exit 1) and nothing is saved. See scsitune-report(8).\n",
	      f);
}

struct report_opts {
	const char *phase;
	const char *state_dir;
	const char *compare;
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

int cmd_report(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_PHASE = 0x100, OPT_STATE_DIR, OPT_COMPARE };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"phase", required_argument, NULL, OPT_PHASE},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"compare", required_argument, NULL, OPT_COMPARE},
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
		}
		int r = global_opt(g, c, optarg);
		if (r < 0)
			return EXIT_USAGE;
		if (r == 0) {
			fputs("Try 'scsitune report --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error("report", "report: no fio JSON file given");
		return EXIT_USAGE;
	}

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
	ret = EXIT_OK;
out:
	runs_free(set.runs, n);
	return ret;
}
