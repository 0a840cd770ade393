/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of tune/ share among themselves and no other room uses
 * (tests/layout keeps it inside tune/): the plan's extra rows and its index,
 * the one write path, the journal's state names, the profile's word lists.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "tune/apply.h"
#include "tune/journal.h"
#include "tune/plan.h"
#include "tune/profile.h"

struct stune_rdir;
struct stune_root;

/* Append a row built outside the plan engine (persist.c); the strings are copied, cls is unused (0). */
int stune_plan_add_row(struct stune_plan *plan, enum stune_object_kind kind, const char *object, const char *setting,
		       const char *path, const char *current, const char *desired, enum stune_change_state state,
		       const char *note);

/* The plan's rows sorted by (object, setting): lookups in O(log n) on plans of 20,000 rows. */
struct stune_plan_index {
	const struct stune_change **rows;
	size_t n;
};
int stune_plan_index_build(const struct stune_plan *plan, struct stune_plan_index *idx);
const struct stune_change *stune_plan_index_find(const struct stune_plan_index *idx, const char *object,
						 const char *setting);
void stune_plan_index_free(struct stune_plan_index *idx);

/*
 * Write one value; after (optional): what reads back then (NULL if that read
 * failed), for a kernel attribute through the same open file. Test builds (-DSCSITUNE_TEST_HOOKS=ON) honour
 * SCSITUNE_FAIL_WRITE=SUBSTRING:ERRNO (a write to a path containing
 * SUBSTRING fails with ERRNO, a number or EIO/EINVAL/EBUSY/EPERM/EACCES, or
 * with "ignore" succeeds without writing anything) and
 * SCSITUNE_TEST_ABORT_AFTER=N (abort() instead of write number N+1).
 */
int stune_apply_write(const struct stune_root *r, enum stune_jkind kind, const char *path, const char *value,
		      char **after);
/* The same for a kernel attribute at path whose directory dir is open (stune_root_dir_open of path's dirname). */
int stune_apply_write_at(const struct stune_root *r, const struct stune_rdir *dir, enum stune_jkind kind,
			 const char *path, const char *value, char **after);

const char *stune_jstate_name(enum stune_jstate s);

/* True when value is one of the space-separated words of list. */
bool stune_word_in(const char *list, const char *value);
