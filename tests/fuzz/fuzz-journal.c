/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * apply's journal (revert, verify, apply's check for an earlier one, report's
 * provenance): STATE/journal.json and the journal.log it names, the input
 * being the two separated by a line "%%". A journal that loads is saved to
 * another directory and loaded again: the same journal (the round trip a
 * partial revert makes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tune/journal.h"

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[2];
	size_t lens[2];
	size_t n = fuzz_split(data, size, "\n%%\n", parts, lens, 2);
	char a[4096], b[4096];
	snprintf(a, sizeof(a), "%s/a", fuzz_dir());
	snprintf(b, sizeof(b), "%s/b", fuzz_dir());
	fuzz_write(a, "journal.json", parts[0], lens[0]);
	fuzz_write(b, ".keep", "", 0);
	if (n > 1)
		fuzz_write(a, "journal.log", parts[1], lens[1]);
	else
		fuzz_unlink(a, "journal.log");
	struct stune_journal *j = NULL, *k = NULL;
	if (stune_journal_load(a, &j) < 0)
		return 0;
	fuzz_check(stune_journal_save(b, j) == 0, "save");
	fuzz_check(stune_journal_load(b, &k) == 0, "a saved journal does not load");
	fuzz_check(k->n == j->n && same_str(k->profile, j->profile) && same_str(k->digest, j->digest) &&
		       k->started == j->started && k->persist == j->persist,
		   "the journal read back differs");
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_jentry *x = &j->entries[i], *y = &k->entries[i];
		fuzz_check(same_str(x->object, y->object) && same_str(x->setting, y->setting) &&
			       same_str(x->path, y->path) && same_str(x->old, y->old) &&
			       same_str(x->desired, y->desired) && same_str(x->after, y->after) &&
			       x->state == y->state && x->err == y->err && x->kind == y->kind && x->absent == y->absent,
			   "entry %zu read back differs", i);
	}
	stune_journal_free(j);
	stune_journal_free(k);
	return 0;
}
