/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Saved result sets of `report`: one JSON document per report under
 * STATE_DIR/reports/PHASE/YYYYmmddTHHMMSSZ.json (UTC start of the earliest
 * run, so saving the same runs again replaces the same file). The document
 * itself is rendered by the front end (cli/render-report.c); this file only
 * writes it atomically and reads back what `--compare` needs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"

/* 2: a "provenance" object (report --run); 1 (without it) is still read. */
#define STUNE_REPORT_SCHEMA_VERSION 2

/* Letters, digits, '.', '_', '-'; not starting with '.'; 1-64 characters. */
bool stune_phase_valid(const char *phase);

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

/* What --compare needs from a saved set. */
struct stune_saved_set {
	char *path;
	char *phase;   /* NULL when the set had none */
	double *kiops; /* per run */
	size_t n;
};

/* -EINVAL with *err (one line, without the file name) on a file that is not a result set. */
int stune_saved_set_load(const char *path, struct stune_saved_set **out, char **err);
void stune_saved_set_free(struct stune_saved_set *s);
DEFINE_CLEANUP_FUNC(struct stune_saved_set, stune_saved_set_free)
