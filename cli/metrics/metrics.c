/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune metrics [--textfile DIR]: the host's state (payload, profile,
 * drift, HBAs and IRQ placement, the last results) in Prometheus's text
 * format, on stdout or as DIR/scsitune.prom for node_exporter's textfile
 * collector (written whole or not at all).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/statefile.h"
#include "cli.h"
#include "commands.h"
#include "gather.h"
#include "statedir.h"

#define PROM_FILE "scsitune.prom"

void help_metrics(FILE *f)
{
	fputs("Usage: scsitune metrics [--textfile DIR] [options]\n"
	      "\nPrint the host's state in Prometheus's text format (0.0.4): the payload and\n"
	      "the applied profile as payload verify and verify see them, the HBAs and where\n"
	      "their IRQ vectors are served, and the newest saved result set of each phase.\n"
	      "A drifted profile or no payload is a state, not an error.\n"
	      "\nOptions:\n"
	      "      --textfile DIR       write DIR/" PROM_FILE " (mode 0644, replaced whole)\n"
	      "                           for node_exporter's textfile collector, not stdout\n"
	      "      --state-dir DIR      where the journal and the result sets are (default\n"
	      "                           " STUNE_STATE_DIR ", inside the --sysroot tree)\n"
	      "      --profile-dir DIR    where the journal's profile name is looked up\n"
	      "                           (default: the journal's)\n"
	      "      --per-disk           also each disk (scsitune_disk_info) and its settings\n"
	      "                           by verify state: one series per disk and state\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 written, 1 error (nothing written: an existing\n"
	      "DIR/" PROM_FILE " is left as it was), 64 usage.\n"
	      "See scsitune-metrics(8).\n",
	      f);
}

/* --textfile DIR: a directory, checked before anything is read. */
static int check_textfile_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		int e = errno;
		error_msg("--textfile %s: %s", dir, strerror(e));
		if (e == ENOENT) {
			_cleanup_free_ char *q = cli_shell_quote(dir);
			hint_msg(
			    "it is node_exporter's --collector.textfile.directory (Debian's prometheus-node-exporter "
			    "makes /var/lib/prometheus/node-exporter); to make it: mkdir -p %s",
			    q ? q : dir);
		}
		return EXIT_ERROR;
	}
	if (!S_ISDIR(st.st_mode)) {
		error_msg("--textfile %s: not a directory", dir);
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static int emit(const char *textfile, const char *text, size_t len, int verbose)
{
	if (!textfile) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
			error_msg("writing output: %s", strerror(errno));
			return EXIT_ERROR;
		}
		return EXIT_OK;
	}
	_cleanup_free_ char *final = NULL;
	int r = stune_write_atomic(textfile, PROM_FILE, text, len, 0644, &final);
	if (r < 0) {
		error_msg("writing %s/%s: %s (the file there is left as it was)", textfile, PROM_FILE, strerror(-r));
		return EXIT_ERROR;
	}
	if (verbose)
		note_msg("wrote %s", final);
	return EXIT_OK;
}

/* The options; EXIT_OK to go on, else the exit code (help printed, usage error). */
static int metrics_options(struct global_opts *g, int argc, char **argv, struct metrics_state *m, const char **textfile,
			   bool *help)
{
	enum { OPT_TEXTFILE = 0x100, OPT_STATE_DIR, OPT_PROFILE_DIR, OPT_PER_DISK };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"textfile", required_argument, NULL, OPT_TEXTFILE},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"profile-dir", required_argument, NULL, OPT_PROFILE_DIR},
						 {"per-disk", no_argument, NULL, OPT_PER_DISK},
						 {NULL, 0, NULL, 0}};
	int c;
	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS, longopts, "metrics")) != -1) {
		switch (c) {
		case 'h':
			help_metrics(stdout);
			*help = true;
			return EXIT_OK;
		case OPT_PER_DISK:
			m->per_disk = true;
			continue;
		case OPT_TEXTFILE:
		case OPT_STATE_DIR:
		case OPT_PROFILE_DIR:
			if (!*optarg) {
				usage_error("metrics", "metrics: empty argument");
				return EXIT_USAGE;
			}
			*(c == OPT_TEXTFILE ? textfile : c == OPT_STATE_DIR ? &m->state_opt : &m->profile_dir) = optarg;
			continue;
		}
		int ec = command_opt(g, "metrics", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("metrics", argc, argv))
		return EXIT_USAGE;
	if (g->format == OUT_JSON) {
		usage_error("metrics", "metrics: the output is Prometheus's text format; -o json is not one");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_metrics(struct global_opts *g, int argc, char **argv)
{
	_cleanup_(metrics_state_clear) struct metrics_state m = {0};
	const char *textfile = NULL;
	bool help = false;
	int ec = metrics_options(g, argc, argv, &m, &textfile, &help);
	if (ec != EXIT_OK || help)
		return ec;
	if (textfile && check_textfile_dir(textfile) != EXIT_OK)
		return EXIT_ERROR;

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	/* verify's shared lock: never a half-applied host counted. */
	_cleanup_close_ int lock = -1;
	if (cli_lock_shared(ctx, m.state_opt, &lock) != EXIT_OK || metrics_read_profile(ctx, &m) != EXIT_OK ||
	    metrics_read_payload(ctx, &m) != EXIT_OK || metrics_read_reports(&m) != EXIT_OK)
		return EXIT_ERROR;

	_cleanup_(stune_prom_freep) struct stune_prom *w = NULL;
	const char *text;
	size_t len;
	int r = stune_prom_new(&w);
	if (r < 0 || (r = metrics_write(w, &m)) < 0 || (r = stune_prom_text(w, &text, &len)) < 0) {
		error_msg("metrics: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return emit(textfile, text, len, g->verbose);
}
