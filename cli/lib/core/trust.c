/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/statefile.h"
#include "core/userfile.h"

/* As the kernel's own limit on links in one lookup. */
#define MAX_LINKS 40

void stune_trust_fault_clear(struct stune_trust_fault *f)
{
	if (!f)
		return;
	free(f->path);
	*f = (struct stune_trust_fault){0};
}

static bool trusted(const struct stat *st, uid_t uid)
{
	if (st->st_uid != 0 && st->st_uid != uid)
		return false;
	if (S_ISLNK(st->st_mode) || !(st->st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	/* Writable by others, but sticky and root's (/tmp): nobody else can replace an entry they do not own. */
	return S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0;
}

static int fault(const char *path, const struct stat *st, uid_t uid, struct stune_trust_fault *bad)
{
	stune_trust_fault_clear(bad);
	if (!(bad->path = strdup(path)))
		return -ENOMEM;
	bad->owner = st->st_uid;
	bad->mode = st->st_mode;
	bad->uid = uid;
	return -EPERM;
}

int stune_stat_trusted(const char *path, const struct stat *st, uid_t uid, struct stune_trust_fault *bad)
{
	return trusted(st, uid) ? 0 : fault(path, st, uid, bad);
}

static int read_link(int dfd, const char *name, char **out)
{
	for (size_t size = 256;; size *= 2) {
		_cleanup_free_ char *buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		ssize_t n = readlinkat(dfd, name, buf, size);
		if (n < 0)
			return negative_errno();
		if ((size_t)n < size) {
			buf[n] = '\0';
			*out = steal_pointer(&buf);
			return 0;
		}
		if (size >= 65536)
			return -ENAMETOOLONG;
	}
}

/* Cut the next component off *rest: NULL when none is left. */
static char *next_component(char **rest)
{
	char *s = *rest;
	while (*s == '/')
		s++;
	if (!*s)
		return NULL;
	char *slash = strchr(s, '/');
	if (slash) {
		*slash = '\0';
		*rest = slash + 1;
	} else {
		*rest = s + strlen(s);
	}
	return s;
}

static int reopen_root(int *fd)
{
	int r = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r < 0)
		return negative_errno();
	close(*fd);
	*fd = r;
	return 0;
}

/* The walk of stune_path_trusted(): todo (owned) from the directory fd, whose path is cur (owned, "" for /). */
struct walk {
	char *todo, *rest, *cur;
	int fd;
	unsigned links;
	uid_t uid;
};

/* The symbolic link name in w->fd (comp its path): its target goes in front of what is left. */
static int walk_link(struct walk *w, const char *name)
{
	_cleanup_free_ char *target = NULL;
	char *n = NULL;
	int r;
	if (++w->links > MAX_LINKS)
		return -ELOOP;
	if ((r = read_link(w->fd, name, &target)) < 0)
		return r;
	if (asprintf(&n, "%s/%s", target, w->rest) < 0)
		return -ENOMEM;
	free(w->todo);
	w->todo = w->rest = n;
	if (target[0] == '/') {
		w->cur[0] = '\0';
		return reopen_root(&w->fd);
	}
	return 0;
}

/* One component: 1 to go on, 0 when the walk ends here (trusted), or -errno. */
static int walk_step(struct walk *w, const char *name, struct stune_trust_fault *bad)
{
	struct stat st;
	int r;
	if (!strcmp(name, "."))
		return 1;
	if (!strcmp(name, "..")) { /* cur is canonical: its parent was checked on the way down */
		if (!*w->cur)
			return 1;
		int p = openat(w->fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return negative_errno();
		close(w->fd);
		w->fd = p;
		*strrchr(w->cur, '/') = '\0';
		return 1;
	}
	_cleanup_free_ char *comp = NULL;
	if (asprintf(&comp, "%s/%s", w->cur, name) < 0)
		return -ENOMEM;
	int f = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (f < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno(); /* nothing there yet */
	if (fstat(f, &st) < 0) {
		r = negative_errno();
		close(f);
		return r;
	}
	if (!trusted(&st, w->uid)) {
		close(f);
		return fault(comp, &st, w->uid, bad);
	}
	if (S_ISLNK(st.st_mode)) {
		close(f);
		r = walk_link(w, name);
		return r < 0 ? r : 1;
	}
	close(w->fd);
	w->fd = f;
	if (!S_ISDIR(st.st_mode)) /* a file: the last component, or nothing can be below it */
		return 0;
	free(w->cur);
	w->cur = steal_pointer(&comp);
	return 1;
}

int stune_path_trusted(const char *path, uid_t uid, struct stune_trust_fault *bad)
{
	struct walk w = {.fd = -1, .uid = uid};
	struct stat st;
	int r;
	if (path[0] == '/')
		w.todo = strdup(path);
	else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return negative_errno();
		if (asprintf(&w.todo, "%s/%s", cwd, path) < 0)
			w.todo = NULL;
	}
	w.rest = w.todo;
	if (!w.todo || !(w.cur = strdup(""))) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = reopen_root(&w.fd)) < 0)
		goto out;
	if (fstat(w.fd, &st) < 0) {
		r = negative_errno();
		goto out;
	}
	if (!trusted(&st, uid)) {
		r = fault("/", &st, uid, bad);
		goto out;
	}
	r = 1;
	while (r > 0) {
		char *name = next_component(&w.rest);
		if (!name) {
			r = 0;
			break;
		}
		r = walk_step(&w, name, bad);
	}
out:
	if (w.fd >= 0)
		close(w.fd);
	free(w.todo);
	free(w.cur);
	return r;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The entry of directory p that is st (a directory below it), allocated; -ENOENT when none is. */
static int name_in(int p, const struct stat *st, char **out)
{
	int d2 = openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d2 < 0)
		return negative_errno();
	_cleanup_closedir_ DIR *d = fdopendir(d2);
	if (!d) {
		close(d2);
		return negative_errno();
	}
	struct dirent *de;
	struct stat es;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    fstatat(p, de->d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 && same_file(&es, st))
			return (*out = strdup(de->d_name)) ? 0 : -ENOMEM;
	return -ENOENT;
}

/* The path of the directory dfd, found as getcwd(3) used to: each parent searched for its child. */
static int dir_fd_path(int dfd, char **out)
{
	struct stat root, st, pst;
	_cleanup_free_ char *path = strdup("");
	_cleanup_close_ int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (!path)
		return -ENOMEM;
	if (fd < 0 || stat("/", &root) < 0)
		return negative_errno();
	for (;;) {
		if (fstat(fd, &st) < 0)
			return negative_errno();
		if (same_file(&st, &root))
			break;
		int p = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return negative_errno();
		_cleanup_free_ char *name = NULL;
		int r = fstat(p, &pst) < 0 ? negative_errno() : same_file(&pst, &st) ? -ENOENT : name_in(p, &st, &name);
		close(fd);
		fd = p;
		if (r < 0)
			return r;
		char *n = NULL;
		if (asprintf(&n, "/%s%s", name, path) < 0)
			return -ENOMEM;
		free(path);
		path = n;
	}
	*out = *path ? steal_pointer(&path) : strdup("/");
	return *out ? 0 : -ENOMEM;
}

int stune_dir_fd_trusted(int dfd, uid_t uid, struct stune_trust_fault *bad)
{
	struct stat root, st, pst;
	_cleanup_close_ int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0 || stat("/", &root) < 0)
		return negative_errno();
	for (;;) {
		if (fstat(fd, &st) < 0)
			return negative_errno();
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (!trusted(&st, uid)) {
			_cleanup_free_ char *name = NULL;
			return fault(dir_fd_path(fd, &name) < 0 ? "(a directory above it)" : name, &st, uid, bad);
		}
		if (same_file(&st, &root))
			return 0;
		int p = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return negative_errno();
		if (fstat(p, &pst) == 0 && same_file(&pst, &st)) { /* the top of this mount namespace */
			close(p);
			return 0;
		}
		close(fd);
		fd = p;
	}
}

char *stune_trust_fault_msg(const struct stune_trust_fault *f, const char *subject)
{
	char *msg = NULL;
	const char *p = f->path ? f->path : "?";
	bool self = subject && !strcmp(subject, p);
	if (f->owner != 0 && f->owner != f->uid) {
		char you[32] = "", to[16] = "root";
		if (f->uid != 0) {
			snprintf(you, sizeof(you), " or uid %u (you)", (unsigned)f->uid);
			snprintf(to, sizeof(to), "%u", (unsigned)f->uid);
		}
		if (asprintf(&msg, "%s%sowned by uid %u, not root%s: chown %s %s", self ? "" : p, self ? "" : " is ",
			     (unsigned)f->owner, you, to, p) < 0)
			return NULL;
		return msg;
	}
	bool g = f->mode & S_IWGRP, o = f->mode & S_IWOTH;
	const char *by = g && o ? "its group and others" : g ? "its group" : "others";
	const char *sticky = S_ISDIR(f->mode) && (f->mode & S_ISVTX) ? ", sticky but not root's" : "";
	if (asprintf(&msg, "%s%swritable by %s (mode %04o%s): chmod %s-w %s", self ? "" : p, self ? "" : " is ", by,
		     (unsigned)(f->mode & 07777), sticky,
		     g && o ? "go"
		     : g    ? "g"
			    : "o",
		     p) < 0)
		return NULL;
	return msg;
}

int stune_state_subdir(const char *base, const char *rel, mode_t mode, bool create, int *fd, char **path)
{
	_cleanup_free_ char *copy = strdup(rel), *p = NULL;
	int r;
	if (!copy || asprintf(&p, "%s/%s", base, rel) < 0)
		return -ENOMEM;
	if (create && (r = stune_mkdir_p(base, 0755)) < 0)
		return r;
	_cleanup_close_ int d = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return negative_errno();
	char *rest = copy, *name;
	while ((name = next_component(&rest))) {
		const int fl = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
		int n = openat(d, name, fl);
		if (n < 0 && errno == ENOENT && create) {
			while (*rest == '/')
				rest++;
			if (mkdirat(d, name, *rest ? 0755 : mode) < 0 && errno != EEXIST)
				return negative_errno();
			n = openat(d, name, fl);
		}
		if (n < 0) {
			struct stat st;
			/* O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a symbolic link: say what it is. */
			if (errno == ENOTDIR && fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				return -ELOOP;
			return negative_errno();
		}
		close(d);
		d = n;
	}
	if (path)
		*path = steal_pointer(&p);
	if (fd) {
		*fd = d;
		d = -1;
	}
	return 0;
}

const char *stune_state_strerror(int r, size_t cap)
{
	return r == -ELOOP ? "a symbolic link: refused" : stune_user_file_strerror(r, cap);
}
