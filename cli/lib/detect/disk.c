/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SCSI disks: block devices whose `device` is a SCSI device H:C:T:L, their
 * queue settings, sdev attributes, counters and stable keys, and each host's
 * blk-mq hardware-queue → CPU map.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "core/parallel.h"
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

/* "[mq-deadline] kyber none" → selected and list. A bare "none" is selected. raw: keep the text. */
static int parse_scheduler(struct stune_ctx *ctx, const struct stune_rdir *bd, struct stune_disk *d, bool raw)
{
	_cleanup_free_ char *text = NULL;
	if (stune_attr_str_at(ctx, bd, &text, 0, "queue/scheduler") < 0)
		return 0;
	if (raw && !(d->raw[STUNE_RAW_SCHEDULER] = strdup(text)))
		return -ENOMEM;
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
		if (asprintf(&p, "%s/queue/scheduler", bd->path) >= 0)
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

static void rdir_closep(struct stune_rdir *d)
{
	stune_root_dir_close(d);
}

/* Stable key from udev: WWN, else ID_PATH, else H:C:T:L. Live: libudev, not thread-safe. */
static int scan_keys(struct stune_ctx *ctx, const struct stune_rdir *udev_data, const char *bdir, struct stune_disk *d)
{
	_cleanup_free_ char *dbid = NULL;
	int r;
	struct stune_props props;
	if (d->devnum && asprintf(&dbid, "b%s", d->devnum) < 0)
		return -ENOMEM;
	if ((r = stune_props_load_at(ctx, udev_data, bdir, dbid ? dbid : "", &props)) < 0)
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

int stune_disk_key_by_name(struct stune_ctx *ctx, const struct stune_rdir *sys_block, const char *name, char **key)
{
	_cleanup_free_ char *link = NULL, *resolved = NULL;
	_cleanup_(rdir_closep) struct stune_rdir bd = STUNE_RDIR_INIT, sd = STUNE_RDIR_INIT;
	struct stune_disk d = {0};
	int r;
	*key = NULL;
	if (!*name || strchr(name, '/') || name[0] == '.')
		return -ENOENT;
	if (sys_block && sys_block->fd >= 0) {
		if ((r = stune_root_dir_open_entry(ctx->root, sys_block, name, &bd)) < 0)
			return r == -ENOMEM ? r : -ENOENT;
	} else {
		if (!(link = stune_strdupf("sys/block/%s", name)))
			return -ENOMEM;
		if ((r = stune_root_resolve(ctx->root, link, &resolved)) < 0)
			return r == -ENOMEM ? r : -ENOENT;
		if (stune_root_dir_open_canonical(ctx->root, resolved, &bd) < 0)
			return -ENOENT;
	}
	const char *bdir = bd.path;
	if (stune_root_dir_open_entry(ctx->root, &bd, "device", &sd) < 0)
		return -ENOENT;
	if (!(d.hctl = strdup(stune_path_basename(sd.path))))
		return -ENOMEM;
	(void)stune_attr_str_at(ctx, &bd, &d.devnum, STUNE_ATTR_OPTIONAL, "dev");
	if ((r = scan_keys(ctx, NULL, bdir, &d)) == 0)
		*key = steal_pointer(&d.key);
	stune_disk_clear(&d);
	return r;
}

/* Host number → index into t->hosts (sorted by number), or -1. */
static ssize_t host_index(const struct stune_topology *t, unsigned host_no)
{
	size_t lo = 0, hi = t->n_hosts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->hosts[mid].host_no < host_no)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Host numbers are unique: the last equal one is the first (the lists agree). */
	return lo < t->n_hosts && t->hosts[lo].host_no == host_no ? (ssize_t)lo : -1;
}

/* Whole disks sit in .../block/NAME; partitions in .../block/NAME/PART. */
static bool whole_disk(const char *path)
{
	const char *last = strrchr(path, '/');
	if (!last)
		return false;
	size_t plen = (size_t)(last - path);
	return plen >= 5 && memcmp(last - 5, "block", 5) == 0 && (plen == 5 || last[-6] == '/');
}

/* The block device's attributes (bd: its directory, bdir: its path). */
static int read_block_attrs(struct stune_ctx *ctx, const struct stune_topology *t, const struct stune_rdir *bd,
			    const char *bdir, struct stune_disk *d)
{
	bool plan = t->plan_scope;
	int r;

	stune_attr_str_at(ctx, bd, &d->devnum, 0, "dev");
	struct stune_num sectors;
	if (!plan && stune_attr_num_at(ctx, bd, &sectors, 0, "size") == 0) {
		if (sectors.v >= 0 && sectors.v <= INT64_MAX / 512) /* always 512-byte units */
			d->size_bytes = STUNE_NUM(sectors.v * 512);
		else
			stune_warn_path(ctx, bdir, "size: %lld sectors is out of range", (long long)sectors.v);
	}

	if (!t->brief && (r = parse_scheduler(ctx, bd, d, plan)) < 0)
		return r;
	stune_attr_num_at(ctx, bd, &d->rotational, 0, "queue/rotational");
	/* The plan's scan reads the tunables its profile sets (plan_attrs). */
	static const struct {
		enum stune_disk_raw raw;
		unsigned flags;
		const char *rel;
	} queue_attrs[] = {
	    {STUNE_RAW_NR_REQUESTS, 0, "queue/nr_requests"}, {STUNE_RAW_RQ_AFFINITY, 0, "queue/rq_affinity"},
	    {STUNE_RAW_NOMERGES, 0, "queue/nomerges"},	     {STUNE_RAW_READ_AHEAD_KB, 0, "queue/read_ahead_kb"},
	    {STUNE_RAW_ADD_RANDOM, 0, "queue/add_random"},   {STUNE_RAW_IO_POLL, STUNE_ATTR_OPTIONAL, "queue/io_poll"},
	};
	struct stune_num *queue_nums[ELEMENTSOF(queue_attrs)] = {&d->nr_requests,   &d->rq_affinity, &d->nomerges,
								 &d->read_ahead_kb, &d->add_random,  &d->io_poll};
	for (size_t i = 0; i < ELEMENTSOF(queue_attrs); i++)
		if (t->plan_attrs & (1u << queue_attrs[i].raw))
			stune_attr_num_raw_at(ctx, bd, queue_nums[i], plan ? &d->raw[queue_attrs[i].raw] : NULL,
					      queue_attrs[i].flags, queue_attrs[i].rel);
	return 0;
}

/* The SCSI device's attributes (sd: its directory, not opened for a plan that reads nothing there). */
static void read_scsi_device_attrs(struct stune_ctx *ctx, const struct stune_topology *t, const struct stune_rdir *sd,
				   struct stune_disk *d)
{
	bool plan = t->plan_scope;

	bool full = !plan && !t->brief; /* brief: the model alone, its row's column */
	if (full)
		stune_attr_str_at(ctx, sd, &d->vendor, 0, "vendor");
	if (!plan)
		stune_attr_str_at(ctx, sd, &d->model, 0, "model");
	if (full) {
		stune_attr_str_at(ctx, sd, &d->rev, STUNE_ATTR_OPTIONAL, "rev");
		stune_attr_num_at(ctx, sd, &d->scsi_type, STUNE_ATTR_OPTIONAL, "type");
	}
	trim(d->vendor);
	trim(d->model);
	trim(d->rev);
	if (t->plan_attrs & (1u << STUNE_RAW_QUEUE_DEPTH))
		stune_attr_num_raw_at(ctx, sd, &d->queue_depth, plan ? &d->raw[STUNE_RAW_QUEUE_DEPTH] : NULL, 0,
				      "queue_depth");
	if (full) {
		stune_attr_str_at(ctx, sd, &d->state, STUNE_ATTR_OPTIONAL, "state");
		stune_attr_num_at(ctx, sd, &d->iocounterbits, STUNE_ATTR_OPTIONAL, "iocounterbits");
		struct stune_num *ctr[] = {&d->iorequest_cnt, &d->iodone_cnt, &d->ioerr_cnt, &d->iotmo_cnt};
		const char *ctr_name[] = {"iorequest_cnt", "iodone_cnt", "ioerr_cnt", "iotmo_cnt"};
		for (size_t i = 0; i < ELEMENTSOF(ctr); i++) {
			if (stune_attr_num_at(ctx, sd, ctr[i], STUNE_ATTR_OPTIONAL, ctr_name[i]) < 0)
				continue;
			/* Stock 6.1 prints a sign-extended atomic_t: reduce mod 2^iocounterbits. */
			if (d->iocounterbits.set && d->iocounterbits.v > 0 && d->iocounterbits.v < 64)
				ctr[i]->v = (int64_t)((uint64_t)ctr[i]->v & ((UINT64_C(1) << d->iocounterbits.v) - 1));
		}
	}
}

/*
 * The sysfs part of one disk: thread-safe (reads only, the root layer's
 * cache is locked, messages go to the calling thread's capture). Returns 1
 * when bdir is not a SCSI disk of a listed host. The disk's directory and
 * its SCSI device's are opened once and every attribute read relative to
 * them; under --sysroot the udev keys are read here too (udev_data: the
 * database directory, or NULL when it cannot be opened).
 */
static int scan_sysfs(struct stune_ctx *ctx, const struct stune_topology *t, const struct stune_rdir *udev_data,
		      bool unverified, char **bdirp, struct stune_disk *d)
{
	_cleanup_(rdir_closep) struct stune_rdir bd = STUNE_RDIR_INIT, sd = STUNE_RDIR_INIT;
	bool plan = t->plan_scope;
	int r;

	if (stune_root_dir_open_canonical(ctx->root, *bdirp, &bd) < 0)
		return 1; /* gone since the listing */
	if (unverified && !bd.canonical) {
		/* The listing's joined link target holds a symlink: the disk's own path. */
		char *res = NULL;
		stune_root_dir_close(&bd);
		if ((r = stune_root_resolve(ctx->root, *bdirp, &res)) < 0)
			return r == -ENOMEM ? r : 1;
		free(*bdirp);
		*bdirp = res;
		if (!whole_disk(res) || stune_root_dir_open_canonical(ctx->root, res, &bd) < 0)
			return 1;
	}
	const char *bdir = *bdirp;
	/* The SCSI device's directory: opened when something is read there; for a
	 * plan that reads nothing of it, its link is read (its name is the H:C:T:L). */
	_cleanup_free_ char *sd_link = NULL;
	bool sd_reads = !plan || (t->plan_attrs & (1u << STUNE_RAW_QUEUE_DEPTH));
	r = sd_reads ? -EAGAIN : stune_root_dir_entry_target(ctx->root, &bd, "device", &sd_link);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && stune_root_dir_open_entry(ctx->root, &bd, "device", &sd) < 0)
		return 1; /* no device link: not a SCSI disk (loop, zram...) */
	const char *sd_path = sd_link ? sd_link : sd.path;
	char tail;
	if (sscanf(stune_path_basename(sd_path), "%u:%u:%u:%u%c", &d->h, &d->c, &d->t, &d->l, &tail) != 4)
		return 1; /* virtio-blk, nvme: not SCSI */

	/* The last host with that number, as the former linear search found. */
	ssize_t hi = host_index(t, d->h);
	while (hi >= 0 && (size_t)hi + 1 < t->n_hosts && t->hosts[hi + 1].host_no == d->h)
		hi++;
	if (hi < 0) {
		stune_warn_path(ctx, bdir, "SCSI host %u is not listed in sys/class/scsi_host, disk skipped", d->h);
		return 1;
	}
	d->host = (size_t)hi;
	if (!(d->name = strdup(stune_path_basename(bdir))) || !(d->hctl = strdup(stune_path_basename(sd_path))))
		return -ENOMEM;

	if ((r = read_block_attrs(ctx, t, &bd, bdir, d)) < 0)
		return r;
	read_scsi_device_attrs(ctx, t, &sd, d);
	/* The captured udev database is plain files: read on this thread. */
	if (!ctx->udev)
		return scan_keys(ctx, udev_data, bdir, d);
	return 0;
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
		if (stune_grow(&h->hctx, h->n_hctx, sizeof(*h->hctx)) < 0)
			return -ENOMEM;
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
	char **path; /* its slot in the listing: the scan may put the disk's canonical path there */
	struct stune_disk d;
	struct stune_logbuf log;
	int r; /* scan_sysfs result */
};

struct disk_pool {
	struct stune_ctx *ctx;
	const struct stune_topology *t;
	bool unverified; /* the listing's paths may hold symlinks (stune_devices_list_targets) */
	const struct stune_rdir *udev_data;
	struct disk_job *jobs;
};

static void disk_work(void *arg, size_t i)
{
	struct disk_pool *p = arg;
	struct disk_job *j = &p->jobs[i];
	stune_log_capture(&j->log);
	stune_root_batch(p->ctx->root, true);
	j->r = scan_sysfs(p->ctx, p->t, p->udev_data, p->unverified, j->path, &j->d);
	stune_root_batch(p->ctx->root, false);
	stune_log_capture(NULL);
}

int stune_scan_disks(struct stune_ctx *ctx, struct stune_topology *t)
{
	_cleanup_(stune_strv_freep) char **paths = NULL;
	_cleanup_free_ struct disk_job *jobs = NULL;
	size_t n = 0, n_jobs = 0;
	bool unverified;
	int r;

	/* Each disk's path is walked once, by its scan (which proves it canonical). */
	if ((r = stune_devices_list_targets(ctx, "block", &paths, &n, &unverified)) < 0)
		return r;
	t->disks = calloc(n ? n : 1, sizeof(*t->disks));
	jobs = calloc(n ? n : 1, sizeof(*jobs));
	if (!t->disks || !jobs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (whole_disk(paths[i]))
			jobs[n_jobs++].path = &paths[i];

	/* The captured udev database: one directory for every disk's keys. */
	_cleanup_(rdir_closep) struct stune_rdir udev_data = STUNE_RDIR_INIT;
	if (!ctx->udev && stune_root_dir_open(ctx->root, "run/udev/data", &udev_data) < 0 &&
	    !(udev_data.path = strdup("run/udev/data")))
		return -ENOMEM;
	/* at thousands of disks, detect is bound by per-file syscalls: small hosts stay on this thread */
	struct disk_pool pool = {.ctx = ctx, .t = t, .unverified = unverified, .udev_data = &udev_data, .jobs = jobs};
	stune_parallel_for(ctx, n_jobs, 128, disk_work, &pool);

	/* In listing order: messages, udev keys, and each host's queue map. */
	r = 0;
	for (size_t i = 0; i < n_jobs; i++) {
		struct disk_job *j = &jobs[i];
		stune_log_replay(ctx, &j->log);
		if (r == 0 && j->r == 0 && ctx->udev)
			j->r = scan_keys(ctx, &udev_data, *j->path, &j->d);
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
			if ((r = scan_hctx(ctx, *j->path, h)) < 0)
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
	/* Host → disk index lists, in sorted order: counted (n_disks above), then filled. */
	for (size_t i = 0; i < t->n_hosts; i++) {
		struct stune_host *h = &t->hosts[i];
		if (h->n_disks && !(h->disks = calloc(h->n_disks, sizeof(*h->disks))))
			return -ENOMEM;
		h->n_disks = 0;
	}
	for (size_t i = 0; i < t->n_disks; i++) {
		struct stune_host *h = &t->hosts[t->disks[i].host];
		h->disks[h->n_disks++] = i;
	}
	return 0;
}
