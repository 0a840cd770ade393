/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SCSI disks: block devices whose `device` is a SCSI device H:C:T:L, their
 * queue settings, sdev attributes, counters and stable keys, and each host's
 * blk-mq hardware-queue → CPU map.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/devices.h"
#include "detect/gather.h"
#include "detect/scan.h"

static char *trim(char *s)
{
	if (!s)
		return NULL;
	char *b = s;
	while (*b == ' ')
		b++;
	size_t n = strlen(b);
	while (n > 0 && b[n - 1] == ' ')
		n--;
	memmove(s, b, n);
	s[n] = '\0';
	return s;
}

/* "[mq-deadline] kyber none" → selected and list. A bare "none" is selected. */
static int parse_scheduler(struct stune_ctx *ctx, const char *qdir, struct stune_disk *d)
{
	_cleanup_free_ char *text = NULL;
	if (stune_attr_str(ctx, &text, 0, "%s/scheduler", qdir) < 0)
		return 0;
	size_t n = 0;
	char **list = calloc(1, sizeof(char *));
	char *sel = NULL, *save = NULL;
	if (!list)
		return -ENOMEM;
	for (char *tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		size_t len = strlen(tok);
		bool selected = len > 2 && tok[0] == '[' && tok[len - 1] == ']';
		char *name = selected ? strndup(tok + 1, len - 2) : strdup(tok);
		char **nl = name ? realloc(list, (n + 2) * sizeof(char *)) : NULL;
		if (!nl) {
			free(name);
			stune_strv_free(list);
			free(sel);
			return -ENOMEM;
		}
		list = nl;
		list[n++] = name;
		list[n] = NULL;
		if (selected && !sel && !(sel = strdup(name))) {
			stune_strv_free(list);
			return -ENOMEM;
		}
	}
	if (!sel && n == 1 && !(sel = strdup(list[0]))) {
		stune_strv_free(list);
		return -ENOMEM;
	}
	if (!sel) {
		_cleanup_free_ char *p = NULL;
		if (asprintf(&p, "%s/scheduler", qdir) >= 0)
			stune_warn_path(ctx, p, "no selected scheduler");
	}
	d->scheduler = sel;
	d->schedulers = list;
	return 0;
}

static int disk_cmp(const void *a, const void *b)
{
	const struct stune_disk *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->c != y->c)
		return x->c < y->c ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->l != y->l)
		return x->l < y->l ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The sysfs part of one disk: thread-safe (reads only, the root layer's
 * cache is locked, messages go to the calling thread's capture). Returns 1
 * when bdir is not a SCSI disk of a listed host.
 */
static int scan_sysfs(struct stune_ctx *ctx, const struct stune_topology *t, const char *bdir, struct stune_disk *d)
{
	_cleanup_free_ char *devlink = NULL, *sdev = NULL, *qdir = NULL;
	int r;

	if ((r = stune_path_join(&devlink, bdir, "device")) < 0)
		return r;
	if (stune_root_resolve(ctx->root, devlink, &sdev) < 0)
		return 1; /* no device link: not a SCSI disk (loop, zram...) */
	char tail;
	if (sscanf(stune_path_basename(sdev), "%u:%u:%u:%u%c", &d->h, &d->c, &d->t, &d->l, &tail) != 4)
		return 1; /* virtio-blk, nvme: not SCSI */

	bool found = false;
	for (size_t i = 0; i < t->n_hosts; i++)
		if (t->hosts[i].host_no == d->h) {
			d->host = i;
			found = true;
		}
	if (!found) {
		stune_warn_path(ctx, bdir, "SCSI host %u is not listed in sys/class/scsi_host, disk skipped", d->h);
		return 1;
	}
	if (!(d->name = strdup(stune_path_basename(bdir))) || !(d->hctl = strdup(stune_path_basename(sdev))))
		return -ENOMEM;

	stune_attr_str(ctx, &d->devnum, 0, "%s/dev", bdir);
	struct stune_num sectors;
	if (stune_attr_num(ctx, &sectors, 0, "%s/size", bdir) == 0) {
		if (sectors.v >= 0 && sectors.v <= INT64_MAX / 512) /* always 512-byte units */
			d->size_bytes = STUNE_NUM(sectors.v * 512);
		else
			stune_warn_path(ctx, bdir, "size: %lld sectors is out of range", (long long)sectors.v);
	}

	if ((r = asprintf(&qdir, "%s/queue", bdir)) < 0)
		return -ENOMEM;
	if ((r = parse_scheduler(ctx, qdir, d)) < 0)
		return r;
	stune_attr_num(ctx, &d->rotational, 0, "%s/rotational", qdir);
	stune_attr_num(ctx, &d->nr_requests, 0, "%s/nr_requests", qdir);
	stune_attr_num(ctx, &d->rq_affinity, 0, "%s/rq_affinity", qdir);
	stune_attr_num(ctx, &d->nomerges, 0, "%s/nomerges", qdir);
	stune_attr_num(ctx, &d->read_ahead_kb, 0, "%s/read_ahead_kb", qdir);
	stune_attr_num(ctx, &d->add_random, 0, "%s/add_random", qdir);
	stune_attr_num(ctx, &d->io_poll, STUNE_ATTR_OPTIONAL, "%s/io_poll", qdir);

	stune_attr_str(ctx, &d->vendor, 0, "%s/vendor", sdev);
	stune_attr_str(ctx, &d->model, 0, "%s/model", sdev);
	stune_attr_str(ctx, &d->rev, STUNE_ATTR_OPTIONAL, "%s/rev", sdev);
	trim(d->vendor);
	trim(d->model);
	trim(d->rev);
	stune_attr_num(ctx, &d->scsi_type, STUNE_ATTR_OPTIONAL, "%s/type", sdev);
	stune_attr_num(ctx, &d->queue_depth, 0, "%s/queue_depth", sdev);
	stune_attr_str(ctx, &d->state, STUNE_ATTR_OPTIONAL, "%s/state", sdev);
	stune_attr_num(ctx, &d->iocounterbits, STUNE_ATTR_OPTIONAL, "%s/iocounterbits", sdev);
	struct stune_num *ctr[] = {&d->iorequest_cnt, &d->iodone_cnt, &d->ioerr_cnt, &d->iotmo_cnt};
	const char *ctr_name[] = {"iorequest_cnt", "iodone_cnt", "ioerr_cnt", "iotmo_cnt"};
	for (size_t i = 0; i < ELEMENTSOF(ctr); i++) {
		if (stune_attr_num(ctx, ctr[i], STUNE_ATTR_OPTIONAL, "%s/%s", sdev, ctr_name[i]) < 0)
			continue;
		/* Stock 6.1 prints a sign-extended atomic_t: reduce mod 2^iocounterbits. */
		if (d->iocounterbits.set && d->iocounterbits.v > 0 && d->iocounterbits.v < 64)
			ctr[i]->v = (int64_t)((uint64_t)ctr[i]->v & ((UINT64_C(1) << d->iocounterbits.v) - 1));
	}

	return 0;
}

/* Stable key from udev: WWN, else ID_PATH, else H:C:T:L. Not thread-safe (libudev). */
static int scan_keys(struct stune_ctx *ctx, const char *bdir, struct stune_disk *d)
{
	_cleanup_free_ char *dbid = NULL;
	int r;
	struct stune_props props;
	if (d->devnum && asprintf(&dbid, "b%s", d->devnum) < 0)
		return -ENOMEM;
	if ((r = stune_props_load(ctx, bdir, dbid ? dbid : "", &props)) < 0)
		return r;
	const char *wwn_ext = stune_props_get(&props, "ID_WWN_WITH_EXTENSION");
	const char *wwn = wwn_ext ?: stune_props_get(&props, "ID_WWN");
	const char *path = stune_props_get(&props, "ID_PATH");
	const char *serial = stune_props_get(&props, "ID_SERIAL_SHORT") ?: stune_props_get(&props, "ID_SERIAL");
	d->wwn = wwn ? strdup(wwn) : NULL;
	d->id_path = path ? strdup(path) : NULL;
	d->serial = serial ? strdup(serial) : NULL;
	stune_props_clear(&props);
	if (d->wwn) {
		r = asprintf(&d->key, "wwn-%s", d->wwn);
		d->key_source = wwn_ext ? "ID_WWN_WITH_EXTENSION" : "ID_WWN";
	} else if (d->id_path) {
		r = asprintf(&d->key, "path-%s", d->id_path);
		d->key_source = "ID_PATH";
	} else {
		r = asprintf(&d->key, "hctl-%s", d->hctl);
		d->key_source = "hctl";
	}
	return r < 0 ? -ENOMEM : 0;
}

static int hctx_cmp(const void *a, const void *b)
{
	const struct stune_hctx *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The blk-mq map a host's tag set uses, read from one of its disks. */
static int scan_hctx(struct stune_ctx *ctx, const char *bdir, struct stune_host *h)
{
	_cleanup_free_ char *mq = NULL;
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	int r;

	if (asprintf(&mq, "%s/mq", bdir) < 0)
		return -ENOMEM;
	if ((r = stune_root_opendir(ctx->root, mq, &dir)) < 0) {
		if (r != -ENOENT)
			stune_warn_path(ctx, mq, "cannot list: %s", strerror(-r));
		return 0;
	}
	while ((de = readdir(dir))) {
		unsigned id;
		char tail;
		if (sscanf(de->d_name, "%u%c", &id, &tail) != 1)
			continue;
		struct stune_hctx *n = realloc(h->hctx, (h->n_hctx + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		h->hctx = n;
		struct stune_hctx *x = &h->hctx[h->n_hctx++];
		*x = (struct stune_hctx){.id = id};
		stune_attr_cpulist(ctx, &x->cpus, 0, "%s/%u/cpu_list", mq, id);
	}
	if (h->n_hctx) /* qsort wants a non-NULL base even for 0 items */
		qsort(h->hctx, h->n_hctx, sizeof(*h->hctx), hctx_cmp);
	return 0;
}

/* blk-mq debugfs (root, debugfs mounted) states shared host tags outright. */
static void scan_tag_flags(struct stune_ctx *ctx, const char *name, struct stune_host *h)
{
	_cleanup_free_ char *flags = NULL;
	if (stune_attr_str(ctx, &flags, STUNE_ATTR_OPTIONAL, "sys/kernel/debug/block/%s/hctx0/flags", name) < 0)
		return;
	h->host_tagset = strstr(flags, "TAG_HCTX_SHARED") ? STUNE_YES : STUNE_NO;
	h->host_tagset_source = "debugfs: block/<disk>/hctx0/flags";
}

/* One block device's sysfs scan, done by whichever worker takes it. */
struct disk_job {
	const char *path;
	struct stune_disk d;
	struct stune_logbuf log;
	int r; /* scan_sysfs result */
};

struct disk_pool {
	struct stune_ctx *ctx;
	const struct stune_topology *t;
	struct disk_job *jobs;
	size_t n;
	size_t next; /* atomic */
};

static void *disk_worker(void *arg)
{
	struct disk_pool *p = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
		if (i >= p->n)
			return NULL;
		struct disk_job *j = &p->jobs[i];
		stune_log_capture(&j->log);
		j->r = scan_sysfs(p->ctx, p->t, j->path, &j->d);
		stune_log_capture(NULL);
	}
}

/*
 * Scan the jobs' sysfs parts on up to one thread per CPU this process may use
 * (at most 16), or ctx->scan_threads:
 * at thousands of disks, detect is bound by per-file syscalls. Small hosts
 * stay on the calling thread.
 */
static void run_disk_pool(struct disk_pool *p, unsigned threads)
{
	size_t want = threads;
	if (!want && p->n >= 128) {
		/* CPUs this process may run on (a syscall: no /sys read, respects taskset). */
		cpu_set_t set;
		int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
		want = (size_t)(cpus > 16 ? 16 : cpus);
	}
	if (!want)
		want = 1;
	if (want > STUNE_MAX_SCAN_THREADS)
		want = STUNE_MAX_SCAN_THREADS;
	pthread_t tid[STUNE_MAX_SCAN_THREADS];
	size_t started = 0;

	for (size_t k = 1; k < want; k++) {
		if (pthread_create(&tid[started], NULL, disk_worker, p) != 0)
			break; /* fewer threads is fine: the caller works too */
		started++;
	}
	disk_worker(p);
	for (size_t k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}

int stune_scan_disks(struct stune_ctx *ctx, struct stune_topology *t)
{
	_cleanup_(stune_strv_freep) char **paths = NULL;
	_cleanup_free_ struct disk_job *jobs = NULL;
	size_t n = 0, n_jobs = 0;
	int r;

	if ((r = stune_devices_list(ctx, "block", &paths, &n)) < 0)
		return r;
	t->disks = calloc(n ? n : 1, sizeof(*t->disks));
	jobs = calloc(n ? n : 1, sizeof(*jobs));
	if (!t->disks || !jobs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* Whole disks sit in .../block/NAME; partitions in .../block/NAME/PART. */
		_cleanup_free_ char *parent = NULL;
		if ((r = stune_path_dirname(paths[i], &parent)) < 0)
			return r;
		if (strcmp(stune_path_basename(parent), "block") == 0)
			jobs[n_jobs++].path = paths[i];
	}

	struct disk_pool pool = {.ctx = ctx, .t = t, .jobs = jobs, .n = n_jobs};
	run_disk_pool(&pool, ctx->scan_threads);

	/* In listing order: messages, udev keys, and each host's queue map. */
	r = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		struct disk_job *j = &jobs[i];
		stune_log_replay(ctx, &j->log);
		if (r == 0 && j->r == 0)
			j->r = scan_keys(ctx, j->path, &j->d);
		if (r == 0 && j->r < 0)
			r = j->r;
		if (r < 0 || j->r != 0) {
			/* Not ours, or failed: release what the scan filled. */
			stune_disk_clear(&j->d);
			continue;
		}
		struct stune_disk *d = &t->disks[t->n_disks++];
		*d = j->d;
		struct stune_host *h = &t->hosts[d->host];
		if (h->n_disks == 0) {
			if ((r = scan_hctx(ctx, j->path, h)) < 0)
				continue;
			scan_tag_flags(ctx, d->name, h);
		}
		h->n_disks++;
		if (h->n_hctx)
			d->nr_hw_queues = STUNE_NUM((int64_t)h->n_hctx);
	}
	if (r < 0)
		return r;
	qsort(t->disks, t->n_disks, sizeof(*t->disks), disk_cmp);
	/* Host → disk index lists, in sorted order. */
	for (size_t i = 0; i < t->n_hosts; i++)
		t->hosts[i].n_disks = 0;
	for (size_t i = 0; i < t->n_disks; i++) {
		struct stune_host *h = &t->hosts[t->disks[i].host];
		size_t *nv = realloc(h->disks, (h->n_disks + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		h->disks = nv;
		h->disks[h->n_disks++] = i;
	}
	return 0;
}
