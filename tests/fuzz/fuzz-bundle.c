/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload bundle reader (libarchive: tar, zstd or not) after the
 * signature: entry names, types, sizes, the manifest first, every file's
 * SHA-256 and the module facts. Refusals are one line; what is accepted has
 * every file's data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "payload/bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stune_manifest *m = NULL;
	char *err = NULL;
	int r = stune_bundle_read(data, size, &m, &err);
	fuzz_check(r == 0 || r == -ENOMEM || ((r == -EBADMSG || r == -EFBIG) && err && *err && !strchr(err, '\n')),
		   "refused (%d) without a one-line reason", r);
	free(err);
	if (r < 0)
		return 0;
	for (size_t i = 0; i < m->n_files; i++)
		fuzz_check(m->files[i].data || m->files[i].size == 0, "%s: no data", m->files[i].name);
	stune_manifest_free(m);
	return 0;
}
