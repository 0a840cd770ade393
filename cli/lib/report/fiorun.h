/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `report --run`: fio as a child process. The job (the seed job of SPEC.md
 * unless overridden) becomes fio's command line; the child is bound to a
 * NUMA node through libnuma (report/numabind.c, dlopen()ed) before it execs fio;
 * fio writes its JSON output to a file, its stderr to another.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "core/strv.h"

/* The seed job: fio random read 4 KiB, QD 64, 16 jobs, 60 s, direct I/O. */
#define STUNE_FIO_SEED_RW      "randread"
#define STUNE_FIO_SEED_BS      "4k"
#define STUNE_FIO_SEED_IODEPTH 64
#define STUNE_FIO_SEED_NUMJOBS 16
#define STUNE_FIO_SEED_RUNTIME 60
#define STUNE_FIO_DEFAULT_RUNS 3

struct stune_fio_job_opts {
	const char *rw, *bs;
	unsigned iodepth, numjobs, runtime_s;
	const char *job_file; /* NULL: the job is built from the options above */
	bool destructive;     /* false: fio --readonly, and no write modes */
};

/* rw modes that write: write, randwrite, rw/readwrite, randrw, trim*, ... */
bool stune_fio_rw_writes(const char *rw);
/* A job file that has a writing rw= / readwrite= line (-errno when it cannot be read). */
int stune_fio_job_file_writes(const char *path, bool *writes, char **line);

/* The program: a name with '/' as is, else searched in PATH. -ENOENT when not found. */
int stune_fio_find(const char *name, char **path);
/* `fio --version`, e.g. "fio-3.33". */
int stune_fio_version(const char *fio, char **version);

/* libnuma, loaded for binding (live system only). */
struct stune_numa_binder;
/* -ENOENT: libnuma.so.1 not loadable; -ENOSYS: numa_available() < 0. *err says why. */
int stune_numa_binder_open(struct stune_numa_binder **out, char **err);
void stune_numa_binder_free(struct stune_numa_binder *b);
DEFINE_CLEANUP_FUNC(struct stune_numa_binder, stune_numa_binder_free)
/* The CPUs of a node per libnuma, as a cpulist string. */
int stune_numa_binder_node_cpus(struct stune_numa_binder *b, int node, char **cpulist);
/* In the child: numa_run_on_node(node) and numa_set_preferred(node). -errno. */
int stune_numa_bind_self(struct stune_numa_binder *b, int node);

struct stune_fio_spawn {
	const char *fio; /* path */
	const struct stune_fio_job_opts *job;
	char *const *devices; /* joined as fio's filename=a:b */
	size_t n_devices;
	const char *output;		  /* --output FILE (JSON) */
	const char *stderr_path;	  /* fio's stderr */
	struct stune_numa_binder *binder; /* NULL: not bound */
	int node;
	/* Called about once a second while fio runs (elapsed seconds). */
	void (*tick)(void *data, unsigned elapsed_s);
	void *tick_data;
};

/* fio's arguments (NULL-terminated, freed with stune_strv_free). */
int stune_fio_argv(const struct stune_fio_spawn *s, char ***argv);

/*
 * Run fio once and wait for it. 0 when fio exited 0. -ECHILD with *err set
 * when it failed (exit status, signal, or the first line of its stderr);
 * other -errno when it could not be started (binding or exec failed: *err says which).
 */
int stune_fio_spawn_run(const struct stune_fio_spawn *s, char **err);
