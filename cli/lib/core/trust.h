/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trust rule for what scsitune, run as root, reads back and acts on: its
 * state directory (journals, the kept initrd, saved result sets, the spool,
 * the lock) and the trusted keys. As sshd's StrictModes checks
 * authorized_keys: the file or directory, and every directory on the way to
 * it from the real /, is owned by root (or by uid, the invoking user, when
 * that is not root) and not writable by its group or others. A directory
 * writable by group or others is accepted only when it is root's and has the
 * sticky bit (/tmp, mode 1777): there no other user can remove or replace an
 * entry that is not theirs. A symbolic link on the way must be root's (or
 * uid's) and its target is checked the same way. Otherwise another user could
 * plant the files that make root write, load or trust what they chose.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What made a path untrusted: the component at fault, its owner and mode. */
struct stune_trust_fault {
	char *path;  /* allocated; NULL when there is no fault */
	uid_t owner; /* its owner */
	mode_t mode; /* its st_mode */
	uid_t uid;   /* who was to trust it */
};
void stune_trust_fault_clear(struct stune_trust_fault *f);

/*
 * path (relative: to the working directory) and every component on the way
 * from /, symbolic links followed by hand. 0: trusted; a missing tail is
 * (nothing is there yet to trust or distrust, nor below a file: the caller's
 * own open says what is wrong). -EPERM: *bad names the component at fault.
 * Else -errno (-ELOOP: over 40 links, -EACCES).
 */
int stune_path_trusted(const char *path, uid_t uid, struct stune_trust_fault *bad);
/*
 * The directory dfd is, and every directory above it up to the real / (by
 * ".."): for a directory the root layer opened inside a --sysroot tree. 0,
 * -EPERM with *bad, or -errno.
 */
int stune_dir_fd_trusted(int dfd, uid_t uid, struct stune_trust_fault *bad);
/* One file's stat (path: its name, for *bad): 0 or -EPERM. */
int stune_stat_trusted(const char *path, const struct stat *st, uid_t uid, struct stune_trust_fault *bad);

/*
 * The fault and its fix, for a message: "PATH is owned by uid 65534, not
 * root: chown root PATH", "PATH is writable by others (mode 0777): chmod o-w
 * PATH". When PATH is subject itself, "PATH is " is left out. Allocated; NULL:
 * out of memory.
 */
char *stune_trust_fault_msg(const struct stune_trust_fault *f, const char *subject);

/*
 * base/rel as a directory: base as given (a state directory the caller
 * checked with stune_path_trusted()), each component of rel opened with
 * O_NOFOLLOW, so a symbolic link there is -ELOOP, never followed; a missing
 * one is made (mode, 0755 for those above it) with create, base too, else
 * -ENOENT. fd (optional): the directory, O_RDONLY|O_DIRECTORY; path
 * (optional): "base/rel".
 */
int stune_state_subdir(const char *base, const char *rel, mode_t mode, bool create, int *fd, char **path);
/* The words for an error of a file or directory under the state directory:
 * -ELOOP "a symbolic link: refused", else stune_user_file_strerror(r, cap). */
const char *stune_state_strerror(int r, size_t cap);
