/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/apply.h"
#include "tune/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "detect/irqbalance.h"
#include "tune/irqbalance.h"
#include "tune/persist.h"
#include "core/parallel.h"
#include "core/root.h"
#include "core/strv.h"
#include "detect/scan.h"
#include "detect/topology.h"

#ifdef SCSITUNE_TEST_HOOKS
static int hook_errno(const char *s)
{
	static const struct {
		const char *name;
		int e;
	} names[] = {{"EIO", EIO}, {"EINVAL", EINVAL}, {"EBUSY", EBUSY}, {"EPERM", EPERM}, {"EACCES", EACCES}};
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (!strcmp(s, names[i].name))
			return names[i].e;
	int e = atoi(s);
	return e > 0 ? e : EIO;
}

static int test_hooks(const char *path)
{
	static long writes;
	const char *abort_after = getenv("SCSITUNE_TEST_ABORT_AFTER");
	if (abort_after && writes >= atol(abort_after))
		abort();
	/* kill -9 of the process at the same point: no handler runs, nothing is flushed. */
	const char *kill_after = getenv("SCSITUNE_TEST_KILL_AFTER");
	if (kill_after && writes >= atol(kill_after))
		raise(SIGKILL);
	writes++;
	const char *fail = getenv("SCSITUNE_FAIL_WRITE");
	if (fail) {
		const char *colon = strrchr(fail, ':');
		if (colon) {
			_cleanup_free_ char *sub = strndup(fail, (size_t)(colon - fail));
			/* "ignore": the write "succeeds" and changes nothing (rq_affinity=3 on old kernels). */
			if (sub && strstr(path, sub))
				return strcmp(colon + 1, "ignore") ? -hook_errno(colon + 1) : 1;
		}
	}
	return 0;
}
#endif

/* Read what is at path now: a symlink's target, else the file. */
static int read_entry(const struct stune_root *r, enum stune_jkind kind, const char *path, char **out)
{
	return kind == STUNE_JK_SYMLINK ? stune_root_readlink(r, path, out) : stune_root_read(r, path, out);
}

/* The one write of scsitune (stune_apply_write, stune_apply_write_at): the test
 * hooks, then a link, a file replaced whole, or a kernel attribute written and
 * read back. */
static int write_one(const struct stune_root *r, const struct stune_rdir *dir, enum stune_jkind kind, const char *path,
		     const char *value, char **after)
{
	int w;
	if (after)
		*after = NULL;
#ifdef SCSITUNE_TEST_HOOKS
	int h = test_hooks(path);
	if (h < 0)
		return h;
	if (h) { /* "ignore": nothing written, the old value reads back */
		if (after && read_entry(r, kind, path, after) < 0)
			*after = NULL;
		return 0;
	}
#endif
	_cleanup_free_ char *line = NULL;
	if (kind == STUNE_JK_SYMLINK)
		w = stune_root_symlink(r, path, value);
	else if (asprintf(&line, "%s\n", value) < 0)
		return -ENOMEM;
	else if (kind == STUNE_JK_FILE) /* configuration files are replaced whole */
		w = stune_root_replace(r, path, line, 0644);
	else if (dir) /* a kernel attribute: one write, read back through the same open file */
		return stune_root_write_read_at(r, dir, stune_path_basename(path), line, after);
	else
		return stune_root_write_read(r, path, line, after);
	if (w == 0 && after && read_entry(r, kind, path, after) < 0)
		*after = NULL;
	return w;
}

/* The same write on a file already open for reading and writing (fd: its
 * text now is now; revert). */
static int write_one_fd(int fd, const char *path, const char *value, const char *now, char **after)
{
	*after = NULL;
#ifdef SCSITUNE_TEST_HOOKS
	int h = test_hooks(path);
	if (h < 0)
		return h;
	if (h) /* "ignore": nothing written, the old value reads back */
		return (*after = strdup(now)) ? 0 : -ENOMEM;
#else
	(void)path;
#endif
	_cleanup_free_ char *line = NULL;
	if (asprintf(&line, "%s\n", value) < 0)
		return -ENOMEM;
	return stune_root_rewrite_fd(fd, line, strlen(now) + 1, after);
}

int stune_apply_write(const struct stune_root *r, enum stune_jkind kind, const char *path, const char *value,
		      char **after)
{
	return write_one(r, NULL, kind, path, value, after);
}

int stune_apply_write_at(const struct stune_root *r, const struct stune_rdir *dir, enum stune_jkind kind,
			 const char *path, const char *value, char **after)
{
	return write_one(r, kind == STUNE_JK_VALUE ? dir : NULL, kind, path, value, after);
}

/* The raw text the plan's scan read for a disk row's setting, or NULL (then read it). */
static const char *scanned(const struct stune_plan *plan, const struct stune_change *c, const char *setting)
{
	const struct stune_topology *t = plan->topology;
	if (c->kind != STUNE_OBJ_DISK || !t || !t->plan_scope || c->index >= t->n_disks)
		return NULL;
	return stune_disk_raw_value(&t->disks[c->index], setting);
}

/* A persist row (persist.c): a file or symlink, maybe not there yet (absent). */
static int record_persist(struct stune_ctx *ctx, struct stune_journal *j, const struct stune_change *c)
{
	enum stune_jkind kind = strcmp(c->setting, "symlink") ? STUNE_JK_FILE : STUNE_JK_SYMLINK;
	_cleanup_free_ char *old = NULL;
	int rd = read_entry(ctx->root, kind, c->path, &old), r;
	if (rd == -ENOMEM)
		return rd;
	bool absent = rd == -ENOENT;
	enum stune_jstate st = rd < 0 && !absent ? STUNE_J_SKIPPED : STUNE_J_PENDING;
	if ((r = stune_journal_add(j, c->object, c->setting, c->path, old, c->desired, st)) < 0)
		return r;
	struct stune_jentry *e = &j->entries[j->n - 1];
	e->kind = kind;
	e->absent = absent;
	if (st == STUNE_J_SKIPPED)
		e->err = -rd;
	return 0;
}

static int record(struct stune_ctx *ctx, struct stune_journal *j, const struct stune_plan *plan,
		  const struct stune_change *c, const char *path, const char *setting, const char *desired,
		  enum stune_jstate state)
{
	_cleanup_free_ char *old = NULL;
	/* Read once per run: the scan's text when it has it. */
	const char *raw = scanned(plan, c, setting);
	int rd = raw ? ((old = strdup(raw)) ? 0 : -ENOMEM) : stune_root_read(ctx->root, path, &old), r;
	if (rd == -ENOMEM)
		return rd;
	if (rd < 0)
		state = STUNE_J_SKIPPED; /* nothing to restore from: not written */
	if ((r = stune_journal_add(j, c->object, setting, path, old, desired, state)) < 0)
		return r;
	if (state == STUNE_J_SKIPPED)
		j->entries[j->n - 1].err = -rd;
	return 0;
}

/* irqbalance's defaults file: the whole file is the value (old and desired), the plan's args go into it. */
static int record_irqbalance(struct stune_ctx *ctx, struct stune_journal *j, const struct stune_plan *plan,
			     const struct stune_change *c)
{
	_cleanup_free_ char *old = NULL, *text = NULL, *comment = NULL;
	int rd = stune_root_read(ctx->root, c->path, &old), r;
	if (rd == -ENOMEM)
		return rd;
	if (rd < 0) {
		if ((r = stune_journal_add(j, c->object, c->setting, c->path, NULL, NULL, STUNE_J_SKIPPED)) < 0)
			return r;
		j->entries[j->n - 1].err = -rd;
		return 0;
	}
	if (!(comment = stune_strdupf("scsitune apply --profile %s: --banirq for the IRQs it pinned; scsitune "
				      "revert restores this file",
				      plan->profile->name)))
		return -ENOMEM;
	if ((r = stune_irqbalance_edit(old, c->desired, comment, &text)) < 0)
		return r;
	if ((r = stune_journal_add(j, c->object, c->setting, c->path, old, text, STUNE_J_PENDING)) < 0)
		return r;
	j->entries[j->n - 1].kind = STUNE_JK_FILE;
	return 0;
}

/* This boot's id (the kernel's, one per boot), or NULL when the host does not say (-ENOMEM only). */
static int boot_id_now(const struct stune_root *root, char **out)
{
	*out = NULL;
	int r = stune_root_read(root, "proc/sys/kernel/random/boot_id", out);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !**out) {
		free(*out);
		*out = NULL;
	}
	return 0;
}

static bool is_irq(const struct stune_jentry *e)
{
	return e->kind == STUNE_JK_VALUE && !strncmp(e->object, "irq:", 4);
}

static bool is_irqbalance(const struct stune_jentry *e)
{
	return e->kind == STUNE_JK_FILE && !strcmp(e->object, "irqbalance");
}

/* The IRQ entries from first on: the boot they are written in (revert writes none of them in another). */
static int stamp_boot(struct stune_ctx *ctx, struct stune_journal *j, size_t first)
{
	_cleanup_free_ char *boot = NULL;
	int r = boot_id_now(ctx->root, &boot);
	for (size_t k = first; r >= 0 && boot && k < j->n; k++)
		if (is_irq(&j->entries[k]) && !(j->entries[k].boot_id = strdup(boot)))
			r = -ENOMEM;
	return r;
}

static void rdir_closep(struct stune_rdir *d)
{
	stune_root_dir_close(d);
}

static void batch_endp(bool *on)
{
	if (*on)
		stune_root_batch(NULL, false);
}

/* Is path in directory dir? */
static bool in_dir(const struct stune_rdir *dir, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	return dir->path && strlen(dir->path) == len && !strncmp(dir->path, path, len);
}

/*
 * The side effects of object (the writes to it are done) read again
 * (e->after): through dir when it is theirs, else by path. Done in reread.
 */
static void reread_recorded(const struct stune_root *root, struct stune_journal *j, const char *object,
			    const struct stune_rdir *dir, size_t *recorded, size_t *n, bool *reread, size_t first)
{
	size_t kept = 0;
	for (size_t k = 0; k < *n; k++) {
		struct stune_jentry *e = &j->entries[recorded[k]];
		if (!object || strcmp(e->object, object)) {
			recorded[kept++] = recorded[k];
			continue;
		}
		free(e->after);
		int rd = dir->fd >= 0 && in_dir(dir, e->path)
			     ? stune_root_read_at(root, dir, stune_path_basename(e->path), &e->after)
			     : stune_root_read(root, e->path, &e->after);
		if (rd < 0)
			e->after = NULL;
		reread[recorded[k] - first] = true;
	}
	*n = kept;
}

/* dir: path's directory, opened unless it already is (not there: left closed,
 * the write then fails as a full-path one would). */
static int enter_dir(const struct stune_root *root, const char *path, struct stune_rdir *dir)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	if (in_dir(dir, path))
		return 0;
	stune_root_dir_close(dir);
	_cleanup_free_ char *d = strndup(path, len);
	if (!d)
		return -ENOMEM;
	if (stune_root_dir_open(root, d, dir) < 0)
		dir->path = steal_pointer(&d);
	return 0;
}

/* A scheduler switch resets nr_requests: its old value kept for revert
 * (RECORDED), unless the plan changes nr_requests itself. */
static int record_nr_requests(struct stune_ctx *ctx, const struct stune_plan *plan, const struct stune_plan_index *idx,
			      struct stune_journal *j, const struct stune_change *c)
{
	int r;
	const struct stune_change *nr = stune_plan_index_find(idx, c->object, "queue/nr_requests");
	if (!nr || nr->state != STUNE_CHANGE) {
		_cleanup_free_ char *dir = NULL, *nrpath = NULL;
		if ((r = stune_path_dirname(c->path, &dir)) < 0 ||
		    (r = stune_path_join(&nrpath, dir, "nr_requests")) < 0)
			return r;
		/* The scan's text, else read it straight away (no exists() first:
		 * that resolves the path by hand, a readlinkat per component);
		 * not there: nothing to record. */
		_cleanup_free_ char *nr_old = NULL;
		const char *raw = scanned(plan, c, "queue/nr_requests");
		r = raw ? ((nr_old = strdup(raw)) ? 0 : -ENOMEM) : stune_root_read(ctx->root, nrpath, &nr_old);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && (r = stune_journal_add(j, c->object, "queue/nr_requests", nrpath, nr_old, NULL,
						     STUNE_J_RECORDED)) < 0)
			return r;
	}
	return 0;
}

/* 1. Every old value, before the first write. */
static int record_old_values(struct stune_ctx *ctx, const struct stune_plan *plan, const struct stune_plan_index *idx,
			     struct stune_journal *j)
{
	int r;
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		if (c->state != STUNE_CHANGE || !c->desired || !c->path)
			continue;
		if (c->kind == STUNE_OBJ_IRQBALANCE || c->kind == STUNE_OBJ_PERSIST) {
			r = c->kind == STUNE_OBJ_PERSIST ? record_persist(ctx, j, c)
							 : record_irqbalance(ctx, j, plan, c);
			if (r < 0)
				return r;
			continue;
		}
		if (c->kind == STUNE_OBJ_DISK && !strcmp(c->setting, "queue/scheduler") &&
		    (r = record_nr_requests(ctx, plan, idx, j, c)) < 0)
			return r;
		if ((r = record(ctx, j, plan, c, c->path, c->setting, c->desired, STUNE_J_PENDING)) < 0)
			return r;
	}
	return 0;
}

/*
 * 2. The writes, in plan order, each object's outcomes appended to the
 * log together when its writes are done (a kill before that leaves them
 * pending: revert restores a pending entry, written or not); a
 * directory's attributes (a disk's queue/) through one open of it, their
 * files closed together (stune_root_batch). A side effect (RECORDED: a
 * disk's nr_requests after its scheduler switch) is read again through
 * its directory when the writes there are done (reread[i - first] set).
 */
static int write_entries(struct stune_ctx *ctx, int log, struct stune_journal *j, size_t first, bool *reread,
			 int *irqbalance_restart)
{
	int r;
	_cleanup_(rdir_closep) struct stune_rdir dir = STUNE_RDIR_INIT;
	_cleanup_free_ size_t *recorded = calloc(j->n - first + 1, sizeof(size_t));
	_cleanup_free_ size_t *done = calloc(j->n - first + 1, sizeof(size_t)); /* the object's, not yet logged */
	size_t n_recorded = 0, n_done = 0;
	if (!recorded || !done)
		return -ENOMEM;
	_cleanup_(batch_endp) bool batch = true;
	stune_root_batch(ctx->root, true);
	const char *object = NULL; /* of the last write: a disk's writes are consecutive */
	/* Pass 0 writes irqbalance's bans and restarts it (the caller says
	 * whether one runs under systemd), pass 1 the rest: irqbalance writes
	 * the mask of an IRQ it places whenever it places or moves it (first
	 * pass, rebalance), so the IRQ pins come after the daemon that leaves
	 * them alone. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = first; i < j->n; i++) {
			struct stune_jentry *e = &j->entries[i];
			if (is_irqbalance(e) != (pass == 0))
				continue;
			if (e->state == STUNE_J_RECORDED)
				recorded[n_recorded++] = i;
			if (e->state != STUNE_J_PENDING)
				continue;
			if (object && strcmp(object, e->object)) {
				if ((r = stune_journal_log_entries(log, j, done, n_done)) < 0)
					return r;
				n_done = 0;
				reread_recorded(ctx->root, j, object, &dir, recorded, &n_recorded, reread, first);
			}
			object = e->object;
			if (e->kind == STUNE_JK_VALUE && (r = enter_dir(ctx->root, e->path, &dir)) < 0)
				return r;
			int w = stune_apply_write_at(ctx->root, &dir, e->kind, e->path, e->desired, &e->after);
			if (w < 0) {
				e->state = STUNE_J_FAILED;
				e->err = -w;
			} else
				e->state = STUNE_J_APPLIED;
			done[n_done++] = i;
			if (is_irqbalance(e) && e->state == STUNE_J_APPLIED && irqbalance_restart) {
				/* logged first: the bans are on disk, whatever the restart does */
				if ((r = stune_journal_log_entries(log, j, done, n_done)) < 0)
					return r;
				n_done = 0;
				*irqbalance_restart = stune_irqbalance_restart(ctx);
			}
		}
	if ((r = stune_journal_log_entries(log, j, done, n_done)) < 0)
		return r;
	reread_recorded(ctx->root, j, object, &dir, recorded, &n_recorded, reread, first);
	stune_root_batch(ctx->root, false);
	batch = false;
	return 0;
}

/*
 * 3. In effect? Each written file was read back right after its write
 * (the plan writes a disk's scheduler before its nr_requests, the one
 * side effect between rows); compare by meaning, as the plan does. A
 * write the kernel accepted but that is not in effect was ignored.
 */
static void check_in_effect(struct stune_ctx *ctx, const struct stune_plan_index *idx, struct stune_journal *j,
			    size_t first, const bool *reread)
{
	for (size_t i = first; i < j->n; i++) {
		struct stune_jentry *e = &j->entries[i];
		if (e->state == STUNE_J_RECORDED) {
			if (reread[i - first])
				continue;
			/* Read again: the scheduler switch may have changed it. */
			free(e->after);
			if (stune_root_read(ctx->root, e->path, &e->after) < 0)
				e->after = NULL;
			continue;
		}
		if (e->state != STUNE_J_APPLIED)
			continue;
		const struct stune_change *c = stune_plan_index_find(idx, e->object, e->setting);
		if (c && !stune_change_in_effect(c, e->after))
			e->state = STUNE_J_IGNORED;
	}
}

int stune_apply_plan(struct stune_ctx *ctx, const struct stune_plan *plan, const char *state_dir,
		     struct stune_journal *j, int *irqbalance_restart)
{
	_cleanup_(stune_plan_index_free) struct stune_plan_index idx = {0};
	size_t first = j->n; /* entries before it belong to an earlier apply: not ours to write */
	int r = stune_plan_index_build(plan, &idx);
	if (r < 0)
		return r;
	if ((r = record_old_values(ctx, plan, &idx, j)) < 0)
		return r;
	if ((r = stamp_boot(ctx, j, first)) < 0)
		return r;
	_cleanup_close_ int log = -1;
	if ((r = stune_journal_log_begin(state_dir, j, &log)) < 0)
		return r;
	_cleanup_free_ bool *reread = calloc(j->n - first + 1, sizeof(bool));
	if (!reread)
		return -ENOMEM;
	if ((r = write_entries(ctx, log, j, first, reread, irqbalance_restart)) < 0)
		return r;
	check_in_effect(ctx, &idx, j, first, reread);
	return stune_journal_save(state_dir, j);
}

const char *stune_revert_outcome_name(enum stune_revert_outcome o)
{
	static const char *const n[_STUNE_RV_MAX] = {"restored", "unchanged", "changed-since",
						     "failed",	 "gone",      "earlier-boot"};
	return o < _STUNE_RV_MAX ? n[o] : "?";
}

void stune_revert_items_free(struct stune_revert_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(items[i].current);
		free(items[i].was);
	}
	free(items);
}

/* A scheduler's meaning: the selected one of a "a [b] c" list, else the text up to a newline. */
static void scheduler_of(const char *v, const char **s, size_t *n)
{
	const char *lb = strchr(v, '['), *rb = lb ? strchr(lb, ']') : NULL;
	if (lb && rb) {
		*s = lb + 1;
		*n = (size_t)(rb - lb - 1);
	} else {
		*s = v;
		*n = strcspn(v, "\n");
	}
}

/* Two readings of an entry's file alike in meaning: a scheduler by the one selected ("mq-deadline" is
 * "[mq-deadline] none"), anything else as text. */
static bool same_value(const struct stune_jentry *e, const char *a, const char *b)
{
	if (!a || !b)
		return false;
	if (!e->setting || strcmp(e->setting, "queue/scheduler"))
		return !strcmp(a, b);
	const char *x, *y;
	size_t nx, ny;
	scheduler_of(a, &x, &nx);
	scheduler_of(b, &y, &ny);
	return nx == ny && !strncmp(x, y, nx);
}

/* What to write back: the selected scheduler of a "[a] b" list, else the value as read. */
static int restore_value(const struct stune_root *root, const struct stune_jentry *e, char **out)
{
	const char *old = e->old;
	const char *lb = strcmp(e->setting, "queue/scheduler") ? NULL : strchr(old, '[');
	const char *rb = lb ? strchr(lb, ']') : NULL;
	/* A captured tree takes the old text as it was, so it comes back byte for byte. */
	if (!stune_root_is_live(root) || !lb || !rb)
		*out = strdup(old);
	else
		*out = strndup(lb + 1, (size_t)(rb - lb - 1));
	return *out ? 0 : -ENOMEM;
}

/* An entry apply created (nothing was there): removed, unless someone changed it since (then --force). */
static int revert_created(struct stune_ctx *ctx, struct stune_jentry *e, bool force, int read,
			  struct stune_revert_item *it)
{
	if (read == -ENOENT) {
		it->outcome = STUNE_RV_UNCHANGED; /* already gone */
		e->state = STUNE_J_REVERTED;
		return 0;
	}
	if (read < 0) {
		it->outcome = STUNE_RV_FAILED;
		it->err = -read;
		return 0;
	}
	bool ours = e->state == STUNE_J_PENDING || (e->after && !strcmp(it->current, e->after));
	if (!ours && !force) {
		it->outcome = STUNE_RV_CHANGED;
		return 0;
	}
	int w = stune_root_unlink(ctx->root, e->path);
	if (w < 0 && w != -ENOENT) {
		it->outcome = STUNE_RV_FAILED;
		it->err = -w;
		return 0;
	}
	it->outcome = STUNE_RV_RESTORED;
	e->state = STUNE_J_REVERTED;
	return 0;
}

/* The key of each disk name the journal names, found on a few threads (under a sysroot; live, libudev is not
 * thread-safe). */
struct key_jobs {
	struct stune_ctx *ctx;
	const struct stune_rdir *sys_block;
	char **names, **keys;
	struct stune_logbuf *logs;
	int *r;
};

static void key_work(void *arg, size_t i)
{
	struct key_jobs *k = arg;
	stune_log_capture(&k->logs[i]);
	stune_root_batch(k->ctx->root, true);
	k->r[i] = stune_disk_key_by_name(k->ctx, k->sys_block, k->names[i], &k->keys[i]);
	stune_root_batch(k->ctx->root, false);
	stune_log_capture(NULL);
}

static void key_jobs_clear(struct key_jobs *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(k->names ? k->names[i] : NULL);
		free(k->keys ? k->keys[i] : NULL);
	}
	/* (each capture was replayed, and emptied, before) */
	free(k->names);
	free(k->keys);
	free(k->logs);
	free(k->r);
}

/* The disk name of entry e (sys/block/NAME/...): its length, 0 when e is no disk attribute; -1 when the journal is not
 * one scsitune wrote. */
static ssize_t entry_disk(const struct stune_jentry *e, const char **name)
{
	static const char pre[] = "sys/block/";
	const size_t np = sizeof(pre) - 1;
	if (e->kind != STUNE_JK_VALUE || strncmp(e->path, pre, np))
		return 0;
	const char *n = e->path + np, *rest = strchr(n, '/');
	if (!rest || !e->object)
		return -1;
	*name = n;
	return rest - n;
}

int stune_revert_disks_in_place(struct stune_ctx *ctx, const struct stune_journal *j, bool *in_place)
{
	_cleanup_(stune_root_dir_close) struct stune_rdir sys_block = STUNE_RDIR_INIT;
	struct key_jobs k = {.ctx = ctx, .sys_block = &sys_block};
	size_t n = 0;
	int r = 0;
	*in_place = false;
	/* The names, once per run of entries (a disk's entries are together). */
	if (!(k.names = calloc(j->n ? j->n : 1, sizeof(char *))))
		return -ENOMEM;
	const char *last = NULL;
	size_t last_len = 0;
	for (size_t i = 0; i < j->n; i++) {
		const char *name = NULL;
		ssize_t len = entry_disk(&j->entries[i], &name);
		if (len < 0) {
			key_jobs_clear(&k, n);
			return 0;
		}
		if (len == 0 || (last && last_len == (size_t)len && !strncmp(last, name, (size_t)len)))
			continue;
		if (!(k.names[n] = strndup(name, (size_t)len))) {
			key_jobs_clear(&k, n);
			return -ENOMEM;
		}
		n++;
		last = name;
		last_len = (size_t)len;
	}
	if (!(k.keys = calloc(n ? n : 1, sizeof(char *))) || !(k.logs = calloc(n ? n : 1, sizeof(*k.logs))) ||
	    !(k.r = calloc(n ? n : 1, sizeof(int)))) {
		key_jobs_clear(&k, n);
		return -ENOMEM;
	}
	/* Opened once: each name is then one readlinkat and one open (without it, resolved from the root). */
	(void)stune_root_dir_open_canonical(ctx->root, "sys/block", &sys_block);
	stune_parallel_for(ctx, n, ctx->udev ? SIZE_MAX : 128, key_work, &k);
	for (size_t i = 0; i < n; i++) {
		stune_log_replay(ctx, &k.logs[i]);
		if (k.r[i] == -ENOMEM)
			r = -ENOMEM;
	}
	/* Every disk entry's object is the key its name has now. */
	bool ok = r == 0;
	size_t m = 0;
	last = NULL;
	for (size_t i = 0; ok && i < j->n; i++) {
		const struct stune_jentry *e = &j->entries[i];
		const char *name = NULL;
		ssize_t len = entry_disk(e, &name);
		if (len <= 0)
			continue;
		if (!(last && last_len == (size_t)len && !strncmp(last, name, (size_t)len))) {
			m++;
			last = name;
			last_len = (size_t)len;
		}
		ok = m > 0 && k.keys[m - 1] && !strcmp(k.keys[m - 1], e->object);
	}
	key_jobs_clear(&k, n);
	*in_place = ok;
	return r;
}

/* The disks of the host now by key (a disk without one by its name), sorted: one lookup per entry in O(log n). */
struct disk_keys {
	const struct stune_disk **v;
	size_t n;
};

static const char *disk_key(const struct stune_disk *d)
{
	return d->key ? d->key : d->name;
}

static int disk_key_cmp(const void *a, const void *b)
{
	return strcmp(disk_key(*(const struct stune_disk *const *)a), disk_key(*(const struct stune_disk *const *)b));
}

static int key_find_cmp(const void *key, const void *elem)
{
	return strcmp(key, disk_key(*(const struct stune_disk *const *)elem));
}

/* NULL t: no index (every path as journaled). */
static void disk_keys_freep(struct disk_keys *k)
{
	free(k->v);
}

static int disk_keys_build(const struct stune_topology *t, struct disk_keys *k)
{
	*k = (struct disk_keys){0};
	if (!t)
		return 0;
	if (!(k->v = calloc(t->n_disks ? t->n_disks : 1, sizeof(*k->v))))
		return -ENOMEM;
	for (size_t i = 0; i < t->n_disks; i++)
		k->v[k->n++] = &t->disks[i];
	qsort(k->v, k->n, sizeof(*k->v), disk_key_cmp);
	return 0;
}

/*
 * A disk's entry names the disk by its key (object) and by the kernel name it
 * had at apply (path: sys/block/NAME/...). Kernel names change across reboots
 * and hotplug (sdb may be another disk now): the disk with that key now is
 * the one to restore, and the path is rewritten to its name now (it->was: the
 * name at apply). -ENODEV: no disk has that key; -ENOTUNIQ: several have it
 * (multipath) and none the journaled name. 0 for every other entry, or
 * without an index.
 */
static int disk_now(const struct disk_keys *keys, struct stune_jentry *e, struct stune_revert_item *it)
{
	static const char pre[] = "sys/block/";
	const size_t np = sizeof(pre) - 1;
	if (!keys->v || e->kind != STUNE_JK_VALUE || strncmp(e->path, pre, np))
		return 0;
	const char *name = e->path + np, *rest = strchr(name, '/');
	if (!rest)
		return 0;
	size_t len = (size_t)(rest - name);
	const struct stune_disk *const *hit = bsearch(e->object, keys->v, keys->n, sizeof(*keys->v), key_find_cmp);
	if (!hit)
		return -ENODEV;
	/* Several disks with one key: the paths of a multipath LUN (one WWN). The one
	 * with the journaled name is it; else only a single candidate is. */
	const struct stune_disk *const *lo = hit, *const *hi = hit + 1, *const *end = keys->v + keys->n;
	while (lo > keys->v && !strcmp(disk_key(lo[-1]), e->object))
		lo--;
	while (hi < end && !strcmp(disk_key(*hi), e->object))
		hi++;
	for (const struct stune_disk *const *c = lo; c < hi; c++)
		if (strlen((*c)->name) == len && !strncmp((*c)->name, name, len))
			return 0;
	if (hi - lo > 1)
		return -ENOTUNIQ;
	const struct stune_disk *d = *hit;
	char *path = stune_strdupf("%s%s%s", pre, d->name, rest);
	if (!path || !(it->was = strndup(name, len))) {
		free(path);
		return -ENOMEM;
	}
	free(e->path);
	e->path = path;
	return 0;
}

/*
 * A kernel attribute's entry read through dir (its directory, opened once
 * for one object's entries), anything else by path. A disk's attribute is
 * opened for reading and writing at once (*fd: read now, written back on
 * the same file); where that cannot be (a read-only attribute, a FIFO),
 * it is read, and written later, by name as before.
 */
static void fd_closep(int *fd)
{
	if (*fd >= 0)
		stune_root_close_written(*fd);
}

static int revert_read(const struct stune_root *root, struct stune_rdir *dir, const struct stune_jentry *e, int *fd,
		       char **out)
{
	int r;
	if (e->kind != STUNE_JK_VALUE)
		return read_entry(root, e->kind, e->path, out);
	if ((r = enter_dir(root, e->path, dir)) < 0)
		return r;
	if (dir->fd < 0)
		return stune_root_read(root, e->path, out);
	const char *base = stune_path_basename(e->path);
	if (!e->absent && !strncmp(e->path, "sys/block/", 10)) {
		int f = stune_root_open_rw_at(root, dir, base, out);
		if (f >= 0 || f == -ENOMEM) {
			*fd = f;
			return f < 0 ? f : 0;
		}
	}
	return stune_root_read_at(root, dir, base, out);
}

static int revert_one(struct stune_ctx *ctx, const struct disk_keys *keys, const char *boot, struct stune_rdir *dir,
		      struct stune_jentry *e, bool force, bool reset, struct stune_revert_item *it)
{
	/* IRQ numbers are each boot's: in another boot, N may be another device's, and the kernel placed it afresh. */
	if (boot && e->boot_id && is_irq(e) && strcmp(boot, e->boot_id)) {
		it->outcome = STUNE_RV_EARLIER_BOOT;
		e->state = STUNE_J_REVERTED;
		return 0;
	}
	int r = disk_now(keys, e, it);
	if (r == -ENODEV || r == -ENOTUNIQ) { /* not written: the path names another disk now, or none */
		it->outcome = STUNE_RV_GONE;
		it->err = -r;
		return 0;
	}
	if (r < 0)
		return r;
	_cleanup_(fd_closep) int fd = -1;
	r = revert_read(ctx->root, dir, e, &fd, &it->current);
	if (r == -ENOMEM)
		return r;
	if (e->absent) /* apply created it: revert removes it */
		return revert_created(ctx, e, force, r, it);
	if (r < 0) {
		it->outcome = r == -ENOENT ? STUNE_RV_GONE : STUNE_RV_FAILED;
		it->err = -r;
		return 0;
	}
	if (same_value(e, it->current, e->old)) {
		it->outcome = STUNE_RV_UNCHANGED;
		e->state = STUNE_J_REVERTED;
		return 0;
	}
	/* Written by apply and changed again since: not ours to undo. */
	/* reset: the kernel reset it when revert switched the scheduler back. */
	/* A side effect (RECORDED) is ours while it still reads as apply left it
	 * (after: read at the end of apply; NULL when apply was cut short). */
	bool ours = reset || e->state == STUNE_J_PENDING || (e->state == STUNE_J_RECORDED && !e->after) ||
		    ((e->state == STUNE_J_APPLIED || e->state == STUNE_J_IGNORED || e->state == STUNE_J_RECORDED) &&
		     same_value(e, it->current, e->after));
	if (!ours && !force) {
		it->outcome = STUNE_RV_CHANGED;
		return 0;
	}
	_cleanup_free_ char *val = NULL, *back = NULL;
	if ((r = restore_value(ctx->root, e, &val)) < 0)
		return r;
	int w = fd >= 0 ? write_one_fd(fd, e->path, val, it->current, &back)
			: stune_apply_write_at(ctx->root, dir, e->kind, e->path, val, &back);
	if (w < 0) {
		it->outcome = STUNE_RV_FAILED;
		it->err = -w;
		return 0;
	}
	if (!same_value(e, back, e->old)) {
		it->outcome = STUNE_RV_FAILED;
		it->err = EIO;
		return 0;
	}
	it->outcome = STUNE_RV_RESTORED;
	e->state = STUNE_J_REVERTED;
	return 0;
}

/* Entries by object, and newest first within one (the order stune_revert undoes them in). */
static int by_object_cmp(const void *a, const void *b, void *arg)
{
	const struct stune_journal *j = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const char *ox = j->entries[x].object, *oy = j->entries[y].object;
	int c = strcmp(ox ? ox : "", oy ? oy : "");
	return c ? c : (x < y) - (x > y);
}

static bool is_scheduler(const struct stune_jentry *e)
{
	return e->setting && !strcmp(e->setting, "queue/scheduler");
}

/* The items in the order the journal is undone in: scheduler switches, then the rest, each newest first. */
static int item_order_cmp(const void *a, const void *b, void *arg)
{
	const struct stune_journal *j = arg;
	const struct stune_revert_item *x = a, *y = b;
	bool sx = is_scheduler(&j->entries[x->entry]), sy = is_scheduler(&j->entries[y->entry]);
	if (sx != sy)
		return sx ? -1 : 1;
	return (x->entry < y->entry) - (x->entry > y->entry);
}

/*
 * One object's entries (idx[0..n), newest first) undone: its scheduler
 * switches first (they reset nr_requests), then the rest. Objects do not
 * act on one another, so undoing them one after the other is the same as
 * all switches first and then the rest, and a disk's queue directory is
 * opened once for all its entries.
 */
static int revert_object(struct stune_ctx *ctx, const struct disk_keys *keys, const char *boot, struct stune_rdir *dir,
			 struct stune_journal *j, const size_t *idx, size_t n_idx, bool force,
			 struct stune_revert_item *it, size_t *n)
{
	bool switched = false; /* its scheduler restored: the kernel reset its nr_requests */
	int r = 0;
	for (int pass = 0; pass < 2 && r >= 0; pass++)
		for (size_t m = 0; m < n_idx && r >= 0; m++) {
			struct stune_jentry *e = &j->entries[idx[m]];
			if ((pass == 0) != is_scheduler(e) || e->state == STUNE_J_REVERTED)
				continue;
			if ((!e->old && !e->absent) || e->state == STUNE_J_SKIPPED) {
				e->state = STUNE_J_REVERTED; /* never written */
				continue;
			}
			bool reset = switched && e->setting && !strcmp(e->setting, "queue/nr_requests");
			struct stune_revert_item *cur = &it[(*n)++];
			cur->entry = idx[m];
			r = revert_one(ctx, keys, boot, dir, e, force, reset, cur);
			if (pass == 0 && cur->outcome == STUNE_RV_RESTORED)
				switched = true;
		}
	return r;
}

int stune_revert(struct stune_ctx *ctx, const struct stune_topology *t, struct stune_journal *j, const char *state_dir,
		 bool force, struct stune_revert_item **items, size_t *n_items, bool *complete, int *irqbalance_restart)
{
	struct stune_revert_item *it = calloc(j->n ? j->n : 1, sizeof(*it));
	size_t n = 0;
	int r = 0;
	if (!it)
		return -ENOMEM;
	_cleanup_free_ size_t *idx = calloc(j->n ? j->n : 1, sizeof(*idx));
	if (!idx) {
		free(it);
		return -ENOMEM;
	}
	for (size_t k = 0; k < j->n; k++)
		idx[k] = k;
	qsort_r(idx, j->n, sizeof(*idx), by_object_cmp, j);
	_cleanup_free_ char *boot = NULL;
	_cleanup_(disk_keys_freep) struct disk_keys keys = {0};
	if ((r = boot_id_now(ctx->root, &boot)) < 0 || (r = disk_keys_build(t, &keys)) < 0) {
		free(it);
		return r;
	}
	/* A disk's attributes through its queue directory, opened once for its
	 * entries; closes batched, as apply does. */
	_cleanup_(rdir_closep) struct stune_rdir dir = STUNE_RDIR_INIT;
	_cleanup_(batch_endp) bool batch = true;
	stune_root_batch(ctx->root, true);
	for (size_t lo = 0, hi; lo < j->n && r >= 0; lo = hi) {
		const char *o = j->entries[idx[lo]].object;
		for (hi = lo + 1; hi < j->n; hi++) {
			const char *oh = j->entries[idx[hi]].object;
			if (strcmp(o ? o : "", oh ? oh : ""))
				break;
		}
		r = revert_object(ctx, &keys, boot, &dir, j, idx + lo, hi - lo, force, it, &n);
	}
	stune_root_dir_close(&dir);
	stune_root_batch(ctx->root, false);
	batch = false;
	/* Listed as before: every scheduler switch, then the rest, newest first. */
	qsort_r(it, n, sizeof(*it), item_order_cmp, j);
	bool done = true;
	for (size_t k = 0; k < j->n; k++)
		done = done && j->entries[k].state == STUNE_J_REVERTED;
	if (r >= 0)
		r = done ? stune_journal_remove(state_dir) : stune_journal_save(state_dir, j);
	if (r < 0) {
		stune_revert_items_free(it, n);
		return r;
	}
	/* irqbalance reads its defaults only when it starts: restarted (as apply
	 * does) once its file is back, after the journal says so. */
	if (irqbalance_restart) {
		*irqbalance_restart = 1;
		for (size_t m = 0; m < n; m++)
			if (it[m].outcome == STUNE_RV_RESTORED && is_irqbalance(&j->entries[it[m].entry])) {
				*irqbalance_restart = stune_irqbalance_restart(ctx);
				break;
			}
	}
	*items = it;
	*n_items = n;
	*complete = done;
	return 0;
}
