/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/provenance.h"
#include "report/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/userfile.h"
#include "core/ctx.h"
#include "core/macro.h"
#include "detect/topology.h"
#include "payload/state.h"
#include "report/fiorun.h"
#include "tune/journal.h"
#include "tune/verify.h"

const struct stune_hba *stune_device_hba(const struct stune_topology *t, const char *dev, bool sysroot)
{
	struct stat st;
	char mm[32] = "";
	const char *base = strrchr(dev, '/');
	base = base ? base + 1 : dev;
	_cleanup_free_ char *real = realpath(dev, NULL);
	bool blk = stat(dev, &st) == 0 && S_ISBLK(st.st_mode);
	if (blk) {
		snprintf(mm, sizeof(mm), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
		if (real && strrchr(real, '/'))
			base = strrchr(real, '/') + 1;
	}
	if (!blk && !sysroot)
		return NULL;
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if ((sysroot && d->name && !strcmp(d->name, base)) || (*mm && d->devnum && !strcmp(d->devnum, mm)) ||
		    (blk && d->name && !strcmp(d->name, base)))
			return d->host < t->n_hosts ? &t->hbas[t->hosts[d->host].hba] : NULL;
	}
	return NULL;
}

int stune_mpi3mr_devices(const struct stune_topology *t, char ***devs, size_t *n)
{
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if (!d->name || d->host >= t->n_hosts || t->hbas[t->hosts[d->host].hba].kind != STUNE_HBA_MPI3MR)
			continue;
		char **nv = realloc(*devs, (*n + 2) * sizeof(char *));
		if (!nv)
			return -ENOMEM;
		*devs = nv;
		if (asprintf(&nv[*n], "/dev/%s", d->name) < 0) {
			nv[*n] = NULL;
			return -ENOMEM;
		}
		nv[++*n] = NULL;
	}
	return 0;
}

const struct stune_hba *stune_first_mpi3mr_hba(const struct stune_topology *t)
{
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if (d->host < t->n_hosts && t->hbas[t->hosts[d->host].hba].kind == STUNE_HBA_MPI3MR)
			return &t->hbas[t->hosts[d->host].hba];
	}
	return NULL;
}

void stune_provenance_host(struct stune_provenance *p, const struct stune_topology *t, const struct stune_hba *hba,
			   bool sysroot, const char *hostname)
{
	const struct stune_kernel *k = &t->kernel;
	p->host = sysroot && k->hostname ? k->hostname : (*hostname ? hostname : k->hostname);
	p->kernel = k->release;
	for (size_t i = 0; i < k->n_modules; i++)
		if (!strcmp(k->modules[i].name, "scsi_mod"))
			p->payload_version = k->modules[i].version;
	if (hba) {
		p->have_hba = true;
		p->hba_model = hba->model;
		p->hba_firmware = hba->firmware;
		p->hba_pci_address = hba->pci_address;
		p->hba_driver = hba->driver;
		p->hba_numa_node = hba->numa_node;
	}
}

void stune_provenance_payload(struct stune_ctx *ctx, struct stune_provenance *p)
{
	_cleanup_(stune_payload_status_freep) struct stune_payload_status *s = NULL;
	p->payload_state =
	    stune_payload_state(ctx, NULL, NULL, 0, NULL, &s) == 0 ? stune_payload_verdict_name(s->verdict) : NULL;
}

/* The journal's own state: applied, incomplete (pending or failed entries), partly-reverted. */
static const char *journal_state(const struct stune_journal *j)
{
	size_t bad = 0, reverted = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (j->entries[i].state == STUNE_J_PENDING || j->entries[i].state == STUNE_J_FAILED)
			bad++;
		if (j->entries[i].state == STUNE_J_REVERTED)
			reverted++;
	}
	return reverted ? "partly-reverted" : bad ? "incomplete" : "applied";
}

void stune_provenance_profile(struct stune_ctx *ctx, const char *state_dir, const struct stune_topology *t,
			      const char *profile_dir, struct stune_provenance *p, struct stune_journal **journal)
{
	int r = stune_journal_load(state_dir, journal);
	p->profile_journal_dir = state_dir;
	if (r == -ENOENT) {
		p->profile_note = "no applied profile: no apply journal; stock settings, or reverted";
		p->profile_verify_state = "none-applied";
		return;
	}
	if (r < 0 || !*journal) {
		p->profile_note = "apply journal unreadable: profile unknown";
		stune_log(ctx, STUNE_LOG_WARNING, NULL, "%s/journal.json: %s", state_dir, stune_journal_strerror(r));
		return;
	}
	const struct stune_journal *j = *journal;
	p->profile = j->profile;
	p->profile_digest = j->digest;
	p->profile_journal_state = journal_state(j);

	struct stune_verify_summary v;
	_cleanup_free_ char *err = NULL;
	r = stune_verify_journal(t, j, profile_dir, &v, &err);
	if (r < 0) {
		p->profile_note = "from apply's journal; verify_state unknown: the profile could not be read";
		stune_log(ctx, STUNE_LOG_WARNING, NULL, "verify_state unknown: %s",
			  err		  ? err
			  : r == -EBADMSG ? "the journal names no profile file"
					  : strerror(-r));
		return;
	}
	p->profile_verify_state = v.drifted ? "drifted" : v.profile_changed_rows ? "profile-changed" : "in-effect";
	p->profile_verify_drifted = STUNE_NUM((int64_t)v.drifted);
	p->profile_note =
	    v.profile_changed ? "from apply's journal; verify_state as scsitune verify: the profile file "
				"changed since it was applied; profile-changed: settings only the new file asks "
				"for, drifted: the host changed what apply wrote"
	    : p->host_facts   ? "from apply's journal; verify_state as scsitune verify, when the files were reported"
			      : "from apply's journal; verify_state as scsitune verify, before the runs";
}

/* The node to bind to, or -1 with the reason in p->binding_note. */
static int choose_node(struct stune_provenance *p, const struct stune_hba *hba, const struct stune_bind_opts *o)
{
	if (o->node_set)
		return o->node;
	if (!hba && o->job_file)
		p->binding_note = "--job-file: its devices are not looked up: no node to bind to (--node N binds)";
	else if (!hba)
		p->binding_note = "the devices are not behind an HBA detect knows: no node to bind to";
	else if (!hba->numa_node.set)
		p->binding_note = "the HBA's numa_node is unknown: not bound";
	else if (hba->numa_node.v < 0)
		p->binding_note = "no locality: the HBA's numa_node is -1: not bound";
	else if (o->sysroot)
		p->binding_note = "--sysroot: the tree is not this host: not bound (--node N binds)";
	else
		return (int)hba->numa_node.v;
	return -1;
}

int stune_provenance_bind(struct stune_ctx *ctx, struct stune_provenance *p, const struct stune_hba *hba,
			  const struct stune_bind_opts *o, struct stune_numa_binder **binder, char **cpus, char **note,
			  char **err)
{
	p->bound_node = -1;
	int node = choose_node(p, hba, o);
	if (node < 0) {
		stune_log(ctx, STUNE_LOG_NOTICE, NULL, "%s", p->binding_note);
		return 0;
	}
	_cleanup_free_ char *lerr = NULL;
	int r = stune_numa_binder_open(binder, &lerr);
	if (r < 0) {
		if (asprintf(note, "libnuma: %s: not bound", lerr ? lerr : strerror(-r)) < 0) {
			*note = NULL;
			return -ENOMEM;
		}
		p->binding_note = *note;
		stune_log(ctx, STUNE_LOG_WARNING, NULL, "%s", *note);
		return 0;
	}
	r = stune_numa_binder_node_cpus(*binder, node, cpus);
	if (r < 0 || !**cpus) {
		if (asprintf(err, "%s %d: no such NUMA node on this host (libnuma: %s)",
			     o->node_set ? "--node" : "HBA numa_node", node, r < 0 ? strerror(-r) : "no CPUs") < 0)
			*err = NULL;
		return -EINVAL;
	}
	p->bound_node = node;
	p->bound_cpus = *cpus;
	stune_log(ctx, STUNE_LOG_INFO, NULL, "binding fio to NUMA node %d (CPUs %s) with libnuma numa_run_on_node",
		  node, *cpus);
	return 0;
}
