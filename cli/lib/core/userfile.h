/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files opened on a user's word: an fio output, a profile and its includes,
 * the settings file, the auth file, a job file, a saved result set, the CA
 * file, and scsitune's own state files under --state-dir. Each is opened
 * O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC, so neither a FIFO without a writer
 * nor a terminal can block the open; fstat()ed and refused unless it is a
 * regular file (a FIFO, /dev/zero or a directory would otherwise hang the
 * read or be taken for an empty file); and read with a size cap.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The -errno for "not a regular file" (a FIFO, a socket, a device); a
 * directory is -EISDIR. stune_user_file_strerror() words both. */
#define STUNE_ENOTREG EMEDIUMTYPE

enum {
	STUNE_UF_TEXT = 1 << 0, /* a NUL byte in the file is -EILSEQ */
};

/*
 * Open path for reading and check it is a regular file; *fd is blocking again
 * (O_NONBLOCK cleared). st (optional) gets its fstat. -errno: as open(2)
 * gives it, -EISDIR, -STUNE_ENOTREG.
 */
int stune_user_file_open(const char *path, int *fd, struct stat *st);

/*
 * The whole file, NUL-terminated (len, optional: its length without the NUL).
 * -EFBIG when it holds more than cap bytes; -EILSEQ for a NUL byte with
 * STUNE_UF_TEXT.
 */
int stune_read_user_file(const char *path, size_t cap, unsigned flags, char **out, size_t *len);
/* The same from an fd stune_user_file_open() gave. */
int stune_read_user_fd(int fd, size_t cap, unsigned flags, char **out, size_t *len);

/*
 * The message for an error of the three: "not a regular file", "Is a
 * directory", "larger than 1 MiB" (cap: the cap given, 0 if unknown),
 * "contains a NUL byte", else strerror. Thread-local storage, valid until the
 * next call on the thread.
 */
const char *stune_user_file_strerror(int r, size_t cap);
