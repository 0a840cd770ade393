/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * payload install and remove (the caller holds STATE/lock and has run the
 * preflight). Install puts each module of the bundle and its manifest into
 * lib/modules/RELEASE/updates/scsitune/ and writes etc/depmod.d/scsitune.conf
 * with one `override M RELEASE updates/scsitune` line per module (never a
 * `search` line: that would demote DKMS's updates/), runs depmod for the
 * release (`depmod -b DIR RELEASE` under --sysroot), keeps the initrd,
 * runs `update-initramfs -u -k RELEASE` (in a chroot under --sysroot when
 * the tree has one) and reads the new initrd back. Nothing the kernel
 * package owns is moved or edited. Every step is in the journal
 * (payload/journal.h) before it runs.
 *
 * Test builds (-DSCSITUNE_TEST_HOOKS=ON) honour SCSITUNE_TEST_PAYLOAD_ABORT=N:
 * abort() at the N-th point of install or remove where the tree or the
 * journal has just changed (a kill -9 there).
 */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "payload/bundle.h"
#include "payload/host.h"
#include "payload/journal.h"

#define STUNE_DEPMOD_CONF "etc/depmod.d/scsitune.conf"

struct stune_payload_install_opts {
	const char *state_dir;
	bool no_initramfs;
	bool no_kernel;	  /* leave the bundle's kernel package out */
	bool set_default; /* point /vmlinuz and /initrd.img at the bundle's kernel */
	const char *bundle_sha256;
	const char *key_id;
};

/* What the host needs for a module to be ours in memory. */
enum stune_payload_need {
	STUNE_NEED_NOTHING = 0,	     /* not loaded: the next modprobe loads ours */
	STUNE_NEED_RELOAD,	     /* loaded and not in use: reload (install --reload) */
	STUNE_NEED_REBOOT,	     /* loaded and in use, or the release is not running */
	STUNE_NEED_NONE_LOADED_OURS, /* already ours */
};

struct stune_payload_install_result {
	struct stune_payload_journal *journal; /* every step with its outcome */
	char **resolved;	       /* per module: what modprobe resolves to after depmod (lib/modules/R-relative) */
	bool unresolved;	       /* not checked: --sysroot without root (libkmod runs in a chroot) */
	char *initrd_note;	       /* what the initrd check found, or why it was skipped */
	bool initrd_ok;		       /* the new initrd holds our copy of every module it carries */
	enum stune_payload_need *need; /* per module */
	/* stune_payload_reload's, per module (NULL before it ran): 0 not tried,
	 * 1 reloaded, -errno failed with reload_err[i] saying why */
	int *reload;
	char **reload_err;
	size_t n_reload; /* modules in reload and reload_err */
};

void stune_payload_install_result_clear(struct stune_payload_install_result *r);

/* The depmod.d file's text for m. */
char *stune_depmod_conf_text(const struct stune_manifest *m);

/*
 * Install m (read and checked, preflight passed). Returns -errno with *err
 * (one line) when a step failed; the journal then says how far it got and
 * `payload remove` undoes it.
 */
int stune_payload_install(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			  const struct stune_payload_install_opts *o, struct stune_payload_install_result *res,
			  char **err);

/*
 * A complete install's files (j) are still what it wrote: 1 when every one is,
 * 0 with *path (root-relative, the first that is not) and *missing (it is gone;
 * else changed), -errno when one cannot be read.
 */
int stune_payload_installed_intact(struct stune_ctx *ctx, const struct stune_payload_journal *j, char **path,
				   bool *missing);

/* Module i of m resolves to our copy (STUNE_PAYLOAD_SUBDIR/NAME.ko) after the install. */
bool stune_payload_install_ours(const struct stune_manifest *m, const struct stune_payload_install_result *res,
				size_t i);

/*
 * install --reload, after stune_payload_install: every module of ours that
 * is loaded and not in use (need RELOAD) unloaded and loaded again (libkmod),
 * its need read again; res->reload and res->reload_err say how each went.
 * -ENOMEM, or -EALREADY when it ran before on res: a failed reload is the
 * module's outcome, not an error.
 */
int stune_payload_reload(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			 struct stune_payload_install_result *res);

/* What the host needs for module name of release (reads sys/module/NAME). */
enum stune_payload_need stune_payload_need(struct stune_ctx *ctx, const struct stune_payload_host *h, const char *name,
					   const char *srcversion);

/* Outcome of one step of remove. */
enum stune_payload_rm_outcome {
	STUNE_PAYLOAD_RM_REMOVED = 0, /* our file or directory removed */
	STUNE_PAYLOAD_RM_RESTORED,    /* the initrd put back from the kept copy */
	STUNE_PAYLOAD_RM_REBUILT,     /* the initrd made again by update-initramfs (someone had replaced ours) */
	STUNE_PAYLOAD_RM_ABSENT,      /* nothing there (install never got that far) */
	STUNE_PAYLOAD_RM_RAN,	      /* depmod ran */
	STUNE_PAYLOAD_RM_CHANGED,     /* not what install wrote: left alone (--force removes it) */
	STUNE_PAYLOAD_RM_KEPT,	      /* a directory not empty: left */
	STUNE_PAYLOAD_RM_SKIPPED,     /* not needed or not possible (note) */
	STUNE_PAYLOAD_RM_FAILED,
	_STUNE_PAYLOAD_RM_MAX
};
const char *stune_payload_rm_outcome_name(enum stune_payload_rm_outcome o);

struct stune_payload_rm_row {
	enum stune_payload_step_kind kind;
	char *path;
	char *expected, *actual; /* SHA-256s where they apply */
	enum stune_payload_rm_outcome outcome;
	char *note;
};

struct stune_payload_remove_result {
	struct stune_payload_rm_row *rows;
	size_t n;
	bool complete;	 /* everything undone: the journal is gone */
	bool index_same; /* depmod's index files equal the ones before install */
	char *index_note;
};
void stune_payload_remove_result_clear(struct stune_payload_remove_result *r);

/*
 * Whether j names only what install could have journaled, before remove acts
 * on it: the release a plain name; directories, files and the initrd only
 * install's (lib/modules/RELEASE/updates/scsitune/, etc/depmod.d/scsitune.conf,
 * var/cache/scsitune/NAME.deb, boot/initrd.img-RELEASE), a file with its
 * SHA-256; the initrd's mode never with set-uid, set-gid or sticky bits nor
 * wider than 0644; the kernel package linux-image-RELEASE of its
 * boot/vmlinuz-RELEASE; the boot links vmlinuz and initrd.img, pointing at
 * boot/ files of their kind; depmod's index files of the release. 0, or
 * -EXDEV with *err naming the first other entry ("steps[N] (KIND PATH): why").
 */
int stune_payload_journal_check(const struct stune_payload_journal *j, char **err);

/*
 * Undo what the journal j records; force: remove our paths even when changed since.
 * The journal is marked (remove_started, saved) before the first change; killed at
 * any point, remove can run again, and an install finishes it first.
 */
int stune_payload_remove(struct stune_ctx *ctx, struct stune_payload_journal *j, const char *state_dir, bool force,
			 bool no_initramfs, struct stune_payload_remove_result *res, char **err);

/* Where update-initramfs runs for this root: 0 with *chroot_dir (NULL live), or -ENOENT with *why. */
int stune_initramfs_runner(struct stune_ctx *ctx, char **chroot_dir, char **why);
