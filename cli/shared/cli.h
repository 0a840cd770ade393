/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The front end: global options, the command table, exit codes, messages. */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "core/ctx.h"
#include "out.h"

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

/*
 * What a front-end helper returns: an exit code above (its message printed),
 * or, where its caller goes on, CLI_GO_ON; an option parser given an option it
 * does not know returns CLI_NOT_MINE for the next parser. Neither is an exit
 * code, and no front-end helper returns -1 or -errno for "printed" (the
 * engine's -errno is turned into a message and an exit code where it is
 * received).
 */
#define CLI_GO_ON    (-1)
#define CLI_NOT_MINE (-2)

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
 * Parse one global option given getopt's result: CLI_GO_ON if taken,
 * CLI_NOT_MINE if not a global option, EXIT_USAGE after printing the error.
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
/* " (did you mean 'PREFIX+X'?)" into buf when one of names[n] is near word, else "". */
const char *did_you_mean(char *buf, size_t size, const char *prefix, const char *word, const char *const *names,
			 size_t n);
/*
 * getopt_long for the commands (cmd "apply"...) and main (cmd NULL): errors
 * are scsitune's own one-line messages (not getopt's, which name argv[0]'s
 * path): an unknown option with the nearest name, a missing or unwanted
 * argument; a long option must be spelt in full (no prefixes). Returns '?'
 * after printing the usage error (command_opt then gives EXIT_USAGE).
 */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, const char *cmd);
/*
 * The command line to run next, for a hint: "scsitune [--sysroot DIR] CMD"
 * then OPTION, VALUE pairs (NULL-terminated list; a NULL value leaves its
 * option out, "" gives the option alone), values shell-quoted. Caller frees.
 */
char *cli_cmdline(const struct global_opts *g, const char *cmd, ...) __attribute__((sentinel));
/* word as a shell takes it: as is when plain, else in single quotes. Caller frees; NULL: out of memory. */
char *cli_shell_quote(const char *word);
/* The next step after an --auth-file that is not there: what one holds. */
#define AUTH_FILE_NEXT                                                                     \
	"an auth file is one line, user:password, Bearer TOKEN or Token TOKEN, mode 0600 " \
	"(scsitune-report(8), CREDENTIALS)"
/* After a command's getopt loop: a positional argument is a usage error (EXIT_USAGE). */
int command_no_args(const char *cmd, int argc, char **argv);

/* Open the engine context with the CLI's stderr logger. NULL after printing the error. */
struct stune_ctx *cli_ctx_open(const struct global_opts *g);
void usage_error(const char *cmd, const char *fmt, ...) _printf_(2, 3);
void error_msg(const char *fmt, ...) _printf_(1, 2);
/* "scsitune: " and the message, escaped like error_msg (warnings, progress lines). */
void note_msg(const char *fmt, ...) _printf_(1, 2);
/* "scsitune: hint: " and the next step, after the one line of an error a user can fix: what to run or
 * where to look. Not counted as the error's line (scsitune(8), DIAGNOSTICS). */
void hint_msg(const char *fmt, ...) _printf_(1, 2);
