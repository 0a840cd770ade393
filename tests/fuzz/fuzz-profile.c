/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Profiles (apply --profile): the INI loader with include=, from a directory
 * of this process's own. The input is up to three files a, b and c,
 * separated by a line "%%"; a is loaded by name (includes of b or ./b resolve
 * in the directory) and by path. A profile that loads gets its digest and,
 * when $SCSITUNE_FUZZ_TREE names a fixture tree, its plan on that host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/scan.h"
#include "fuzz.h"
#include "tune/journal.h"
#include "tune/plan.h"
#include "tune/profile.h"

static struct stune_topology *topo;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tree = getenv("SCSITUNE_FUZZ_TREE");
	struct stune_ctx *ctx = NULL;
	if (tree && *tree && stune_ctx_new(tree, &ctx) == 0) {
		if (stune_topology_scan_for_plan(ctx, &topo) < 0)
			topo = NULL;
		stune_ctx_free(ctx);
	}
	return 0;
}

static void load(const char *name_or_path, const char *dir)
{
	struct stune_profile *p = NULL;
	char *err = NULL;
	int r = stune_profile_load(name_or_path, dir, &p, &err);
	fuzz_check_message(r, err);
	fuzz_check(r < 0 ? err != NULL || r == -ENOMEM : p != NULL, "r %d without a message", r);
	free(err);
	if (r < 0)
		return;
	char *digest = NULL;
	fuzz_check(stune_profile_digest(p, &digest) == 0 && strlen(digest) == 64, "digest");
	free(digest);
	if (topo) {
		struct stune_plan *plan = NULL;
		if (stune_plan_build(topo, p, &plan) == 0)
			stune_plan_free(plan);
	}
	stune_profile_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[3];
	size_t lens[3];
	size_t n = fuzz_split(data, size, "\n%%\n", parts, lens, 3);
	static const char *const names[3] = {"a", "b", "c"};
	for (size_t i = 0; i < 3; i++) {
		if (i < n)
			fuzz_write(NULL, names[i], parts[i], lens[i]);
		else
			fuzz_unlink(NULL, names[i]);
	}
	load("a", fuzz_dir());
	char path[4096];
	snprintf(path, sizeof(path), "%s/a", fuzz_dir());
	load(path, NULL);
	return 0;
}
