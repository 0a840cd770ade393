/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune detect: gather the host model, then render it. */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "detect/scan.h"
#include "render-topology.h"
#include "payload/state.h"
#include "cli.h"
#include "commands.h"

void help_detect(FILE *f)
{
	fputs("Usage: scsitune detect [--hba WHICH] [options]\n"
	      "\nShow the host as scsitune sees it: kernel and payload state, CPUs and NUMA\n"
	      "nodes, every SCSI HBA (mpi3mr in particular) with its IRQ locality, SCSI hosts\n"
	      "and disks (one row each, with its stable key). -v adds the disks' queue\n"
	      "settings and counters, the blk-mq queue maps and every IRQ. Read-only.\n"
	      "Problems with single attributes are warnings on stderr.\n"
	      "\nOptions:\n"
	      "      --hba WHICH       only this HBA: its PCI address (0000:17:00.0 or\n"
	      "                        17:00.0), one of its SCSI hosts (host2) or disks\n"
	      "                        (sdb, /dev/sdb, a disk's KEY)\n"
	      "                        or, for one without a PCI function, its /sys path\n\n",
	      f);
	print_global_options(f);
	fputs("\nSee scsitune-detect(8).\n", f);
}

/*
 * --hba WHICH: the index of the HBA WHICH names, SIZE_MAX when none does. As
 * lsblk takes names: its PCI address (with or without the domain) or /sys
 * path; one of its SCSI hosts (host2); or one of its disks (sdb, /dev/sdb,
 * or the disk's key wwn-0x...), which names the HBA behind it.
 */
static size_t find_hba(const struct stune_topology *t, const char *addr)
{
	const char *sys = !strncmp(addr, "/sys/", 5) ? addr + 1 : NULL;
	for (size_t i = 0; i < t->n_hbas; i++) {
		const struct stune_hba *h = &t->hbas[i];
		if (h->pci_address && (!strcmp(h->pci_address, addr) || (strlen(h->pci_address) == strlen(addr) + 5 &&
									 !strcmp(h->pci_address + 5, addr))))
			return i;
		if (sys && h->sysfs_path && !strcmp(h->sysfs_path, sys))
			return i;
	}
	unsigned no;
	char end;
	if (sscanf(addr, "host%u%c", &no, &end) == 1)
		for (size_t i = 0; i < t->n_hosts; i++)
			if (t->hosts[i].host_no == no)
				return t->hosts[i].hba;
	const char *disk = !strncmp(addr, "/dev/", 5) ? addr + 5 : addr;
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if ((d->name && !strcmp(d->name, disk)) || (d->key && !strcmp(d->key, addr)))
			return d->host < t->n_hosts ? t->hosts[d->host].hba : SIZE_MAX;
	}
	return SIZE_MAX;
}

int cmd_detect(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_HBA = 0x100 };
	static const struct option longopts[] = {
	    GLOBAL_LONGOPTS, {"hba", required_argument, NULL, OPT_HBA}, {NULL, 0, NULL, 0}};
	const char *hba = NULL;
	int c;

	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS, longopts, "detect")) != -1) {
		if (c == 'h') {
			help_detect(stdout);
			return EXIT_OK;
		}
		if (c == OPT_HBA) {
			if (!*optarg) {
				usage_error("detect", "detect: --hba: empty address");
				return EXIT_USAGE;
			}
			hba = optarg;
			continue;
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
	/* The default text shows of each disk its row only: the rest is not read. */
	bool brief = g->format == OUT_TEXT && !g->verbose;
	int r = brief ? stune_topology_scan_brief(ctx, &t) : stune_topology_scan(ctx, &t);
	if (r < 0) {
		error_msg("detect failed: %s", strerror(-r));
		return EXIT_ERROR;
	}
	size_t only = SIZE_MAX;
	if (hba && (only = find_hba(t, hba)) == SIZE_MAX) {
		_cleanup_free_ char *list = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&list, &len);
		for (size_t i = 0; m && i < t->n_hbas; i++)
			fprintf(m, "%s%s%s", i ? ", " : "", t->hbas[i].pci_address ? "" : "/",
				t->hbas[i].pci_address ? t->hbas[i].pci_address : t->hbas[i].sysfs_path);
		if (m)
			fclose(m);
		error_msg("--hba %s: no such HBA, SCSI host or disk on this host (HBAs: %s)", hba,
			  list && *list ? list : "none");
		return EXIT_ERROR;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	/* The payload's state, from the code payload verify runs (its cheap links only). */
	_cleanup_(stune_payload_status_freep) struct stune_payload_status *ps = NULL;
	if (stune_payload_state(ctx, NULL, NULL, 0, NULL, &ps) < 0)
		ps = NULL;
	render_topology(o, t, g->sysroot, g->verbose, only, ps);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
