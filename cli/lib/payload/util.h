/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers of the payload room: whole binary files, SHA-256, hex. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/root.h"

#define STUNE_SHA256_HEX 65 /* 64 hex digits and the NUL */

/* Read fd to its end into memory; -EFBIG past max bytes. */
int stune_read_fd(int fd, size_t max, uint8_t **data, size_t *len);
/*
 * Read a whole file: a regular file only (a FIFO or device is refused with
 * -EINVAL before a byte is read), at most max bytes (-EFBIG). host: a host
 * path (the user's word); root: a root-relative path in r.
 */
int stune_read_host_file(const char *host, size_t max, uint8_t **data, size_t *len);
int stune_read_root_file(const struct stune_root *r, const char *path, size_t max, uint8_t **data, size_t *len);
/* SHA-256 of data as 64 lower-case hex digits. */
void stune_sha256_hex(const void *data, size_t len, char out[STUNE_SHA256_HEX]);
/* SHA-256 of a root-relative file; -ENOENT when absent. */
int stune_sha256_root_file(const struct stune_root *r, const char *path, char out[STUNE_SHA256_HEX]);
/* Lower-case hex of n bytes; out holds 2n+1. */
void stune_hex(const uint8_t *b, size_t n, char *out);

/* Create name in the directory dfd (O_EXCL, no symlink followed), write data, fsync. */
int stune_dir_write(int dfd, const char *name, const void *data, size_t len, mode_t mode);
/* fsync a directory fd. */
int stune_dir_sync(int dfd);

/*
 * Run argv (argv[0] an absolute path or a name looked up in PATH) with
 * stdin from /dev/null and stdout+stderr captured (at most 64 KiB kept,
 * the tail): *output (allocated, may be NULL) is what it printed. Returns
 * its exit status (0-255), 128+N for a signal, -ENOENT when it cannot be
 * started, -errno on other failures. chroot_dir: run inside it (root only).
 * The child keeps no descriptor of ours but 0, 1 and 2 past its exec.
 */
int stune_run(const char *const *argv, const char *chroot_dir, char **output);
/* The same, with setup(data) called in the child before the exec instead of
 * the chroot: a failure (-errno) exits 126, after setup wrote why to fd 2
 * (what the caller gets back in *output). */
int stune_run_setup(const char *const *argv, int (*setup)(void *data), void *data, char **output);
/* The last non-empty line of text (for one-line errors), allocated. */
char *stune_last_line(const char *text);
