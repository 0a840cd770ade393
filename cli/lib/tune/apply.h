/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing a plan (apply) and undoing it (revert), with the journal. Every
 * write of scsitune goes through stune_apply_write(). Never prints.
 */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "tune/journal.h"
#include "tune/plan.h"

/*
 * Apply the plan's CHANGE rows in plan order (irqbalance's first). Takes nothing but the plan;
 * the caller holds the lock. The journal j (profile fields filled by the
 * caller) gets one entry per CHANGE row (plus the nr_requests of a disk
 * whose scheduler changes), all saved to state_dir before the first write;
 * a disk's old value is the raw text the plan's scan read (stune_disk.raw),
 * other old values are read here;
 * each write's outcome is appended to the journal's log, and the journal is
 * compacted at the end. Each written file is read back right after its
 * write (through the same descriptor) and compared with the plan's row by
 * meaning: a write the kernel accepted but that is not in effect is IGNORED
 * (the host is not scanned again). Returns -errno only for failures of the journal
 * or of reading the host; failed writes are in the entries.
 * irqbalance's defaults file is written first; with irqbalance_restart
 * (the caller's: an irqbalance runs under systemd) it is then restarted
 * (stune_irqbalance_restart, its result stored there; untouched when the
 * file was not written), and only then the IRQs are pinned: a running
 * irqbalance may move a pinned IRQ it was not told to leave alone.
 */
int stune_apply_plan(struct stune_ctx *ctx, const struct stune_plan *plan, const char *state_dir,
		     struct stune_journal *j, int *irqbalance_restart);

enum stune_revert_outcome {
	STUNE_RV_RESTORED = 0, /* written back and read back as the old value */
	STUNE_RV_UNCHANGED,    /* already the old value: nothing to write */
	STUNE_RV_CHANGED,      /* someone else changed it since apply: left alone (no --force) */
	STUNE_RV_FAILED,       /* the write back failed: err */
	STUNE_RV_GONE,	       /* the file is not there any more (ENODEV: nor the disk) */
	STUNE_RV_EARLIER_BOOT, /* an IRQ's, written in an earlier boot: not written (the number may be another's now) */
	_STUNE_RV_MAX
};

struct stune_revert_item {
	size_t entry; /* index into the journal */
	enum stune_revert_outcome outcome;
	char *current; /* raw, before the write back */
	char *was;     /* a disk's kernel name at apply, when it has another now (NULL: the same) */
	int err;
};

/*
 * Whether every disk of the journal is still where it was: each disk entry's
 * kernel name (sys/block/NAME/...) has the key the entry names now
 * (stune_disk_key_by_name, one disk at a time). true: stune_revert needs no
 * scan of the host (t NULL restores every path as journaled, which is then
 * the same disk); false: a disk moved, is gone or has no key now: scan.
 */
int stune_revert_disks_in_place(struct stune_ctx *ctx, const struct stune_journal *j, bool *in_place);

/*
 * Restore every value of the journal, newest first (scheduler switches
 * before the rest: a switch resets nr_requests). Entries restored are marked
 * REVERTED and the journal saved; when nothing is left, it is removed.
 * items: one per entry looked at (caller frees with stune_revert_items_free).
 * t: the host now; a disk's entries are restored on the disk with their
 * object's key in t, whatever its kernel name is now (the path is rewritten),
 * and are GONE (ENODEV, nothing written) when t has none. NULL: every path as
 * journaled. An IRQ's entry written in another boot than this one
 * (proc/sys/kernel/random/boot_id) is EARLIER_BOOT: nothing written, done.
 * irqbalance_restart (NULL: never; the caller says whether irqbalance runs
 * under systemd, as for stune_apply_plan): 1 when irqbalance's file was not
 * restored, else what stune_irqbalance_restart returned.
 */
int stune_revert(struct stune_ctx *ctx, const struct stune_topology *t, struct stune_journal *j, const char *state_dir,
		 bool force, struct stune_revert_item **items, size_t *n_items, bool *complete,
		 int *irqbalance_restart);
void stune_revert_items_free(struct stune_revert_item *items, size_t n);
const char *stune_revert_outcome_name(enum stune_revert_outcome o);
