/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libarchive and libkmod, loaded on first use (core/dlib.h). */
#include <stddef.h>

#define STUNE_DLIB_LOADER
#include "core/crypto-api.h"
#include "core/dlib.h"
#include "payload/archive-api.h"
#include "payload/kmod-api.h"

struct stune_archive_api stune_archive;
struct stune_kmod_api stune_kmod;

#define STUNE_ARCHIVE_OFFSET(f) offsetof(struct stune_archive_api, f),
STUNE_DLIB_DEFINE(archive_lib, "libarchive.so.13", "libarchive13", STUNE_ARCHIVE_SYMS, STUNE_ARCHIVE_OFFSET,
		  &stune_archive, NULL);

int stune_archive_load(char **err)
{
	return stune_dlib_load(&archive_lib, err);
}

#define STUNE_KMOD_OFFSET(f) offsetof(struct stune_kmod_api, f),
STUNE_DLIB_DEFINE(kmod_lib, "libkmod.so.2", "libkmod2", STUNE_KMOD_SYMS, STUNE_KMOD_OFFSET, &stune_kmod, NULL);

int stune_kmod_load(char **err)
{
	/* libkmod is linked with libcrypto: loaded first through scsitune's own
	 * loader, so that under a sysroot it reads no host configuration. */
	int r = stune_crypto_load(err);
	return r < 0 ? r : stune_dlib_load(&kmod_lib, err);
}
