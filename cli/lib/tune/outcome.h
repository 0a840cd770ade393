/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The outcome rules of apply: what became of each row of the plan it wrote.
 *
 *   already         the plan found the value right; nothing written
 *   skipped         not settable on this host (the plan says why)
 *   not-applicable  the plan's note says why
 *   applied         written and read back in effect
 *   ignored         the kernel accepted the write but it is not in effect
 *   rejected        EINVAL from the kernel
 *   not-settable    EIO from the kernel
 *   failed          any other errno, or the old value could not be read
 *                   (not written)
 *
 * The last four count as failed (apply's exit code 1).
 */
#pragma once

#include <stddef.h>

#include "tune/journal.h"
#include "tune/plan.h"

struct stune_outcome {
	const char *result; /* the word above */
	const char *why;    /* NULL, the plan's note, or buf */
	int err;	    /* the write's errno, or 0 */
	char buf[256];
};

/*
 * res[i] for each of plan's rows, from the journal's entries from first on
 * (this apply's; an earlier apply's entries before them are not looked at).
 * restart_note: what an applied irqbalance row says (NULL: nothing). Adds
 * the applied rows to *applied and the failed ones to *failed. -ENOMEM.
 */
int stune_apply_outcomes(const struct stune_plan *plan, const struct stune_journal *j, size_t first,
			 const char *restart_note, struct stune_outcome *res, size_t *applied, size_t *failed);

/* The note of an irqbalance restart stune_apply_plan reported (its *restart:
 * 1 not restarted: NULL; 0 done; -ENOENT no systemctl; else failed). */
const char *stune_irqbalance_restart_note(int rr);
