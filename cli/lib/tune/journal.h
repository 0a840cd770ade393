/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The apply journal and lock. apply records every value it is about to change
 * (the old value, raw as read) before its first write, and each write's
 * outcome after it; revert walks the journal newest first. The journal is
 * <state>/journal.json, replaced atomically (tmp + fsync + rename + fsync of
 * the directory); <state>/lock (flock) keeps two applies or reverts apart.
 *
 * During an apply the outcomes go to <state>/journal.log instead, one JSON
 * line per write, appended (one write(2) each, no fsync: O(1) per setting,
 * where rewriting journal.json each time was O(n) and made 20,000 writes take
 * minutes). journal.json names its log ("log": id, also the log's first line),
 * so a log left from another apply is never replayed. A process killed half
 * way leaves every line it wrote (the page cache survives it); a power loss
 * may lose the tail, and those entries read back as "pending", which revert
 * restores anyway: the old values themselves were fsync'd before the first
 * write. At the end apply compacts: journal.json with every outcome, no log.
 * The state directory is a host path (default: /var/lib/scsitune inside the
 * --sysroot tree).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/macro.h"
#include "core/trust.h"
#include "tune/profile.h"

#define STUNE_STATE_DIR	      "/var/lib/scsitune"
#define STUNE_JOURNAL_VERSION 1

enum stune_jstate {
	STUNE_J_PENDING = 0, /* recorded, not written yet (or the write was interrupted) */
	STUNE_J_APPLIED,     /* written, read back, and the plan now sees it in effect */
	STUNE_J_IGNORED,     /* the write was accepted but the value did not change */
	STUNE_J_FAILED,	     /* the write failed: err */
	STUNE_J_SKIPPED,     /* not written */
	STUNE_J_RECORDED,    /* not written by apply, changed as a side effect (nr_requests after a scheduler switch) */
	STUNE_J_REVERTED,    /* revert restored the old value */
	_STUNE_J_MAX
};

enum stune_jkind {
	STUNE_JK_VALUE = 0, /* a kernel attribute, written in place */
	STUNE_JK_FILE,	    /* a configuration file under etc/, replaced whole */
	STUNE_JK_SYMLINK,   /* a symlink under etc/ (old/desired/after: its target) */
};

struct stune_jentry {
	enum stune_jkind kind;
	bool absent; /* there was nothing at path before apply: revert removes what apply created */
	char *object;
	char *setting;
	char *path;    /* root-relative */
	char *old;     /* raw as read before apply (one trailing newline removed) */
	char *desired; /* what apply writes; NULL for recorded side effects */
	char *after;   /* raw as read back after the write; NULL if not written */
	enum stune_jstate state;
	int err;       /* errno of a failed write */
	char *boot_id; /* an IRQ's entry: the boot it was written in (IRQ numbers are each boot's); NULL unknown */
};

struct stune_journal {
	char *profile;	    /* name as asked for */
	char *profile_path; /* the file it came from */
	char *profile_dir;  /* --profile-dir of the apply (include= names resolve there) */
	char *digest;	    /* SHA-256 (hex) of the resolved profile */
	bool persist;	    /* apply --persist: the plan has the persist rows (verify adds them too) */
	char *payload;	    /* apply --payload: "PAYLOAD_VERSION RELEASE" installed with it (payload/journal.h) */
	long long started;  /* unix seconds */
	char *log_id;	    /* the outcome log this journal.json names; NULL when compact */
	struct stune_jentry *entries;
	size_t n;
	size_t cap; /* entries allocated (stune_journal_add doubles it) */
};

void stune_journal_free(struct stune_journal *j);
DEFINE_CLEANUP_FUNC(struct stune_journal, stune_journal_free)
int stune_journal_add(struct stune_journal *j, const char *object, const char *setting, const char *path,
		      const char *old, const char *desired, enum stune_jstate state);

/*
 * The state directory for the host prefix ("" live) and --state-dir (NULL: default); create: mkdir -p.
 * It and every directory above it must be trusted (core/trust.h: root's, not writable by group or
 * others), checked before it is made and after: -EPERM with *bad naming the one at fault.
 */
int stune_state_dir(const char *prefix, const char *opt, bool create, char **out, struct stune_trust_fault *bad);
/*
 * Who holds <dir>/lock when it could not be taken. An exclusive holder
 * (apply, revert, payload install and remove) writes "PID COMMAND\n" into
 * the file as soon as it holds it; a shared one (verify) writes nothing.
 */
struct stune_lock_holder {
	pid_t pid;     /* the holder's pid; 0: not known (why says why) */
	bool shared;   /* held shared only: a verify reading the host */
	char what[32]; /* the command the holder wrote ("apply", "payload remove"); "" when none */
	char why[128]; /* pid 0: why it is not known ("the lock file is empty: ...") */
};
/*
 * flock <dir>/lock (LOCK_EX, non-blocking; the file never followed if it is a
 * symbolic link: -ELOOP; not a regular file: -STUNE_ENOTREG or -EISDIR) and
 * write "PID WHAT\n" into it. -EWOULDBLOCK: *holder says who holds it.
 */
int stune_lock_take(const char *dir, const char *what, int *fd, struct stune_lock_holder *holder);
/*
 * The same lock shared (verify: many at once, never while apply, revert or
 * payload holds it), writing nothing. No lock file (nothing was ever applied
 * with dir): 0 with *fd -1.
 */
int stune_lock_take_shared(const char *dir, int *fd, struct stune_lock_holder *holder);
/* The compact journal (every outcome in journal.json); removes a journal.log. */
int stune_journal_save(const char *dir, struct stune_journal *j);
/* journal.json (fsync'd) naming a fresh, empty journal.log; *fd: that log, for log_entry. */
int stune_journal_log_begin(const char *dir, struct stune_journal *j, int *fd);
/* Append the outcomes (state, after, errno) of entries i[0..n-1] to the log,
 * a line each, in one write(2): apply logs each object's writes together. */
int stune_journal_log_entries(int fd, const struct stune_journal *j, const size_t *i, size_t n);
/* Load journal.json and replay the log it names (a torn last line is ignored).
 * -ENOENT: no journal. -EBADMSG: not a journal. -EXDEV: a change's path is not
 * one scsitune writes (a relative path under sys/ or proc/ for a value, etc/
 * for a file; no ".", ".." or empty component): a journal edited by hand is
 * never followed outside the tree. -ELOOP: journal.json or journal.log is a
 * symbolic link. And stune_read_user_file()'s errors (a FIFO, a directory, a
 * NUL byte, over the size cap). */
int stune_journal_load(const char *dir, struct stune_journal **out);
/* The same; on an error *file is the file at fault: "journal.json" or "journal.log". */
int stune_journal_load_named(const char *dir, struct stune_journal **out, const char **file);
/* The words for stune_journal_load()'s errors ("not a scsitune journal", ...). */
const char *stune_journal_strerror(int r);
int stune_journal_remove(const char *dir);
/*
 * Whether j names only what apply could have written, before revert (or an
 * apply or verify) acts on it: a kernel attribute only a disk's queue
 * settings (sys/block/DISK/queue/..., device/queue_depth) or an IRQ's
 * proc/irq/N/smp_affinity_list (object irq:N), never marked absent; a file
 * or link only etc/default/irqbalance or one of apply --persist's (persist.h),
 * of its kind and object; the enabling link's old target only the unit.
 * 0, or -EXDEV with *bad the first other entry's index and *why the reason.
 */
int stune_apply_journal_check(const struct stune_journal *j, size_t *bad, const char **why);

/* SHA-256 over the resolved profile (every rule, include order), hex. */
int stune_profile_digest(const struct stune_profile *p, char **out);
