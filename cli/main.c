/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/scan.h"
#include "cli.h"
#include "commands.h"

/* The one version: project(VERSION) in CMakeLists.txt (docs/version checks the rest agree). */
#ifndef SCSITUNE_VERSION
#error "SCSITUNE_VERSION is defined by CMakeLists.txt from the project version"
#endif

/* Exact-match command table: a tool that writes system state never guesses. */
static const struct command commands[] = {
    {"apply", cmd_apply, "apply a tuning profile, old values journaled, or print its plan", help_apply},
    {"detect", cmd_detect, "show HBAs, NUMA topology, IRQs, disks and kernel/payload state", help_detect},
    {"metrics", cmd_metrics, "the host's state as Prometheus metrics, for node_exporter", help_metrics},
    {"payload", cmd_payload, "patched kernel modules: pack, install, verify, remove, enroll", help_payload},
    {"profile", cmd_profile, "the tuning profiles there are, and the one the last apply used", help_profile},
    {"report", cmd_report, "fio results: per-run IOPS and latency, spread across runs, compare", help_report},
    {"revert", cmd_revert, "put back the values the last apply changed, from its journal", help_revert},
    {"verify", cmd_verify, "check that a tuning profile is in effect, or what drifted", help_verify},
};

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

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void help_help(FILE *f)
{
	fputs("Usage: scsitune help [COMMAND]\n"
	      "\nPrint the usage of scsitune, or of COMMAND, and exit 0. The same as\n"
	      "'scsitune COMMAND --help' and 'scsitune --help COMMAND'.\n"
	      "\nSee scsitune(8).\n",
	      f);
}

/* "unknown command 'x'" with the nearest name; EXIT_USAGE. */
static int unknown_command(const char *what, const char *name)
{
	const char *names[ELEMENTSOF(commands) + 1];
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		names[i] = commands[i].name;
	names[ELEMENTSOF(commands)] = "help";
	char mean[128];
	usage_error(NULL, "%sunknown command '%s'%s", what, name,
		    did_you_mean(mean, sizeof(mean), "", name, names, ELEMENTSOF(names)));
	return EXIT_USAGE;
}

/* Help for name (a command, or help itself); an unknown name is a usage error. */
static int help_for(const char *name)
{
	if (!strcmp(name, "help")) {
		help_help(stdout);
		return EXIT_OK;
	}
	const struct command *cmd = find_command(name);
	if (!cmd)
		return unknown_command("help: ", name);
	cmd->help(stdout);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
	struct global_opts g = {.format = OUT_TEXT};
	bool help = false;
	int c;

	/* '+': global options end at the command name. */
	while ((c = cli_getopt(argc, argv, "+" GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == '?')
			return EXIT_USAGE;
		if (c == 'h') {
			help = true; /* scsitune --help [COMMAND] */
			continue;
		}
		int r = global_opt(&g, c, optarg);
		if (r == CLI_NOT_MINE) {
			fputs("Try 'scsitune --help' for more information.\n", stderr);
			return EXIT_USAGE;
		}
		if (r != CLI_GO_ON)
			return r;
	}
	if (help) {
		if (optind >= argc) {
			main_help(stdout);
			return EXIT_OK;
		}
		return help_for(argv[optind]);
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
		return help_for(argv[optind + 1]);
	}
	const struct command *cmd = find_command(name);
	if (!cmd)
		return unknown_command("", name);
	/* The command parses its own options (and the global ones again) from argv[optind]. */
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	optind = 0;
	return cmd->fn(&g, sub_argc, sub_argv);
}
