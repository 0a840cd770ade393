/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "report/runner.h"
#include "report/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/strv.h"
#include "core/trust.h"
#include "detect/scan.h"
#include "report/fio.h"
#include "report/resultset.h"
#include "tune/journal.h"

void stune_run_clear(struct stune_run *rs)
{
	stune_topology_free(rs->topo);
	free(rs->fio_path);
	free(rs->fio_version);
	free(rs->rundir);
	free(rs->cpus);
	free(rs->note);
	stune_strv_free(rs->fio_args);
	stune_strv_free(rs->default_devices);
	stune_journal_free(rs->journal);
	free(rs->journal_dir);
	for (size_t i = 0; i < rs->n_files; i++)
		free(rs->files[i]);
	free(rs->files);
	*rs = (struct stune_run){0};
}

/* fio found and working. */
static int find_fio(const struct stune_run_opts *o, struct stune_run *rs, char **err)
{
	int r = stune_fio_find(o->fio ? o->fio : "fio", &rs->fio_path);
	if (r < 0)
		return o->fio ? stune_errf(err, r, "--fio %s: %s", o->fio, strerror(-r))
			      : stune_errf(err, r, "fio: not found in PATH (install fio, or give --fio PATH)");
	if ((r = stune_fio_version(rs->fio_path, &rs->fio_version)) < 0)
		return stune_errf(err, r, "%s: not a working fio ('%s --version' failed)", rs->fio_path, rs->fio_path);
	return 0;
}

/* The devices (given, or the mpi3mr disks), each checked, and the HBA of the first. */
static int choose_devices(struct stune_ctx *ctx, const struct stune_run_opts *o, struct stune_run *rs,
			  char *const **devices, size_t *n_devices, const struct stune_hba **hba, char **err)
{
	int r;
	*devices = o->devices;
	*n_devices = o->n_devices;
	if (!o->job.job_file && o->n_devices == 0) {
		size_t n = 0;
		if ((r = stune_mpi3mr_devices(rs->topo, &rs->default_devices, &n)) < 0)
			return stune_errf(err, r, "out of memory");
		if (n == 0)
			return stune_errf(
			    err, -ENOENT,
			    "--run: no disk behind an mpi3mr HBA found: name the devices with --device DEV");
		*devices = rs->default_devices;
		*n_devices = n;
	}
	*hba = NULL;
	for (size_t i = 0; i < *n_devices; i++) {
		const char *dev = (*devices)[i];
		struct stat st;
		if (stat(dev, &st) < 0)
			return stune_errf(err, negative_errno(), "--device %s: %s", dev, strerror(errno));
		if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
			return stune_errf(err, -EINVAL, "--device %s: not a block device or a regular file", dev);
		const struct stune_hba *h = stune_device_hba(rs->topo, dev, o->sysroot);
		if (!*hba)
			*hba = h;
		else if (h && h != *hba)
			stune_log(ctx, STUNE_LOG_WARNING, NULL,
				  "--device %s is behind another HBA (%s) than the first device's", dev,
				  h->pci_address ? h->pci_address : "?");
	}
	return 0;
}

/* fio's argv without the program and the per-run --output=: the job, for the provenance. */
static void job_args(char **args)
{
	for (size_t a = 0, b = 0;; a++) {
		if (args[a] && (a == 0 || !strncmp(args[a], "--output=", 9))) {
			free(args[a]);
			continue;
		}
		if (!(args[b++] = args[a]))
			break;
	}
}

struct tick_ctx {
	const struct stune_run_cb *cb;
	struct stune_run_progress *p;
};

static void on_tick(void *data, unsigned elapsed)
{
	struct tick_ctx *t = data;
	t->p->elapsed = elapsed;
	if (t->cb && t->cb->tick)
		t->cb->tick(t->cb->data, t->p);
}

/* The N runs, outputs named after the provenance's start time. */
static int run_all(struct stune_ctx *ctx, const struct stune_run_opts *o, const struct stune_run_cb *cb,
		   struct stune_run *rs, struct stune_numa_binder *binder, char **err)
{
	struct stune_provenance *p = &rs->prov;
	_cleanup_free_ char *stamp = NULL;
	int r;
	if ((r = stune_resultset_name(p->start_ms, &stamp)) < 0 || !(rs->files = calloc(o->runs, sizeof(char *))))
		return stune_errf(err, -ENOMEM, "out of memory");
	stamp[strlen(stamp) - 5] = '\0'; /* no ".json" */
	struct stune_run_progress pr = {.n = o->runs, .per_run_s = o->job.job_file ? 0 : o->job.runtime_s};
	struct tick_ctx tc = {.cb = cb, .p = &pr};
	for (unsigned i = 0; i < o->runs; i++) {
		_cleanup_free_ char *errpath = NULL, *serr = NULL;
		if (asprintf(&rs->files[i], "%s/%s-run%u.json", rs->rundir, stamp, i + 1) < 0 ||
		    asprintf(&errpath, "%s/%s-run%u.stderr", rs->rundir, stamp, i + 1) < 0) {
			rs->files[i] = NULL;
			return stune_errf(err, -ENOMEM, "out of memory");
		}
		rs->n_files = i + 1;
		struct stune_fio_spawn sp = {.fio = rs->fio_path,
					     .job = &o->job,
					     .devices = p->devices,
					     .n_devices = p->n_devices,
					     .output = rs->files[i],
					     .stderr_path = errpath,
					     .binder = p->bound_node >= 0 ? binder : NULL,
					     .node = p->bound_node,
					     .tick = on_tick,
					     .tick_data = &tc};
		if (i == 0) {
			if ((r = stune_fio_argv(&sp, &rs->fio_args)) < 0)
				return stune_errf(err, r, "out of memory");
			job_args(rs->fio_args);
			p->fio_args = rs->fio_args;
		}
		pr.k = i + 1;
		on_tick(&tc, 0);
		r = stune_fio_spawn_run(&sp, &serr);
		if (cb && cb->ended)
			cb->ended(cb->data, &pr);
		if (r < 0)
			return stune_errf(err, r, "fio run %u of %u: %s (output kept: %s, %s)", i + 1, o->runs,
					  serr ? serr : strerror(-r), rs->files[i], errpath);
		_cleanup_(stune_fio_run_freep) struct stune_fio_run *fr = NULL;
		_cleanup_free_ char *perr = NULL;
		if ((r = stune_fio_parse_file(ctx, rs->files[i], &fr, &perr)) < 0)
			return stune_errf(err, r, "fio run %u of %u: %s: %s", i + 1, o->runs, rs->files[i],
					  perr ? perr : strerror(-r));
		if (cb && cb->done)
			cb->done(cb->data, &pr, fr, rs->files[i]);
	}
	return 0;
}

int stune_run_host_facts(struct stune_ctx *ctx, const struct stune_run_opts *o, struct stune_run *rs, char **err)
{
	struct stune_provenance *p = &rs->prov;
	int r = stune_topology_scan_for_plan(ctx, &rs->topo);
	if (r < 0)
		return stune_errf(err, r, "detect: %s", strerror(-r));
	if (gethostname(rs->host, sizeof(rs->host) - 1) < 0)
		rs->host[0] = '\0';
	p->host_facts = true;
	stune_provenance_host(p, rs->topo, stune_first_mpi3mr_hba(rs->topo), o->sysroot, rs->host);
	stune_provenance_payload(ctx, p);
	if (!(rs->journal_dir = strdup(o->journal_dir)))
		return -ENOMEM;
	stune_provenance_profile(ctx, rs->journal_dir, rs->topo, o->profile_dir, p, &rs->journal);
	p->bound_node = -1;
	p->start_ms = (int64_t)time(NULL) * 1000;
	return 0;
}

int stune_run_fio(struct stune_ctx *ctx, const struct stune_run_opts *o, const struct stune_run_cb *cb,
		  struct stune_run *rs, char **err)
{
	struct stune_provenance *p = &rs->prov;
	int r;
	if ((r = find_fio(o, rs, err)) < 0)
		return r;
	if ((r = stune_topology_scan_for_plan(ctx, &rs->topo)) < 0)
		return stune_errf(err, r, "detect: %s", strerror(-r));
	char *const *devices = NULL;
	size_t n_devices = 0;
	const struct stune_hba *hba = NULL;
	if ((r = choose_devices(ctx, o, rs, &devices, &n_devices, &hba, err)) < 0)
		return r;
	_cleanup_(stune_numa_binder_freep) struct stune_numa_binder *binder = NULL;
	struct stune_bind_opts bo = {
	    .node_set = o->node_set, .node = o->node, .job_file = o->job.job_file != NULL, .sysroot = o->sysroot};
	if ((r = stune_provenance_bind(ctx, p, hba, &bo, &binder, &rs->cpus, &rs->note, err)) < 0)
		return r;
	if ((r = stune_resultset_rundir(o->state_dir, &rs->rundir)) < 0)
		return stune_errf(err, r, "--state-dir %s: creating %s/runs: %s", o->state_dir, o->state_dir,
				  stune_state_strerror(r, 0));

	/* Provenance: detect's model (the --sysroot tree's under --sysroot). */
	if (gethostname(rs->host, sizeof(rs->host) - 1) < 0)
		rs->host[0] = '\0';
	stune_provenance_host(p, rs->topo, hba, o->sysroot, rs->host);
	stune_provenance_payload(ctx, p);
	if (!(rs->journal_dir = strdup(o->journal_dir)))
		return -ENOMEM;
	stune_provenance_profile(ctx, rs->journal_dir, rs->topo, o->profile_dir, p, &rs->journal);
	p->fio_path = rs->fio_path;
	p->fio_version = rs->fio_version;
	p->devices = devices;
	p->n_devices = n_devices;
	p->job_file = o->job.job_file;
	p->readonly = !o->job.destructive;
	p->runs = o->runs;
	p->start_ms = (int64_t)time(NULL) * 1000;
	return run_all(ctx, o, cb, rs, binder, err);
}
