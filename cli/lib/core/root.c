/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "core/root.h"
#include "core/statefile.h"
#include "core/userfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Root-relative paths known to be real directories or files (not symlinks). */
struct path_set {
	pthread_mutex_t lock; /* detect scans disks on several threads */
	char **slots;
	size_t cap, n;
	bool no_openat2; /* openat2 refused once: resolve by hand from then on */
};

struct stune_root {
	char *prefix;		   /* "" for the live root, else an absolute path without trailing '/' */
	int dirfd;		   /* -1 for the live root */
	struct path_set *nonlinks; /* resolve cache: sysfs trees share long prefixes */
};

static uint64_t path_hash(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603); /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

static bool set_has_locked(const struct path_set *set, const char *path)
{
	if (!set->cap)
		return false;
	for (size_t i = path_hash(path) & (set->cap - 1);; i = (i + 1) & (set->cap - 1)) {
		if (!set->slots[i])
			return false;
		if (!strcmp(set->slots[i], path))
			return true;
	}
}

static int set_add_locked(struct path_set *set, const char *path)
{
	if ((set->n + 1) * 2 > set->cap) {
		size_t ncap = set->cap ? set->cap * 2 : 256;
		char **ns = calloc(ncap, sizeof(char *));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < set->cap; i++) {
			if (!set->slots[i])
				continue;
			size_t j = path_hash(set->slots[i]) & (ncap - 1);
			while (ns[j])
				j = (j + 1) & (ncap - 1);
			ns[j] = set->slots[i];
		}
		free(set->slots);
		set->slots = ns;
		set->cap = ncap;
	}
	size_t i = path_hash(path) & (set->cap - 1);
	while (set->slots[i]) {
		if (!strcmp(set->slots[i], path))
			return 0;
		i = (i + 1) & (set->cap - 1);
	}
	if (!(set->slots[i] = strdup(path)))
		return -ENOMEM;
	set->n++;
	return 0;
}

static bool set_has(struct path_set *set, const char *path)
{
	pthread_mutex_lock(&set->lock);
	bool r = set_has_locked(set, path);
	pthread_mutex_unlock(&set->lock);
	return r;
}

static int set_add(struct path_set *set, const char *path)
{
	pthread_mutex_lock(&set->lock);
	int r = set_add_locked(set, path);
	pthread_mutex_unlock(&set->lock);
	return r;
}

static void set_free(struct path_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
	pthread_mutex_destroy(&set->lock);
	free(set);
}

int stune_root_resolve(const struct stune_root *r, const char *path, char **out);

static bool openat2_usable(const struct stune_root *r)
{
	return !__atomic_load_n(&r->nonlinks->no_openat2, __ATOMIC_RELAXED);
}

/*
 * openat2, retried on EAGAIN: a rename or mount anywhere on the system raced
 * with the resolution of a ".." (sysfs links are full of them); the kernel
 * asks the caller to retry (openat2(2), EAGAIN). -ENOSYS when openat2 cannot
 * be used here (kernel < 5.6, a seccomp filter, valgrind): marked for the
 * root, every later access resolves by hand.
 */
static int openat2_retry(const struct stune_root *r, int dfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve};
	int fd, tries = 0;
	do
		fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 64);
	if (fd >= 0)
		return fd;
	if (errno == ENOSYS || errno == EPERM) {
		__atomic_store_n(&r->nonlinks->no_openat2, true, __ATOMIC_RELAXED);
		return -ENOSYS;
	}
	return negative_errno();
}

/*
 * Open a root-relative path. Under a sysroot the kernel resolves every
 * symlink with the sysroot as "/" (openat2 RESOLVE_IN_ROOT), so neither an
 * absolute link nor ".." in a captured tree can reach the host's files.
 */
static int root_open(const struct stune_root *r, const char *path, int flags)
{
	while (*path == '/')
		path++;
	if (r->dirfd < 0) {
		_cleanup_free_ char *hp = NULL;
		if (asprintf(&hp, "/%s", path) < 0)
			return -ENOMEM;
		int fd = open(hp, flags | O_CLOEXEC);
		return fd < 0 ? negative_errno() : fd;
	}
	if (openat2_usable(r)) {
		int fd = openat2_retry(r, r->dirfd, *path ? path : ".", flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		/* -EAGAIN: renames raced every try; -ENOSYS: no openat2. By hand (EAGAIN: this call only). */
		if (fd >= 0 || (fd != -ENOSYS && fd != -EAGAIN))
			return fd;
	}
	_cleanup_free_ char *resolved = NULL;
	int ret = stune_root_resolve(r, path, &resolved);
	if (ret < 0)
		return ret;
	/* Every component is now a real directory inside the root. */
	int fd = openat(r->dirfd, *resolved ? resolved : ".", flags | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? negative_errno() : fd;
}

int stune_root_open(const struct stune_root *r, const char *path, int flags)
{
	return root_open(r, path, flags);
}

void stune_root_force_resolve_by_hand(struct stune_root *r)
{
	__atomic_store_n(&r->nonlinks->no_openat2, true, __ATOMIC_RELAXED);
}

int stune_root_new(const char *prefix, struct stune_root **out)
{
	_cleanup_free_ char *abs = NULL;
	struct stat st;

	if (prefix && *prefix && strcmp(prefix, "/") != 0) {
		abs = realpath(prefix, NULL);
		if (!abs)
			return negative_errno();
		if (stat(abs, &st) < 0)
			return negative_errno();
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (strcmp(abs, "/") == 0) {
			free(abs);
			abs = NULL;
		}
	}
	struct stune_root *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dirfd = -1;
	r->nonlinks = calloc(1, sizeof(*r->nonlinks));
	if (!r->nonlinks) {
		free(r);
		return -ENOMEM;
	}
	pthread_mutex_init(&r->nonlinks->lock, NULL);
	if (abs) {
		r->dirfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->dirfd < 0) {
			int e = negative_errno();
			stune_root_free(r);
			return e;
		}
	}
	r->prefix = abs ? steal_pointer(&abs) : strdup("");
	if (!r->prefix) {
		stune_root_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void stune_root_free(struct stune_root *r)
{
	if (!r)
		return;
	if (r->dirfd >= 0)
		close(r->dirfd);
	set_free(r->nonlinks);
	free(r->prefix);
	free(r);
}

bool stune_root_is_live(const struct stune_root *r)
{
	return r->prefix[0] == '\0';
}

const char *stune_root_prefix(const struct stune_root *r)
{
	return r->prefix;
}

int stune_root_host_path(const struct stune_root *r, const char *path, char **out)
{
	while (*path == '/')
		path++;
	if (asprintf(out, "%s/%s", r->prefix, path) < 0)
		return -ENOMEM;
	return 0;
}

/* Read fd to its end (at_start: from offset 0 with pread, whatever the file
 * position): one trailing newline removed, NUL bytes refused. */
static int read_all(int fd, bool at_start, char **out)
{
	/* Attributes are short: the first read goes to the stack and the value
	 * gets one allocation of its own size; longer files grow on the heap. */
	char first[4096];
	_cleanup_free_ char *heap = NULL;
	char *buf = first;
	size_t len = 0, cap = sizeof(first);
	for (;;) {
		if (len == cap) {
			size_t ncap = cap * 2;
			if (ncap > (64u << 20))
				return -EFBIG;
			char *n = realloc(heap, ncap);
			if (!n)
				return -ENOMEM;
			if (!heap)
				memcpy(n, first, len);
			heap = buf = n;
			cap = ncap;
		}
		ssize_t k = at_start ? pread(fd, buf + len, cap - len, (off_t)len) : read(fd, buf + len, cap - len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		len += (size_t)k;
		/*
		 * A short read is the end: true for regular files, sysfs
		 * attributes (one show() per read) and seq_file /proc files
		 * (which fill the buffer until the end), and it saves the
		 * extra read per attribute.
		 */
		if (len < cap)
			break;
	}
	if (memchr(buf, '\0', len))
		return -EILSEQ;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	/* Values live as long as the model: keep only what they need. */
	*out = strndup(buf, len);
	return *out ? 0 : -ENOMEM;
}

/*
 * Closes put off while a thread reads many small files (stune_root_batch):
 * the files read are closed together, a close_range() per run of
 * consecutive numbers, instead of a close() each. Only numbers this thread
 * opened and still holds are in the list, so a run never takes another
 * thread's file. Off outside a batch.
 */
#define BATCH_MAX 32
static __thread struct {
	bool on;
	int n;
	int fd[BATCH_MAX];
} batch;

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void batch_flush(void)
{
	qsort(batch.fd, (size_t)batch.n, sizeof(int), int_cmp);
	for (int i = 0; i < batch.n;) {
		int j = i;
		while (j + 1 < batch.n && batch.fd[j + 1] == batch.fd[j] + 1)
			j++;
		if (j == i || syscall(SYS_close_range, (unsigned)batch.fd[i], (unsigned)batch.fd[j], 0) < 0)
			for (int k = i; k <= j; k++)
				close(batch.fd[k]); /* one file, or no close_range (kernel < 5.9) */
		i = j + 1;
	}
	batch.n = 0;
}

void stune_root_batch(const struct stune_root *r, bool on)
{
	if (!on && batch.n)
		batch_flush();
	/* The live root closes one by one through libc, as it opens: an LD_PRELOAD
	 * sysfs (umockdev's testbed) sees every close. */
	batch.on = on && r && r->dirfd >= 0;
}

/* Close a file that was only read: now, or with the batch. */
static void close_read(int fd)
{
	if (fd < 0)
		return;
	if (!batch.on) {
		close(fd);
		return;
	}
	if (batch.n == BATCH_MAX)
		batch_flush();
	batch.fd[batch.n++] = fd;
}

int stune_root_read(const struct stune_root *r, const char *path, char **out)
{
	int fd = root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd == -EMFILE && batch.n) { /* the files put off count against the limit */
		batch_flush();
		fd = root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	}
	if (fd < 0)
		return fd;
	int ret = read_all(fd, false, out);
	close_read(fd);
	return ret;
}

int stune_root_read_regular(const struct stune_root *r, const char *path, char **out)
{
	struct stat st;
	_cleanup_close_ int fd = root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -STUNE_ENOTREG;
	return read_all(fd, false, out);
}

int stune_root_write(const struct stune_root *r, const char *path, const char *value)
{
	return stune_root_write_read(r, path, value, NULL);
}

/* One write of value on fd; then, with back, the read-back through the same open file. */
static int write_read_fd(int fd, const char *value, char **back)
{
	size_t len = strlen(value);
	/* One write: a sysfs store() sees the whole value or nothing. */
	ssize_t k = write(fd, value, len);
	if (k < 0)
		return negative_errno();
	if ((size_t)k != len)
		return -EIO;
	if (!back)
		return 0;
	/* The same open file, from the start: sysfs calls show() again, a
	 * seq_file /proc file starts over; one open for write and read-back. */
	*back = NULL;
	if (read_all(fd, true, back) < 0) {
		free(*back);
		*back = NULL; /* written; the read-back failed: unknown */
	}
	return 0;
}

int stune_root_write_read(const struct stune_root *r, const char *path, const char *value, char **back)
{
	_cleanup_close_ int fd = root_open(r, path, (back ? O_RDWR : O_WRONLY) | O_TRUNC | O_NOCTTY);
	if (fd < 0)
		return fd;
	return write_read_fd(fd, value, back);
}

/* The host path of path's directory, resolved inside the root, and path's last component. */
static int parent_host_dir(const struct stune_root *r, const char *path, char **hostdir, const char **base)
{
	_cleanup_free_ char *dir = NULL, *resolved = NULL;
	int ret;
	if ((ret = stune_path_dirname(path, &dir)) < 0 || (ret = stune_root_resolve(r, dir, &resolved)) < 0 ||
	    (ret = stune_root_host_path(r, resolved, hostdir)) < 0)
		return ret;
	const char *b = strrchr(path, '/');
	*base = b ? b + 1 : path;
	return 0;
}

int stune_root_replace(const struct stune_root *r, const char *path, const char *data, mode_t mode)
{
	_cleanup_free_ char *hostdir = NULL;
	const char *base;
	int ret = parent_host_dir(r, path, &hostdir, &base);
	if (ret < 0)
		return ret;
	struct stat st;
	_cleanup_close_ int fd = root_open(r, path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 && fstat(fd, &st) == 0)
		mode = st.st_mode & 07777;
	return stune_write_atomic(hostdir, base, data, strlen(data), mode, NULL);
}

int stune_root_symlink(const struct stune_root *r, const char *path, const char *target)
{
	_cleanup_free_ char *hostdir = NULL, *tmp = NULL, *dst = NULL;
	const char *base;
	int ret = parent_host_dir(r, path, &hostdir, &base);
	if (ret < 0)
		return ret;
	if (asprintf(&tmp, "%s/.%s.scsitune-tmp", hostdir, base) < 0 || asprintf(&dst, "%s/%s", hostdir, base) < 0)
		return -ENOMEM;
	(void)unlink(tmp);
	if (symlink(target, tmp) < 0)
		return negative_errno();
	if (rename(tmp, dst) < 0) {
		ret = negative_errno();
		unlink(tmp);
		return ret;
	}
	_cleanup_close_ int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 || fsync(dfd) < 0 ? negative_errno() : 0;
}

int stune_root_unlink(const struct stune_root *r, const char *path)
{
	_cleanup_free_ char *hostdir = NULL, *dst = NULL;
	const char *base;
	int ret = parent_host_dir(r, path, &hostdir, &base);
	if (ret < 0)
		return ret;
	if (asprintf(&dst, "%s/%s", hostdir, base) < 0)
		return -ENOMEM;
	if (unlink(dst) < 0)
		return negative_errno();
	_cleanup_close_ int dfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 || fsync(dfd) < 0 ? negative_errno() : 0;
}

int stune_root_readf(const struct stune_root *r, char **out, const char *fmt, ...)
{
	_cleanup_free_ char *path = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return stune_root_read(r, path, out);
}

int stune_root_readlink(const struct stune_root *r, const char *path, char **out)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	char buf[PATH_MAX];
	int ret;

	/* The link itself is not followed: open its directory in the root, readlinkat the name. */
	if ((ret = stune_path_dirname(path, &dir)) < 0)
		return ret;
	dfd = root_open(r, dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return dfd;
	ssize_t n = readlinkat(dfd, stune_path_basename(path), buf, sizeof(buf) - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* "a/b", allocated. */
static char *join_slash(const char *a, const char *b)
{
	char *s;
	return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

/* The next component of *rest (advanced past it and its slashes) into c; false at the end. */
static bool next_component(const char **rest, char c[NAME_MAX + 1])
{
	const char *p = *rest;
	while (*p == '/')
		p++;
	if (!*p)
		return false;
	size_t n = strcspn(p, "/");
	if (n > NAME_MAX)
		n = NAME_MAX; /* longer than any name: fstatat says ENAMETOOLONG */
	memcpy(c, p, n);
	c[n] = '\0';
	*rest = p + strcspn(p, "/");
	return true;
}

#define CONFINED_DEPTH 128

int stune_root_confined(const struct stune_root *r, const char *path, char **link, char **target)
{
	*link = *target = NULL;
	if (r->dirfd < 0)
		return 0;
	int fds[CONFINED_DEPTH] = {r->dirfd}, depth = 0, links = 0, ret = 0;
	_cleanup_free_ char *todo = strdup(path), *where = strdup(""), *last = NULL, *last_target = NULL;
	const char *rest = todo;
	char c[NAME_MAX + 1];
	if (!todo || !where)
		return -ENOMEM;
	while (ret == 0 && next_component(&rest, c)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (depth == 0) { /* above the top: the last link followed led here */
				*link = steal_pointer(&last);
				*target = steal_pointer(&last_target);
				ret = *link ? -EXDEV : -EINVAL;
				break;
			}
			close(fds[depth--]);
			*strrchr(where, '/') = '\0';
			continue;
		}
		struct stat st;
		if (fstatat(fds[depth], c, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = errno == ENOENT || errno == ENOTDIR ? 1 : negative_errno();
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char buf[PATH_MAX];
			ssize_t n = readlinkat(fds[depth], c, buf, sizeof(buf) - 1);
			if (n < 0 || ++links > 40) {
				ret = n < 0 ? negative_errno() : -ELOOP;
				break;
			}
			buf[n] = '\0';
			free(last);
			free(last_target);
			last = last_target = NULL;
			char *next = NULL;
			if (!(last = join_slash(where, c)) || !(last_target = strdup(buf)) ||
			    !(next = join_slash(buf, rest))) {
				ret = -ENOMEM;
				break;
			}
			if (buf[0] == '/') {
				free(next);
				*link = steal_pointer(&last);
				*target = steal_pointer(&last_target);
				ret = -EXDEV;
				break;
			}
			free(todo);
			rest = todo = next;
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			break; /* a file: nothing beyond it to follow */
		if (depth + 1 >= CONFINED_DEPTH) {
			ret = -ENAMETOOLONG;
			break;
		}
		int fd = openat(fds[depth], c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char *w = NULL;
		if (fd < 0 || !(w = join_slash(where, c))) {
			ret = fd < 0 ? negative_errno() : -ENOMEM;
			if (fd >= 0)
				close(fd);
			break;
		}
		free(where);
		where = w;
		fds[++depth] = fd;
	}
	while (depth > 0)
		close(fds[depth--]);
	return ret > 0 ? 0 : ret;
}

/*
 * readlink of a path whose directories are already resolved (no links, no
 * ".."), so a plain readlinkat on the root fd cannot leave the root.
 */
static int readlink_resolved(const struct stune_root *r, const char *path, char **out)
{
	char buf[PATH_MAX];
	ssize_t n;
	if (r->dirfd < 0) {
		_cleanup_free_ char *hp = NULL;
		if (asprintf(&hp, "/%s", path) < 0)
			return -ENOMEM;
		n = readlink(hp, buf, sizeof(buf) - 1);
	} else {
		n = readlinkat(r->dirfd, path, buf, sizeof(buf) - 1);
	}
	if (n < 0)
		return negative_errno();
	buf[n] = '\0';
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

/* Components still to walk, kept as one string "a/b/c". */
static int prepend(char **rest, const char *head)
{
	char *n;
	if (!*rest || !**rest)
		n = strdup(head);
	else if (asprintf(&n, "%s/%s", head, *rest) < 0)
		n = NULL;
	if (!n)
		return -ENOMEM;
	free(*rest);
	*rest = n;
	return 0;
}

int stune_root_resolve(const struct stune_root *r, const char *path, char **out)
{
	_cleanup_free_ char *rest = strdup(path);
	_cleanup_free_ char *done = strdup(""); /* resolved so far, no leading '/' */
	int links = 0, ret;

	if (!rest || !done)
		return -ENOMEM;
	while (rest && *rest) {
		/* Pop the first component of rest. */
		char *p = rest;
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		_cleanup_free_ char *comp = strndup(p, n);
		char *tail = strdup(p + n);
		if (!comp || !tail) {
			free(tail);
			return -ENOMEM;
		}
		free(rest);
		rest = tail;

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *slash = strrchr(done, '/');
			if (slash)
				*slash = '\0';
			else
				done[0] = '\0'; /* ".." above the root stays at the root */
			continue;
		}
		_cleanup_free_ char *cand = NULL;
		if (asprintf(&cand, "%s%s%s", done, *done ? "/" : "", comp) < 0)
			return -ENOMEM;
		_cleanup_free_ char *target = NULL;
		ret = set_has(r->nonlinks, cand) ? -EINVAL : readlink_resolved(r, cand, &target);
		if (ret == -EINVAL) { /* not a link */
			if ((ret = set_add(r->nonlinks, cand)) < 0)
				return ret;
			free(done);
			done = steal_pointer(&cand);
			continue;
		}
		if (ret < 0)
			return ret;
		if (++links > 40)
			return -ELOOP;
		if (target[0] == '/')
			done[0] = '\0';
		if ((ret = prepend(&rest, target)) < 0)
			return ret;
	}
	*out = steal_pointer(&done);
	return 0;
}

int stune_root_opendir(const struct stune_root *r, const char *path, DIR **out)
{
	int fd = root_open(r, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = negative_errno();
		close(fd);
		return e;
	}
	*out = d;
	return 0;
}

bool stune_root_exists(const struct stune_root *r, const char *path)
{
	_cleanup_close_ int fd = root_open(r, path, O_PATH);
	return fd >= 0;
}

int stune_path_join(char **out, const char *a, const char *b)
{
	if (asprintf(out, "%s%s%s", a, *a && *b ? "/" : "", b) < 0)
		return -ENOMEM;
	return 0;
}

const char *stune_path_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int stune_path_dirname(const char *path, char **out)
{
	const char *s = strrchr(path, '/');
	*out = s ? strndup(path, (size_t)(s - path)) : strdup("");
	return *out ? 0 : -ENOMEM;
}

/* ---- directories opened once, entries read relative to them ---- */

/* path has no ".", ".." or empty component (a lexical join below it is exact when it has no symlink). */
static bool plain_path(const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return true;
}

/* Open path as an O_PATH directory with no symlink on the way: the fd, -ELOOP (a symlink), -ENOSYS (no openat2),
 * -errno. */
static int open_no_symlinks(const struct stune_root *r, const char *path)
{
	if (!openat2_usable(r))
		return -ENOSYS;
	const uint64_t resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	/* The live root goes through libc's open/openat by path, as it always has: a raw
	 * openat2 syscall would also bypass an LD_PRELOAD sysfs (umockdev's testbed). */
	if (r->dirfd < 0)
		return -ENOSYS;
	return openat2_retry(r, r->dirfd, *path ? path : ".", O_PATH | O_DIRECTORY, resolve | RESOLVE_IN_ROOT);
}

void stune_root_dir_close(struct stune_rdir *d)
{
	close_read(d->fd);
	free(d->path);
	*d = STUNE_RDIR_INIT;
}

static int dir_open(const struct stune_root *r, const char *path, bool want_canonical, struct stune_rdir *out)
{
	*out = STUNE_RDIR_INIT;
	while (*path == '/')
		path++;
	_cleanup_free_ char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	bool canonical = false;
	int fd = want_canonical && plain_path(p) ? open_no_symlinks(r, p) : -ELOOP;
	if (fd >= 0)
		canonical = true;
	else if (fd == -ELOOP || fd == -ENOSYS || fd == -EAGAIN)
		fd = root_open(r, p, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	*out = (struct stune_rdir){.fd = fd, .path = steal_pointer(&p), .canonical = canonical};
	return 0;
}

int stune_root_dir_open(const struct stune_root *r, const char *path, struct stune_rdir *out)
{
	return dir_open(r, path, false, out);
}

int stune_root_dir_open_canonical(const struct stune_root *r, const char *path, struct stune_rdir *out)
{
	return dir_open(r, path, true, out);
}

/*
 * dir's canonical path joined with a link target read in dir: leading ".."
 * go up from dir (never above the root), an absolute target starts at the
 * root, "." and empty components are dropped. NULL for a ".." after a name:
 * where it leads depends on whether the name is a symlink.
 */
static char *join_target(const char *dir, const char *target)
{
	size_t dlen = strlen(dir);
	if (target[0] == '/')
		dlen = 0;
	char *out = malloc(dlen + strlen(target) + 2);
	if (!out)
		return NULL;
	memcpy(out, dir, dlen);
	size_t len = dlen;
	bool named = false;
	for (const char *p = target; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* empty or "." */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (named) {
				free(out);
				return NULL;
			}
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the slash */
		} else {
			if (len > 0)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
			named = true;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	out[len] = '\0';
	return out;
}

int stune_root_dir_entry_target(const struct stune_root *r, const struct stune_rdir *dir, const char *name, char **out)
{
	*out = NULL;
	if (dir->fd < 0 || !dir->canonical || !openat2_usable(r) || r->dirfd < 0 || !*name || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EAGAIN;
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dir->fd, name, buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = '\0';
		errno = 0;
		*out = join_target(dir->path, buf);
		if (!*out)
			return errno == ENOMEM ? -ENOMEM : -EAGAIN; /* a ".." after a name */
		return 0;
	}
	if (errno == EINVAL) /* a directory itself */
		return stune_path_join(out, dir->path, name);
	return -EAGAIN;
}

int stune_root_dir_open_entry(const struct stune_root *r, const struct stune_rdir *dir, const char *name,
			      struct stune_rdir *out)
{
	*out = STUNE_RDIR_INIT;
	/* Fast: the link's target joined to the directory's canonical path, opened
	 * with no symlink allowed on the way; then that path is the canonical one. */
	_cleanup_free_ char *cand = NULL;
	if (stune_root_dir_entry_target(r, dir, name, &cand) == 0) {
		int fd = open_no_symlinks(r, cand);
		if (fd >= 0) {
			*out = (struct stune_rdir){.fd = fd, .path = steal_pointer(&cand), .canonical = true};
			return 0;
		}
	}
	/* Anything else (a symlink further on, a missing entry, no openat2): resolved by hand, as before. */
	_cleanup_free_ char *full = NULL, *resolved = NULL;
	int ret;
	if ((ret = stune_path_join(&full, dir->path, name)) < 0 || (ret = stune_root_resolve(r, full, &resolved)) < 0)
		return ret;
	int fd = root_open(r, resolved, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	*out = (struct stune_rdir){.fd = fd, .path = steal_pointer(&resolved), .canonical = true};
	return 0;
}

/*
 * Open rel beneath dir. Under a sysroot: RESOLVE_BENEATH, and a link that
 * would leave dir (EXDEV) is opened again from the root with the full path
 * (RESOLVE_IN_ROOT), so the result is the file stune_root_read() would open,
 * and never one outside the root.
 */
static int open_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, int flags)
{
	while (*rel == '/')
		rel++;
	if (dir->fd >= 0 && *rel) {
		if (r->dirfd < 0) {
			int fd = openat(dir->fd, rel, flags | O_CLOEXEC);
			return fd < 0 ? negative_errno() : fd;
		}
		if (openat2_usable(r)) {
			int fd = openat2_retry(r, dir->fd, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
			if (fd >= 0 || (fd != -EXDEV && fd != -ENOSYS && fd != -EAGAIN))
				return fd;
		}
	}
	_cleanup_free_ char *full = NULL;
	int ret = stune_path_join(&full, dir->path ? dir->path : "", rel);
	return ret < 0 ? ret : root_open(r, full, flags);
}

int stune_root_open_rw_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **now)
{
	*now = NULL;
	int fd = open_at(r, dir, rel, O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd == -EMFILE && batch.n) {
		batch_flush();
		fd = open_at(r, dir, rel, O_RDWR | O_NOCTTY | O_NONBLOCK);
	}
	if (fd < 0)
		return fd;
	int ret = read_all(fd, true, now);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

int stune_root_rewrite_fd(int fd, const char *value, size_t now_len, char **back)
{
	size_t len = strlen(value);
	/* One write: a sysfs store() sees the whole value or nothing. */
	ssize_t k = pwrite(fd, value, len, 0);
	if (k < 0)
		return negative_errno();
	if ((size_t)k != len)
		return -EIO;
	if (len < now_len && ftruncate(fd, (off_t)len) < 0 && errno != EINVAL)
		return negative_errno();
	if (!back)
		return 0;
	*back = NULL;
	if (read_all(fd, true, back) < 0) {
		free(*back);
		*back = NULL; /* written; the read-back failed: unknown */
	}
	return 0;
}

void stune_root_close_written(int fd)
{
	close_read(fd); /* the store() ran in write(): the close can wait for the batch */
}

int stune_root_read_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **out)
{
	int fd = open_at(r, dir, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd == -EMFILE && batch.n) { /* the files put off count against the limit */
		batch_flush();
		fd = open_at(r, dir, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	}
	if (fd < 0)
		return fd;
	int ret = read_all(fd, false, out);
	close_read(fd);
	return ret;
}

int stune_root_write_read_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel,
			     const char *value, char **back)
{
	int fd = open_at(r, dir, rel, (back ? O_RDWR : O_WRONLY) | O_TRUNC | O_NOCTTY);
	if (fd == -EMFILE && batch.n) {
		batch_flush();
		fd = open_at(r, dir, rel, (back ? O_RDWR : O_WRONLY) | O_TRUNC | O_NOCTTY);
	}
	if (fd < 0)
		return fd;
	/* The store() ran in write(): the close can wait for the batch. */
	int ret = write_read_fd(fd, value, back);
	close_read(fd);
	return ret;
}

int stune_root_readlink_at(const struct stune_root *r, const struct stune_rdir *dir, const char *rel, char **out)
{
	_cleanup_free_ char *full = NULL;
	int ret;
	if (dir->fd >= 0 && *rel && !strchr(rel, '/')) {
		/* An entry of dir itself: nothing on the way to resolve. */
		char buf[PATH_MAX];
		ssize_t n = readlinkat(dir->fd, rel, buf, sizeof(buf) - 1);
		if (n < 0)
			return negative_errno();
		buf[n] = '\0';
		*out = strdup(buf);
		return *out ? 0 : -ENOMEM;
	}
	if ((ret = stune_path_join(&full, dir->path ? dir->path : "", rel)) < 0)
		return ret;
	return stune_root_readlink(r, full, out);
}
