/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/trust (the state directory's and the trusted keys' rule: every
 * component from / root's, or the invoking user's, and not writable by group
 * or others; a sticky directory of root's accepted) and its state
 * subdirectories opened without following a symbolic link. Runs as root (as
 * CI does): another owner is made with chown to nobody (65534). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/trust.h"
#include "tap.h"

#define NOBODY 65534

/* NAME in this case's directory (one of four static buffers: a few at a time). */
static const char *at(const char *name)
{
	static char buf[4][512];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tap_tmpdir(), name);
	return buf[i];
}

static void dir(const char *name, mode_t mode)
{
	if (mkdir(at(name), 0700) < 0 || chmod(at(name), mode) < 0)
		abort();
}

/* stune_path_trusted for uid; *path and *msg (optional) the fault's, freed by the caller. */
static int check_path(const char *path, uid_t uid, char **fault_path, char **msg)
{
	struct stune_trust_fault bad = {0};
	int r = stune_path_trusted(path, uid, &bad);
	if (fault_path)
		*fault_path = bad.path ? strdup(bad.path) : NULL;
	if (msg)
		*msg = bad.path ? stune_trust_fault_msg(&bad, path) : NULL;
	stune_trust_fault_clear(&bad);
	return r;
}

CASE(trusted, "root's directories, not writable by group or others, and /tmp (1777, root's): trusted")
{
	CHECK(geteuid() == 0);
	dir("a", 0755);
	dir("a/b", 0700);
	CHECK(check_path(at("a/b"), 0, NULL, NULL) == 0);
	CHECK(check_path("/tmp", 0, NULL, NULL) == 0);
	/* Nothing there yet: nothing to distrust (the caller checks again once it made it). */
	CHECK(check_path(at("a/b/c/d"), 0, NULL, NULL) == 0);
}

CASE(other_owner, "a directory owned by nobody: -EPERM, named, the fix is chown root")
{
	_cleanup_free_ char *p = NULL, *msg = NULL;
	dir("a", 0755);
	dir("a/state", 0755);
	CHECK(chown(at("a"), NOBODY, NOBODY) == 0);
	CHECK(check_path(at("a/state"), 0, &p, &msg) == -EPERM);
	CHECK_STR(p, at("a"));
	char want[1024];
	snprintf(want, sizeof(want), "%s is owned by uid 65534, not root: chown root %s", at("a"), at("a"));
	CHECK_STR(msg, want);
	/* Below it, a path not made yet is refused too: nobody could make it first. */
	CHECK(check_path(at("a/state/new"), 0, NULL, NULL) == -EPERM);
}

CASE(invoking_user, "not root: the invoking user's own directory is trusted, another user's is not")
{
	_cleanup_free_ char *p = NULL, *msg = NULL;
	dir("mine", 0755);
	CHECK(chown(at("mine"), NOBODY, NOBODY) == 0);
	CHECK(check_path(at("mine"), NOBODY, NULL, NULL) == 0);
	CHECK(check_path(at("mine"), 1000, &p, &msg) == -EPERM);
	/* The fault is the subject itself: "PATH is " left out. */
	char want[1024];
	snprintf(want, sizeof(want), "owned by uid 65534, not root or uid 1000 (you): chown 1000 %s", at("mine"));
	CHECK_STR(msg, want);
}

CASE(writable, "group or others may write: -EPERM with the mode and the chmod that fixes it")
{
	_cleanup_free_ char *p = NULL, *msg = NULL, *msg2 = NULL;
	dir("w", 0777);
	CHECK(check_path(at("w/state"), 0, &p, &msg) == -EPERM);
	CHECK_STR(p, at("w"));
	char want[1024];
	snprintf(want, sizeof(want), "%s is writable by its group and others (mode 0777): chmod go-w %s", at("w"),
		 at("w"));
	CHECK_STR(msg, want);
	CHECK(chmod(at("w"), 0775) == 0);
	CHECK(check_path(at("w"), 0, NULL, &msg2) == -EPERM);
	snprintf(want, sizeof(want), "writable by its group (mode 0775): chmod g-w %s", at("w"));
	CHECK_STR(msg2, want);
}

CASE(sticky, "a sticky directory writable by all: trusted when root's (like /tmp), not when another user's")
{
	_cleanup_free_ char *msg = NULL;
	dir("t", 01777);
	CHECK(check_path(at("t"), 0, NULL, NULL) == 0);
	CHECK(chown(at("t"), NOBODY, NOBODY) == 0);
	CHECK(check_path(at("t"), 0, NULL, NULL) == -EPERM);
	/* The invoking user's sticky directory: not root's, so others may still write it. */
	CHECK(check_path(at("t"), NOBODY, NULL, &msg) == -EPERM);
	CHECK(msg && strstr(msg, "writable by its group and others (mode 1777, sticky but not root's): chmod go-w"));
}

CASE(file, "a file: its owner and mode as for a directory; sticky means nothing for a file")
{
	_cleanup_free_ char *p = NULL;
	int fd = open(at("f"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK(check_path(at("f"), 0, NULL, NULL) == 0);
	CHECK(chmod(at("f"), 01666) == 0);
	CHECK(check_path(at("f"), 0, &p, NULL) == -EPERM);
	CHECK_STR(p, at("f"));
	struct stat st;
	struct stune_trust_fault bad = {0};
	CHECK(stat(at("f"), &st) == 0 && stune_stat_trusted(at("f"), &st, 0, &bad) == -EPERM);
	stune_trust_fault_clear(&bad);
}

CASE(symlinks, "a symbolic link is followed by hand: its owner and its target's components are checked")
{
	_cleanup_free_ char *p = NULL, *p2 = NULL;
	dir("good", 0755);
	dir("bad", 0777);
	dir("bad/in", 0755);
	CHECK(symlink("good", at("to-good")) == 0);
	CHECK(check_path(at("to-good/state"), 0, NULL, NULL) == 0);
	/* A root-owned link into a directory anybody may write. */
	CHECK(symlink(at("bad/in"), at("to-bad")) == 0);
	CHECK(check_path(at("to-bad/state"), 0, &p, NULL) == -EPERM);
	CHECK_STR(p, at("bad"));
	/* Relative, with "..": resolved from the link's directory. */
	CHECK(symlink("good/../bad/in", at("dotdot")) == 0);
	CHECK(check_path(at("dotdot"), 0, NULL, NULL) == -EPERM);
	/* The link itself another user's (in a sticky directory they could replace it). */
	CHECK(symlink("good", at("theirs")) == 0);
	CHECK(lchown(at("theirs"), NOBODY, NOBODY) == 0);
	CHECK(check_path(at("theirs"), 0, &p2, NULL) == -EPERM);
	CHECK_STR(p2, at("theirs"));
	/* A loop: -ELOOP, not a hang. */
	CHECK(symlink("loop", at("loop")) == 0);
	CHECK(check_path(at("loop/x"), 0, NULL, NULL) == -ELOOP);
}

CASE(relative, "a relative path is checked from the working directory, every component above it too")
{
	dir("rel", 0777);
	dir("rel/state", 0755);
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(at("rel")) == 0);
	CHECK(check_path("state", 0, NULL, NULL) == -EPERM);
	CHECK(check_path("./state/../state", 0, NULL, NULL) == -EPERM);
	CHECK(chdir(cwd) == 0);
}

CASE(dir_fd, "a directory fd: it and every directory above it up to /, the one at fault named by path")
{
	dir("k", 0775);
	dir("k/etc", 0755);
	dir("k/etc/keys", 0755);
	int fd = open(at("k/etc/keys"), O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	struct stune_trust_fault bad = {0};
	CHECK(stune_dir_fd_trusted(fd, 0, &bad) == -EPERM);
	CHECK_STR(bad.path, at("k"));
	CHECK(bad.mode & S_IWGRP);
	stune_trust_fault_clear(&bad);
	CHECK(chmod(at("k"), 0755) == 0);
	CHECK(stune_dir_fd_trusted(fd, 0, &bad) == 0);
	CHECK(chown(at("k/etc"), NOBODY, 0) == 0);
	CHECK(stune_dir_fd_trusted(fd, 0, &bad) == -EPERM);
	CHECK_STR(bad.path, at("k/etc"));
	stune_trust_fault_clear(&bad);
	close(fd);
}

CASE(subdir, "a state subdirectory: made with its mode, never through a symbolic link (-ELOOP)")
{
	_cleanup_free_ char *path = NULL;
	int fd = -1;
	dir("s", 0755);
	dir("elsewhere", 0755);
	CHECK(stune_state_subdir(at("s"), "reports/base", 0750, false, NULL, NULL) == -ENOENT);
	CHECK(stune_state_subdir(at("s"), "reports/base", 0750, true, &fd, &path) == 0 && fd >= 0);
	CHECK_STR(path, at("s/reports/base"));
	struct stat st;
	CHECK(stat(at("s/reports/base"), &st) == 0 && (st.st_mode & 07777) == 0750);
	CHECK(stat(at("s/reports"), &st) == 0 && (st.st_mode & 07777) == 0755);
	if (fd >= 0)
		close(fd);
	/* The state directory itself is made too. */
	CHECK(stune_state_subdir(at("new/state"), "spool", 0750, true, NULL, NULL) == 0);
	CHECK(stat(at("new/state/spool"), &st) == 0 && S_ISDIR(st.st_mode));
	/* A link in place of a subdirectory, or below one: refused, nothing made where it points. */
	CHECK(symlink(at("elsewhere"), at("s/spool")) == 0);
	CHECK(stune_state_subdir(at("s"), "spool", 0750, true, NULL, NULL) == -ELOOP);
	CHECK(stune_state_subdir(at("s"), "spool", 0750, false, NULL, NULL) == -ELOOP);
	CHECK(symlink(at("elsewhere"), at("s/reports/linked")) == 0);
	CHECK(stune_state_subdir(at("s"), "reports/linked/x", 0755, true, NULL, NULL) == -ELOOP);
	CHECK(stat(at("elsewhere/x"), &st) < 0 && errno == ENOENT);
	/* A file in place of one: -ENOTDIR. */
	fd = open(at("s/runs"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK(stune_state_subdir(at("s"), "runs", 0755, true, NULL, NULL) == -ENOTDIR);
	CHECK_STR(stune_state_strerror(-ELOOP, 0), "a symbolic link: refused");
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
