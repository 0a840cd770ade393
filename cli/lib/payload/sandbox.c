/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strv.h"
#include "payload/util.h"

/* A name of the host's / made again in depmod's root: a symlink (target) or a directory bound read-only. */
struct mirror {
	char *name;   /* "sbin", "lib/x86_64-linux-gnu" */
	char *host;   /* "/sbin" */
	char *target; /* the symlink's text; NULL: a directory */
};

/* What the child needs, all made before the fork (the child only makes system calls). */
struct sandbox {
	const char *top; /* the tree's directory: the new root is mounted over it */
	char *moddir;	 /* lib/modules/RELEASE in the new root */
	char *mod_rel;	 /* the tree's lib/modules/RELEASE, every symlink resolved inside the tree */
	char *conf_rel;	 /* the same for its etc/depmod.d; NULL when it has none */
	struct mirror *mirrors;
	size_t n_mirrors;
	char uid_map[32], gid_map[32];
	bool probe; /* set the root up, then exit 0 instead of the exec */
};

static void sandbox_clear(struct sandbox *s)
{
	for (size_t i = 0; i < s->n_mirrors; i++) {
		free(s->mirrors[i].name);
		free(s->mirrors[i].host);
		free(s->mirrors[i].target);
	}
	free(s->mirrors);
	free(s->moddir);
	free(s->mod_rel);
	free(s->conf_rel);
	memset(s, 0, sizeof(*s));
}

static bool valid_release(const char *release)
{
	size_t n = strlen(release);
	return n > 0 && n <= NAME_MAX && !strchr(release, '/') && strcmp(release, ".") && strcmp(release, "..");
}

/* --- in the child -------------------------------------------------------------- */

/* mount(2)'s type where the kernel ignores it (a bind, a remount, a propagation change): a string, not NULL,
 * which valgrind would take for a bad pointer. */
#define NOTYPE "none"

/* "depmod's root: STEP WHAT: ERROR" on fd 2 (the caller's output); -e. */
static int child_fail(const char *step, const char *what, int e)
{
	const char *desc = strerrordesc_np(e);
	const char *parts[] = {"depmod's root: ", step, " ", what ? what : "", ": ", desc ? desc : "error", "\n"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			break;
	return -e;
}

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return child_fail("writing", path, errno);
	ssize_t k = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	return k == (ssize_t)strlen(text) ? 0 : child_fail("writing", path, k < 0 ? e : EIO);
}

/* A private mount namespace: as root a plain one; else (or where root may not) in a user namespace of our own. */
static int child_unshare(const struct sandbox *s)
{
	if (geteuid() == 0 && unshare(CLONE_NEWNS) == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return child_fail("unshare", "(a private mount namespace)", errno);
	int r;
	if ((r = write_proc("/proc/self/setgroups", "deny")) < 0 ||
	    (r = write_proc("/proc/self/uid_map", s->uid_map)) < 0 ||
	    (r = write_proc("/proc/self/gid_map", s->gid_map)) < 0)
		return r;
	return 0;
}

/* dst: src bound, read-only (the flags the kernel locks, nosuid, nodev, noexec, kept). */
static int bind_ro(const char *src, const char *dst)
{
	if (mount(src, dst, NOTYPE, MS_BIND, NULL) < 0)
		return child_fail("bind", src, errno);
	struct statfs st;
	unsigned long keep = 0;
	if (statfs(dst, &st) == 0) {
		keep |= st.f_flags & ST_NOSUID ? MS_NOSUID : 0;
		keep |= st.f_flags & ST_NODEV ? MS_NODEV : 0;
		keep |= st.f_flags & ST_NOEXEC ? MS_NOEXEC : 0;
		keep |= st.f_flags & ST_NOATIME ? MS_NOATIME : 0;
		keep |= st.f_flags & ST_NODIRATIME ? MS_NODIRATIME : 0;
		keep |= st.f_flags & ST_RELATIME ? MS_RELATIME : 0;
	}
	if (mount(NULL, dst, NOTYPE, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, NULL) < 0)
		return child_fail("read-only", dst, errno);
	return 0;
}

/*
 * The tree's directory rel (resolved: no symlink, no "..") opened from tfd
 * one component at a time, none followed: a symlink put there since is
 * ENOTDIR, never a way out. Opened in the child's own mount namespace, as a
 * bind mount's source must be.
 */
static int child_open_beneath(int tfd, const char *rel)
{
	int fd = tfd;
	const char *p = rel;
	while (*p) {
		char comp[NAME_MAX + 1];
		size_t n = strcspn(p, "/");
		if (n > NAME_MAX)
			return child_fail("open", rel, ENAMETOOLONG);
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		if (!n)
			continue;
		int next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (fd != tfd)
			close(fd);
		if (next < 0)
			return child_fail("open", rel, e);
		fd = next;
	}
	return fd == tfd ? child_fail("open", rel, EINVAL) : fd;
}

/* "/proc/self/fd/N" of fd into buf (no stdio in the child). */
static void fd_path(int fd, char buf[32])
{
	char digits[12];
	int n = 0;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	memcpy(buf, "/proc/self/fd/", 14);
	for (int i = 0; i < n; i++)
		buf[14 + i] = digits[n - 1 - i];
	buf[14 + n] = '\0';
}

static int child_mkdir(const char *path)
{
	return mkdir(path, 0755) < 0 && errno != EEXIST ? child_fail("mkdir", path, errno) : 0;
}

/* In the child, before the exec: the root made and entered. */
static int sandbox_setup(void *data)
{
	const struct sandbox *s = data;
	int r;
	if ((r = child_unshare(s)) < 0)
		return r;
	if (mount(NULL, "/", NOTYPE, MS_REC | MS_PRIVATE, NULL) < 0)
		return child_fail("private", "/", errno);
	/* the tree's directories, opened before the tmpfs covers them */
	char mod_src[32], conf_src[32] = "";
	int tfd = open(s->top, O_PATH | O_DIRECTORY | O_CLOEXEC), mfd, cfd;
	if (tfd < 0)
		return child_fail("open", s->top, errno);
	if ((mfd = child_open_beneath(tfd, s->mod_rel)) < 0)
		return mfd;
	fd_path(mfd, mod_src);
	if (s->conf_rel) {
		if ((cfd = child_open_beneath(tfd, s->conf_rel)) < 0)
			return cfd;
		fd_path(cfd, conf_src);
	}
	if (mount("scsitune-depmod", s->top, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
		return child_fail("tmpfs on", s->top, errno);
	if (chdir(s->top) < 0)
		return child_fail("chdir", s->top, errno);
	static const char *const dirs[] = {"usr", "etc", "etc/depmod.d", "lib", "lib/modules"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if ((r = child_mkdir(dirs[i])) < 0)
			return r;
	if ((r = child_mkdir(s->moddir)) < 0 || (r = bind_ro("/usr", "usr")) < 0)
		return r;
	for (size_t i = 0; i < s->n_mirrors; i++) {
		const struct mirror *m = &s->mirrors[i];
		if (m->target) {
			if (symlink(m->target, m->name) < 0)
				return child_fail("symlink", m->name, errno);
		} else if ((r = child_mkdir(m->name)) < 0 || (r = bind_ro(m->host, m->name)) < 0)
			return r;
	}
	if (mount(mod_src, s->moddir, NOTYPE, MS_BIND, NULL) < 0)
		return child_fail("bind", s->moddir, errno);
	if (*conf_src && (r = bind_ro(conf_src, "etc/depmod.d")) < 0)
		return r;
	/* the tmpfs itself read-only: depmod writes lib/modules/RELEASE and nothing else */
	if (mount(NULL, s->top, NOTYPE, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		return child_fail("read-only", s->top, errno);
	if (chroot(s->top) < 0 || chdir("/") < 0)
		return child_fail("chroot", s->top, errno);
	if (s->probe)
		_exit(0);
	return 0;
}

/* --- in the parent ---------------------------------------------------------------- */

/* name made again: link given, a symlink to it; else as the entry of dfd is (a symlink copied, a directory bound). */
static int add_mirror(struct sandbox *s, const char *name, const struct stat *st, int dfd, const char *entry,
		      const char *link)
{
	char buf[PATH_MAX];
	_cleanup_free_ char *target = NULL;
	if (link) {
		if (!(target = strdup(link)))
			return -ENOMEM;
	} else if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlinkat(dfd, entry, buf, sizeof(buf) - 1);
		if (n < 0)
			return 0; /* gone since: not mirrored */
		buf[n] = '\0';
		if (!(target = strdup(buf)))
			return -ENOMEM;
	} else if (!S_ISDIR(st->st_mode))
		return 0;
	struct mirror *n = realloc(s->mirrors, (s->n_mirrors + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->mirrors = n;
	struct mirror *m = &n[s->n_mirrors++];
	*m =
	    (struct mirror){.name = strdup(name), .host = stune_strdupf("/%s", name), .target = steal_pointer(&target)};
	if (!m->name || !m->host)
		return -ENOMEM;
	return 0;
}

/* What of /lib the loader needs: the multiarch directories (x86_64-linux-gnu), ld-linux where it lives in /lib. */
static bool lib_entry_needed(const char *name)
{
	return strstr(name, "-linux-") || !strncmp(name, "ld-", 3);
}

/*
 * The host's bin, sbin and lib64 (lib32, libx32) as they are: on Debian 12,
 * links into usr (merged /usr). /lib stays a directory of the new root (it
 * holds modules/RELEASE): the loader's entries of the host's /lib are links
 * into /usr/lib there (merged /usr: /usr/lib64/ld-linux-x86-64.so.2 is a link
 * to /lib/x86_64-linux-gnu/), or, where /lib is a directory of its own,
 * bound read-only (a symlink copied).
 */
static int host_mirrors(struct sandbox *s)
{
	static const char *const tops[] = {"bin", "sbin", "lib64", "lib32", "libx32"};
	_cleanup_close_ int rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int r;
	if (rfd < 0)
		return negative_errno();
	for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
		if (fstatat(rfd, tops[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (r = add_mirror(s, tops[i], &st, rfd, tops[i], NULL)) < 0)
			return r;
	if (fstatat(rfd, "lib", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	bool merged = S_ISLNK(st.st_mode);
	char buf[PATH_MAX];
	ssize_t n = merged ? readlinkat(rfd, "lib", buf, sizeof(buf) - 1) : 0;
	if (n < 0)
		return 0;
	buf[n] = '\0';
	/* merged /usr: /lib is a link, "usr/lib" on Debian 12, and the entries are listed where it points */
	_cleanup_free_ char *real = stune_strdupf("%s%s", merged && buf[0] != '/' ? "/" : "", merged ? buf : "/lib");
	_cleanup_closedir_ DIR *d = real ? opendir(real) : NULL;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!lib_entry_needed(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_free_ char *name = stune_strdupf("lib/%s", de->d_name),
				    *link = merged ? stune_strdupf("%s/%s", real, de->d_name) : NULL;
		if (!name || (merged && !link))
			return -ENOMEM;
		if ((r = add_mirror(s, name, &st, dirfd(d), de->d_name, link)) < 0)
			return r;
	}
	return 0;
}

/* The host's depmod (by its path in /usr or in a link to it), or NULL. */
static const char *host_depmod(void)
{
	static const char *const where[] = {"/usr/sbin/depmod", "/sbin/depmod", "/usr/bin/depmod", "/bin/depmod"};
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (access(where[i], X_OK) == 0)
			return where[i];
	return NULL;
}

/* A directory of the tree with its symlinks resolved inside the tree; -ENOENT when it is not there (or no directory).
 */
static int tree_dir(struct stune_ctx *ctx, const char *path, char **rel)
{
	_cleanup_close_ int fd = stune_root_open(ctx->root, path, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd == -ENOTDIR ? -ENOENT : fd;
	return stune_root_resolve(ctx->root, path, rel);
}

/* Everything the child needs: -ENOENT without the tree's lib/modules/RELEASE. */
static int sandbox_prepare(struct stune_ctx *ctx, const char *release, struct sandbox *s)
{
	s->top = stune_root_prefix(ctx->root);
	if (!valid_release(release))
		return -EINVAL;
	if (!(s->moddir = stune_strdupf("lib/modules/%s", release)))
		return -ENOMEM;
	int r = tree_dir(ctx, s->moddir, &s->mod_rel);
	if (r < 0)
		return r;
	if ((r = tree_dir(ctx, "etc/depmod.d", &s->conf_rel)) < 0 && r != -ENOENT)
		return r;
	snprintf(s->uid_map, sizeof(s->uid_map), "%lu %lu 1", (unsigned long)geteuid(), (unsigned long)geteuid());
	snprintf(s->gid_map, sizeof(s->gid_map), "%lu %lu 1", (unsigned long)getegid(), (unsigned long)getegid());
	return host_mirrors(s);
}

int stune_payload_depmod(struct stune_ctx *ctx, const char *release, char **output)
{
	_cleanup_(sandbox_clear) struct sandbox s = {0};
	const char *depmod = host_depmod();
	int r;
	*output = NULL;
	if (!depmod)
		return -ENOENT;
	if ((r = sandbox_prepare(ctx, release, &s)) < 0)
		return r;
	/* -C: the tree's depmod.d alone, as depmod -b DIR -C DIR/etc/depmod.d read it (an empty one: none) */
	const char *argv[] = {depmod, "-C", "/etc/depmod.d", release, NULL};
#ifdef SCSITUNE_TEST_HOOKS
	/* SCSITUNE_TEST_DEPMOD_KILL_AT=N: depmod killed (strace's fault injection, the host's /usr/bin/strace)
	 * as it renames its Nth index file into place, then scsitune itself, as a kill of the process group
	 * would: what a killed install or remove leaves (tests/payload/cases/kill-depmod.sh). */
	const char *kill_at = getenv("SCSITUNE_TEST_DEPMOD_KILL_AT");
	if (kill_at && *kill_at) {
		_cleanup_free_ char *inject = NULL;
		if (asprintf(&inject, "inject=rename,renameat,renameat2:signal=SIGKILL:when=%s", kill_at) < 0)
			return -ENOMEM;
		const char *traced[] = {
		    "/usr/bin/strace", "-qq",	"-e", "trace=rename,renameat,renameat2", "-e", inject, depmod, "-C",
		    "/etc/depmod.d",   release, NULL};
		r = stune_run_setup(traced, sandbox_setup, &s, output);
		raise(SIGKILL);
		return r;
	}
#endif
	return stune_run_setup(argv, sandbox_setup, &s, output);
}

/* depmod's root set up once in a child (no exec): 0, or -EPERM with *why saying which step failed. */
static int sandbox_probe(struct stune_ctx *ctx, const char *release, char **why)
{
	_cleanup_(sandbox_clear) struct sandbox s = {0};
	_cleanup_free_ char *out = NULL;
	int r = sandbox_prepare(ctx, release, &s);
	if (r == -ENOENT)
		return 0; /* no lib/modules/RELEASE: preflight's release check says so */
	if (r < 0)
		return stune_errf(why, r, "/lib/modules/%s in the --sysroot tree: %s", release, strerror(-r));
	s.probe = true;
	const char *argv[] = {"true", NULL};
	r = stune_run_setup(argv, sandbox_setup, &s, &out);
	if (r == 0)
		return 0;
	_cleanup_free_ char *last = stune_last_line(out);
	return stune_errf(why, -EPERM,
			  "depmod runs in a root of its own made of the --sysroot tree (a private mount "
			  "namespace), which needs root or user namespaces: %s",
			  last	  ? last
			  : r < 0 ? strerror(-r)
				  : "it could not be made");
}

int stune_payload_tree_check(struct stune_ctx *ctx, const char *release, char **why)
{
	if (stune_root_is_live(ctx->root))
		return 0;
	if (!valid_release(release))
		return stune_errf(why, -EINVAL, "release %s: not a directory name", release);
	_cleanup_free_ char *moddir = stune_strdupf("lib/modules/%s", release);
	const char *paths[] = {moddir, "boot", "etc"};
	if (!moddir)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		_cleanup_free_ char *link = NULL, *target = NULL;
		int r = stune_root_confined(ctx->root, paths[i], &link, &target);
		if (r == -EXDEV)
			return stune_errf(why, r, "%s is a symlink to %s, which leads out of the --sysroot tree %s",
					  link, target, stune_root_prefix(ctx->root));
		if (r < 0)
			return stune_errf(why, r, "/%s in the --sysroot tree: %s", paths[i], strerror(-r));
	}
	return sandbox_probe(ctx, release, why);
}
