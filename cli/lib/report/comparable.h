/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether fio runs can be compared: the same fio version, and the same job,
 * by the options that shape the workload (rw, bs, iodepth, numjobs,
 * ioengine, direct, rwmixread, size, runtime; a job's own value, else the
 * global one; unset is fio's default). A run whose output records no job
 * options at all (fio 2.1) has unknown options: only its version is compared. A
 * run's signature is its fio version and the set of its jobs' option tuples
 * (several identical jobs, as numjobs without group_reporting gives, count
 * once). Runs of one set should have one signature, and a compared set the
 * same; where they differ, the differences read "bs 4k vs 8k".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"

struct stune_fio_run;

#define STUNE_SIG_N_KEYS 9
extern const char *const stune_sig_keys[STUNE_SIG_N_KEYS];

struct stune_sig {
	char *fio_version; /* NULL: unknown */
	char ***jobs;	   /* distinct tuples, sorted; each STUNE_SIG_N_KEYS values (NULL: unset) */
	size_t n_jobs;
	bool options_known; /* false: the output records no job options (fio 2.1): jobs not compared */
};
void stune_sig_clear(struct stune_sig *s);
DEFINE_CLEANUP_FUNC(struct stune_sig, stune_sig_clear)

/* The value of key for job i, else NULL: how a signature reads a run (a fio run, a saved set's JSON). */
typedef const char *(*stune_sig_opt_fn)(void *data, size_t job, const char *key);
/* options_known false: the run records no job options at all (see struct stune_sig). */
int stune_sig_build(const char *fio_version, size_t n_jobs, bool options_known, stune_sig_opt_fn opt, void *data,
		    struct stune_sig *out);
int stune_sig_of_run(const struct stune_fio_run *r, struct stune_sig *out);
/*
 * How b differs from a, as items ("fio version fio-3.33 vs fio-3.1", "bs 4k
 * vs 8k", "rw randread vs randrw", "jobs: ... vs ..."), appended to *diffs
 * (NULL-terminated, n counted). None when they are the same. Jobs are not
 * compared when either side's options are unknown.
 */
int stune_sig_diff(const struct stune_sig *a, const struct stune_sig *b, char ***diffs, size_t *n);
