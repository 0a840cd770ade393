/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/scan.h"
#include "scsitune.h"

/* The one version: project(VERSION) in CMakeLists.txt (docs/version checks the rest agree). */
#ifndef SCSITUNE_VERSION
#error "SCSITUNE_VERSION is defined by CMakeLists.txt from the project version"
#endif

/* Exact-match command table: a tool that writes system state never guesses. */
static const struct command commands[] = {
    {"apply", cmd_apply, "apply a tuning profile with a journal of old values, or print its plan (dry run)",
     help_apply},
    {"detect", cmd_detect, "show HBAs, NUMA topology, IRQs, disks and kernel/payload state", help_detect},
    {"payload", cmd_payload, "the patched kernel modules: pack a signed bundle, install, verify what is loaded, remove",
     help_payload},
    {"report", cmd_report, "ingest fio JSON results: per-run IOPS and latency, spread across runs, compare",
     help_report},
    {"revert", cmd_revert, "put back the values the last apply changed, from its journal", help_revert},
    {"verify", cmd_verify, "check that a tuning profile is in effect: in effect, drifted, not applicable", help_verify},
};

/* Every message is one line with its control characters escaped (out_escape):
 * file contents, server bodies and device strings end up in them. */
void error_msg(const char *fmt, ...)
{
	va_list ap;
	fputs("scsitune: ", stderr);
	va_start(ap, fmt);
	out_vfprintf_escaped(stderr, 0, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void note_msg(const char *fmt, ...)
{
	va_list ap;
	fputs("scsitune: ", stderr);
	va_start(ap, fmt);
	out_vfprintf_escaped(stderr, 0, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fputs("scsitune: ", stderr);
	va_start(ap, fmt);
	out_vfprintf_escaped(stderr, 0, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'scsitune %s%s--help' for more information.\n", cmd ? cmd : "", cmd ? " " : "");
}

void print_global_options(FILE *f)
{
	fputs("Global options:\n"
	      "  -o, --output FORMAT   text (default) or json; json puts only the document on stdout\n"
	      "      --sysroot DIR     read a captured tree (DIR/sys, DIR/proc, DIR/run/udev/data)\n"
	      "                        instead of the running system\n"
	      "  -v, --verbose         text: every row, not only changes and drift; more\n"
	      "                        messages on stderr\n"
	      "  -h, --help            show help and exit\n"
	      "  -V, --version         show the version and exit\n",
	      f);
}

static void main_help(FILE *f)
{
	fputs("Usage: scsitune [global options] COMMAND [options]\n"
	      "\nTune and verify Linux storage hosts with SCSI HBAs (mpi3mr in particular).\n"
	      "\nCommands:\n",
	      f);
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("  help CMD   show help for CMD\n\n", f);
	print_global_options(f);
	fputs("\nExit status: 0 success, 1 error, 2 drift (verify), 3 upload pending (report),\n"
	      "4 gate failed (report: the fleet view's gate), 5 profile changed since apply\n"
	      "(verify), 64 usage error.\n"
	      "See scsitune(8).\n",
	      f);
}

int global_opt(struct global_opts *g, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		if (!strcmp(arg, "json"))
			g->format = OUT_JSON;
		else if (!strcmp(arg, "text"))
			g->format = OUT_TEXT;
		else {
			usage_error(NULL, "--output: unknown format '%s' (expected text or json)", arg);
			return -1;
		}
		return 1;
	case 'R':
		if (!*arg) {
			usage_error(NULL, "--sysroot: empty directory name");
			return -1;
		}
		g->sysroot = arg;
		return 1;
	case 'v':
		g->verbose++;
		return 1;
	case 'V':
		printf("scsitune %s\n", SCSITUNE_VERSION);
		exit(EXIT_OK);
	}
	return 0;
}

int command_opt(struct global_opts *g, const char *cmd, int opt, const char *arg)
{
	int r = global_opt(g, opt, arg);
	if (r > 0)
		return 0;
	if (r == 0)
		fprintf(stderr, "Try 'scsitune %s --help' for more information.\n", cmd);
	return EXIT_USAGE;
}

int command_no_args(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	usage_error(cmd, "%s: unexpected argument '%s'", cmd, argv[optind]);
	return EXIT_USAGE;
}

static void log_stderr(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	const struct global_opts *g = data;
	if (level > STUNE_LOG_NOTICE && g->verbose == 0)
		return;
	const char *tag = level <= STUNE_LOG_ERR ? "error: " : level <= STUNE_LOG_WARNING ? "warning: " : "";
	if (path)
		note_msg("%s%s: %s", tag, path, msg);
	else
		note_msg("%s%s", tag, msg);
}

struct stune_ctx *cli_ctx_open(const struct global_opts *g)
{
	struct stune_ctx *ctx = NULL;
	int r = stune_ctx_new(g->sysroot, &ctx);
	if (r < 0) {
		if (g->sysroot)
			error_msg("--sysroot %s: %s", g->sysroot, strerror(-r));
		else
			error_msg("cannot initialise: %s", strerror(-r));
		return NULL;
	}
	/* A directory without sys/ is a wrong path, not a host without devices. */
	if (g->sysroot && !stune_root_exists(ctx->root, "sys")) {
		error_msg("--sysroot %s: no sys/ directory: not a captured root tree", g->sysroot);
		stune_ctx_free(ctx);
		return NULL;
	}
	/* SCSITUNE_THREADS bounds the scan's worker threads (e.g. 1 on a busy host). */
	const char *env = getenv("SCSITUNE_THREADS");
	if (env) {
		char *end;
		errno = 0;
		long n = strtol(env, &end, 10);
		if (errno || end == env || *end || n < 1 || n > STUNE_MAX_SCAN_THREADS) {
			error_msg("SCSITUNE_THREADS: '%s' is not a number from 1 to %d", env, STUNE_MAX_SCAN_THREADS);
			stune_ctx_free(ctx);
			return NULL;
		}
		ctx->scan_threads = (unsigned)n;
	}
	stune_ctx_set_log(ctx, log_stderr, (void *)g);
	return ctx;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
	struct global_opts g = {.format = OUT_TEXT};
	int c;

	/* '+': global options end at the command name. */
	while ((c = getopt_long(argc, argv, "+" GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'h') {
			main_help(stdout);
			return EXIT_OK;
		}
		int r = global_opt(&g, c, optarg);
		if (r < 0)
			return EXIT_USAGE;
		if (r == 0) {
			fputs("Try 'scsitune --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error(NULL, "no command given");
		return EXIT_USAGE;
	}
	const char *name = argv[optind];
	if (!strcmp(name, "help")) {
		if (optind + 1 >= argc) {
			main_help(stdout);
			return EXIT_OK;
		}
		const struct command *cmd = find_command(argv[optind + 1]);
		if (!cmd) {
			usage_error(NULL, "help: unknown command '%s'", argv[optind + 1]);
			return EXIT_USAGE;
		}
		cmd->help(stdout);
		return EXIT_OK;
	}
	const struct command *cmd = find_command(name);
	if (!cmd) {
		usage_error(NULL, "unknown command '%s'", name);
		return EXIT_USAGE;
	}
	/* The command parses its own options (and the global ones again) from argv[optind]. */
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	optind = 0;
	return cmd->fn(&g, sub_argc, sub_argv);
}
