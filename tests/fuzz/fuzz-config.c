/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The settings file (report --config FILE, and etc/scsitune/scsitune.conf through the root layer). */
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "core/root.h"
#include "fuzz.h"

static struct stune_root *root;
static char rootdir[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(rootdir, sizeof(rootdir), "%s/root", fuzz_dir());
	fuzz_write(rootdir, "etc/scsitune/.keep", "", 0);
	fuzz_check(stune_root_new(rootdir, &root) == 0, "a root on %s", rootdir);
	return 0;
}

static void check(int r, struct stune_config *c, char *err)
{
	fuzz_check_message(r, err);
	if (r == 0) {
		fuzz_check(c != NULL, "no settings");
		fuzz_check(c->upload_timeout_s == 0 || (c->upload_timeout_s >= STUNE_UPLOAD_TIMEOUT_MIN &&
							c->upload_timeout_s <= STUNE_UPLOAD_TIMEOUT_MAX),
			   "timeout %ld", c->upload_timeout_s);
		stune_config_free(c);
	}
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root)
		LLVMFuzzerInitialize(NULL, NULL);
	struct stune_config *c = NULL;
	char *err = NULL, path[4096];
	fuzz_write(NULL, "scsitune.conf", data, size);
	snprintf(path, sizeof(path), "%s/scsitune.conf", fuzz_dir());
	int r = stune_config_load(path, false, &c, &err);
	check(r, c, err);
	c = NULL;
	err = NULL;
	fuzz_write(rootdir, "etc/scsitune/scsitune.conf", data, size);
	r = stune_config_load_root(root, false, &c, &err);
	check(r, c, err);
	return 0;
}
