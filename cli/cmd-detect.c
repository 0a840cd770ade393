/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune detect: gather the host model, then render it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "detect/scan.h"
#include "render.h"
#include "scsitune.h"

void help_detect(FILE *f)
{
	fputs("Usage: scsitune detect [options]\n"
	      "\nShow the host as scsitune sees it: kernel and payload state, CPUs and NUMA\n"
	      "nodes, every SCSI HBA (mpi3mr in particular) with its SCSI hosts, IRQs and blk-mq\n"
	      "queue map, and every SCSI disk with its stable key and queue settings.\n"
	      "Read-only. Problems with single attributes are warnings on stderr.\n\n",
	      f);
	print_global_options(f);
	fputs("\nSee scsitune-detect(8).\n", f);
}

int cmd_detect(struct global_opts *g, int argc, char **argv)
{
	static const struct option longopts[] = {GLOBAL_LONGOPTS, {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'h') {
			help_detect(stdout);
			return EXIT_OK;
		}
		int ec = command_opt(g, "detect", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("detect", argc, argv))
		return EXIT_USAGE;

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	int r = stune_topology_scan(ctx, &t);
	if (r < 0) {
		error_msg("detect failed: %s", strerror(-r));
		return EXIT_ERROR;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	render_topology(o, t, g->sysroot);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
