/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Saved result sets of `report`: one JSON document per report under
 * STATE_DIR/reports/PHASE/YYYYmmddTHHMMSSZ.json (UTC start of the earliest
 * run, so saving the same runs again replaces the same file). The document
 * itself is rendered by the front end (cli/report/render.c); this file only
 * writes it atomically and reads back what `--compare` needs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "report/comparable.h"

/* 2: a "provenance" object (report --run); 1 (without it) is still read. */
#define STUNE_REPORT_SCHEMA_VERSION 2

/* Letters, digits, '.', '_', '-'; not starting with '.'; 1-64 characters. */
bool stune_phase_valid(const char *phase);

/* What --compare needs from a saved set. */
struct stune_saved_set {
	char *path;
	char *phase;   /* NULL when the set had none */
	double *kiops; /* per run */
	size_t n;
	struct stune_sig sig; /* its first run's fio version and jobs */
	char *host;	      /* provenance.host when the set had one */
	bool mixed;	      /* summary.comparable false: its runs are not one job (--allow-mixed) */
	/* The host facts the set was made with (provenance of --run or --host-facts); has_facts false:
	 * files ingested without them. NULL: unset ("none"). */
	bool has_facts;
	char *kernel, *payload, *profile, *profile_digest, *firmware;
	/* When its runs started: the earliest runs[].start_time_ms (ms since the epoch); has_start
	 * false when no run says. */
	bool has_start;
	int64_t start_ms;
};

void stune_saved_set_free(struct stune_saved_set *s);
DEFINE_CLEANUP_FUNC(struct stune_saved_set, stune_saved_set_free)

/* The newest saved set of every phase under STATE_DIR/reports (scsitune metrics). */
struct stune_newest_sets {
	size_t n;
	char **phases;		       /* sorted, at most 64 */
	struct stune_saved_set **sets; /* sets[i] of phases[i]; NULL: its directory holds no set */
};
void stune_newest_sets_clear(struct stune_newest_sets *s);
/*
 * Fill out: nothing saved (no reports directory, or no state directory) is
 * n = 0. A set that cannot be read or is not a result set, or a listing that
 * is refused (a symbolic link in the way: -ELOOP): -errno with *err naming
 * the file and why.
 */
int stune_resultset_newest(const char *state_dir, struct stune_newest_sets *out, char **err);
