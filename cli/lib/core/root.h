/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The root-prefixed path layer. Every /sys, /proc, /run and /lib/modules
 * access of scsitune goes through here, with paths relative to the root
 * ("sys/class/scsi_host"). The live root is "/"; --sysroot DIR makes it DIR.
 * Symlinks are resolved inside the root, never against the host.
 */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>

#include "core/macro.h"

struct stune_root;

/* prefix NULL or "/" means the live system. -ENOENT/-ENOTDIR for a bad DIR. */
int stune_root_new(const char *prefix, struct stune_root **out);
void stune_root_free(struct stune_root *r);
DEFINE_CLEANUP_FUNC(struct stune_root, stune_root_free)

bool stune_root_is_live(const struct stune_root *r);
/* The prefix as given ("" for live), for messages. */
const char *stune_root_prefix(const struct stune_root *r);
/* Host path of a root-relative path, for messages and for libraries that need one. */
int stune_root_host_path(const struct stune_root *r, const char *path, char **out);

/* Open a root-relative path (symlinks resolved inside the root); an fd or -errno. */
int stune_root_open(const struct stune_root *r, const char *path, int flags);
/* Whole file; one trailing newline removed. -ENOENT, -EACCES, -EISDIR... */
int stune_root_read(const struct stune_root *r, const char *path, char **out);
int stune_root_readf(const struct stune_root *r, char **out, const char *fmt, ...) _printf_(3, 4);
/* Write value (opened O_WRONLY|O_TRUNC, one write()); -errno as the kernel gave it. */
int stune_root_write(const struct stune_root *r, const char *path, const char *value);
/* Write, then read back through the same open file (back: as stune_root_read
 * gives it; NULL when the read-back failed). */
int stune_root_write_read(const struct stune_root *r, const char *path, const char *value, char **back);
/* A configuration file under the root (etc/...): replaced atomically (temporary
 * file in its directory, fsync, rename, fsync of the directory), keeping its
 * mode (mode when it is new). */
int stune_root_replace(const struct stune_root *r, const char *path, const char *data, mode_t mode);
/* path (under etc/) becomes a symlink to target, atomically (a temporary link renamed over it). */
int stune_root_symlink(const struct stune_root *r, const char *path, const char *target);
/* Remove the file or symlink path (not a directory); -ENOENT when it is not there. */
int stune_root_unlink(const struct stune_root *r, const char *path);
int stune_root_readlink(const struct stune_root *r, const char *path, char **out);
/* Canonical root-relative path with every symlink resolved inside the root. */
int stune_root_resolve(const struct stune_root *r, const char *path, char **out);
int stune_root_opendir(const struct stune_root *r, const char *path, DIR **out);
bool stune_root_exists(const struct stune_root *r, const char *path);

/* Join helpers for root-relative paths. */
int stune_path_join(char **out, const char *a, const char *b);
/* Pointer to the last component. */
const char *stune_path_basename(const char *path);
/* Parent directory of a root-relative path (allocated). */
int stune_path_dirname(const char *path, char **out);
