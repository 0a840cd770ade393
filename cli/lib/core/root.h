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
/* The same for a file that must be a regular file (a configuration file, not a
 * kernel attribute): anything else is -STUNE_ENOTREG (core/userfile.h), a directory -EISDIR. */
int stune_root_read_regular(const struct stune_root *r, const char *path, char **out);
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
/*
 * Whether DIR/path, resolved the way the host resolves it (a program that is
 * not chrooted into the tree: depmod -b, an administrator's shell), stays
 * inside the tree: each component from the tree's top, every symlink read and
 * its text walked (never opened through). 0 when it stays inside, or stops at
 * a missing component or a file (nothing there to follow); -EXDEV when a
 * symlink leads out of the tree (an absolute target, or ".." above its top):
 * *link is that symlink's path in the tree ("/lib/modules/R"), *target its
 * text (both allocated); -ELOOP past 40 links. The live root: 0.
 */
int stune_root_confined(const struct stune_root *r, const char *path, char **link, char **target);
/* Canonical root-relative path with every symlink resolved inside the root. */
int stune_root_resolve(const struct stune_root *r, const char *path, char **out);
int stune_root_opendir(const struct stune_root *r, const char *path, DIR **out);
bool stune_root_exists(const struct stune_root *r, const char *path);

/*
 * A directory opened once inside the root, its entries read relative to it:
 * one path walk per directory instead of one per file. The guarantee of
 * the root layer holds: an entry is opened beneath the directory
 * (RESOLVE_BENEATH); a symlink that would leave it (an absolute one, or
 * ".." above it) is resolved again from the root with the full path
 * (RESOLVE_IN_ROOT), exactly as stune_root_read() would. Without openat2
 * every access is resolved by hand from the root.
 */
struct stune_rdir {
	int fd;		/* O_PATH directory; -1 when not open */
	char *path;	/* root-relative path it was opened by */
	bool canonical; /* path is the directory's own: no symlink, ".", ".." in it */
};
#define STUNE_RDIR_INIT ((struct stune_rdir){.fd = -1})

/* Open the directory at path (symlinks resolved inside the root): one open. */
int stune_root_dir_open(const struct stune_root *r, const char *path, struct stune_rdir *out);
/* The same, and canonical when path proves to be the directory's own (one open
 * with no symlink allowed; through a symlink, a second open). */
int stune_root_dir_open_canonical(const struct stune_root *r, const char *path, struct stune_rdir *out);
/*
 * Open the directory that the entry name of dir is or links to, inside the
 * root, with its canonical path (what stune_root_resolve() gives): for a
 * link below a canonical directory, one readlinkat and one open.
 */
int stune_root_dir_open_entry(const struct stune_root *r, const struct stune_rdir *dir, const char *name,
			      struct stune_rdir *out);
/*
 * Where the entry name of dir links to, without opening it: the link's
 * target joined to dir's canonical path (one readlinkat; a directory entry
 * itself: the joined name). Canonical only when no symlink lies on the way:
 * stune_root_dir_open_canonical() of it says so (and when it does not, the
 * path to use is stune_root_resolve() of it). -EAGAIN when it cannot be
 * given this way (dir not canonical, no openat2, a ".." after a name): then
 * stune_root_dir_open_entry() or stune_root_resolve() decide.
 */
int stune_root_dir_entry_target(const struct stune_root *r, const struct stune_rdir *dir, const char *name, char **out);
void stune_root_dir_close(struct stune_rdir *d);
/* As stune_root_read / stune_root_write_read, for rel (relative, no leading '/') in dir. */
int stune_root_read_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **out);
int stune_root_write_read_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel,
			     const char *value, char **back);
/*
 * An attribute read and written on one open file (revert: what is there
 * now, then the old value back, then read back; one open instead of two):
 * stune_root_open_rw_at opens rel in dir for reading and writing and reads
 * it from the start into *now (the descriptor is returned, or -errno);
 * stune_root_rewrite_fd writes value at the start in one write and reads
 * the file back, as stune_root_write_read. now_len: the length read before;
 * a shorter value cuts the file there (a captured tree's regular file
 * keeps what was past the end; sysfs ignores sizes). Close the descriptor
 * with stune_root_close_written.
 */
int stune_root_open_rw_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **now);
int stune_root_rewrite_fd(int fd, const char *value, size_t now_len, char **back);
void stune_root_close_written(int fd);
/* readlink of the entry rel of dir (the link itself, not followed). */
int stune_root_readlink_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **out);
/*
 * On (per thread): files read, and attributes written through a directory
 * (stune_root_write_read_at: the store() ran in write()), are closed
 * together, a close_range() per run of consecutive descriptors, when 32 are
 * open or at off; for a scan or an apply of many small files (a syscall
 * each saved). Off closes what is left. Under a sysroot only: the live root
 * closes one by one through libc (an LD_PRELOAD sysfs sees every close). r
 * may be NULL to turn it off.
 */
void stune_root_batch(const struct stune_root *r, bool on);
/* Tests: behave as on a kernel without openat2 (every path resolved by hand). */
void stune_root_force_resolve_by_hand(struct stune_root *r);

/* Join helpers for root-relative paths. */
int stune_path_join(char **out, const char *a, const char *b);
/* Pointer to the last component. */
const char *stune_path_basename(const char *path);
/* Parent directory of a root-relative path (allocated). */
int stune_path_dirname(const char *path, char **out);
