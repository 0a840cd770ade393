/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One `report`: the result set (fio outputs, one per run) and what is done
 * with it, in this order: ingest, statistics, the --compare reference, save
 * (the rendered document, written atomically under STATE/reports/PHASE/),
 * spool (line protocol under STATE/spool/), flush (send every spooled batch).
 * Rendering and messages are the caller's (cli/report/report.c); nothing here
 * prints. Errors are -errno with a one-line *err where the caller needs words.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "report/provenance.h"
#include "stats/stats.h"

struct stune_ctx;
struct stune_fio_run;
struct stune_saved_set;
struct stune_upload;

/* One result set: the runs of one configuration, one fio file per run. */
struct stune_report_set {
	const char *phase;		     /* NULL: unlabelled */
	const struct stune_provenance *prov; /* NULL: fio files ingested */
	bool group_set;			     /* --group: keep fio group `group` of each file */
	bool allow_mixed;		     /* --allow-mixed: runs of different jobs kept, not comparable */
	int64_t group;
	struct stune_fio_run **runs; /* owned: stune_report_set_clear */
	size_t n_runs;
	size_t n_unparsed;	  /* ingest: files with no fio document (missing, empty, not JSON, not fio's) */
	double *kiops;		  /* per run: (read + write IOPS summed over all jobs) / 1000 */
	double *robust_z;	  /* per run, with 3 runs or more (else NULL): stats/rank.h; |z| > 3.5 an outlier */
	struct stune_stats stats; /* over kiops */
	/* Runs that are not the same job as the first (fio version, job options): "run 2 (b.json): bs 4k vs
	 * 8k". The statistics across them compare different things. */
	char **mismatch;
	size_t n_mismatch;
};
void stune_report_set_clear(struct stune_report_set *s);

/* --compare: the reference set against this one. */
#define STUNE_REPORT_CHANGE_CONFIDENCE 0.95
struct stune_report_compare {
	const char *ref_label;	/* phase, or the file name */
	const char *ref_source; /* the saved file */
	struct stune_stats ref;
	const char *cur_label;
	struct stune_stats_cmp cmp;
	/* The change as the runs show it (stats/rank.h): the Hodges-Lehmann estimate and its two-sided
	 * STUNE_REPORT_CHANGE_CONFIDENCE interval (each end a one-sided bound at half the error); has_low/has_high
	 * false: too few runs for that end. */
	double change_estimate, change_low, change_high;
	bool has_low, has_high;
	/* How this set differs from the reference (fio version, job options, host), or that either set's runs
	 * are not one job (--allow-mixed): not comparable. */
	char **mismatch;
	size_t n_mismatch;
	/* The treatment: what differs between the sets' host facts, of kernel, payload, profile (by digest,
	 * else name) and firmware; what[i] its name, t_ref[i] and t_cur[i] its values ("none": unset). Known only
	 * when both sets carry host facts (--run, --host-facts); none known and n 0: an A/A comparison. */
	bool treatment_known;
	size_t n_treatment;
	const char *what[4];
	char *t_ref[4], *t_cur[4];
};
void stune_report_compare_clear(struct stune_report_compare *c);

/*
 * Parse every file into s (n runs). Each bad file (unparsable, a fio job that
 * failed, several fio groups without s->group_set, no such group, the same
 * run as an earlier file) is reported through bad(data, message naming the
 * file), and the others are still read; -EINVAL when any was bad. A run
 * that is not the same job as the first (fio version, job options) is bad
 * too, unless s->allow_mixed: then it goes to s->mismatch and the set is
 * not comparable (with itself, nor with any other set).
 */
int stune_report_ingest(struct stune_ctx *ctx, char *const *files, size_t n, struct stune_report_set *s,
			void (*bad)(void *data, const char *msg), void *data);
/* Per-run KIOPS, the statistics over them and (3 runs or more) each run's robust z. */
int stune_report_set_stats(struct stune_report_set *s);

/* A --compare argument that names a file rather than a phase. */
bool stune_report_is_file_arg(const char *s);
/*
 * The --compare reference: a saved set's file, or the newest saved set of a
 * phase in state_dir; compared against s into c (cur_label from s's phase).
 */
int stune_report_reference(const char *state_dir, const char *compare, const struct stune_report_set *s,
			   struct stune_saved_set **ref, struct stune_report_compare *c, char **err);

/* When the set started: its earliest run's start, else now (ms since the epoch). */
int64_t stune_report_set_start_ms(const struct stune_report_set *s);
/* doc (the set's rendered JSON document) saved as STATE/reports/PHASE/START.json. */
int stune_report_save(const char *state_dir, const struct stune_report_set *s, const char *doc, char **saved);

/* The set's runs as one spooled batch of line protocol (host and kernel
 * from the provenance, else this machine's). */
int stune_report_spool(const char *state_dir, const struct stune_report_set *s, int64_t now_ms, char **path);

/* What a flush did. */
struct stune_flush_result {
	size_t batches, sent, points;
	size_t corrupt; /* batches set aside as NAME.corrupt: the flush then fails (-EBADMSG) */
	char *err;	/* why it stopped: the failing batch's message, or NULL */
	bool retryable; /* it stopped on a failure worth retrying later (exit 3) */
};
void stune_flush_result_clear(struct stune_flush_result *r);
/*
 * Send every spooled batch, oldest name first; a batch is deleted only
 * after a 2xx. Up to 3 tries per batch (1 s, 2 s apart) while the failure
 * is retryable, each announced through retry(data, message, seconds); the
 * first batch that does not get through stops the flush (-EAGAIN retryable,
 * else -errno). A batch sent but not removed is reported through
 * not_removed and counted as sent. A batch that is not what was spooled
 * (truncated, changed, not a regular file, not text) is never sent: it is
 * renamed NAME.corrupt, reported through corrupt, and the flush goes on;
 * at the end it fails with -EBADMSG (res->corrupt counts them).
 */
struct stune_flush_cb {
	void (*retry)(void *data, const char *msg, unsigned seconds);
	void (*not_removed)(void *data, const char *path, int err);
	void (*corrupt)(void *data, const char *path, const char *aside, const char *why);
	void *data;
};
int stune_report_flush(const char *state_dir, const struct stune_upload *u, const struct stune_flush_cb *cb,
		       struct stune_flush_result *res);
