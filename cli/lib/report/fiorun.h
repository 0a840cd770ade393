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
