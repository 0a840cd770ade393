/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A command with modes (report FILE... / --run / --flush / --query; payload
 * pack / install / verify / remove): one declarative table says which options
 * mean something in which mode, and how many arguments each mode takes. The
 * getopt table, the refusal of an option that means nothing in the mode, and
 * the "Options by mode" block of --help all come from it (tests/cli/
 * test-modes.sh checks the binary against --help, check-man-names.py the man
 * page and the README against it).
 */
#pragma once

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* A mode: its name as one writes it, and its positional arguments. */
struct mode_def {
	const char *name;     /* "report --query", "payload install", "report FILE..." */
	int min_args;	      /* positional arguments (after the options) */
	int max_args;	      /* -1: any number */
	const char *bad_args; /* the usage error when their number is outside [min, max] */
};

/* One option of the command: getopt's entry, and the modes (bit i: modes[i]) it goes with. */
struct mode_opt {
	const char *name; /* without "--" */
	int has_arg;	  /* no_argument or required_argument */
	int val;	  /* what cli_getopt returns for it (not a global option's letter) */
	unsigned modes;
};

struct mode_table {
	const char *cmd; /* "report", for the messages */
	const struct mode_def *modes;
	size_t n_modes;
	const struct mode_opt *opts;
	size_t n_opts; /* at most 64 */
};

#define MODE(i)	     (1u << (i))
#define MODES_ALL(n) ((1u << (n)) - 1)

/* getopt's table: t's options, then the global ones, then the terminator. NULL: out of memory. */
struct option *mode_longopts(const struct mode_table *t);
/* Note that getopt returned val: *given gets the bit of its entry (nothing for a global option). */
void mode_given(const struct mode_table *t, int val, uint64_t *given);
/*
 * Every option given goes with mode m, and nargs positional arguments fit it:
 * CLI_GO_ON, or EXIT_USAGE after the usage error ("--runs does not go with
 * report FILE...; it goes with report --run").
 */
int mode_check(const struct mode_table *t, size_t m, uint64_t given, int nargs);
/* --help's block: each mode and its options, wrapped to 80 columns. */
void mode_help(FILE *f, const struct mode_table *t);
