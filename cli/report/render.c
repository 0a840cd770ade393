/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report: per-run facts and the across-run statistics, text and JSON from one renderer. */
#include "render.h"
#include "stats/rank.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/utctime.h"
#include "report/resultset.h"

/* ISO 8601 (JSON) or readable (text), UTC; "" when unknown (core/utctime.h: not
 * gmtime_r or strftime, which read the host's /etc/localtime, under --sysroot too). */
static void fmt_time(char *buf, size_t size, int64_t ms, bool iso)
{
	struct stune_utc u;
	if (ms <= 0 || stune_utc_from_epoch(ms / 1000, &u) < 0 ||
	    snprintf(buf, size, iso ? "%04d-%02d-%02dT%02d:%02d:%02dZ" : "%04d-%02d-%02d %02d:%02d:%02d UTC", u.year,
		     u.month, u.day, u.hour, u.min, u.sec) >= (int)size)
		buf[0] = '\0';
}

static const char *pct_key(int k)
{
	static const char *const keys[STUNE_N_PCT] = {"p50", "p99", "p99_9"};
	return keys[k];
}

static const char *pct_text(int k)
{
	static const char *const names[STUNE_N_PCT] = {", p50 %s", ", p99 %s", ", p99.9 %s"};
	return names[k];
}

/* Latency: JSON in ns, text in µs. */
static void render_lat(struct out *o, const struct stune_lat *l)
{
	out_obj_begin(o, "clat_ns");
	out_int(o, "samples", NULL, (long long)l->samples);
	bool any = l->samples > 0;
	out_dbl(o, "mean", NULL, any ? l->mean_ns : NAN, 0);
	out_dbl(o, "min", NULL, any ? l->min_ns : NAN, 0);
	out_dbl(o, "max", NULL, any ? l->max_ns : NAN, 0);
	for (int k = 0; k < STUNE_N_PCT; k++)
		out_dbl(o, pct_key(k), NULL, l->pct_set[k] ? l->pct_ns[k] : NAN, 0);
	out_str(o, "percentiles_from", NULL, stune_pct_source_name(l->pct_source));
	out_obj_end(o);

	/* Text: a tenth of a µs below 10 ms, whole µs above (the line stays in 80 columns). */
	out_dbl(o, NULL, "mean %s", any ? l->mean_ns / 1000 : NAN, any && l->mean_ns >= 1e7 ? 0 : 1);
	for (int k = 0; k < STUNE_N_PCT; k++)
		out_dbl(o, NULL, pct_text(k), l->pct_set[k] ? l->pct_ns[k] / 1000 : NAN,
			l->pct_set[k] && l->pct_ns[k] >= 1e7 ? 0 : 1);
	switch (l->pct_source) {
	case STUNE_PCT_BINS:
		out_text(o, "\n      percentiles exact: from the merged json+ histograms");
		break;
	case STUNE_PCT_MAX_OF_JOBS:
		out_text(o, "\n      percentiles APPROXIMATE: the largest per-job value (no json+ bins)");
		break;
	default:
		break;
	}
}

static void render_io(struct out *o, enum stune_fio_dir d, const struct stune_fio_io *io)
{
	out_obj_begin(o, stune_fio_dir_name(d));
	out_dbl(o, "iops", NULL, io->iops, 1);
	out_dbl(o, "bw_kib_s", NULL, io->bw_kib_s, 1);
	out_int(o, "io_bytes", NULL, (long long)io->io_bytes);
	out_int(o, "total_ios", NULL, (long long)io->total_ios);
	out_int(o, "runtime_ms", NULL, (long long)io->runtime_ms);
	if (io->clat.samples > 0 || out_is_json(o)) {
		out_text(o, "    %s clat (µs): ", stune_fio_dir_name(d));
		render_lat(o, &io->clat);
		out_text(o, "\n");
	}
	out_obj_end(o);
}

static void render_options(struct out *o, const char *key, const struct stune_kv *kv, size_t n)
{
	out_obj_begin(o, key);
	for (size_t i = 0; i < n; i++)
		out_str(o, kv[i].key, NULL, kv[i].value);
	out_obj_end(o);
}

#define PCT_P99 1 /* stune_pct_levels: 50, 99, 99.9 */

/* Several devices (one job section each): per device IOPS, share and p99, the fairness of the shares, the
 * worst device's p99 (the reads; a run without reads: the writes). */
static void render_devices(struct out *o, const struct stune_fio_run *r)
{
	enum stune_fio_dir d = r->total[STUNE_FIO_READ].clat.samples ? STUNE_FIO_READ : STUNE_FIO_WRITE;
	double worst = NAN;
	size_t worst_i = 0;
	char fair[32];
	out_fmt_dbl(fair, sizeof(fair), r->fairness, 3);
	if (r->n_devs)
		out_text(o, "    devices: fairness %s (Jain's index of their IOPS; 1: equal shares)\n", fair);
	out_arr_begin(o, "devices");
	for (size_t i = 0; i < r->n_devs; i++) {
		const struct stune_fio_dev *v = &r->devs[i];
		const struct stune_lat *l = &v->clat[d];
		double p99 = l->pct_set[PCT_P99] ? l->pct_ns[PCT_P99] : NAN;
		if (!isnan(p99) && (isnan(worst) || p99 > worst)) {
			worst = p99;
			worst_i = i;
		}
		out_obj_begin(o, NULL);
		out_str(o, "filename", "      %s", v->filename);
		out_int(o, "jobs", NULL, (long long)v->n_jobs);
		out_dbl(o, "kiops", ": %s KIOPS", v->iops / 1000, 1);
		out_dbl(o, "share_pct", " (%s %%)", r->iops > 0 ? 100 * v->iops / r->iops : NAN, 1);
		out_dbl(o, "p99_ns", NULL, p99, 0);
		char us[32];
		out_fmt_dbl(us, sizeof(us), p99 / 1000, 1);
		out_text(o, ", %s p99 %s µs\n", stune_fio_dir_name(d), us);
		out_str(o, "percentiles_from", NULL, stune_pct_source_name(l->pct_source));
		out_obj_end(o);
	}
	out_arr_end(o);
	out_dbl(o, "fairness", NULL, r->n_devs ? r->fairness : NAN, 3);
	out_str(o, "latency_of", NULL, r->n_devs ? stune_fio_dir_name(d) : NULL);
	out_dbl(o, "worst_p99_ns", NULL, worst, 0);
	out_str(o, "worst_device", NULL, isnan(worst) ? NULL : r->devs[worst_i].filename);
	char us[32];
	out_fmt_dbl(us, sizeof(us), worst / 1000, 1);
	if (!isnan(worst))
		out_text(o, "    worst device p99: %s µs (%s, %s)\n", us, r->devs[worst_i].filename,
			 stune_fio_dir_name(d));
}

static void render_run(struct out *o, size_t idx, const struct stune_fio_run *r, double kiops)
{
	char buf[64];

	out_obj_begin(o, NULL);
	out_text(o, "run %zu: ", idx + 1);
	out_str(o, "file", "%s\n", r->path);
	out_str(o, "fio_version", "    %s", r->fio_version);
	out_int(o, "start_time_ms", NULL, r->timestamp_ms);
	fmt_time(buf, sizeof(buf), r->timestamp_ms, true);
	out_str(o, "start_time", NULL, *buf ? buf : NULL);
	fmt_time(buf, sizeof(buf), r->timestamp_ms, false);
	out_str(o, "output_format", ", output %s", r->json_plus ? "json+" : "json");
	out_bool(o, "old_key_names", NULL, r->old_keys ? STUNE_YES : STUNE_NO);
	if (r->old_keys)
		out_text(o, " (fio 2.x key names)");
	out_text(o, ", started %s\n", *buf ? buf : "-");
	/* The JSON keys keep their order; the text puts them in lines of 80 columns. */
	out_num(o, "group", NULL, r->group >= 0 ? STUNE_NUM(r->group) : (struct stune_num){0});
	out_int(o, "job_count", "    jobs %s", (long long)r->n_jobs);
	out_int(o, "failed_jobs", " (%s failed)", (long long)r->n_failed);
	if (r->group >= 0)
		out_text(o, ", fio group %lld", (long long)r->group);
	out_dbl(o, NULL, "; bandwidth %s MiB/s\n", r->bw_kib_s / 1024, 1);

	out_dbl(o, "iops", "    IOPS %s", r->iops, 1);
	out_dbl_exact(o, "kiops", " (%s KIOPS)", kiops, 1);
	out_dbl(o, NULL, ": read %s", r->total[STUNE_FIO_READ].iops, 1);
	out_dbl(o, NULL, " + write %s\n", r->total[STUNE_FIO_WRITE].iops, 1);
	out_dbl(o, "bw_kib_s", NULL, r->bw_kib_s, 1);
	out_dbl(o, "bw_mib_s", NULL, r->bw_kib_s / 1024, 1);
	for (int d = 0; d < STUNE_FIO_N_DIRS; d++)
		render_io(o, d, &r->total[d]);
	render_options(o, "global_options", r->global_options, r->n_global_options);

	out_arr_begin(o, "jobs");
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct stune_fio_job *j = &r->jobs[i];
		out_obj_begin(o, NULL);
		out_str(o, "name", NULL, j->name);
		out_int(o, "groupid", NULL, j->groupid);
		out_int(o, "error", NULL, j->error);
		out_dbl(o, "read_iops", NULL, j->io[STUNE_FIO_READ].iops, 1);
		out_dbl(o, "write_iops", NULL, j->io[STUNE_FIO_WRITE].iops, 1);
		render_options(o, "options", j->options, j->n_options);
		out_obj_end(o);
		if (j->error)
			out_text(o, "    job %zu '%s': error %d (%s)\n", i, j->name, j->error, strerror(j->error));
	}
	out_arr_end(o);
	render_devices(o, r);
	out_obj_end(o);
}

/* The runs whose robust z is beyond STUNE_OUTLIER_Z: named, kept in every statistic above. */
static void render_outliers(struct out *o, const struct stune_report_set *s)
{
	bool any = false;
	out_arr_begin(o, "outliers");
	for (size_t i = 0; s->robust_z && i < s->n_runs; i++) {
		if (!(fabs(s->robust_z[i]) > STUNE_OUTLIER_Z))
			continue;
		if (!any)
			out_text(o, "  outliers (robust z beyond ±%.1f; named, not dropped):\n", STUNE_OUTLIER_Z);
		any = true;
		const char *file = s->runs[i]->path ? s->runs[i]->path : "stdin";
		out_obj_begin(o, NULL);
		out_int(o, "run", "    run %s", (long long)(i + 1));
		out_str(o, "file", " (%s)", strcmp(file, "-") ? file : "stdin");
		out_dbl(o, "kiops", ": %s KIOPS", s->kiops[i], 1);
		out_dbl(o, "robust_z", isfinite(s->robust_z[i]) ? ", z %s\n" : ", z %s (the other runs equal)\n",
			isfinite(s->robust_z[i]) ? s->robust_z[i] : NAN, 1);
		out_obj_end(o);
	}
	out_arr_end(o);
}

static void render_summary(struct out *o, const struct stune_report_set *s)
{
	const struct stune_stats *st = &s->stats;
	out_obj_begin(o, "summary");
	/* Loud: the statistics below compare different jobs. */
	out_bool(o, "comparable", NULL, s->n_mismatch ? STUNE_NO : STUNE_YES);
	if (s->n_mismatch)
		out_text(o, "\nWARNING: the runs are not all the same fio job: the statistics across them\n"
			    "compare different things:\n");
	out_arr_begin(o, "not_comparable");
	for (size_t i = 0; i < s->n_mismatch; i++)
		out_str(o, NULL, "  - %s\n", s->mismatch[i]);
	out_arr_end(o);
	out_text(o, "\nAcross %zu run%s (KIOPS: thousands of I/O per second, read + write, all jobs):\n", st->n,
		 st->n == 1 ? "" : "s");
	out_int(o, "runs", NULL, (long long)st->n);
	out_dbl(o, "avg_kiops", "  avg     %s KIOPS  (arithmetic mean)\n", st->avg, 1);
	out_dbl(o, "min_kiops", "  range   %s", st->min, 1);
	out_dbl(o, "max_kiops", " – %s KIOPS  (min – max)\n", st->max, 1);
	out_dbl(o, "spread_pct", "  spread  %s %%  ((max − min) / max)\n", st->spread * 100, 1);
	out_dbl(o, "stddev_kiops", "  stddev  %s KIOPS  (sample standard deviation, n − 1)\n",
		st->has_stddev ? st->stddev : NAN, 1);
	out_dbl(o, "cov_pct", "  CoV     %s %%  (coefficient of variation = stddev / avg)\n",
		st->has_stddev ? st->cov * 100 : NAN, 1);
	if (!st->has_stddev)
		out_text(o, "  (stddev and CoV need at least 2 runs)\n");
	render_outliers(o, s);
	out_obj_end(o);
}

static void render_side(struct out *o, const char *key, const char *label, const char *source,
			const struct stune_stats *st)
{
	char avg[32], mn[32], mx[32], range[80];
	out_obj_begin(o, key);
	out_str(o, "label", NULL, label);
	if (source)
		out_str(o, "file", NULL, source);
	out_int(o, "runs", NULL, (long long)st->n);
	out_dbl(o, "avg_kiops", NULL, st->avg, 1);
	out_dbl(o, "min_kiops", NULL, st->min, 1);
	out_dbl(o, "max_kiops", NULL, st->max, 1);
	out_dbl(o, "spread_pct", NULL, st->spread * 100, 1);
	out_obj_end(o);
	out_fmt_dbl(avg, sizeof(avg), st->avg, 1);
	out_fmt_dbl(mn, sizeof(mn), st->min, 1);
	out_fmt_dbl(mx, sizeof(mx), st->max, 1);
	snprintf(range, sizeof(range), "%s – %s", mn, mx);
	/* "–" is 3 bytes for 1 column: widen the field by 2. */
	out_text(o, "  %-24s %10s  %-23s %5.1f %%  %zu\n", label, avg, range, st->spread * 100, st->n);
}

/* What differs between the sets' host facts: the treatment (null in JSON when a side has none). */
static void render_treatment(struct out *o, const struct stune_report_compare *c)
{
	if (!c->treatment_known) {
		out_str_shown(o, "treatment", "  treatment: %s\n", NULL,
			      "unknown (a set without host facts: --run, --host-facts record them)");
		return;
	}
	out_arr_begin(o, "treatment");
	out_text(o, "  treatment:");
	for (size_t i = 0; i < c->n_treatment; i++) {
		out_obj_begin(o, NULL);
		out_str(o, "what", i ? "; %s" : " %s", c->what[i]);
		out_str(o, "reference", " %s", c->t_ref[i]);
		out_str(o, "current", " → %s", c->t_cur[i]);
		out_obj_end(o);
	}
	if (!c->n_treatment)
		out_text(o, " none: nothing differs (an A/A comparison)");
	out_text(o, "\n");
	out_arr_end(o);
}

/* The change as the runs show it: the Hodges-Lehmann estimate and its interval (one odd run does not move it). */
static void render_median_change(struct out *o, const struct stune_report_compare *c, const struct stune_stats *cur)
{
	out_obj_begin(o, "median_change");
	out_dbl(o, "estimate_pct", NULL, c->change_estimate * 100, 1);
	out_dbl(o, "low_pct", NULL, c->has_low ? c->change_low * 100 : NAN, 1);
	out_dbl(o, "high_pct", NULL, c->has_high ? c->change_high * 100 : NAN, 1);
	out_dbl(o, "confidence_pct", NULL, STUNE_REPORT_CHANGE_CONFIDENCE * 100, 0);
	out_text(o, "  median change %+.1f %%, ", c->change_estimate * 100);
	if (c->has_low && c->has_high)
		out_text(o, "%g %% interval %+.1f %% to %+.1f %%", STUNE_REPORT_CHANGE_CONFIDENCE * 100,
			 c->change_low * 100, c->change_high * 100);
	else
		out_text(o, "too few runs for a %g %% interval", STUNE_REPORT_CHANGE_CONFIDENCE * 100);
	out_text(o, " (%zu and %zu runs)\n", c->ref.n, cur->n);
	out_obj_end(o);
}

static void render_compare(struct out *o, const struct stune_report_compare *c, const struct stune_stats *cur)
{
	out_obj_begin(o, "compare");
	out_text(o, "\nComparison (avg and range in KIOPS; spread = (max − min) / max):\n");
	out_text(o, "  %-24s %10s  %-21s %7s  %s\n", "configuration", "avg KIOPS", "range (KIOPS)", "spread", "runs");
	render_side(o, "reference", c->ref_label, c->ref_source, &c->ref);
	render_side(o, "current", c->cur_label, NULL, cur);
	out_dbl(o, "avg_change_pct", NULL, c->cmp.avg_change * 100, 1);
	out_dbl(o, "spread_change_points", NULL, c->cmp.spread_change * 100, 1);
	out_text(o, "  change (%s vs %s): avg %+.1f %%, spread %+.1f points\n", c->cur_label, c->ref_label,
		 c->cmp.avg_change * 100, c->cmp.spread_change * 100);
	render_median_change(o, c, cur);
	render_treatment(o, c);
	out_bool(o, "comparable", NULL, c->n_mismatch ? STUNE_NO : STUNE_YES);
	if (c->n_mismatch)
		out_str(o, NULL, "  WARNING: NOT COMPARABLE with %s, the change means nothing:\n", c->ref_label);
	out_arr_begin(o, "not_comparable");
	for (size_t i = 0; i < c->n_mismatch; i++)
		out_str(o, NULL, "    - %s\n", c->mismatch[i]);
	out_arr_end(o);
	out_obj_end(o);
}

static void render_provenance(struct out *o, const struct stune_report_set *s)
{
	const struct stune_provenance *p = s->prov;
	char buf[64];
	out_obj_begin(o, "provenance");
	if (!p) {
		out_str(o, "source", NULL, "files");
		out_str(o, "note", NULL,
			"fio output files ingested: the host, kernel, HBA, payload and profile they were made with "
			"are not known to scsitune; fio version and job options are per run");
		out_str(o, "phase", NULL, s->phase);
		out_obj_end(o);
		return;
	}
	if (p->host_facts)
		out_str(o, "source", "Provenance (--host-facts, as of the report)%.0s", "host");
	else
		out_str(o, "source", "Provenance: %s", "run");
	out_str(o, "host", " on host %s", p->host);
	out_str(o, "kernel", ", kernel %s\n", p->kernel);
	if (p->have_hba) {
		out_obj_begin(o, "hba");
		out_str(o, "model", "  HBA %s", p->hba_model);
		out_str(o, "firmware", ", firmware %s", p->hba_firmware);
		out_str(o, "pci_address", ", PCI %s", p->hba_pci_address);
		out_str(o, "driver", ", driver %s", p->hba_driver);
		out_num(o, "numa_node", ", numa_node %s\n", p->hba_numa_node);
		out_obj_end(o);
	} else {
		out_str(o, "hba", "  HBA %s (the devices are not behind a detected HBA)\n", NULL);
	}
	out_str(o, "payload_version", "  payload %s", p->payload_version);
	if (!p->payload_version)
		out_text(o, " (no version marker on scsi_mod: stock modules)");
	out_str(o, "payload_state", " (payload verify: %s)", p->payload_state);
	out_obj_begin(o, "profile");
	out_str(o, "name", "; profile %s", p->profile);
	out_str(o, "digest", p->profile ? " (sha256 %.12s...)" : NULL, p->profile_digest);
	out_str(o, "journal_state", p->profile ? ", journal: %s" : NULL, p->profile_journal_state);
	out_str(o, "verify_state", ", verify: %s", p->profile_verify_state);
	out_num(o, "verify_drifted",
		p->profile_verify_drifted.set && p->profile_verify_drifted.v ? " (drifted settings: %s)" : NULL,
		p->profile_verify_drifted);
	out_str(o, "note", " (%s)", p->profile_note);
	out_str(o, "journal_dir", NULL, p->profile_journal_dir);
	/* Where the journal was looked for: apply's --state-dir is report's too (no journal elsewhere is none here). */
	if (!p->profile && p->profile_journal_dir && !out_is_json(o))
		out_str(o, NULL,
			"; looked in %s/journal.json: an apply with --state-dir DIR needs report --state-dir DIR",
			p->profile_journal_dir);
	out_text(o, "\n");
	out_obj_end(o);
	out_str(o, "phase", NULL, s->phase);
	if (p->host_facts) {
		fmt_time(buf, sizeof(buf), p->start_ms, true);
		out_str(o, "facts_time", NULL, *buf ? buf : NULL);
		out_str(o, "note", "  %s\n",
			"fio ran outside scsitune: the host, HBA (the first mpi3mr HBA's), payload and profile "
			"are this host's when the files were reported");
		out_obj_end(o);
		out_text(o, "\n");
		return;
	}
	out_str(o, "fio", "  %s", p->fio_path);
	out_str(o, "fio_version", " (%s)", p->fio_version);
	fmt_time(buf, sizeof(buf), p->start_ms, true);
	out_str(o, "start_time", NULL, *buf ? buf : NULL);
	fmt_time(buf, sizeof(buf), p->start_ms, false);
	out_text(o, ", started %s", *buf ? buf : "-");
	out_int(o, "runs", ", %s run(s)\n", (long long)p->runs);
	out_obj_begin(o, "job");
	out_str(o, "job_file", p->job_file ? "  job file %s\n" : NULL, p->job_file);
	out_strv(o, "devices", p->job_file ? NULL : "  devices %s\n", p->devices);
	out_bool(o, "readonly", "  read-only (fio --readonly) %s\n", p->readonly ? STUNE_YES : STUNE_NO);
	out_strv(o, "fio_args", "  fio arguments: %s\n", p->fio_args);
	out_obj_end(o);
	out_obj_begin(o, "numa_binding");
	if (p->bound_node >= 0) {
		out_int(o, "node", "  fio bound to NUMA node %s", p->bound_node);
		out_str(o, "cpus", " (CPUs %s; libnuma numa_run_on_node + numa_set_preferred)\n", p->bound_cpus);
	} else {
		out_str(o, "node", NULL, NULL);
		out_str(o, "note", "  fio not bound: %s\n", p->binding_note);
	}
	out_obj_end(o);
	out_obj_end(o);
	out_text(o, "\n");
}

void render_report(struct out *o, const struct stune_report_set *s, const struct stune_report_compare *c)
{
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_REPORT_SCHEMA_VERSION);
	out_str(o, "phase", s->phase ? "Result set: phase %s" : NULL, s->phase);
	if (!s->phase)
		out_text(o, "Result set without a phase (no --phase)");
	out_text(o, ", %zu run%s (one fio output file per run)\n", s->n_runs, s->n_runs == 1 ? "" : "s");
	out_text(o, "IOPS: read + write, summed over all jobs; bandwidth in MiB/s (1,048,576 B/s);\n"
		    "clat = completion latency in µs (mean; percentiles p50/p99/p99.9)\n\n");
	render_provenance(o, s);
	out_arr_begin(o, "runs");
	for (size_t i = 0; i < s->n_runs; i++)
		render_run(o, i, s->runs[i], s->kiops[i]);
	out_arr_end(o);
	render_summary(o, s);
	if (c)
		render_compare(o, c, &s->stats);
	out_obj_end(o);
}
