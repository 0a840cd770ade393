/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/install.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/statefile.h"
#include "core/strv.h"
#include "core/userfile.h"
#include "payload/host.h"
#include "payload/initrd.h"
#include "payload/kmod.h"
#include "payload/sandbox.h"

/* depmod's output files (kmod's depmod.c depfiles[]): what remove compares. */
static const char *const depmod_index[] = {
    "modules.dep",     "modules.dep.bin",     "modules.alias",	     "modules.alias.bin",	  "modules.softdep",
    "modules.symbols", "modules.symbols.bin", "modules.builtin.bin", "modules.builtin.alias.bin", "modules.devname",
};

/* What other kmod versions write besides (kmod 33's modules.weakdep): a killed one's temporary file is its too. */
static const char *const depmod_index_more[] = {"modules.weakdep"};

/* --- test hook: a kill -9 at the N-th change ------------------------------------ */

static void hook(void)
{
#ifdef SCSITUNE_TEST_HOOKS
	static long count, limit = -1;
	if (limit < 0) {
		const char *s = getenv("SCSITUNE_TEST_PAYLOAD_ABORT");
		limit = s ? strtol(s, NULL, 10) : 0;
	}
	if (limit > 0 && ++count == limit)
		abort();
#endif
}

/* --- small file-system helpers, all inside the root ------------------------------ */

static int open_dir(struct stune_ctx *ctx, const char *path)
{
	return stune_root_open(ctx->root, path, O_RDONLY | O_DIRECTORY);
}

static int split(const char *path, char **dir, const char **base)
{
	*base = stune_path_basename(path);
	return stune_path_dirname(path, dir);
}

static char *tmp_name(const char *base)
{
	return stune_strdupf(".%s.scsitune-tmp", base);
}

static bool is_dir(struct stune_ctx *ctx, const char *path)
{
	int fd = open_dir(ctx, path);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int mkdir_root(struct stune_ctx *ctx, const char *path, mode_t mode)
{
	_cleanup_free_ char *dir = NULL;
	const char *base;
	int r = split(path, &dir, &base);
	if (r < 0)
		return r;
	_cleanup_close_ int dfd = open_dir(ctx, dir);
	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, base, mode) < 0 && errno != EEXIST)
		return negative_errno();
	return stune_dir_sync(dfd);
}

static int write_tmp(struct stune_ctx *ctx, const char *path, const void *data, size_t len, mode_t mode)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	const char *base;
	int r = split(path, &dir, &base);
	if (r < 0 || !(tmp = tmp_name(base)))
		return r < 0 ? r : -ENOMEM;
	_cleanup_close_ int dfd = open_dir(ctx, dir);
	if (dfd < 0)
		return dfd;
	(void)unlinkat(dfd, tmp, 0); /* a leftover of a killed install: ours by its name */
	return stune_dir_write(dfd, tmp, data, len, mode);
}

static int rename_tmp(struct stune_ctx *ctx, const char *path)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	const char *base;
	int r = split(path, &dir, &base);
	if (r < 0 || !(tmp = tmp_name(base)))
		return r < 0 ? r : -ENOMEM;
	_cleanup_close_ int dfd = open_dir(ctx, dir);
	if (dfd < 0)
		return dfd;
	if (renameat(dfd, tmp, dfd, base) < 0)
		return negative_errno();
	return stune_dir_sync(dfd);
}

/* Unlink path (and its temporary name) when it is ours (sha256) or force. */
static enum stune_payload_rm_outcome unlink_ours(struct stune_ctx *ctx, const char *path, const char *sha256,
						 bool force, char actual[STUNE_SHA256_HEX], int *err)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	const char *base;
	actual[0] = '\0';
	if (split(path, &dir, &base) < 0 || !(tmp = tmp_name(base))) {
		*err = ENOMEM;
		return STUNE_PAYLOAD_RM_FAILED;
	}
	_cleanup_close_ int dfd = open_dir(ctx, dir);
	if (dfd < 0)
		return dfd == -ENOENT ? STUNE_PAYLOAD_RM_ABSENT : (*err = -dfd, STUNE_PAYLOAD_RM_FAILED);
	bool had_tmp = unlinkat(dfd, tmp, 0) == 0;
	int r = stune_sha256_root_file(ctx->root, path, actual);
	if (r == -ENOENT) {
		actual[0] = '\0';
		if (had_tmp)
			stune_dir_sync(dfd);
		return had_tmp ? STUNE_PAYLOAD_RM_REMOVED : STUNE_PAYLOAD_RM_ABSENT;
	}
	if (r < 0) {
		*err = -r;
		return STUNE_PAYLOAD_RM_FAILED;
	}
	if (!force && (!sha256 || strcmp(actual, sha256)))
		return STUNE_PAYLOAD_RM_CHANGED;
	if (unlinkat(dfd, base, 0) < 0 || stune_dir_sync(dfd) < 0) {
		*err = errno;
		return STUNE_PAYLOAD_RM_FAILED;
	}
	return STUNE_PAYLOAD_RM_REMOVED;
}

/*
 * What a killed update-initramfs leaves next to the initrd. It begins by
 * linking the initrd to INITRD.dpkg-bak (its backup; a copy where links do
 * not work) and removes it when it ends (backup_initramfs=no, Debian's
 * default); mkinitramfs writes the new image to INITRD.new, which
 * update-initramfs renames over the initrd. Killed in between, they stay.
 * A .dpkg-bak holding the initrd from before install (old_sha256) and
 * linked or written since the install began (its ctime) is that backup; a
 * .new modified since is that half-written image. Both removed (nothing
 * older, nothing else); *bak / *new say which were.
 */
static void drop_initramfs_leftovers(struct stune_ctx *ctx, const char *path, const char *old_sha256, long long since,
				     bool *bak, bool *new)
{
	_cleanup_free_ char *dir = NULL, *bname = NULL, *nname = NULL, *bpath = NULL;
	const char *base;
	*bak = *new = false;
	if (since <= 0 || split(path, &dir, &base) < 0 || !(bname = stune_strdupf("%s.dpkg-bak", base)) ||
	    !(nname = stune_strdupf("%s.new", base)) || !(bpath = stune_strdupf("%s.dpkg-bak", path)))
		return;
	_cleanup_close_ int dfd = open_dir(ctx, dir);
	struct stat b, n;
	char sha[STUNE_SHA256_HEX];
	if (dfd < 0)
		return;
	if (old_sha256 && fstatat(dfd, bname, &b, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(b.st_mode) &&
	    (long long)b.st_ctim.tv_sec >= since && stune_sha256_root_file(ctx->root, bpath, sha) == 0 &&
	    !strcmp(sha, old_sha256))
		*bak = unlinkat(dfd, bname, 0) == 0;
	if (fstatat(dfd, nname, &n, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(n.st_mode) &&
	    (long long)n.st_mtim.tv_sec >= since)
		*new = unlinkat(dfd, nname, 0) == 0;
	if (*bak || *new)
		(void)stune_dir_sync(dfd);
}

/* ", removed: ..." for a remove row's note, from drop_initramfs_leftovers' answer. */
static const char *leftovers_note(bool bak, bool new)
{
	return bak && new ? "; left by the killed update-initramfs, removed: its backup of the initrd (.dpkg-bak), "
			    "its half-written image (.new)"
	       : bak	  ? "; left by the killed update-initramfs, removed: its backup of the initrd (.dpkg-bak)"
	       : new	  ? "; left by the killed update-initramfs, removed: its half-written image (.new)"
			  : "";
}

/* --- depmod and update-initramfs ---------------------------------------------- */

/* depmod: live, the host's; under --sysroot, the host's binary in a root made of the tree (payload/sandbox.c),
 * never depmod -b DIR, which would follow the tree's absolute symlinks on the host. */
static int run_depmod(struct stune_ctx *ctx, const char *release, char **err)
{
	_cleanup_free_ char *out = NULL;
	int r;
	if (stune_root_is_live(ctx->root)) {
		const char *argv[] = {"depmod", "-a", release, NULL};
		r = stune_run(argv, NULL, &out);
	} else
		r = stune_payload_depmod(ctx, release, &out);
	if (r == 0)
		return 0;
	_cleanup_free_ char *last = stune_last_line(out);
	return stune_errf(err, r < 0 ? r : -EIO, "depmod %s: %s", release,
			  r == -ENOENT ? "not found (install kmod)"
			  : last       ? last
				       : "failed");
}

int stune_initramfs_runner(struct stune_ctx *ctx, char **chroot_dir, char **why)
{
	*chroot_dir = NULL;
	if (stune_root_is_live(ctx->root))
		return 0;
	if (!stune_root_exists(ctx->root, "usr/sbin/update-initramfs")) {
		*why = strdup("the --sysroot tree has no usr/sbin/update-initramfs: the initrd is not made here");
		return -ENOENT;
	}
	if (geteuid() != 0) {
		*why = strdup("update-initramfs runs in a chroot of the --sysroot tree, which needs root");
		return -EPERM;
	}
	return (*chroot_dir = strdup(stune_root_prefix(ctx->root))) ? 0 : -ENOMEM;
}

static int run_update_initramfs(struct stune_ctx *ctx, const char *release, const char *chroot_dir, char **err)
{
	_cleanup_free_ char *out = NULL;
	const char *argv[] = {chroot_dir ? "/usr/sbin/update-initramfs" : "update-initramfs", "-u", "-k", release,
			      NULL};
	(void)ctx;
	int r = stune_run(argv, chroot_dir, &out);
	if (r == 0)
		return 0;
	_cleanup_free_ char *last = stune_last_line(out);
	return stune_errf(err, r < 0 ? r : -EIO, "update-initramfs -u -k %s: %s", release,
			  r == -ENOENT ? "not found (install initramfs-tools)"
			  : last       ? last
				       : "failed");
}

/* Put data (the kept initrd) back at path, mode kept. */
static int restore_file(struct stune_ctx *ctx, const char *path, const uint8_t *data, size_t len, mode_t mode)
{
	int r = write_tmp(ctx, path, data, len, mode);
	if (r < 0)
		return r;
	hook();
	return rename_tmp(ctx, path);
}

/* --- the kernel package: apt, and the boot links ------------------------------------ */

#define KERNEL_DEB_DIR "var/cache/scsitune"

/* Where apt-get runs for this root: 0 with *chroot_dir (NULL live), or -errno with *why. */
static int apt_runner(struct stune_ctx *ctx, char **chroot_dir, char **why)
{
	*chroot_dir = NULL;
	if (stune_root_is_live(ctx->root))
		return 0;
	if (!stune_root_exists(ctx->root, "usr/bin/apt-get")) {
		*why = strdup("the --sysroot tree has no usr/bin/apt-get: the kernel package is not installed here");
		return -ENOENT;
	}
	if (geteuid() != 0) {
		*why = strdup("apt-get runs in a chroot of the --sysroot tree, which needs root");
		return -EPERM;
	}
	return (*chroot_dir = strdup(stune_root_prefix(ctx->root))) ? 0 : -ENOMEM;
}

/* apt-get ARGS... (noninteractive) live or in the chroot; -EIO with *err naming its last line. */
static int run_apt(const char *chroot_dir, const char *what, const char *const *args, char **err)
{
	const char *argv[16] = {"env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-q", "-y"};
	size_t n = 5;
	for (size_t i = 0; args[i] && n < ELEMENTSOF(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (chroot_dir)
		argv[0] = "/usr/bin/env";
	_cleanup_free_ char *out = NULL;
	int r = stune_run(argv, chroot_dir, &out);
	if (r == 0)
		return 0;
	_cleanup_free_ char *last = stune_last_line(out);
	return stune_errf(err, r < 0 ? r : -EIO, "apt-get %s: %s", what,
			  r == -ENOENT ? "not found (install apt)"
			  : last       ? last
				       : "failed");
}

/* The installed version of package (dpkg's status file in the root), NULL when not installed. */
static char *installed_version(struct stune_ctx *ctx, const char *package)
{
	_cleanup_free_ char *status = NULL;
	if (stune_root_read(ctx->root, STUNE_DPKG_STATUS, &status) < 0)
		return NULL;
	return stune_dpkg_status_version(status, package);
}

/* KERNEL step's target "PACKAGE=VERSION" split (package in buf). */
static const char *kstep_version(const char *target, char *pkg, size_t size)
{
	const char *eq = target ? strchr(target, '=') : NULL;
	if (!eq || (size_t)(eq - target) >= size)
		return NULL;
	memcpy(pkg, target, (size_t)(eq - target));
	pkg[eq - target] = '\0';
	return eq + 1;
}

/* --- results ------------------------------------------------------------------ */

void stune_payload_install_result_clear(struct stune_payload_install_result *r)
{
	stune_payload_journal_free(r->journal);
	stune_strv_free(r->resolved);
	free(r->initrd_note);
	free(r->need);
	free(r->reload);
	for (size_t i = 0; r->reload_err && i < r->n_reload; i++)
		free(r->reload_err[i]);
	free(r->reload_err);
	memset(r, 0, sizeof(*r));
}

bool stune_payload_install_ours(const struct stune_manifest *m, const struct stune_payload_install_result *res,
				size_t i)
{
	if (!res->resolved || i >= m->n_modules || !res->resolved[i])
		return false;
	_cleanup_free_ char *want = stune_strdupf("%s/%s.ko", STUNE_PAYLOAD_SUBDIR, m->modules[i].name);
	return want && !strcmp(res->resolved[i], want);
}

int stune_payload_reload(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			 struct stune_payload_install_result *res)
{
	if (!res->need)
		return 0;
	if (res->reload)
		return -EALREADY;
	res->reload = calloc(m->n_modules ? m->n_modules : 1, sizeof(*res->reload));
	res->reload_err = calloc(m->n_modules ? m->n_modules : 1, sizeof(*res->reload_err));
	if (!res->reload || !res->reload_err)
		return -ENOMEM;
	res->n_reload = m->n_modules;
	for (size_t i = 0; i < m->n_modules; i++) {
		if (res->need[i] != STUNE_NEED_RELOAD || !stune_payload_install_ours(m, res, i))
			continue;
		int k = stune_kmod_reload(ctx, m->modules[i].name, &res->reload_err[i]);
		res->reload[i] = k == 0 ? 1 : k;
		if (k == 0)
			res->need[i] = stune_payload_need(ctx, h, m->modules[i].name, m->modules[i].srcversion);
	}
	return 0;
}

char *stune_depmod_conf_text(const struct stune_manifest *m)
{
	char *s = stune_strdupf("# scsitune payload %s for %s (Debian %s %s).\n"
				"# Written by `scsitune payload install`; `scsitune payload remove` deletes it.\n"
				"# override lines only: a search line would change the order of every module.\n",
				m->payload_version, m->release, m->debian_package, m->debian_version);
	for (size_t i = 0; s && i < m->n_modules; i++) {
		char *n =
		    stune_strdupf("%soverride %s %s %s\n", s, m->modules[i].name, m->release, STUNE_PAYLOAD_SUBDIR);
		free(s);
		s = n;
	}
	return s;
}

enum stune_payload_need stune_payload_need(struct stune_ctx *ctx, const struct stune_payload_host *h, const char *name,
					   const char *srcversion)
{
	if (!h->running)
		return STUNE_NEED_REBOOT;
	_cleanup_free_ char *init = NULL, *src = NULL, *refcnt = NULL;
	if (stune_root_readf(ctx->root, &init, "sys/module/%s/initstate", name) < 0)
		return STUNE_NEED_NOTHING;
	if (srcversion && stune_root_readf(ctx->root, &src, "sys/module/%s/srcversion", name) == 0 &&
	    !strcmp(src, srcversion))
		return STUNE_NEED_NONE_LOADED_OURS;
	if (stune_root_readf(ctx->root, &refcnt, "sys/module/%s/refcnt", name) == 0 && strcmp(refcnt, "0"))
		return STUNE_NEED_REBOOT;
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *hp = stune_strdupf("sys/module/%s/holders", name);
	if (hp && stune_root_opendir(ctx->root, hp, &d) == 0) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				return STUNE_NEED_REBOOT;
	}
	return STUNE_NEED_RELOAD;
}

/* --- install -------------------------------------------------------------------- */

static int save(const char *state_dir, struct stune_payload_journal *j, char **err)
{
	int r = stune_payload_journal_save(state_dir, j);
	if (r < 0)
		return stune_errf(err, r, "%s/payload/journal.json: %s", state_dir, strerror(-r));
	hook();
	return 0;
}

static int set_state(const char *state_dir, struct stune_payload_journal *j, size_t i, enum stune_payload_step_state s,
		     char **err)
{
	j->steps[i].state = s;
	return save(state_dir, j, err);
}

static int set_note(struct stune_payload_step *s, const char *fmt, ...) _printf_(2, 3);
static int set_note(struct stune_payload_step *s, const char *fmt, ...)
{
	va_list ap;
	free(s->note);
	va_start(ap, fmt);
	int k = vasprintf(&s->note, fmt, ap);
	va_end(ap);
	if (k < 0) {
		s->note = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Which of m's modules the initrd carries a copy of; our copies there. */
static int check_initrd(const struct stune_manifest *m, const uint8_t *old, size_t old_len, const uint8_t *new,
			size_t new_len, char **note, bool *ok)
{
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t nn = 0;
	int r;
	*ok = false;
	for (size_t i = 0; i < m->n_modules; i++)
		if ((r = stune_strv_push(&names, &nn, strdup(m->modules[i].name))) < 0)
			return r;
	_cleanup_(stune_initrd_freep) struct stune_initrd *before = NULL, *after = NULL;
	_cleanup_free_ char *why = NULL;
	if (old && stune_initrd_read(old, old_len, m->release, names, &before, NULL) < 0)
		before = NULL;
	if ((r = stune_initrd_read(new, new_len, m->release, names, &after, &why)) < 0) {
		*note = stune_strdupf("the new initrd cannot be read: %s", why ? why : strerror(-r));
		return 0;
	}
	_cleanup_free_ char *summary = strdup("");
	bool all = true;
	for (size_t i = 0; i < m->n_modules && summary; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		const struct stune_payload_file *pf = stune_manifest_file(m, pm->file);
		_cleanup_free_ char *rel = stune_initrd_resolve(after, pm->name);
		bool had = false;
		for (size_t k = 0; before && k < before->n; k++)
			had |= !strcmp(before->files[k].module, pm->name);
		const struct stune_initrd_file *f = NULL;
		if (rel)
			f = stune_initrd_file(after, pm->name, rel);
		for (size_t k = 0; !f && k < after->n; k++)
			if (!strcmp(after->files[k].module, pm->name))
				f = &after->files[k];
		char *n;
		if (f && !strcmp(f->sha256, pf->sha256))
			n = stune_strdupf("%s%s%s.ko: ours (%s)", summary, *summary ? "; " : "", pm->name, f->path);
		else if (f) {
			all = false;
			n = stune_strdupf("%s%s%s.ko: NOT ours (%s, SHA-256 %.12s...)", summary, *summary ? "; " : "",
					  pm->name, f->path, f->sha256);
		} else if (had) {
			all = false;
			n = stune_strdupf("%s%s%s.ko: missing (the old initrd had it)", summary, *summary ? "; " : "",
					  pm->name);
		} else
			n = stune_strdupf("%s%s%s.ko: not in the initrd (loaded from /lib/modules)", summary,
					  *summary ? "; " : "", pm->name);
		free(summary);
		summary = n;
	}
	if (!summary)
		return -ENOMEM;
	*ok = all;
	*note = steal_pointer(&summary);
	return 0;
}

/* The kernel steps from kfirst on (planned, journaled): the .deb written, apt-get install, then with
 * --set-default each boot link repointed (its old target journaled first). */
static int install_kernel(struct stune_ctx *ctx, const struct stune_manifest *m,
			  const struct stune_payload_install_opts *o, struct stune_payload_journal *j, size_t kfirst,
			  const char *chroot_dir, char **err)
{
	const struct stune_payload_kernel *k = m->kernel;
	const struct stune_payload_file *kf = stune_manifest_file(m, k->file);
	int r;
	for (size_t i = kfirst; i < j->n; i++) {
		struct stune_payload_step *s = &j->steps[i];
		if (s->state == STUNE_PAYLOAD_STEP_STATE_SKIPPED)
			continue;
		if (s->kind == STUNE_PAYLOAD_STEP_DEFAULT) {
			/* the link's old target in the journal before the step is marked started */
			_cleanup_free_ char *old = NULL;
			int lr = stune_root_readlink(ctx->root, s->path, &old);
			if (lr < 0 && lr != -ENOENT)
				return stune_errf(err, lr,
						  "/%s: %s (not a symlink: the boot default is not set by links here)",
						  s->path, strerror(-lr));
			free(s->old_target);
			s->old_target = steal_pointer(&old);
		}
		if ((r = set_state(o->state_dir, j, i, STUNE_PAYLOAD_STEP_STATE_STARTED, err)) < 0)
			return r;
		switch (s->kind) {
		case STUNE_PAYLOAD_STEP_MKDIR:
			if ((r = mkdir_root(ctx, s->path, 0755)) < 0)
				return stune_errf(err, r, "mkdir /%s: %s", s->path, strerror(-r));
			break;
		case STUNE_PAYLOAD_STEP_FILE:
			if ((r = write_tmp(ctx, s->path, kf->data, kf->size, 0644)) < 0)
				return stune_errf(err, r, "writing /%s: %s", s->path, strerror(-r));
			hook();
			if ((r = rename_tmp(ctx, s->path)) < 0)
				return stune_errf(err, r, "renaming into /%s: %s", s->path, strerror(-r));
			break;
		case STUNE_PAYLOAD_STEP_KERNEL: {
			/* apt resolves what the package depends on; never dpkg --force */
			_cleanup_free_ char *deb =
			    stune_strdupf("/" KERNEL_DEB_DIR "/%s", stune_path_basename(k->file));
			if (!deb)
				return -ENOMEM;
			const char *args[] = {"install", "--no-install-recommends", deb, NULL};
			if ((r = run_apt(chroot_dir, "install", args, err)) < 0)
				return r;
			hook();
			_cleanup_free_ char *now = installed_version(ctx, k->package);
			if (!now || strcmp(now, k->version))
				return stune_errf(err, -EIO, "apt-get install ran, but dpkg says %s is %s%s",
						  k->package, now ? "at " : "not installed", now ? now : "");
			if (!stune_root_exists(ctx->root, s->path))
				return stune_errf(err, -ENOENT, "%s is installed but /%s is not there", k->package,
						  s->path);
			if ((r = set_note(s, "%s %s installed with apt-get", k->package, k->version)) < 0)
				return r;
			break;
		}
		case STUNE_PAYLOAD_STEP_DEFAULT:
			if ((r = stune_root_symlink(ctx->root, s->path, s->target)) < 0)
				return stune_errf(err, r, "pointing /%s at %s: %s", s->path, s->target, strerror(-r));
			if ((r = set_note(s, "was %s", s->old_target ? s->old_target : "(no link)")) < 0)
				return r;
			break;
		default:
			break;
		}
		hook();
		if ((r = set_state(o->state_dir, j, i, STUNE_PAYLOAD_STEP_STATE_DONE, err)) < 0)
			return r;
	}
	return 0;
}

/* What install plans before its first change, and what its steps share. */
struct install_plan {
	struct stune_payload_journal *j;
	char *conf;	  /* the depmod.d file's text */
	char *initrd;	  /* boot/initrd.img-RELEASE */
	char *chroot_dir; /* where update-initramfs runs (NULL live) */
	char *kchroot;	  /* where apt-get runs (NULL live) */
	int ifd;	  /* the initrd, open before any change */
	size_t first_file, end_files, depmod_step, initrd_step, kfirst;
	bool do_initrd, do_kernel;
};

static void install_plan_clear(struct install_plan *p)
{
	stune_payload_journal_free(p->j);
	free(p->conf);
	free(p->initrd);
	free(p->chroot_dir);
	free(p->kchroot);
	closep(&p->ifd);
}

/* The journal's head: the payload, the bundle it came from, when install began. */
static int journal_begin(const struct stune_manifest *m, const struct stune_payload_install_opts *o,
			 struct stune_payload_journal **ret)
{
	_cleanup_(stune_payload_journal_freep) struct stune_payload_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	if (!(j->release = strdup(m->release)) || !(j->payload_version = strdup(m->payload_version)) ||
	    (o->bundle_sha256 && !(j->bundle_sha256 = strdup(o->bundle_sha256))) ||
	    (o->key_id && !(j->key_id = strdup(o->key_id))) || !(j->manifest_sha256 = malloc(STUNE_SHA256_HEX)))
		return -ENOMEM;
	stune_sha256_hex(m->json, m->json_len, j->manifest_sha256);
	j->started = (long long)time(NULL);
	*ret = steal_pointer(&j);
	return 0;
}

/* The payload's steps: the directories, the files (modules, manifest, depmod.d), depmod, the initrd. */
static int plan_payload(struct stune_ctx *ctx, const struct stune_manifest *m, struct install_plan *p)
{
	struct stune_payload_journal *j = p->j;
	_cleanup_free_ char *updates = NULL, *dir = NULL;
	int r;
	if (!(updates = stune_strdupf("lib/modules/%s/updates", m->release)) ||
	    !(dir = stune_strdupf("%s/scsitune", updates)) || !(p->conf = stune_depmod_conf_text(m)) ||
	    !(p->initrd = stune_strdupf("boot/initrd.img-%s", m->release)))
		return -ENOMEM;

	if (!is_dir(ctx, updates) && (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_MKDIR, updates, NULL)) < 0)
		return r;
	if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_MKDIR, dir, NULL)) < 0)
		return r;
	if (!is_dir(ctx, "etc/depmod.d") &&
	    (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_MKDIR, "etc/depmod.d", NULL)) < 0)
		return r;
	p->first_file = j->n;
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		_cleanup_free_ char *path = stune_strdupf("%s/%s.ko", dir, pm->name);
		if (!path || (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_FILE, path,
							    stune_manifest_file(m, pm->file)->sha256)) < 0)
			return path ? r : -ENOMEM;
	}
	char sha[STUNE_SHA256_HEX];
	_cleanup_free_ char *mp = stune_strdupf("%s/manifest.json", dir);
	if (!mp || (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_FILE, mp, j->manifest_sha256)) < 0)
		return mp ? r : -ENOMEM;
	stune_sha256_hex(p->conf, strlen(p->conf), sha);
	if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_FILE, STUNE_DEPMOD_CONF, sha)) < 0)
		return r;
	p->end_files = j->n;
	if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_DEPMOD, NULL, NULL)) < 0)
		return r;
	p->depmod_step = j->n - 1;
	if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_INITRD, p->initrd, NULL)) < 0)
		return r;
	p->initrd_step = j->n - 1;
	return 0;
}

/* Whether the initrd is updated: when not, its step SKIPPED with the reason; when so, its mode kept. */
static int plan_initrd(struct stune_ctx *ctx, const struct stune_manifest *m,
		       const struct stune_payload_install_opts *o, struct install_plan *p)
{
	struct stune_payload_step *is = &p->j->steps[p->initrd_step];
	_cleanup_free_ char *runner_why = NULL;
	struct stat ist;
	int r;
	p->ifd = stune_root_open(ctx->root, p->initrd, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (o->no_initramfs)
		r = set_note(is,
			     "--no-initramfs: the initrd still holds the stock modules until update-initramfs -u -k %s",
			     m->release);
	else if (p->ifd < 0)
		r = set_note(is, "no /%s: nothing to update", p->initrd);
	else if (fstat(p->ifd, &ist) < 0 || !S_ISREG(ist.st_mode))
		r = set_note(is, "/%s is not a regular file: not updated", p->initrd);
	else if (stune_initramfs_runner(ctx, &p->chroot_dir, &runner_why) < 0)
		r = set_note(is, "%s", runner_why);
	else
		r = 1;
	if (r < 0)
		return r;
	p->do_initrd = r == 1;
	if (!p->do_initrd)
		is->state = STUNE_PAYLOAD_STEP_STATE_SKIPPED;
	else
		is->mode = ist.st_mode & 0644; /* what remove puts back: never more than install's own files get */
	return 0;
}

/* The kernel package: its .deb under var/cache/scsitune, apt, and with --set-default the boot links. */
static int plan_kernel(struct stune_ctx *ctx, const struct stune_manifest *m,
		       const struct stune_payload_install_opts *o, struct install_plan *p, char **err)
{
	struct stune_payload_journal *j = p->j;
	int r;
	p->kfirst = j->n;
	if (!m->kernel)
		return 0;
	const struct stune_payload_kernel *k = m->kernel;
	const struct stune_payload_file *kf = stune_manifest_file(m, k->file);
	_cleanup_free_ char *deb = stune_strdupf(KERNEL_DEB_DIR "/%s", stune_path_basename(k->file)),
			    *target = stune_strdupf("%s=%s", k->package, k->version),
			    *image = stune_strdupf("boot/vmlinuz-%s", k->release),
			    *kinitrd = stune_strdupf("boot/initrd.img-%s", k->release), *why = NULL, *kver_now = NULL;
	if (!deb || !target || !image || !kinitrd)
		return -ENOMEM;
	kver_now = installed_version(ctx, k->package);
	if (kver_now && strcmp(kver_now, k->version) && !o->no_kernel)
		return stune_errf(err, -EEXIST,
				  "%s %s is installed and the bundle carries %s: remove it first (apt-get purge %s), "
				  "or --no-kernel",
				  k->package, kver_now, k->version, k->package);
	if (!is_dir(ctx, KERNEL_DEB_DIR) &&
	    (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_MKDIR, KERNEL_DEB_DIR, NULL)) < 0)
		return r;
	if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_FILE, deb, kf->sha256)) < 0 ||
	    (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_KERNEL, image, kf->sha256)) < 0)
		return r;
	if (!(j->steps[j->n - 1].target = steal_pointer(&target)))
		return -ENOMEM;
	if (o->set_default) {
		if ((r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_DEFAULT, "vmlinuz", NULL)) < 0 ||
		    !(j->steps[j->n - 1].target = steal_pointer(&image)) ||
		    (r = stune_payload_journal_add(j, STUNE_PAYLOAD_STEP_DEFAULT, "initrd.img", NULL)) < 0 ||
		    !(j->steps[j->n - 1].target = steal_pointer(&kinitrd)))
			return r < 0 ? r : -ENOMEM;
	}
	const char *skip = NULL;
	if (o->no_kernel)
		skip = "--no-kernel: the bundle's kernel package is left out";
	else if (apt_runner(ctx, &p->kchroot, &why) < 0)
		skip = why ? why : "apt-get cannot run here";
	for (size_t i = p->kfirst; i < j->n; i++) {
		struct stune_payload_step *ks = &j->steps[i];
		if (skip) {
			ks->state = STUNE_PAYLOAD_STEP_STATE_SKIPPED;
			if ((r = set_note(ks, "%s", skip)) < 0)
				return r;
		} else if (kver_now && ks->kind != STUNE_PAYLOAD_STEP_DEFAULT) {
			/* already installed: not ours to install, nor to purge */
			ks->state = STUNE_PAYLOAD_STEP_STATE_SKIPPED;
			if ((r = set_note(ks, "%s %s is already installed: left as it is (remove leaves it too)",
					  k->package, kver_now)) < 0)
				return r;
		}
	}
	p->do_kernel = !skip;
	return 0;
}

/* depmod's index files as they are before install (what remove compares). */
static int journal_depmod_index(struct stune_ctx *ctx, const struct stune_manifest *m, struct stune_payload_journal *j)
{
	for (size_t i = 0; i < ELEMENTSOF(depmod_index); i++) {
		_cleanup_free_ char *p = stune_strdupf("lib/modules/%s/%s", m->release, depmod_index[i]);
		if (!p)
			return -ENOMEM;
		char d[STUNE_SHA256_HEX];
		if (stune_sha256_root_file(ctx->root, p, d) < 0)
			continue;
		struct stune_payload_file_digest *n = realloc(j->index, (j->n_index + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		j->index = n;
		n[j->n_index].path = steal_pointer(&p);
		memcpy(n[j->n_index++].sha256, d, STUNE_SHA256_HEX);
	}
	return 0;
}

/* Directories. */
static int install_dirs(struct stune_ctx *ctx, const char *state_dir, struct stune_payload_journal *j, size_t end,
			char **err)
{
	int r;
	for (size_t i = 0; i < end; i++) {
		if ((r = set_state(state_dir, j, i, STUNE_PAYLOAD_STEP_STATE_STARTED, err)) < 0)
			return r;
		if ((r = mkdir_root(ctx, j->steps[i].path, 0755)) < 0)
			return stune_errf(err, r, "mkdir /%s: %s", j->steps[i].path, strerror(-r));
		hook();
		if ((r = set_state(state_dir, j, i, STUNE_PAYLOAD_STEP_STATE_DONE, err)) < 0)
			return r;
	}
	return 0;
}

/* Files: all staged (written under a temporary name, fsync'd), then renamed into place. */
static int install_files(struct stune_ctx *ctx, const struct stune_manifest *m, const char *state_dir,
			 const struct install_plan *p, char **err)
{
	struct stune_payload_journal *j = p->j;
	int r;
	for (size_t i = p->first_file; i < p->end_files; i++) {
		struct stune_payload_step *s = &j->steps[i];
		const void *data;
		size_t len;
		if (i - p->first_file < m->n_modules) {
			const struct stune_payload_file *pf =
			    stune_manifest_file(m, m->modules[i - p->first_file].file);
			data = pf->data;
			len = pf->size;
		} else if (i == p->end_files - 1) {
			data = p->conf;
			len = strlen(p->conf);
		} else {
			data = m->json;
			len = m->json_len;
		}
		if ((r = set_state(state_dir, j, i, STUNE_PAYLOAD_STEP_STATE_STARTED, err)) < 0)
			return r;
		if ((r = write_tmp(ctx, s->path, data, len, 0644)) < 0)
			return stune_errf(err, r, "writing /%s: %s", s->path, strerror(-r));
		hook();
	}
	for (size_t i = p->first_file; i < p->end_files; i++) {
		if ((r = rename_tmp(ctx, j->steps[i].path)) < 0)
			return stune_errf(err, r, "renaming into /%s: %s", j->steps[i].path, strerror(-r));
		hook();
	}
	for (size_t i = p->first_file; i < p->end_files; i++)
		j->steps[i].state = STUNE_PAYLOAD_STEP_STATE_DONE;
	return save(state_dir, j, err);
}

/* depmod, then what modprobe resolves. */
static int install_depmod(struct stune_ctx *ctx, const struct stune_manifest *m, const char *state_dir,
			  const struct install_plan *p, struct stune_payload_install_result *res, char **err)
{
	int r;
	if ((r = set_state(state_dir, p->j, p->depmod_step, STUNE_PAYLOAD_STEP_STATE_STARTED, err)) < 0)
		return r;
	if ((r = run_depmod(ctx, m->release, err)) < 0)
		return r;
	hook();
	if ((r = set_state(state_dir, p->j, p->depmod_step, STUNE_PAYLOAD_STEP_STATE_DONE, err)) < 0)
		return r;
	if (!(res->resolved = calloc(m->n_modules + 1, sizeof(char *))) ||
	    !(res->need = calloc(m->n_modules, sizeof(*res->need))))
		return -ENOMEM;
	for (size_t i = 0; i < m->n_modules; i++) {
		int k = stune_kmod_resolve(ctx, m->release, m->modules[i].name, &res->resolved[i]);
		if (k == -EPERM) /* --sysroot without root: not checked */
			res->unresolved = true;
		else if (k < 0 && k != -ENOENT)
			return stune_errf(err, k, "libkmod: resolving %s: %s", m->modules[i].name, strerror(-k));
		if (!res->resolved[i] && !(res->resolved[i] = strdup("")))
			return -ENOMEM;
	}
	return 0;
}

/* The initrd: the old one kept, update-initramfs, the new one read back (skipped: the note says why). */
static int install_initrd(struct stune_ctx *ctx, const struct stune_manifest *m, const char *state_dir,
			  const struct install_plan *p, struct stune_payload_install_result *res, char **err)
{
	struct stune_payload_step *is = &p->j->steps[p->initrd_step];
	if (!p->do_initrd)
		return (res->initrd_note = strdup(is->note ? is->note : "skipped")) ? 0 : -ENOMEM;
	_cleanup_free_ uint8_t *old = NULL, *new = NULL;
	size_t old_len = 0, new_len = 0;
	int r;
	if ((r = stune_read_fd(p->ifd, STUNE_INITRD_MAX, &old, &old_len)) < 0)
		return stune_errf(err, r, "reading /%s: %s", p->initrd, strerror(-r));
	if (!(is->old_sha256 = malloc(STUNE_SHA256_HEX)))
		return -ENOMEM;
	stune_sha256_hex(old, old_len, is->old_sha256);
	if ((r = set_state(state_dir, p->j, p->initrd_step, STUNE_PAYLOAD_STEP_STATE_STARTED, err)) < 0)
		return r;
	_cleanup_free_ char *pdir = NULL;
	if ((r = stune_payload_journal_dir(state_dir, true, &pdir)) < 0 ||
	    (r = stune_write_atomic(pdir, "kept-initrd", old, old_len, 0600, NULL)) < 0)
		return stune_errf(err, r, "keeping the initrd in %s: %s", pdir ? pdir : state_dir, strerror(-r));
	hook();
	if ((r = run_update_initramfs(ctx, m->release, p->chroot_dir, err)) < 0)
		return r;
	hook();
	if ((r = stune_read_root_file(ctx->root, p->initrd, STUNE_INITRD_MAX, &new, &new_len)) < 0)
		return stune_errf(err, r, "reading the new /%s: %s", p->initrd, strerror(-r));
	if (!(is->sha256 = malloc(STUNE_SHA256_HEX)))
		return -ENOMEM;
	stune_sha256_hex(new, new_len, is->sha256);
	if ((r = check_initrd(m, old, old_len, new, new_len, &res->initrd_note, &res->initrd_ok)) < 0)
		return r;
	if ((r = set_note(is, "%s", res->initrd_note ? res->initrd_note : "?")) < 0)
		return r;
	return set_state(state_dir, p->j, p->initrd_step, STUNE_PAYLOAD_STEP_STATE_DONE, err);
}

int stune_payload_install(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			  const struct stune_payload_install_opts *o, struct stune_payload_install_result *res,
			  char **err)
{
	_cleanup_(install_plan_clear) struct install_plan p = {.ifd = -EBADF};
	int r;
	memset(res, 0, sizeof(*res));

	/* The plan: every step, in the journal before the first change. */
	if ((r = journal_begin(m, o, &p.j)) < 0 || (r = plan_payload(ctx, m, &p)) < 0 ||
	    (r = plan_initrd(ctx, m, o, &p)) < 0 || (r = plan_kernel(ctx, m, o, &p, err)) < 0 ||
	    (r = journal_depmod_index(ctx, m, p.j)) < 0)
		return r;
	if ((r = save(o->state_dir, p.j, err)) < 0)
		goto out;

	if ((r = install_dirs(ctx, o->state_dir, p.j, p.first_file, err)) < 0 ||
	    (r = install_files(ctx, m, o->state_dir, &p, err)) < 0 ||
	    (r = install_depmod(ctx, m, o->state_dir, &p, res, err)) < 0 ||
	    (r = install_initrd(ctx, m, o->state_dir, &p, res, err)) < 0)
		goto out;
	if (p.do_kernel && (r = install_kernel(ctx, m, o, p.j, p.kfirst, p.kchroot, err)) < 0)
		goto out;

	p.j->complete = true;
	if ((r = save(o->state_dir, p.j, err)) < 0)
		goto out;
	for (size_t i = 0; i < m->n_modules; i++)
		res->need[i] = stune_payload_need(ctx, h, m->modules[i].name, m->modules[i].srcversion);
	r = 0;
out:
	res->journal = steal_pointer(&p.j);
	return r;
}

int stune_payload_installed_intact(struct stune_ctx *ctx, const struct stune_payload_journal *j, char **path,
				   bool *missing)
{
	*path = NULL;
	*missing = false;
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		char actual[STUNE_SHA256_HEX];
		if (s->kind != STUNE_PAYLOAD_STEP_FILE || s->state != STUNE_PAYLOAD_STEP_STATE_DONE || !s->path)
			continue;
		int r = stune_sha256_root_file(ctx->root, s->path, actual);
		if (r < 0 && r != -ENOENT)
			return r;
		if (r == 0 && s->sha256 && !strcmp(actual, s->sha256))
			continue;
		*missing = r == -ENOENT;
		return (*path = strdup(s->path)) ? 0 : -ENOMEM;
	}
	return 1;
}

/* --- remove ----------------------------------------------------------------------- */

static const char *const prm_names[_STUNE_PAYLOAD_RM_MAX] = {
    [STUNE_PAYLOAD_RM_REMOVED] = "removed", [STUNE_PAYLOAD_RM_RESTORED] = "restored",
    [STUNE_PAYLOAD_RM_REBUILT] = "rebuilt", [STUNE_PAYLOAD_RM_ABSENT] = "absent",
    [STUNE_PAYLOAD_RM_RAN] = "ran",	    [STUNE_PAYLOAD_RM_CHANGED] = "changed-since",
    [STUNE_PAYLOAD_RM_KEPT] = "kept",	    [STUNE_PAYLOAD_RM_SKIPPED] = "skipped",
    [STUNE_PAYLOAD_RM_FAILED] = "failed",
};

const char *stune_payload_rm_outcome_name(enum stune_payload_rm_outcome o)
{
	return o < _STUNE_PAYLOAD_RM_MAX ? prm_names[o] : "?";
}

void stune_payload_remove_result_clear(struct stune_payload_remove_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->rows[i].path);
		free(r->rows[i].expected);
		free(r->rows[i].actual);
		free(r->rows[i].note);
	}
	free(r->rows);
	free(r->index_note);
	memset(r, 0, sizeof(*r));
}

static struct stune_payload_rm_row *rm_row(struct stune_payload_remove_result *res, enum stune_payload_step_kind kind,
					   const char *path, const char *expected, const char *actual,
					   enum stune_payload_rm_outcome outcome)
{
	struct stune_payload_rm_row *n = realloc(res->rows, (res->n + 1) * sizeof(*n));
	if (!n)
		return NULL;
	res->rows = n;
	struct stune_payload_rm_row *w = &n[res->n++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->outcome = outcome;
	if ((path && !(w->path = strdup(path))) || (expected && *expected && !(w->expected = strdup(expected))) ||
	    (actual && *actual && !(w->actual = strdup(actual))))
		return NULL;
	return w;
}

static int rm_note(struct stune_payload_rm_row *w, const char *fmt, ...) _printf_(2, 3);
static int rm_note(struct stune_payload_rm_row *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vasprintf(&w->note, fmt, ap);
	va_end(ap);
	if (k < 0) {
		w->note = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Does the initrd at path hold any copy of our modules (by hash)? */
static int initrd_holds_ours(struct stune_ctx *ctx, const struct stune_payload_journal *j, const char *path, bool *ours)
{
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t nn = 0;
	int r;
	*ours = false;
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		size_t l = s->path ? strlen(s->path) : 0;
		if (s->kind != STUNE_PAYLOAD_STEP_FILE || l < 4 || strcmp(s->path + l - 3, ".ko"))
			continue;
		const char *b = stune_path_basename(s->path);
		if ((r = stune_strv_push(&names, &nn, strndup(b, strlen(b) - 3))) < 0)
			return r;
	}
	if (!names)
		return 0;
	_cleanup_free_ uint8_t *data = NULL;
	size_t len = 0;
	if ((r = stune_read_root_file(ctx->root, path, STUNE_INITRD_MAX, &data, &len)) < 0)
		return r;
	_cleanup_(stune_initrd_freep) struct stune_initrd *in = NULL;
	if ((r = stune_initrd_read(data, len, j->release, names, &in, NULL)) < 0)
		return r;
	for (size_t k = 0; k < in->n; k++)
		for (size_t i = 0; i < j->n; i++)
			if (j->steps[i].kind == STUNE_PAYLOAD_STEP_FILE && j->steps[i].sha256 &&
			    !strcmp(j->steps[i].sha256, in->files[k].sha256))
				*ours = true;
	return 0;
}

/* How many of depmod's index files differ from the ones journaled before install (first: the first). */
static int index_differs(struct stune_ctx *ctx, const struct stune_payload_journal *j, size_t *differ, char **first)
{
	*differ = 0;
	for (size_t i = 0; i < j->n_index; i++) {
		char d[STUNE_SHA256_HEX];
		if (stune_sha256_root_file(ctx->root, j->index[i].path, d) == 0 && !strcmp(d, j->index[i].sha256))
			continue;
		if (!(*differ)++ && !(*first = strdup(j->index[i].path)))
			return -ENOMEM;
	}
	return 0;
}

/* Refused before any change when the running kernel is a package install put there (force purges it anyway). */
static int refuse_running_kernel(struct stune_ctx *ctx, const struct stune_payload_journal *j, bool force, char **err)
{
	_cleanup_free_ char *running = NULL;
	(void)stune_root_read(ctx->root, "proc/sys/kernel/osrelease", &running);
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		char pkg[256];
		const char *ver = kstep_version(s->target, pkg, sizeof(pkg));
		if (s->kind != STUNE_PAYLOAD_STEP_KERNEL || s->state == STUNE_PAYLOAD_STEP_STATE_PENDING ||
		    s->state == STUNE_PAYLOAD_STEP_STATE_SKIPPED || !ver || strncmp(pkg, "linux-image-", 12))
			continue;
		_cleanup_free_ char *now = installed_version(ctx, pkg);
		if (now && !strcmp(now, ver) && running && !strcmp(running, pkg + 12) && !force)
			return stune_errf(
			    err, -EBUSY,
			    "the running kernel is the payload's (%s): boot another kernel first (the journal "
			    "stays; nothing was changed), or --force to purge it anyway",
			    running);
	}
	return 0;
}

/* A boot link install repointed: back to its old target when it still points where install pointed it. */
static int restore_boot_link(struct stune_ctx *ctx, const struct stune_payload_step *s, bool force,
			     struct stune_payload_remove_result *res, bool *failed, bool *changed)
{
	struct stune_payload_rm_row *w;
	int r;
	_cleanup_free_ char *cur = NULL;
	(void)stune_root_readlink(ctx->root, s->path, &cur);
	bool ours = cur && s->target && !strcmp(cur, s->target);
	bool before = s->old_target ? cur && !strcmp(cur, s->old_target) : !cur;
	enum stune_payload_rm_outcome oc = before ? STUNE_PAYLOAD_RM_ABSENT : STUNE_PAYLOAD_RM_CHANGED;
	if (!before && (ours || force)) {
		r = s->old_target ? stune_root_symlink(ctx->root, s->path, s->old_target)
				  : stune_root_unlink(ctx->root, s->path);
		oc = r < 0 ? STUNE_PAYLOAD_RM_FAILED : STUNE_PAYLOAD_RM_RESTORED;
	}
	if (!(w = rm_row(res, s->kind, s->path, s->old_target, cur, oc)))
		return -ENOMEM;
	hook();
	r = oc == STUNE_PAYLOAD_RM_RESTORED
		? rm_note(w, "points at %s again", s->old_target ? s->old_target : "nothing")
	    : oc == STUNE_PAYLOAD_RM_ABSENT ? rm_note(w, "already as before install")
	    : oc == STUNE_PAYLOAD_RM_FAILED
		? rm_note(w, "putting back %s failed", s->old_target ? s->old_target : "(no link)")
		: rm_note(w,
			  "points at %s now, not where install pointed it: left alone "
			  "(--force puts back %s)",
			  cur ? cur : "nothing", s->old_target ? s->old_target : "no link");
	if (r < 0)
		return -ENOMEM;
	*failed |= oc == STUNE_PAYLOAD_RM_FAILED;
	*changed |= oc == STUNE_PAYLOAD_RM_CHANGED;
	return 0;
}

/* The package install put there: purged with apt-get when it is still the version install put there. */
static int purge_kernel(struct stune_ctx *ctx, const struct stune_payload_step *s,
			struct stune_payload_remove_result *res, bool *failed, bool *changed)
{
	struct stune_payload_rm_row *w;
	int r;
	char pkg[256];
	const char *ver = kstep_version(s->target, pkg, sizeof(pkg));
	if (!ver)
		return 0;
	_cleanup_free_ char *now = installed_version(ctx, pkg), *chroot_dir = NULL, *why = NULL;
	enum stune_payload_rm_outcome oc = !now		      ? STUNE_PAYLOAD_RM_ABSENT
					   : strcmp(now, ver) ? STUNE_PAYLOAD_RM_CHANGED
							      : STUNE_PAYLOAD_RM_REMOVED;
	/* An install killed inside apt-get may have left the package unpacked, not installed:
	 * purge runs then too (for a package that is not there at all it does nothing). */
	bool interrupted = oc == STUNE_PAYLOAD_RM_ABSENT && s->state == STUNE_PAYLOAD_STEP_STATE_STARTED;
	if (oc == STUNE_PAYLOAD_RM_REMOVED || interrupted) {
		const char *args[] = {"purge", pkg, NULL};
		if ((r = apt_runner(ctx, &chroot_dir, &why)) < 0 || (r = run_apt(chroot_dir, "purge", args, &why)) < 0)
			oc = STUNE_PAYLOAD_RM_FAILED;
		else {
			free(now);
			now = installed_version(ctx, pkg);
			if (now)
				oc = STUNE_PAYLOAD_RM_FAILED;
		}
	}
	if (!(w = rm_row(res, s->kind, s->path, s->target, now, oc)))
		return -ENOMEM;
	hook();
	r = oc == STUNE_PAYLOAD_RM_REMOVED ? rm_note(w, "%s purged with apt-get", pkg)
	    : oc == STUNE_PAYLOAD_RM_ABSENT
		? rm_note(w, "%s is not installed (%s)", pkg,
			  interrupted ? "install stopped inside apt-get: apt-get purge ran for what it left"
				      : "purged since?")
	    : oc == STUNE_PAYLOAD_RM_CHANGED
		? rm_note(w, "%s %s is installed, not the payload's %s: left alone", pkg, now, ver)
		: rm_note(w, "%s", why ? why : "dpkg still lists it installed");
	if (r < 0)
		return -ENOMEM;
	*failed |= oc == STUNE_PAYLOAD_RM_FAILED;
	*changed |= oc == STUNE_PAYLOAD_RM_CHANGED;
	return 0;
}

/*
 * The kernel steps, undone: each boot link install repointed goes back to its old target when it
 * still points where install pointed it (else it is left: CHANGED, unless force); the package is
 * purged with apt-get when it is the version install put there.
 */
static int remove_kernel(struct stune_ctx *ctx, struct stune_payload_journal *j, bool force,
			 struct stune_payload_remove_result *res, bool *failed, bool *changed)
{
	struct stune_payload_rm_row *w;
	int r;
	for (size_t i = j->n; i-- > 0;) {
		struct stune_payload_step *s = &j->steps[i];
		if ((s->kind != STUNE_PAYLOAD_STEP_DEFAULT && s->kind != STUNE_PAYLOAD_STEP_KERNEL) ||
		    s->state == STUNE_PAYLOAD_STEP_STATE_PENDING)
			continue;
		if (s->state == STUNE_PAYLOAD_STEP_STATE_SKIPPED) {
			if (!(w = rm_row(res, s->kind, s->path, NULL, NULL, STUNE_PAYLOAD_RM_SKIPPED)) ||
			    rm_note(w, "install did not do it: %s", s->note ? s->note : "skipped") < 0)
				return -ENOMEM;
			continue;
		}
		r = s->kind == STUNE_PAYLOAD_STEP_DEFAULT ? restore_boot_link(ctx, s, force, res, failed, changed)
							  : purge_kernel(ctx, s, res, failed, changed);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Files: ours by hash (the temporary names too). */
static int remove_files(struct stune_ctx *ctx, const struct stune_payload_journal *j, bool force,
			struct stune_payload_remove_result *res, bool *failed, bool *changed, bool *touched)
{
	struct stune_payload_rm_row *w;
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		if (s->kind != STUNE_PAYLOAD_STEP_FILE)
			continue;
		char actual[STUNE_SHA256_HEX];
		int e = 0;
		enum stune_payload_rm_outcome oc = unlink_ours(ctx, s->path, s->sha256, force, actual, &e);
		if (!(w = rm_row(res, s->kind, s->path, s->sha256, actual, oc)))
			return -ENOMEM;
		if (oc == STUNE_PAYLOAD_RM_REMOVED)
			*touched = true;
		hook();
		if (oc == STUNE_PAYLOAD_RM_CHANGED) {
			*changed = true;
			if (rm_note(w, "changed since install: left alone (--force removes it)") < 0)
				return -ENOMEM;
		} else if (oc == STUNE_PAYLOAD_RM_FAILED) {
			*failed = true;
			if (rm_note(w, "%s", strerror(e)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Directories install created, deepest first, when empty. */
static int remove_dirs(struct stune_ctx *ctx, const struct stune_payload_journal *j,
		       struct stune_payload_remove_result *res, bool *failed)
{
	struct stune_payload_rm_row *w;
	for (size_t i = j->n; i-- > 0;) {
		const struct stune_payload_step *s = &j->steps[i];
		if (s->kind != STUNE_PAYLOAD_STEP_MKDIR || s->state == STUNE_PAYLOAD_STEP_STATE_PENDING ||
		    s->state == STUNE_PAYLOAD_STEP_STATE_SKIPPED)
			continue;
		_cleanup_free_ char *dir = NULL;
		const char *base;
		if (split(s->path, &dir, &base) < 0)
			return -ENOMEM;
		_cleanup_close_ int dfd = open_dir(ctx, dir);
		enum stune_payload_rm_outcome oc = STUNE_PAYLOAD_RM_REMOVED;
		int e = 0;
		if (dfd < 0)
			oc = STUNE_PAYLOAD_RM_ABSENT;
		else if (unlinkat(dfd, base, AT_REMOVEDIR) < 0) {
			e = errno;
			oc = e == ENOENT		     ? STUNE_PAYLOAD_RM_ABSENT
			     : e == ENOTEMPTY || e == EEXIST ? STUNE_PAYLOAD_RM_KEPT
							     : STUNE_PAYLOAD_RM_FAILED;
		} else
			stune_dir_sync(dfd);
		hook();
		if (!(w = rm_row(res, s->kind, s->path, NULL, NULL, oc)))
			return -ENOMEM;
		if (oc == STUNE_PAYLOAD_RM_KEPT &&
		    rm_note(w, "not empty: left (it holds files scsitune did not write)") < 0)
			return -ENOMEM;
		if (oc == STUNE_PAYLOAD_RM_FAILED) {
			*failed = true;
			if (rm_note(w, "%s", strerror(e)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* name is a temporary file of kmod's depmod: INDEX.PID.USEC.SEC, INDEX one of its output files. */
static bool depmod_tmp_name(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(depmod_index) + ELEMENTSOF(depmod_index_more); i++) {
		const char *idx =
		    i < ELEMENTSOF(depmod_index) ? depmod_index[i] : depmod_index_more[i - ELEMENTSOF(depmod_index)];
		size_t l = strlen(idx);
		if (strncmp(name, idx, l) || name[l] != '.')
			continue;
		const char *p = name + l;
		int groups = 0;
		while (*p == '.' && p[1] >= '0' && p[1] <= '9') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
			groups++;
		}
		if (!*p && groups == 3)
			return true;
	}
	return false;
}

/*
 * What a killed depmod leaves in lib/modules/R: kmod writes each index file as
 * INDEX.PID.USEC.SEC and renames it into place, so a depmod killed in between
 * (with install or remove, or a process group's kill) leaves that name behind.
 * Those changed since the install began (their ctime) are removed (*removed:
 * their names, ", "-joined); older ones, which were there before install, are
 * left and named (*older).
 */
static int drop_depmod_leftovers(struct stune_ctx *ctx, const struct stune_payload_journal *j, const char *moddir,
				 char **removed, char **older)
{
	*removed = *older = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	int r = stune_root_opendir(ctx->root, moddir, &d);
	if (r < 0)
		return r == -ENOENT || r == -ENOTDIR ? 0 : r;
	bool any = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (!depmod_tmp_name(de->d_name) || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		bool ours = j->started > 0 && (long long)st.st_ctim.tv_sec >= j->started;
		if (ours && unlinkat(dirfd(d), de->d_name, 0) < 0)
			return negative_errno();
		any |= ours;
		char **list = ours ? removed : older, *n;
		n = *list ? stune_strdupf("%s, %s", *list, de->d_name) : strdup(de->d_name);
		if (!n)
			return -ENOMEM;
		free(*list);
		*list = n;
	}
	return any ? stune_dir_sync(dirfd(d)) : 0;
}

/*
 * depmod: whenever install may have changed the index, unless the index is still
 * the one from before install (a killed install that never reached depmod, and no
 * one ran it since): the tree is as before install again, and so is its index.
 * Then depmod's index against the one before install (res->index_same, ->index_note).
 */
static int remove_depmod(struct stune_ctx *ctx, const struct stune_payload_journal *j, bool touched,
			 struct stune_payload_remove_result *res, bool *failed)
{
	struct stune_payload_rm_row *w;
	int r;
	bool need_depmod = touched;
	for (size_t i = 0; i < j->n; i++)
		if ((j->steps[i].kind == STUNE_PAYLOAD_STEP_DEPMOD || j->steps[i].kind == STUNE_PAYLOAD_STEP_FILE) &&
		    j->steps[i].state != STUNE_PAYLOAD_STEP_STATE_PENDING)
			need_depmod = true;
	_cleanup_free_ char *moddir = stune_strdupf("lib/modules/%s", j->release), *first = NULL, *tmp_gone = NULL,
			    *tmp_older = NULL;
	if (!moddir)
		return -ENOMEM;
	if ((r = drop_depmod_leftovers(ctx, j, moddir, &tmp_gone, &tmp_older)) < 0) {
		if (!(w = rm_row(res, STUNE_PAYLOAD_STEP_DEPMOD, NULL, NULL, NULL, STUNE_PAYLOAD_RM_FAILED)) ||
		    rm_note(w, "/%s: a killed depmod's temporary files: %s", moddir, strerror(-r)) < 0)
			return -ENOMEM;
		*failed = true;
		return 0;
	}
	size_t differ = 0;
	if ((r = index_differs(ctx, j, &differ, &first)) < 0)
		return r;
	bool index_as_before = j->n_index > 0 && differ == 0;
	if (need_depmod && !index_as_before && is_dir(ctx, moddir)) {
		_cleanup_free_ char *why = NULL;
		r = run_depmod(ctx, j->release, &why);
		if (!(w = rm_row(res, STUNE_PAYLOAD_STEP_DEPMOD, NULL, NULL, NULL,
				 r < 0 ? STUNE_PAYLOAD_RM_FAILED : STUNE_PAYLOAD_RM_RAN)))
			return -ENOMEM;
		hook();
		if (r < 0) {
			*failed = true;
			if (rm_note(w, "%s", why ? why : strerror(-r)) < 0)
				return -ENOMEM;
		}
		free(first);
		first = NULL;
		if ((r = index_differs(ctx, j, &differ, &first)) < 0)
			return r;
	} else if (!(w = rm_row(res, STUNE_PAYLOAD_STEP_DEPMOD, NULL, NULL, NULL, STUNE_PAYLOAD_RM_SKIPPED)) ||
		   rm_note(w,
			   !need_depmod	     ? "install never changed the module index"
			   : index_as_before ? "depmod's index is still the one from before install"
					     : "no /%s",
			   moddir) < 0)
		return -ENOMEM;
	if (tmp_gone) {
		_cleanup_free_ char *n = w->note;
		if (!(w->note = stune_strdupf("%s%sremoved what a killed depmod left in /%s (its temporary files): %s",
					      n ? n : "", n ? "; " : "", moddir, tmp_gone)))
			return -ENOMEM;
	}
	/* depmod's index against the one before install. */
	res->index_same = differ == 0;
	_cleanup_free_ char *left =
	    tmp_older ? stune_strdupf("; left in /%s, as before install: a temporary file of a depmod killed "
				      "before install began: %s",
				      moddir, tmp_older)
		      : strdup("");
	if (!left)
		return -ENOMEM;
	res->index_note =
	    differ ? stune_strdupf("%zu of depmod's %zu index files differ from before install (first: /%s): "
				   "depmod's output changed for another reason (another module added or "
				   "removed since?)%s",
				   differ, j->n_index, first, left)
		   : stune_strdupf("depmod's %zu index files equal the ones before install%s", j->n_index, left);
	if (!res->index_note)
		return -ENOMEM;
	return 0;
}

/* The initrd from before install, put back from the kept copy kp (kept, kl). */
static int put_back_kept_initrd(struct stune_ctx *ctx, const struct stune_payload_journal *j,
				const struct stune_payload_step *s, const char *kp, const uint8_t *kept, size_t kl,
				struct stune_payload_remove_result *res, bool *failed)
{
	struct stune_payload_rm_row *w;
	int r = restore_file(ctx, s->path, kept, kl, s->mode ? s->mode : 0644);
	char after[STUNE_SHA256_HEX] = "";
	if (r == 0)
		r = stune_sha256_root_file(ctx->root, s->path, after);
	if (!(w = rm_row(res, s->kind, s->path, s->old_sha256, after,
			 r == 0 && !strcmp(after, s->old_sha256) ? STUNE_PAYLOAD_RM_RESTORED
								 : STUNE_PAYLOAD_RM_FAILED)))
		return -ENOMEM;
	hook();
	if (w->outcome == STUNE_PAYLOAD_RM_FAILED) {
		*failed = true;
		if (rm_note(w, "putting back the kept initrd: %s", r < 0 ? strerror(-r) : "SHA-256 differs") < 0)
			return -ENOMEM;
	} else {
		/* killed after update-initramfs replaced the initrd, before it removed its backup */
		bool bak, new;
		drop_initramfs_leftovers(ctx, s->path, s->old_sha256, j->started, &bak, &new);
		if (rm_note(w, "the initrd from before install, put back from %s%s", kp, leftovers_note(bak, new)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Someone made another initrd since (or the kept copy is gone): make it again without ours. */
static int rebuild_initrd(struct stune_ctx *ctx, const struct stune_payload_journal *j,
			  const struct stune_payload_step *s, const char *cur, bool have_kept, bool no_initramfs,
			  struct stune_payload_remove_result *res, bool *failed, bool *changed)
{
	struct stune_payload_rm_row *w;
	int r;
	_cleanup_free_ char *chroot_dir = NULL, *why = NULL;
	if (no_initramfs || stune_initramfs_runner(ctx, &chroot_dir, &why) < 0) {
		if (!(w = rm_row(res, s->kind, s->path, s->old_sha256, cur, STUNE_PAYLOAD_RM_SKIPPED)) ||
		    rm_note(w, "%s; it may still hold the payload: update-initramfs -u -k %s",
			    no_initramfs ? "--no-initramfs" : why, j->release) < 0)
			return -ENOMEM;
		*changed = true;
		return 0;
	}
	r = run_update_initramfs(ctx, j->release, chroot_dir, &why);
	bool ours = false;
	if (r == 0)
		r = initrd_holds_ours(ctx, j, s->path, &ours);
	char after[STUNE_SHA256_HEX] = "";
	(void)stune_sha256_root_file(ctx->root, s->path, after);
	if (!(w = rm_row(res, s->kind, s->path, NULL, after,
			 r == 0 && !ours ? STUNE_PAYLOAD_RM_REBUILT : STUNE_PAYLOAD_RM_FAILED)))
		return -ENOMEM;
	hook();
	if (w->outcome == STUNE_PAYLOAD_RM_FAILED) {
		*failed = true;
		if (rm_note(w, "%s", r < 0 ? (why ? why : strerror(-r)) : "the new initrd still holds the payload") < 0)
			return -ENOMEM;
	} else if (rm_note(w, "changed since install (%s): made again with update-initramfs, without the payload",
			   have_kept ? "not the initrd install made" : "no kept copy") < 0)
		return -ENOMEM;
	return 0;
}

/* The initrd install updated (step s): as before install already, put back from the kept copy, or made again. */
static int remove_initrd(struct stune_ctx *ctx, const struct stune_payload_journal *j,
			 const struct stune_payload_step *s, const char *state_dir, bool force, bool no_initramfs,
			 struct stune_payload_remove_result *res, bool *failed, bool *changed)
{
	struct stune_payload_rm_row *w;
	if (s->state == STUNE_PAYLOAD_STEP_STATE_PENDING || s->state == STUNE_PAYLOAD_STEP_STATE_SKIPPED ||
	    !s->old_sha256) {
		if (!(w = rm_row(res, s->kind, s->path, NULL, NULL, STUNE_PAYLOAD_RM_SKIPPED)) ||
		    rm_note(w, "install did not touch it") < 0)
			return -ENOMEM;
		return 0;
	}
	char cur[STUNE_SHA256_HEX] = "";
	int k = stune_sha256_root_file(ctx->root, s->path, cur);
	if (k == 0 && !strcmp(cur, s->old_sha256)) {
		/* The install was killed while update-initramfs ran, before it replaced the initrd. */
		bool bak, new;
		drop_initramfs_leftovers(ctx, s->path, s->old_sha256, j->started, &bak, &new);
		if (!(w = rm_row(res, s->kind, s->path, s->old_sha256, cur, STUNE_PAYLOAD_RM_ABSENT)) ||
		    rm_note(w, "already the initrd from before install%s", leftovers_note(bak, new)) < 0)
			return -ENOMEM;
		return 0;
	}
	_cleanup_free_ char *kp = NULL;
	_cleanup_free_ char *kept = NULL;
	size_t kl = 0;
	char ksha[STUNE_SHA256_HEX] = "";
	if (stune_payload_journal_kept_path(state_dir, &kp) < 0)
		return -ENOMEM;
	/* Not through a symbolic link, a regular file only (core/userfile.h); else no kept copy. */
	bool have_kept = stune_read_user_file(kp, STUNE_INITRD_MAX, STUNE_UF_NOFOLLOW, &kept, &kl) == 0;
	if (have_kept)
		stune_sha256_hex(kept, kl, ksha);
	bool ours_now = k == 0 && (!s->sha256 || !strcmp(cur, s->sha256));
	if (have_kept && !strcmp(ksha, s->old_sha256) && (ours_now || force || k == -ENOENT))
		return put_back_kept_initrd(ctx, j, s, kp, (const uint8_t *)kept, kl, res, failed);
	return rebuild_initrd(ctx, j, s, cur, have_kept, no_initramfs, res, failed, changed);
}

int stune_payload_remove(struct stune_ctx *ctx, struct stune_payload_journal *j, const char *state_dir, bool force,
			 bool no_initramfs, struct stune_payload_remove_result *res, char **err)
{
	int r;
	bool failed = false, changed = false, touched = false;
	memset(res, 0, sizeof(*res));
	_cleanup_free_ char *why = NULL;
	if ((r = stune_payload_tree_check(ctx, j->release, &why)) < 0)
		return stune_errf(err, r,
				  "payload remove: %s: refused, nothing was changed (the journal in %s/payload stays)",
				  why ? why : strerror(-r), state_dir);

	/* Only what install could have journaled (the callers check it first and say so; this is the engine's own). */
	if ((r = stune_payload_journal_check(j, err)) < 0)
		return r;
	/* Refused before any change when the running kernel is the package's (force purges it anyway). */
	if ((r = refuse_running_kernel(ctx, j, force, err)) < 0)
		return r;
	/* The journal says a remove began before the first change: an install that finds it
	 * finishes this remove first, never taking a half-removed payload for an installed one. */
	if (!j->remove_started) {
		j->remove_started = (long long)time(NULL);
		if ((r = save(state_dir, j, err)) < 0)
			return r;
	}
	/* The kernel package first: the boot links back, then apt-get purge (it is not running). */
	if ((r = remove_kernel(ctx, j, force, res, &failed, &changed)) < 0)
		return r;
	if ((r = remove_files(ctx, j, force, res, &failed, &changed, &touched)) < 0 ||
	    (r = remove_dirs(ctx, j, res, &failed)) < 0 || (r = remove_depmod(ctx, j, touched, res, &failed)) < 0)
		return r;
	/* The initrd. */
	for (size_t i = 0; i < j->n; i++)
		if (j->steps[i].kind == STUNE_PAYLOAD_STEP_INITRD &&
		    (r = remove_initrd(ctx, j, &j->steps[i], state_dir, force, no_initramfs, res, &failed, &changed)) <
			0)
			return r;
	if (failed)
		return stune_errf(err, -EIO,
				  "payload remove did not finish: the journal in %s/payload stays (run it again)",
				  state_dir);
	if (changed)
		return stune_errf(
		    err, -EEXIST,
		    "payload remove left files that changed since install: the journal in %s/payload stays "
		    "(--force removes them)",
		    state_dir);
	if ((r = stune_payload_journal_remove(state_dir)) < 0)
		return stune_errf(err, r, "%s/payload: %s", state_dir, strerror(-r));
	res->complete = true;
	return 0;
}

/* --- what a journal may name ---------------------------------------------------------- */

/* One name of the characters a bundle's release and file names may have (bundle.c), not "." or "..". */
static bool plain_name(const char *s, size_t n)
{
	if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-' || s[i] == '+'))
			return false;
	return true;
}

/* s is pre + a plain name + suf. */
static bool named(const char *s, const char *pre, const char *suf)
{
	size_t lp = strlen(pre), ls = strlen(suf), n = s ? strlen(s) : 0;
	return s && n > lp + ls && !strncmp(s, pre, lp) && !strcmp(s + n - ls, suf) && plain_name(s + lp, n - lp - ls);
}

static bool hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* A Debian version's characters (the bundle's kernel version has no space, '/' or '='). */
static bool debian_version(const char *v)
{
	size_t n = strspn(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-~:");
	return n > 0 && n <= 255 && !v[n];
}

/* The boot links: vmlinuz and initrd.img at the root, each pointing at boot/NAME-RELEASE (or /boot/...). */
static const char *boot_link_kind(const char *path)
{
	return !path			     ? NULL
	       : !strcmp(path, "vmlinuz")    ? "vmlinuz-"
	       : !strcmp(path, "initrd.img") ? "initrd.img-"
					     : NULL;
}

static bool boot_link_target(const char *kind, const char *t)
{
	char pre[32];
	snprintf(pre, sizeof(pre), "boot/%s", kind);
	return t && (named(t, pre, "") || (t[0] == '/' && named(t + 1, pre, "")));
}

/* Step s of a journal for release r: why install could not have journaled it, or NULL. */
static const char *step_check(const struct stune_payload_step *s, const char *r)
{
	_cleanup_free_ char *mods = stune_strdupf("lib/modules/%s/", r),
			    *ours = stune_strdupf("%s" STUNE_PAYLOAD_SUBDIR "/", mods);
	if (!mods || !ours)
		return "out of memory";
	const char *p = s->path;
	switch (s->kind) {
	case STUNE_PAYLOAD_STEP_MKDIR:
		if (p && ((!strncmp(p, mods, strlen(mods)) &&
			   (!strcmp(p + strlen(mods), "updates") || !strcmp(p + strlen(mods), STUNE_PAYLOAD_SUBDIR))) ||
			  !strcmp(p, "etc/depmod.d") || !strcmp(p, KERNEL_DEB_DIR)))
			return NULL;
		return "not a directory install makes (lib/modules/RELEASE/updates, its scsitune/, etc/depmod.d, "
		       "" KERNEL_DEB_DIR ")";
	case STUNE_PAYLOAD_STEP_FILE:
		if (!(named(p, ours, ".ko") ||
		      (p && !strncmp(p, ours, strlen(ours)) && !strcmp(p + strlen(ours), "manifest.json")) ||
		      (p && !strcmp(p, STUNE_DEPMOD_CONF)) || named(p, KERNEL_DEB_DIR "/", ".deb")))
			return "not a file install writes (lib/modules/RELEASE/updates/scsitune/NAME.ko and "
			       "manifest.json, " STUNE_DEPMOD_CONF ", " KERNEL_DEB_DIR "/NAME.deb)";
		return hex64(s->sha256) ? NULL : "no SHA-256 of what install wrote";
	case STUNE_PAYLOAD_STEP_DEPMOD:
		return p ? "depmod names no path" : NULL;
	case STUNE_PAYLOAD_STEP_INITRD: {
		_cleanup_free_ char *initrd = stune_strdupf("boot/initrd.img-%s", r);
		if (!initrd)
			return "out of memory";
		if (!p || strcmp(p, initrd))
			return "not the initrd install updates (boot/initrd.img-RELEASE)";
		if (s->mode & 07000)
			return "its mode has set-uid, set-gid or sticky bits (install keeps an initrd's mode, at most "
			       "0644)";
		if (s->mode & ~0644u)
			return "its mode is wider than 0644 (install keeps an initrd's mode, at most 0644)";
		if ((s->sha256 && !hex64(s->sha256)) || (s->old_sha256 && !hex64(s->old_sha256)))
			return "a SHA-256 that is not 64 hex digits";
		return NULL;
	}
	case STUNE_PAYLOAD_STEP_KERNEL: {
		char pkg[256];
		const char *ver = kstep_version(s->target, pkg, sizeof(pkg));
		if (!named(p, "boot/vmlinuz-", ""))
			return "not a kernel image install adds (boot/vmlinuz-RELEASE)";
		if (!ver || strncmp(pkg, "linux-image-", 12) || strcmp(pkg + 12, p + strlen("boot/vmlinuz-")) ||
		    !debian_version(ver))
			return "its package is not linux-image-RELEASE=VERSION of that image (apt-get purge would "
			       "remove it)";
		return NULL;
	}
	case STUNE_PAYLOAD_STEP_DEFAULT: {
		const char *k = boot_link_kind(p);
		if (!k)
			return "not a boot link install repoints (vmlinuz, initrd.img)";
		if (!boot_link_target(k, s->target) || s->target[0] == '/')
			return "its target is not boot/vmlinuz-RELEASE or boot/initrd.img-RELEASE, as install points "
			       "it";
		if (s->old_target && !boot_link_target(k, s->old_target))
			return "its old target is not a boot/vmlinuz-* or boot/initrd.img-* of its own kind (remove "
			       "would "
			       "point the link at it)";
		return NULL;
	}
	default:
		return "install writes no such step";
	}
}

/* text with what a terminal would act on (control characters) shown as '?', for a message. */
static char *shown_path(const char *text)
{
	char *c = strdup(text ? text : "-");
	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

int stune_payload_journal_check(const struct stune_payload_journal *j, char **err)
{
	if (!j->release || !plain_name(j->release, strlen(j->release))) {
		_cleanup_free_ char *r = shown_path(j->release);
		return stune_errf(err, -EXDEV, "release \"%s\": not a plain name", r ? r : "?");
	}
	for (size_t i = 0; i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		const char *why = step_check(s, j->release);
		if (why) {
			_cleanup_free_ char *p = shown_path(s->path);
			return stune_errf(err, -EXDEV, "steps[%zu] (%s %s): %s", i,
					  stune_payload_step_kind_name(s->kind), p ? p : "?", why);
		}
	}
	for (size_t i = 0; i < j->n_index; i++) {
		_cleanup_free_ char *p = stune_strdupf("lib/modules/%s/", j->release);
		bool ok = false;
		if (!p)
			return -ENOMEM;
		for (size_t k = 0; k < ELEMENTSOF(depmod_index) && !strncmp(j->index[i].path, p, strlen(p)); k++)
			ok |= !strcmp(j->index[i].path + strlen(p), depmod_index[k]);
		if (!ok) {
			_cleanup_free_ char *q = shown_path(j->index[i].path);
			return stune_errf(err, -EXDEV,
					  "depmod_index_before \"%s\": not one of depmod's index files of the "
					  "release",
					  q ? q : "?");
		}
	}
	return 0;
}
