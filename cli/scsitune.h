/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The front end: global options, the command table, exit codes. */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "out.h"

struct stune_profile;
struct stune_plan;
struct stune_topology;
struct stune_hba;
struct stune_change;

/* Exit codes, documented in scsitune(8) EXIT STATUS. */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		  /* runtime failure: unreadable sysroot, out of memory, write error */
	EXIT_DRIFT = 2,		  /* verify: settings drifted */
	EXIT_PENDING = 3,	  /* report: results kept in the spool, the server could not take them now */
	EXIT_GATE = 4,		  /* report --query --gate: the selection does not meet the gate */
	EXIT_PROFILE_CHANGED = 5, /* verify: the profile changed since apply, the host did not */
	EXIT_USAGE = 64		  /* bad command line (EX_USAGE) */
};

struct global_opts {
	enum out_format format;
	const char *sysroot;
	int verbose;
};

struct command {
	const char *name;
	int (*fn)(struct global_opts *g, int argc, char **argv);
	const char *summary;
	void (*help)(FILE *f);
};

/*
 * Parse one global option given getopt's result; returns 1 if handled,
 * 0 if not a global option, -1 after printing a usage error.
 */
int global_opt(struct global_opts *g, int opt, const char *arg);
#define GLOBAL_LONGOPTS                                                                      \
	{"output", required_argument, NULL, 'o'}, {"sysroot", required_argument, NULL, 'R'}, \
	    {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'},           \
	{                                                                                    \
		"version", no_argument, NULL, 'V'                                            \
	}
#define GLOBAL_SHORTOPTS "o:vhV"
void print_global_options(FILE *f);
/*
 * A command's getopt fallthrough: a global option is taken (0); anything else
 * prints the --help hint for cmd and gives EXIT_USAGE.
 */
int command_opt(struct global_opts *g, const char *cmd, int opt, const char *arg);
/* After a command's getopt loop: a positional argument is a usage error (EXIT_USAGE). */
int command_no_args(const char *cmd, int argc, char **argv);

/* Open the engine context with the CLI's stderr logger. NULL after printing the error. */
struct stune_ctx *cli_ctx_open(const struct global_opts *g);
void usage_error(const char *cmd, const char *fmt, ...) _printf_(2, 3);
void error_msg(const char *fmt, ...) _printf_(1, 2);
/* "scsitune: " and the message, escaped like error_msg (warnings, progress lines). */
void note_msg(const char *fmt, ...) _printf_(1, 2);

int cmd_apply(struct global_opts *g, int argc, char **argv);
void help_apply(FILE *f);
int cmd_detect(struct global_opts *g, int argc, char **argv);
void help_detect(FILE *f);
int cmd_payload(struct global_opts *g, int argc, char **argv);
void help_payload(FILE *f);
int cmd_report(struct global_opts *g, int argc, char **argv);
void help_report(FILE *f);
int cmd_revert(struct global_opts *g, int argc, char **argv);
void help_revert(FILE *f);
int cmd_verify(struct global_opts *g, int argc, char **argv);
void help_verify(FILE *f);
/*
 * Find (and create) the state directory for state_opt (NULL: the default inside
 * the root) and take its lock. Prints the error ("another scsitune apply is
 * running (pid N)") and returns -1 on failure.
 */
int cli_lock(struct stune_ctx *ctx, const char *state_opt, char **state_dir, int *fd);
/* Read the host and build the plan of p (with --persist's rows when persist);
 * prints the error and returns -errno on failure. */
int cli_plan(struct stune_ctx *ctx, const struct stune_profile *p, const char *profile_dir, bool persist,
	     struct stune_topology **t, struct stune_plan **plan);
/* A profile that did not load: the loader's line, or, for a name in a profile
 * directory that does not exist, how to install or run from a source tree. */
void cli_profile_error(int r, const char *err, const char *profile, const char *dir);
/* The HBA as people name it: its PCI address, else "/" + its sysfs path (in buf). */
const char *cli_hba_name(const struct stune_hba *h, char *buf, size_t len);
/* The plan's scope: per HBA in or out and why (text and JSON "hbas"). */
void render_scope(struct out *o, const struct stune_topology *t, const struct stune_plan *plan);
/* "Profile NAME  sha256 0123456789ab  includes F" (text only): how apply, its dry run and verify name it. */
void render_profile_text(struct out *o, const struct stune_profile *p, const char *digest);
/* A plan row's device for the text rows (caller frees; NULL when none). */
char *plan_row_device(const struct stune_change *c);
/* "scheduler mq-deadline -> none" (with_desired), else "scheduler mq-deadline" (caller frees). */
char *plan_row_text(const struct stune_change *c, bool with_desired);
/* apply without --dry-run (cmd-apply-write.c). */
struct payload_bundle;
/* b: apply --payload's bundle (installed first, under the same lock), or NULL. */
int apply_write(struct global_opts *g, struct stune_ctx *ctx, const struct stune_topology *t,
		const struct stune_plan *plan, const char *profile_dir, const char *state_opt, bool persist,
		const struct payload_bundle *b);
