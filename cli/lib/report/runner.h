/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `report --run`: read the host, choose the devices and the NUMA binding,
 * gather the provenance, then run fio N times into STATE/runs/. The caller
 * (cli/report/report.c) shows progress through the callbacks; nothing here
 * prints. Errors are -errno with a one-line *err naming what failed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"
#include "report/fiorun.h"
#include "report/provenance.h"

struct stune_ctx;
struct stune_fio_run;
struct stune_journal;
struct stune_topology;

struct stune_run_opts {
	const char *fio; /* program; NULL: "fio" from PATH */
	struct stune_fio_job_opts job;
	char *const *devices; /* NULL-terminated; none: the mpi3mr HBAs' disks */
	size_t n_devices;
	unsigned runs;
	bool node_set;
	int node;
	const char *state_dir;	 /* where runs/ goes */
	const char *journal_dir; /* where apply's journal is */
	const char *profile_dir; /* where the journal's profile name resolves */
	bool sysroot;		 /* ctx's root is a tree, not this host */
};

/* Progress: before each run (elapsed 0), every tick of it, and after it. */
struct stune_run_progress {
	unsigned k, n;	    /* run k of n, from 1 */
	unsigned per_run_s; /* 0: unknown (a job file) */
	unsigned elapsed;
};
struct stune_run_cb {
	void (*tick)(void *data, const struct stune_run_progress *p);
	void (*ended)(void *data, const struct stune_run_progress *p); /* success or not */
	void (*done)(void *data, const struct stune_run_progress *p, const struct stune_fio_run *run, const char *file);
	void *data;
};

/* What a run owns while its set is reported. */
struct stune_run {
	struct stune_topology *topo;
	char *fio_path, *fio_version, *rundir, *cpus, *note;
	char **fio_args;	/* the job, without the program and --output= */
	char **default_devices; /* no devices given: /dev/NAME of the mpi3mr disks */
	char **files;		/* fio's outputs, one per run, in run order */
	size_t n_files;
	struct stune_journal *journal;
	char *journal_dir; /* where the journal was looked for (prov.profile_journal_dir points here) */
	char host[256];
	struct stune_provenance prov;
};
void stune_run_clear(struct stune_run *rs);

/*
 * report --host-facts: the provenance of fio outputs made outside scsitune on
 * this host (the --sysroot tree under --sysroot): host, kernel, payload, the
 * first mpi3mr HBA, and the applied profile with its verify_state as of now.
 * No fio is run; o's fio, job and device fields are not used.
 */
int stune_run_host_facts(struct stune_ctx *ctx, const struct stune_run_opts *o, struct stune_run *rs, char **err);

/* Everything up to and including the N runs; rs->files are the outputs. */
int stune_run_fio(struct stune_ctx *ctx, const struct stune_run_opts *o, const struct stune_run_cb *cb,
		  struct stune_run *rs, char **err);
