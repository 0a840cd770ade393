/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune's own state files (result sets, the upload spool, the apply
 * journal): created with their parent directories and replaced atomically,
 * so a crash leaves either the old file or the new one, never half of one.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* mkdir -p: parents 0755, the last one with mode; -ENOTDIR if a file is in the way. */
int stune_mkdir_p(const char *path, mode_t mode);

/*
 * Write dir/name: a temporary file in dir, write, fchmod(mode), fsync, rename,
 * fsync of dir. On failure the temporary file is removed and dir/name is
 * untouched. final (optional) receives the path written.
 */
int stune_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode, char **final);
/*
 * The same, the content written by fill(f, data) to the temporary file
 * through a FILE (no copy of it in memory); fill returns 0 or -errno, and a
 * write error of f fails the whole.
 */
int stune_write_atomic_fn(const char *dir, const char *name, mode_t mode, int (*fill)(FILE *f, void *data), void *data,
			  char **final);
