/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of report/ share among themselves and nothing outside the
 * room uses (tests/layout keeps it inside report/): fio as a child process
 * and its libnuma binding, the result-set files, one line-protocol line, one
 * POST.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/macro.h"
#include "report/fio.h"
#include "report/fiorun.h"
#include "report/points.h"
#include "report/resultset.h"
#include "net/http.h"

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

/* "YYYYmmddTHHMMSSZ.json" for a start time in ms since the epoch. */
int stune_resultset_name(int64_t start_ms, char **out);

/*
 * Write doc to STATE_DIR/reports/PHASE/NAME: directories created as needed
 * (0755), a temporary file in the same directory, fsync, rename, fsync of
 * the directory. Nothing is left behind on failure. *saved_path: the file.
 */
int stune_resultset_save(const char *state_dir, const char *phase, const char *name, const char *doc,
			 char **saved_path);

/* STATE_DIR/runs, created (0755) if needed: where `report --run` keeps fio's outputs. */
int stune_resultset_rundir(const char *state_dir, char **dir);

/* The newest saved set of a phase: -ENOENT when there is none. */
int stune_resultset_find(const char *state_dir, const char *phase, char **path);
/* The phases saved under STATE_DIR/reports (at most 64), ", "-joined and sorted ("" when none). */
int stune_resultset_phases(const char *state_dir, char **list);

/* -EINVAL with *err (one line, without the file name) on a file that is not a result set. */
int stune_saved_set_load(const char *path, struct stune_saved_set **out, char **err);
/* The same with stune_read_user_file()'s flags: STUNE_UF_NOFOLLOW for a set found in the state
 * directory (a symbolic link there is refused, -ELOOP), none for a file the user named. */
int stune_saved_set_load_flags(const char *path, unsigned flags, struct stune_saved_set **out, char **err);

/* One line (with its '\n') per run, appended to f. */
int stune_lp_write_run(FILE *f, const struct stune_fio_run *run, const struct stune_lp_facts *facts);
