/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an initramfs holds, read with libarchive. Debian's initrd.img is one
 * or more cpio archives one after the other: uncompressed ones first (early
 * microcode), then the main one, compressed (zstd on bookworm). Each part is
 * read as its own archive, from the byte where the previous one ended (the
 * zero padding between them skipped); a compressed part is the last.
 * Reading stops once the initrd's own modules.dep is read and every asked-for
 * module it lists has been hashed at that path (an initrd carries a module
 * exactly when its modules.dep lists it: mkinitramfs runs depmod on it).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "payload/util.h"

#define STUNE_INITRD_MAX (1u << 30)

struct stune_initrd_file {
	char *module; /* the module name asked for */
	char *path;   /* inside the initrd */
	char sha256[STUNE_SHA256_HEX];
};

struct stune_initrd {
	struct stune_initrd_file *files; /* every copy of every module asked for */
	size_t n;
	char *modules_dep; /* lib/modules/R/modules.dep inside it, if any */
	unsigned parts;	   /* cpio archives read */
	size_t entries;
	/* Reading stopped early: modules.dep was read and every module it lists
	 * among those asked for was found (by its path there) and hashed. */
	bool complete;
};

void stune_initrd_free(struct stune_initrd *i);
DEFINE_CLEANUP_FUNC(struct stune_initrd, stune_initrd_free)

/* Read an initrd in memory; modules: names (scsi_mod) whose NAME.ko* files to hash; -EBADMSG + *err. */
int stune_initrd_read(const uint8_t *data, size_t len, const char *release, char *const *modules,
		      struct stune_initrd **out, char **err);
/*
 * Which file the initrd's own modules.dep gives for module name (its path
 * relative to lib/modules/R, allocated), NULL when it has no modules.dep or
 * no such module.
 */
char *stune_initrd_resolve(const struct stune_initrd *i, const char *name);
/* The copy of module name at a path ending in relpath (lib/modules/R-relative), or NULL. */
const struct stune_initrd_file *stune_initrd_file(const struct stune_initrd *i, const char *name, const char *relpath);
