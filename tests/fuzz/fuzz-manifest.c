/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload bundle (payload install/check/pack): its manifest.json parser,
 * whose names become paths (lib/modules/RELEASE/updates/...). A manifest that
 * parses names only plain relative files and a release that is one path
 * component.
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
	int r = stune_manifest_parse((const char *)data, size, &m, &err);
	fuzz_check(r == 0 || r == -ENOMEM || (r == -EBADMSG && err && *err && !strchr(err, '\n')),
		   "refused (%d) without a one-line reason", r);
	free(err);
	if (r < 0)
		return 0;
	fuzz_check(m->release && *m->release && !strchr(m->release, '/') && strcmp(m->release, ".") &&
		       strcmp(m->release, ".."),
		   "release '%s' is not one path component", m->release);
	for (size_t i = 0; i < m->n_files; i++) {
		const char *f = m->files[i].name;
		fuzz_check(f[0] != '/' && strncmp(f, "../", 3) && !strstr(f, "/../") && strcmp(f, "..") &&
			       strcmp(f, "manifest.json"),
			   "file name '%s'", f);
	}
	for (size_t i = 0; i < m->n_modules; i++)
		fuzz_check(stune_manifest_file(m, m->modules[i].file) != NULL, "module %s: file not listed",
			   m->modules[i].name);
	stune_manifest_free(m);
	return 0;
}
