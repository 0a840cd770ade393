/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One fio JSON output file (fio 3.x --output-format=json or json+, and the
 * older 2.x key names) read into a model: the run's facts, every job, and
 * the totals over all jobs. SPEC.md "report"; fio's traps are in
 * ../shared/reference/peers.md section 6.
 *
 * Units are normalised on the way in: bytes, KiB/s (fio's `bw`), IOPS,
 * milliseconds of runtime, nanoseconds of latency (old fio's `clat` in usec
 * and io_bytes in KiB are converted).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "stats/stats.h"

struct stune_ctx;

enum stune_fio_dir { STUNE_FIO_READ, STUNE_FIO_WRITE, STUNE_FIO_N_DIRS };
const char *stune_fio_dir_name(enum stune_fio_dir d); /* "read", "write" */

/* The percentiles a report shows: p50, p99, p99.9. */
#define STUNE_N_PCT 3
extern const double stune_pct_levels[STUNE_N_PCT];

/* How the percentiles of a latency were obtained. */
enum stune_pct_source {
	STUNE_PCT_NONE,	      /* no samples / no percentiles in the file */
	STUNE_PCT_FIO,	      /* one job: fio's own values */
	STUNE_PCT_BINS,	      /* several jobs: exact, from the merged json+ histograms */
	STUNE_PCT_MAX_OF_JOBS /* several jobs without bins: the largest per-job value (approximate, an upper bound) */
};
const char *stune_pct_source_name(enum stune_pct_source s); /* "fio", "merged-bins", "max-of-jobs", "none" */

/* Completion latency (fio's clat_ns, or clat in usec converted). */
struct stune_lat {
	uint64_t samples; /* N */
	double min_ns, max_ns, mean_ns;
	bool pct_set[STUNE_N_PCT];
	double pct_ns[STUNE_N_PCT];
	enum stune_pct_source pct_source;
	struct stune_hist bins; /* json+ only */
};

struct stune_fio_io {
	uint64_t io_bytes;
	uint64_t total_ios;
	double bw_kib_s; /* fio's bw: KiB/s */
	double iops;
	uint64_t runtime_ms;
	struct stune_lat clat;
};

struct stune_kv {
	char *key, *value;
};

struct stune_fio_job {
	char *name;
	int64_t groupid;
	int error; /* errno value; 0 = none */
	struct stune_kv *options;
	size_t n_options;
	struct stune_fio_io io[STUNE_FIO_N_DIRS];
};

/* One device of a run whose jobs read different files (filename=): its jobs' totals. */
struct stune_fio_dev {
	const char *filename; /* the jobs' filename= (points into the run's options) */
	size_t n_jobs;
	double iops; /* read + write */
	struct stune_lat clat[STUNE_FIO_N_DIRS];
};

struct stune_fio_run {
	char *path;
	char *fio_version;    /* "fio-3.33" */
	int64_t timestamp_ms; /* 0: unknown */
	char *time;	      /* fio's "time" string, NULL if absent */
	bool old_keys;	      /* fio 2.x key names (clat in usec, io_bytes in KiB) */
	bool json_plus;	      /* clat bins present */
	struct stune_kv *global_options;
	size_t n_global_options;
	struct stune_fio_job *jobs;
	size_t n_jobs;

	/* Totals over every job (several jobs may share a name). */
	struct stune_fio_io total[STUNE_FIO_N_DIRS];
	double iops;	 /* read + write */
	double bw_kib_s; /* read + write */
	size_t n_failed; /* jobs with error != 0 */
	int first_error; /* the first failed job's error */
	size_t first_failed_job;

	/* Per device, when the jobs read different files (one job section per device: report --run on
	 * several devices, or a job file that names one device per job): in the order first seen;
	 * n_devs 0 otherwise. fairness: Jain's index of the devices' IOPS (1: equal shares). */
	struct stune_fio_dev *devs;
	size_t n_devs;
	double fairness;

	/* fio's groups: jobs of different groups ran one after the other (stonewall, new_group). */
	size_t n_groups;
	int64_t group; /* -1: every group kept; else the one kept (stune_fio_run_keep_group) */
	/* The file's bytes, for telling the same run given twice: FNV-1a 64 and length. */
	uint64_t content_hash;
	size_t content_len;
};

/*
 * Parse one file. Warnings (text before the JSON, several concatenated
 * documents) go through the context's log with the file name. On bad input
 * returns -EINVAL (-ENOMSG when there is no fio document at all: empty, not
 * JSON, truncated, not fio's) and sets *err to a one-line description
 * (without the file name); the caller frees it. A file that is not a
 * regular file or is too large: its errno with *err set. Other failures:
 * -errno (*err NULL).
 */
int stune_fio_parse_file(struct stune_ctx *ctx, const char *path, struct stune_fio_run **out, char **err);
/* The same on a buffer already read; path only names it. */
int stune_fio_parse_buf(struct stune_ctx *ctx, const char *path, const char *buf, size_t len,
			struct stune_fio_run **out, char **err);
/*
 * Keep only the jobs of fio group `group` and compute the totals again: the
 * IOPS of jobs in different groups do not add up (they ran one after the
 * other). -ENOENT when the run has no such group; *err gets the groups there
 * are ("0, 1").
 */
int stune_fio_run_keep_group(struct stune_fio_run *r, int64_t group, char **err);
/* "0 (randread), 1 (randwrite)": the run's groups with their first job's rw; caller frees. */
char *stune_fio_run_groups(const struct stune_fio_run *r);
void stune_fio_run_free(struct stune_fio_run *r);
DEFINE_CLEANUP_FUNC(struct stune_fio_run, stune_fio_run_free)

/*
 * Tests: read every document through json-c (on), as the strict tokenizer
 * leaves to it what it does not take; and how many documents json-c read.
 */
void stune_fio_force_json_c(bool on);
unsigned long stune_fio_json_c_reads(void);

/* Value of a job option: the job's own, else the global one, else NULL. */
const char *stune_fio_job_option(const struct stune_fio_run *r, const struct stune_fio_job *j, const char *key);
