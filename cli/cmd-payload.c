/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune payload pack | install | verify | remove: the patched kernel
 * modules as a signed bundle, installed through depmod and the initramfs,
 * followed link by link to what the kernel has loaded (lib/payload/).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/statefile.h"
#include "core/strv.h"
#include "payload/bundle.h"
#include "payload/host.h"
#include "payload/install.h"
#include "payload/journal.h"
#include "payload/kmod.h"
#include "payload/minisign.h"
#include "payload/preflight.h"
#include "payload/state.h"
#include "tune/journal.h"
#include "cmd-payload.h"
#include "scsitune.h"
#include "wrap.h"

#define STUNE_PAYLOAD_SCHEMA_VERSION 1
#define SIG_MAX			     4096

void help_payload(FILE *f)
{
	fputs("Usage: scsitune payload pack DIR --output FILE [options]\n"
	      "       scsitune payload install FILE [--signature SIG] [--dry-run]\n"
	      "                                     [--no-initramfs] [--reload]\n"
	      "                                     [--no-kernel | --set-default]\n"
	      "       scsitune payload verify [FILE] [--signature SIG]\n"
	      "       scsitune payload remove [--force] [--no-initramfs]\n"
	      "\nThe patched scsi_mod.ko and target_core_mod.ko as one signed bundle.\n"
	      "  pack     payload/build's output directory DIR -> FILE (tar + zstd:\n"
	      "           manifest.json first, then the modules and the patch series). Sign\n"
	      "           FILE offline with minisign -S -s KEY -m FILE (writes FILE.minisig).\n"
	      "  install  check FILE's minisign signature against the trusted keys, read it\n"
	      "           in memory, refuse it unless the host's kernel is the one it was\n"
	      "           built for (release, Debian package version, vermagic, the CRCs the\n"
	      "           stock modules import, module signature enforcement); then install\n"
	      "           into /lib/modules/RELEASE/updates/scsitune/ with an override in\n"
	      "           /etc/depmod.d/scsitune.conf, run depmod and update-initramfs (the\n"
	      "           old initrd kept), check the new initrd, and say whether a reboot is\n"
	      "           needed. A bundle that carries a kernel package (patch B built in):\n"
	      "           apt-get installs it; the boot default stays as Debian's tools leave\n"
	      "           it. Journaled: 'payload remove' undoes it, even after a crash.\n"
	      "  verify   the chain of custody: bundle, files, depmod.d, what modprobe loads,\n"
	      "           the initrd, what is loaded (version, srcversion, build-id, taint,\n"
	      "           iocounterbits). FILE: compare with that bundle (else the installed\n"
	      "           one).\n"
	      "  remove   delete what install wrote (by SHA-256), run depmod, put back the\n"
	      "           initrd; purge the kernel package install put there (not while it\n"
	      "           runs).\n"
	      "\nOptions:\n"
	      "      --output FILE        pack: the bundle to write\n"
	      "      --signature SIG      the minisign signature (default FILE.minisig)\n"
	      "      --trusted-key FILE   trust this minisign public key as well as\n"
	      "                           /etc/scsitune/trusted-keys/*.pub\n"
	      "      --dry-run            install: check the signature, the bundle and the\n"
	      "                           preflight; change nothing\n"
	      "      --no-initramfs       install/remove: leave the initrd alone (the next boot\n"
	      "                           then loads the modules the initrd has)\n"
	      "      --reload             install: reload modules that are loaded and not in\n"
	      "                           use\n"
	      "      --no-kernel          install: leave the bundle's kernel package out\n"
	      "      --set-default        install: point /vmlinuz and /initrd.img at the\n"
	      "                           bundle's kernel (remove puts them back)\n"
	      "      --release R          verify: the kernel release (default: the running one)\n"
	      "      --force              remove: also remove files that changed since install,\n"
	      "                           and purge the payload's kernel even while it runs\n"
	      "      --state-dir DIR      where the journal is (default " STUNE_STATE_DIR ",\n"
	      "                           inside the --sysroot tree when one is given)\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 success (verify: the loaded modules are the bundle's), 1 error\n"
	      "or refusal, 2 verify: drift, not installed or reboot pending, 64 usage.\n"
	      "See scsitune-payload(8).\n",
	      f);
}

/* Text of something from outside (a file name, a comment): control characters escaped. */
static char *esc(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *o = malloc(4 * n + 1), *p = o;
	if (!o)
		return NULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "\\x%02x", c);
		else
			*p++ = (char)c;
	}
	*p = '\0';
	return o;
}

/* --- the bundle: signature first, then the archive in memory ----------------------- */

void payload_bundle_clear(struct payload_bundle *b)
{
	stune_manifest_free(b->m);
	stune_minisign_result_clear(&b->sig);
	free(b->sig_path);
	memset(b, 0, sizeof(*b));
}

int payload_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
			struct payload_bundle *b)
{
	_cleanup_free_ uint8_t *data = NULL, *sig = NULL;
	size_t len = 0, sl = 0;
	_cleanup_free_ char *err = NULL, *sig_text = NULL, *shown = esc(file);
	int r;
	memset(b, 0, sizeof(*b));
	b->file = file;
	if ((r = stune_read_host_file(file, STUNE_BUNDLE_MAX, &data, &len)) < 0) {
		error_msg("%s: %s", shown,
			  r == -EFBIG	 ? "larger than a payload bundle can be (256 MiB)"
			  : r == -EINVAL ? "not a regular file"
					 : strerror(-r));
		return -1;
	}
	stune_sha256_hex(data, len, b->sha256);
	b->size = len;
	if (!(b->sig_path = sig_opt ? strdup(sig_opt) : stune_strdupf("%s.minisig", file)))
		return -1;
	_cleanup_free_ char *sig_shown = esc(b->sig_path);
	if ((r = stune_read_host_file(b->sig_path, SIG_MAX, &sig, &sl)) < 0) {
		if (r == -ENOENT)
			error_msg(
			    "%s: no signature (%s): an unsigned bundle is refused; sign it with minisign -S -s KEY "
			    "-m %s",
			    shown, sig_shown, shown);
		else
			error_msg("%s: %s", sig_shown,
				  r == -EFBIG ? "too large for a minisign signature" : strerror(-r));
		return -1;
	}
	if (memchr(sig, '\0', sl) || !(sig_text = strndup((const char *)sig, sl))) {
		error_msg("%s: not a minisign signature (binary data)", sig_shown);
		return -1;
	}
	_cleanup_(stune_keyring_freep) struct stune_keyring *keys = NULL;
	if ((r = stune_keyring_load(ctx, trusted_key, &keys, &err)) < 0) {
		error_msg("%s", err ? err : strerror(-r));
		return -1;
	}
	/* The signature before a byte of the archive is parsed. */
	if ((r = stune_minisign_verify(keys, data, len, sig_text, &b->sig, &err)) < 0) {
		error_msg("%s: %s: refused", sig_shown, err ? err : strerror(-r));
		return -1;
	}
	stune_minisign_keyid_str(b->sig.key_id, b->key_id);
	free(err);
	err = NULL;
	if ((r = stune_bundle_read(data, len, &b->m, &err)) < 0) {
		error_msg("%s: %s", shown, err ? err : strerror(-r));
		return -1;
	}
	return 0;
}

static void render_bundle(struct out *o, const struct payload_bundle *b)
{
	const struct stune_manifest *m = b->m;
	_cleanup_free_ char *f = esc(b->file), *tc = esc(b->sig.trusted_comment), *ks = esc(b->sig.key_source);
	out_obj_begin(o, "bundle");
	out_str(o, "file", "Bundle %s", f);
	out_str(o, "sha256", NULL, b->sha256);
	out_int(o, "size", NULL, (long long)b->size);
	out_obj_begin(o, "signature");
	out_str(o, "file", NULL, b->sig_path);
	out_str(o, "key_id", "\n  signed by key %s", b->key_id);
	out_str(o, "key_file", " (%s)", ks);
	out_str(o, "algorithm", ", %s", b->sig.prehashed ? "ED" : "Ed");
	out_str(o, "trusted_comment", "\n  trusted comment: %s\n", tc);
	out_obj_end(o);
	out_obj_end(o);
	out_obj_begin(o, "payload");
	out_str(o, "payload_version", "  payload %s", m->payload_version);
	out_str(o, "release", " for %s", m->release);
	out_str(o, "debian_package", " (%s", m->debian_package);
	out_str(o, "debian_version", " %s)\n", m->debian_version);
	out_str(o, "vermagic", "  vermagic %s\n", m->vermagic);
	out_str(o, "created", NULL, m->created);
	out_arr_begin(o, "modules");
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_pmodule *pm = &m->modules[i];
		out_obj_begin(o, NULL);
		out_str(o, "name", "  %-16s", pm->name);
		out_str(o, "version", " version %s", pm->version);
		out_str(o, "srcversion", " srcversion %s", pm->srcversion);
		out_str(o, "build_id", NULL, pm->build_id);
		out_str(o, "sha256", NULL, stune_manifest_file(m, pm->file)->sha256);
		out_bool(o, "signed", pm->is_signed ? " signed" : " unsigned", pm->is_signed ? STUNE_YES : STUNE_NO);
		out_int(o, "exports", ", %s exported CRCs\n", (long long)pm->n_exports);
		out_strv(o, "patches", NULL, pm->patches);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_end(o);
}

/* --- pack ------------------------------------------------------------------------ */

static int payload_pack(struct global_opts *g, const char *dir, const char *output)
{
	long long created = (long long)time(NULL);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde) {
		char *end;
		errno = 0;
		long long v = strtoll(sde, &end, 10);
		if (errno || end == sde || *end || v < 0) {
			error_msg("SOURCE_DATE_EPOCH: '%s' is not a number of seconds", sde);
			return EXIT_ERROR;
		}
		created = v;
	}
	struct stat st;
	if (stat(output, &st) == 0 && S_ISDIR(st.st_mode)) {
		error_msg("--output %s: a directory", output);
		return EXIT_ERROR;
	}
	_cleanup_free_ uint8_t *data = NULL;
	size_t len = 0;
	_cleanup_free_ char *err = NULL;
	_cleanup_(stune_manifest_freep) struct stune_manifest *m = NULL;
	int r = stune_bundle_pack(dir, created, &data, &len, &m, &err);
	if (r < 0) {
		error_msg("%s", err ? err : strerror(-r));
		return EXIT_ERROR;
	}
	/* Read back what was written: pack makes only what install accepts. */
	_cleanup_(stune_manifest_freep) struct stune_manifest *check = NULL;
	if ((r = stune_bundle_read(data, len, &check, &err)) < 0) {
		error_msg("the packed bundle does not read back: %s", err ? err : strerror(-r));
		return EXIT_ERROR;
	}
	_cleanup_free_ char *odir = NULL;
	if (stune_path_dirname(output, &odir) < 0)
		return EXIT_ERROR;
	if ((r = stune_write_atomic(*odir ? odir : (output[0] == '/' ? "/" : "."), stune_path_basename(output), data,
				    len, 0644, NULL)) < 0) {
		error_msg("--output %s: %s", output, strerror(-r));
		return EXIT_ERROR;
	}
	char sha[STUNE_SHA256_HEX];
	stune_sha256_hex(data, len, sha);
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "pack");
	out_str(o, "output", "Wrote %s", output);
	out_int(o, "size", " (%s bytes", (long long)len);
	out_str(o, "sha256", ", SHA-256 %s)\n", sha);
	out_str(o, "payload_version", "  payload %s", m->payload_version);
	out_str(o, "release", " for %s", m->release);
	out_str(o, "debian_package", " (%s", m->debian_package);
	out_str(o, "debian_version", " %s)\n", m->debian_version);
	out_str(o, "vermagic", "  vermagic %s\n", m->vermagic);
	out_arr_begin(o, "modules");
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_pmodule *pm = &m->modules[i];
		out_obj_begin(o, NULL);
		out_str(o, "name", "  %-16s", pm->name);
		out_str(o, "version", " version %s", pm->version);
		out_str(o, "srcversion", " srcversion %s", pm->srcversion);
		out_str(o, "build_id", " build-id %.12s...", pm->build_id);
		out_bool(o, "signed", pm->is_signed ? " signed" : " unsigned", pm->is_signed ? STUNE_YES : STUNE_NO);
		out_int(o, "exports", ", %s exported CRCs\n", (long long)pm->n_exports);
		out_obj_end(o);
	}
	out_arr_end(o);
	if (m->kernel) {
		out_obj_begin(o, "kernel");
		out_str(o, "package", "  kernel %s", m->kernel->package);
		out_str(o, "version", " %s", m->kernel->version);
		out_str(o, "release", " (%s)", m->kernel->release);
		out_str(o, "build_id", " build-id %.12s...\n", m->kernel->build_id);
		out_obj_end(o);
	} else
		out_str(o, "kernel", NULL, NULL);
	out_int(o, "files", "  %s files (manifest.json first)\n", (long long)m->n_files + 1);
	out_text(o, "Sign it offline: minisign -S -s KEY -m %s\n", output);
	out_obj_end(o);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* --- install ---------------------------------------------------------------------- */

static void render_preflight(struct out *o, const struct stune_preflight *p)
{
	out_obj_begin(o, "preflight");
	out_bool(o, "passed", NULL, p->passed ? STUNE_YES : STUNE_NO);
	out_text(o, "Preflight:\n");
	out_arr_begin(o, "checks");
	for (size_t i = 0; i < p->n; i++) {
		const struct stune_pcheck *c = &p->rows[i];
		out_obj_begin(o, NULL);
		out_str(o, "check", NULL, c->check);
		out_str(o, "module", NULL, c->module);
		out_str(o, "expected", NULL, c->expected);
		out_str(o, "actual", NULL, c->actual);
		out_bool(o, "passed", NULL, c->passed ? STUNE_YES : STUNE_NO);
		out_str(o, "why", NULL, c->why);
		out_obj_end(o);
		_cleanup_free_ char *why = esc(c->why);
		out_text(o, "  %-8s %-10s " WRAP_HANG, c->passed ? "ok" : "REFUSED", c->check);
		if (c->module)
			out_text(o, "%s: ", c->module);
		if (c->passed)
			out_text(o, "%s%s%s\n", c->actual ? c->actual : "", why && c->actual ? "; " : "",
				 why ? why : "");
		else
			out_text(o, "expected %s, actual %s: %s\n", c->expected ? c->expected : "-",
				 c->actual ? c->actual : "-", why ? why : "");
	}
	out_arr_end(o);
	out_obj_end(o);
}

static const char *need_name(enum stune_pneed n)
{
	switch (n) {
	case STUNE_NEED_NOTHING:
		return "nothing";
	case STUNE_NEED_RELOAD:
		return "reload";
	case STUNE_NEED_REBOOT:
		return "reboot";
	case STUNE_NEED_NONE_LOADED_OURS:
		return "loaded";
	}
	return "?";
}

static const char *need_text(enum stune_pneed n, bool running)
{
	switch (n) {
	case STUNE_NEED_NOTHING:
		return "not loaded: the next modprobe loads ours";
	case STUNE_NEED_RELOAD:
		return "loaded, not in use: 'payload install --reload' (or modprobe -r, modprobe) loads ours";
	case STUNE_NEED_REBOOT:
		return running ? "in use: reboot for ours to load (from the initrd)"
			       : "the kernel is not running: reboot into it";
	case STUNE_NEED_NONE_LOADED_OURS:
		return "ours is loaded";
	}
	return "?";
}

int payload_install_locked(struct global_opts *g, struct stune_ctx *ctx, struct out *o, const struct payload_bundle *b,
			   const char *state_dir, unsigned flags, bool *refused)
{
	bool reload = flags & PAYLOAD_RELOAD;
	const struct stune_manifest *m = b->m;
	_cleanup_(stune_phost_freep) struct stune_phost *h = NULL;
	_cleanup_(stune_preflight_freep) struct stune_preflight *p = NULL;
	int r;
	(void)g;
	*refused = false;
	if ((r = stune_phost_read(ctx, m->release, &h)) < 0 || (r = stune_payload_preflight(ctx, m, h, &p)) < 0) {
		error_msg("preflight: %s", strerror(-r));
		return -1;
	}
	render_preflight(o, p);
	if (!p->passed || !state_dir) {
		out_str(o, "steps", NULL, NULL);
		out_str(o, "resolution", NULL, NULL);
		out_str(o, "initrd", NULL, NULL);
	}
	if (!p->passed) {
		*refused = true;
		out_str(o, "result", "Refused: nothing was changed.\n", "refused");
		for (size_t i = 0; i < p->n; i++)
			if (!p->rows[i].passed)
				error_msg("refused: %s%s%s: %s", p->rows[i].check, p->rows[i].module ? " " : "",
					  p->rows[i].module ? p->rows[i].module : "",
					  p->rows[i].why ? p->rows[i].why : "");
		return -1;
	}
	if (!state_dir) { /* dry run */
		out_str(o, "result", "Dry run: the preflight passed; nothing was changed.\n", "dry-run");
		return 0;
	}
	struct stune_pinstall_opts io = {.state_dir = state_dir,
					 .no_initramfs = flags & PAYLOAD_NO_INITRAMFS,
					 .no_kernel = flags & PAYLOAD_NO_KERNEL,
					 .set_default = flags & PAYLOAD_SET_DEFAULT,
					 .bundle_sha256 = b->sha256,
					 .key_id = b->key_id};
	_cleanup_(stune_pinstall_result_clear) struct stune_pinstall_result res = {0};
	_cleanup_free_ char *err = NULL;
	r = stune_payload_install(ctx, m, h, &io, &res, &err);
	out_text(o, "Install:\n");
	out_arr_begin(o, "steps");
	for (size_t i = 0; res.journal && i < res.journal->n; i++) {
		const struct stune_pstep *s = &res.journal->steps[i];
		out_obj_begin(o, NULL);
		out_str(o, "step", NULL, stune_pstep_kind_name(s->kind));
		out_str(o, "state", NULL, stune_pstep_state_name(s->state));
		out_rootpath(o, "path", NULL, s->path);
		out_str(o, "sha256", NULL, s->sha256);
		out_str(o, "old_sha256", NULL, s->old_sha256);
		out_str(o, "target", NULL, s->target);
		out_str(o, "old_target", NULL, s->old_target);
		out_str(o, "note", NULL, s->note);
		out_text(o, "  %-8s %-10s " WRAP_HANG "%s%s%s%s\n", stune_pstep_state_name(s->state),
			 stune_pstep_kind_name(s->kind), s->path ? "/" : "", s->path ? s->path : "",
			 s->note ? (s->path ? ": " : "") : "", s->note ? s->note : "");
		out_obj_end(o);
	}
	out_arr_end(o);
	if (r < 0) {
		out_str(o, "resolution", NULL, NULL);
		out_str(o, "initrd", NULL, NULL);
		out_str(o, "result", "Failed.\n", "failed");
		error_msg(
		    "install: %s (the journal in %s/payload says how far it got: 'scsitune payload remove' undoes "
		    "it)",
		    err ? err : strerror(-r), state_dir);
		return -1;
	}
	bool ok = true;
	out_arr_begin(o, "resolution");
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_pmodule *pm = &m->modules[i];
		_cleanup_free_ char *want = stune_strdupf("%s/%s.ko", STUNE_PAYLOAD_SUBDIR, pm->name);
		bool ours = want && res.resolved[i] && !strcmp(res.resolved[i], want);
		if (!res.unresolved)
			ok &= ours;
		enum stune_pneed need = res.need[i];
		const char *reload_result = NULL;
		_cleanup_free_ char *rerr = NULL;
		if (reload && need == STUNE_NEED_RELOAD && ours) {
			int k = stune_kmod_reload(ctx, pm->name, &rerr);
			reload_result = k == 0 ? "reloaded" : "failed";
			if (k == 0)
				need = stune_payload_need(ctx, h, pm->name, pm->srcversion);
			else
				ok = false;
		}
		out_obj_begin(o, NULL);
		out_str(o, "name", "modprobe %s", pm->name);
		_cleanup_free_ char *shown = stune_strdupf("/lib/modules/%s/%s", m->release, res.resolved[i]);
		out_str_shown(o, "resolves_to", " -> %s", res.resolved[i],
			      res.resolved[i] && *res.resolved[i] ? shown : NULL);
		out_bool(o, "ours",
			 res.unresolved ? ": not checked (--sysroot needs root: libkmod runs in a chroot of the tree)\n"
			 : ours		? " (ours)\n"
					: " (NOT ours)\n",
			 ours ? STUNE_YES : STUNE_NO);
		out_str(o, "needs", NULL, need_name(need));
		out_text(o, "  " WRAP_HANG "%s\n", need_text(need, h->running));
		out_str(o, "reload", reload_result ? "  reload: %s\n" : NULL, reload_result);
		out_str(o, "reload_error", rerr ? "  %s\n" : NULL, rerr);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_begin(o, "initrd");
	out_bool(o, "ok", NULL, res.initrd_ok ? STUNE_YES : STUNE_NO);
	out_str(o, "note", "initrd: %s\n", res.initrd_note);
	out_obj_end(o);
	const struct stune_pstep *is = NULL;
	for (size_t i = 0; i < res.journal->n; i++)
		if (res.journal->steps[i].kind == STUNE_PS_INITRD)
			is = &res.journal->steps[i];
	if (is && is->state == STUNE_PSS_DONE && !res.initrd_ok) {
		ok = false;
		error_msg("the new initrd does not hold the payload: %s", res.initrd_note ? res.initrd_note : "?");
	}
	out_str(o, "result", ok ? "Installed.\n" : "Installed, with errors (above).\n", ok ? "installed" : "failed");
	out_text(o, "Journal: %s/payload/journal.json ('scsitune payload remove' undoes this)\n", state_dir);
	return ok ? 0 : -1;
}

static int payload_install(struct global_opts *g, const char *file, const char *sig, const char *key,
			   const char *state_opt, bool dry_run, unsigned flags)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	if ((flags & PAYLOAD_RELOAD) && !stune_root_is_live(ctx->root)) {
		usage_error("payload",
			    "payload install: --reload works on the running system only, not under --sysroot");
		return EXIT_USAGE;
	}
	_cleanup_(payload_bundle_clear) struct payload_bundle b = {0};
	if (payload_bundle_load(ctx, file, sig, key, &b) < 0)
		return EXIT_ERROR;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (!dry_run) {
		if (cli_lock(ctx, state_opt, &state_dir, &lock) < 0)
			return EXIT_ERROR;
		_cleanup_(stune_pjournal_freep) struct stune_pjournal *j = NULL;
		int r = stune_pjournal_load(state_dir, &j);
		if (r == -EBADMSG) {
			error_msg("%s/payload/journal.json: not a scsitune payload journal", state_dir);
			return EXIT_ERROR;
		}
		if (r == 0) {
			char msha[STUNE_SHA256_HEX];
			stune_sha256_hex(b.m->json, b.m->json_len, msha);
			if (!j->complete) {
				error_msg("an install of payload %s for %s was interrupted (%s/payload/journal.json): "
					  "'scsitune payload remove' undoes it first",
					  j->payload_version ? j->payload_version : "?", j->release, state_dir);
				return EXIT_ERROR;
			}
			if (strcmp(j->release, b.m->release) || !j->manifest_sha256 ||
			    strcmp(j->manifest_sha256, msha)) {
				error_msg("payload %s is installed for %s: 'scsitune payload remove' first",
					  j->payload_version ? j->payload_version : "?", j->release);
				return EXIT_ERROR;
			}
			_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
			if (!o)
				return EXIT_ERROR;
			out_set_wrap(o, WRAP_DEFAULT_COLS);
			out_obj_begin(o, NULL);
			out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
			out_str(o, "command", NULL, "install");
			out_bool(o, "dry_run", NULL, STUNE_NO);
			render_bundle(o, &b);
			out_str(o, "preflight", NULL, NULL);
			out_str(o, "steps", NULL, NULL);
			out_str(o, "resolution", NULL, NULL);
			out_str(o, "initrd", NULL, NULL);
			out_text(o,
				 "Already installed (%s/payload/journal.json): nothing changed; 'scsitune payload "
				 "verify' says whether it is loaded.\n",
				 state_dir);
			out_str(o, "result", NULL, "already-installed");
			out_str(o, "journal", NULL, state_dir);
			out_obj_end(o);
			return out_finish(o) < 0 ? EXIT_ERROR : EXIT_OK;
		}
		if (r != -ENOENT) {
			error_msg("%s/payload/journal.json: %s", state_dir, strerror(-r));
			return EXIT_ERROR;
		}
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "install");
	out_bool(o, "dry_run", NULL, dry_run ? STUNE_YES : STUNE_NO);
	render_bundle(o, &b);
	bool refused;
	int r = payload_install_locked(g, ctx, o, &b, dry_run ? NULL : state_dir, flags, &refused);
	out_str(o, "journal", NULL, state_dir);
	out_obj_end(o);
	int w = out_finish(o);
	if (w < 0) {
		error_msg("writing output: %s", strerror(-w));
		return EXIT_ERROR;
	}
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

/* --- apply --payload -------------------------------------------------------------- */

int payload_apply_install(struct global_opts *g, struct stune_ctx *ctx, const struct payload_bundle *b,
			  const char *state_dir, bool dry_run)
{
	if (!dry_run) {
		_cleanup_(stune_pjournal_freep) struct stune_pjournal *j = NULL;
		int r = stune_pjournal_load(state_dir, &j);
		if (r == 0) {
			char msha[STUNE_SHA256_HEX];
			stune_sha256_hex(b->m->json, b->m->json_len, msha);
			if (!j->complete || strcmp(j->release, b->m->release) || !j->manifest_sha256 ||
			    strcmp(j->manifest_sha256, msha)) {
				error_msg("%s: %s/payload/journal.json: 'scsitune payload remove' first",
					  !j->complete ? "an interrupted payload install"
						       : "another payload is installed",
					  state_dir);
				return -1;
			}
			if (g->format != OUT_JSON)
				printf("Payload %s already installed for %s (%s/payload/journal.json).\n",
				       b->m->payload_version, b->m->release, state_dir);
			return 0;
		}
		if (r != -ENOENT) {
			error_msg("%s/payload/journal.json: %s", state_dir,
				  r == -EBADMSG ? "not a scsitune payload journal" : strerror(-r));
			return -1;
		}
	}
	/* Text: printed before apply's own output. JSON: kept, and printed only when the
	 * install did not go through (then it is the document); else apply's document
	 * carries the payload's state. */
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f = stdout;
	_cleanup_fclose_ FILE *mem = NULL;
	if (g->format == OUT_JSON) {
		if (!(mem = open_memstream(&buf, &len)))
			return -1;
		f = mem;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, f);
	if (!o)
		return -1;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "install");
	out_bool(o, "dry_run", NULL, dry_run ? STUNE_YES : STUNE_NO);
	render_bundle(o, b);
	bool refused;
	int r = payload_install_locked(g, ctx, o, b, dry_run ? NULL : state_dir, 0, &refused);
	out_str(o, "journal", NULL, dry_run ? NULL : state_dir);
	out_obj_end(o);
	if (out_finish(o) < 0)
		return -1;
	if (mem) {
		fclose(mem);
		mem = NULL;
		if (r < 0 && fwrite(buf, 1, len, stdout) != len)
			return -1;
	} else
		fputc('\n', stdout);
	return r;
}

/* --- verify ----------------------------------------------------------------------- */

void payload_render_state(struct out *o, const struct stune_pstate *s, int verbose)
{
	out_str(o, "release", "Kernel %s", s->release);
	out_str(o, "payload_version", s->payload_version ? ", payload %s" : NULL, s->payload_version);
	out_str(o, "source", NULL, s->source);
	out_str(o, "verdict", ": %s\n", stune_pverdict_name(s->verdict));
	const struct stune_plink *prev = NULL;
	out_arr_begin(o, "links");
	for (size_t i = 0; i < s->n; i++) {
		const struct stune_plink *l = &s->links[i];
		out_obj_begin(o, NULL);
		out_str(o, "link", NULL, l->link);
		out_str(o, "module", NULL, l->module);
		out_str(o, "expected", NULL, l->expected);
		out_str(o, "actual", NULL, l->actual);
		out_str(o, "state", NULL, stune_link_state_name(l->state));
		out_str(o, "note", NULL, l->note);
		out_obj_end(o);
		if (l->module && (!prev || !prev->module || strcmp(prev->module, l->module)))
			out_text(o, "%s\n", l->module);
		prev = l;
		_cleanup_free_ char *note = esc(l->note);
		const char *st = l->state == STUNE_LINK_OK	  ? "ok"
				 : l->state == STUNE_LINK_PENDING ? "PENDING"
				 : l->state == STUNE_LINK_DRIFT	  ? "DRIFT"
				 : l->state == STUNE_LINK_ABSENT  ? "absent"
				 : l->state == STUNE_LINK_SKIPPED ? "-"
								  : "ERROR";
		bool hashes = l->expected && strlen(l->expected) == 64;
		int w = hashes && !verbose ? 12 : 200;
		/* text: "loaded.version" is "version" under its module's heading */
		out_text(o, "  %-8s %-14s " WRAP_HANG, st, strncmp(l->link, "loaded.", 7) ? l->link : l->link + 7);
		bool shown_actual = l->actual && *l->actual && strlen(l->actual) != 64;
		if (l->state == STUNE_LINK_OK && !verbose && shown_actual)
			out_text(o, "%s%s%s%s\n", l->actual, note ? " (" : "", note ? note : "", note ? ")" : "");
		else if (l->state == STUNE_LINK_OK && !verbose)
			out_text(o, "%s\n", note ? note : "");
		else
			out_text(o, "expected %.*s%s, actual %.*s%s%s%s\n", w, l->expected ? l->expected : "-",
				 hashes && !verbose ? "..." : "", w, l->actual ? l->actual : "-",
				 hashes && !verbose && l->actual ? "..." : "", note ? ": " : "", note ? note : "");
	}
	out_arr_end(o);
}

static int payload_verify(struct global_opts *g, const char *file, const char *sig, const char *key,
			  const char *release)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(payload_bundle_clear) struct payload_bundle b = {0};
	_cleanup_free_ char *note = NULL;
	if (file) {
		if (payload_bundle_load(ctx, file, sig, key, &b) < 0)
			return EXIT_ERROR;
		if (release && strcmp(release, b.m->release)) {
			error_msg("--release %s: the bundle is for %s", release, b.m->release);
			return EXIT_ERROR;
		}
		note = stune_strdupf("%s, SHA-256 %.16s..., signed by key %s", file, b.sha256, b.key_id);
		if (!note)
			return EXIT_ERROR;
	}
	_cleanup_(stune_pstate_freep) struct stune_pstate *s = NULL;
	int r = stune_payload_state(ctx, b.m, release, STUNE_PSTATE_ALL, note, &s);
	if (r < 0) {
		error_msg("payload verify: %s", strerror(-r));
		return EXIT_ERROR;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "verify");
	payload_render_state(o, s, g->verbose);
	out_obj_end(o);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	switch (s->verdict) {
	case STUNE_PV_LOADED:
		return EXIT_OK;
	case STUNE_PV_UNKNOWN:
		return EXIT_ERROR;
	default:
		return EXIT_DRIFT;
	}
}

/* --- remove ------------------------------------------------------------------------ */

int payload_remove_locked(struct stune_ctx *ctx, struct out *o, const char *state_dir, bool force, bool no_initramfs)
{
	_cleanup_(stune_pjournal_freep) struct stune_pjournal *j = NULL;
	int r = stune_pjournal_load(state_dir, &j);
	if (r == -ENOENT) {
		error_msg("no payload journal in %s/payload: nothing was installed%s", state_dir,
			  stune_root_is_live(ctx->root) ? "" : " (--state-dir of the install?)");
		return -2;
	}
	if (r < 0) {
		error_msg("%s/payload/journal.json: %s", state_dir,
			  r == -EBADMSG ? "not a scsitune payload journal" : strerror(-r));
		return -2;
	}
	_cleanup_(stune_premove_result_clear) struct stune_premove_result res = {0};
	_cleanup_free_ char *err = NULL;
	r = stune_payload_remove(ctx, j, state_dir, force, no_initramfs, &res, &err);
	out_str(o, "payload_version", "Payload %s", j->payload_version);
	out_str(o, "release", " for %s:\n", j->release);
	out_bool(o, "install_complete", NULL, j->complete ? STUNE_YES : STUNE_NO);
	out_arr_begin(o, "steps");
	for (size_t i = 0; i < res.n; i++) {
		const struct stune_prm_row *w = &res.rows[i];
		out_obj_begin(o, NULL);
		out_str(o, "step", NULL, stune_pstep_kind_name(w->kind));
		out_str(o, "outcome", NULL, stune_prm_outcome_name(w->outcome));
		out_rootpath(o, "path", NULL, w->path);
		out_str(o, "expected", NULL, w->expected);
		out_str(o, "actual", NULL, w->actual);
		out_str(o, "note", NULL, w->note);
		out_text(o, "  %-13s %-10s " WRAP_HANG "%s%s%s%s\n", stune_prm_outcome_name(w->outcome),
			 stune_pstep_kind_name(w->kind), w->path ? "/" : "", w->path ? w->path : "",
			 w->note ? (w->path ? ": " : "") : "", w->note ? w->note : "");
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_begin(o, "depmod_index");
	out_bool(o, "same_as_before", NULL, res.index_same ? STUNE_YES : STUNE_NO);
	out_str(o, "note", "%s\n", res.index_note);
	out_obj_end(o);
	out_bool(o, "complete", NULL, res.complete ? STUNE_YES : STUNE_NO);
	if (r < 0) {
		error_msg("%s", err ? err : strerror(-r));
		return -1;
	}
	out_text(o, "Removed: the kernel package's modules are in force again%s.\n",
		 res.index_same ? "" : " (depmod's index differs from before: see above)");
	return 0;
}

static int payload_remove(struct global_opts *g, const char *state_opt, bool force, bool no_initramfs)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (cli_lock(ctx, state_opt, &state_dir, &lock) < 0)
		return EXIT_ERROR;
	/* No journal: an error, before a byte of the document (stdout is streamed). */
	_cleanup_(stune_pjournal_freep) struct stune_pjournal *j = NULL;
	int jr = stune_pjournal_load(state_dir, &j);
	if (jr == -ENOENT) {
		error_msg("no payload journal in %s/payload: nothing was installed%s", state_dir,
			  stune_root_is_live(ctx->root) ? "" : " (--state-dir of the install?)");
		return EXIT_ERROR;
	}
	if (jr < 0) {
		error_msg("%s/payload/journal.json: %s", state_dir,
			  jr == -EBADMSG ? "not a scsitune payload journal" : strerror(-jr));
		return EXIT_ERROR;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "remove");
	int r = payload_remove_locked(ctx, o, state_dir, force, no_initramfs);
	out_obj_end(o);
	int w = out_finish(o);
	if (w < 0) {
		error_msg("writing output: %s", strerror(-w));
		return EXIT_ERROR;
	}
	return r < 0 ? EXIT_ERROR : EXIT_OK;
}

/* --- the command -------------------------------------------------------------------- */

int cmd_payload(struct global_opts *g, int argc, char **argv)
{
	enum {
		OPT_OUTPUT = 0x100,
		OPT_SIGNATURE,
		OPT_TRUSTED_KEY,
		OPT_DRY_RUN,
		OPT_NO_INITRAMFS,
		OPT_RELOAD,
		OPT_RELEASE,
		OPT_FORCE,
		OPT_STATE_DIR,
		OPT_NO_KERNEL,
		OPT_SET_DEFAULT,
	};
	/* --output FILE is pack's; for the others (and -o) it is the global output format. */
	static const struct option longopts[] = {{"output", required_argument, NULL, OPT_OUTPUT},
						 GLOBAL_LONGOPTS,
						 {"signature", required_argument, NULL, OPT_SIGNATURE},
						 {"trusted-key", required_argument, NULL, OPT_TRUSTED_KEY},
						 {"dry-run", no_argument, NULL, OPT_DRY_RUN},
						 {"no-initramfs", no_argument, NULL, OPT_NO_INITRAMFS},
						 {"reload", no_argument, NULL, OPT_RELOAD},
						 {"release", required_argument, NULL, OPT_RELEASE},
						 {"force", no_argument, NULL, OPT_FORCE},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"no-kernel", no_argument, NULL, OPT_NO_KERNEL},
						 {"set-default", no_argument, NULL, OPT_SET_DEFAULT},
						 {NULL, 0, NULL, 0}};
	const char *output = NULL, *sig = NULL, *key = NULL, *release = NULL, *state_opt = NULL;
	bool dry_run = false, no_initramfs = false, reload = false, force = false, no_kernel = false,
	     set_default = false;
	int c;

	/* "payload SUB ...": the subcommand first, then its options (and the global ones). */
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			help_payload(stdout);
			return EXIT_OK;
		}
		usage_error("payload", "payload: which one? pack, install, verify or remove");
		return EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (strcmp(sub, "pack") && strcmp(sub, "install") && strcmp(sub, "verify") && strcmp(sub, "remove")) {
		usage_error("payload", "payload: unknown subcommand '%s' (pack, install, verify, remove)", sub);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help_payload(stdout);
			return EXIT_OK;
		case OPT_DRY_RUN:
			dry_run = true;
			continue;
		case OPT_NO_INITRAMFS:
			no_initramfs = true;
			continue;
		case OPT_RELOAD:
			reload = true;
			continue;
		case OPT_FORCE:
			force = true;
			continue;
		case OPT_NO_KERNEL:
			no_kernel = true;
			continue;
		case OPT_SET_DEFAULT:
			set_default = true;
			continue;
		case OPT_OUTPUT:
			if (strcmp(sub, "pack")) {
				if (global_opt(g, 'o', optarg) < 0)
					return EXIT_USAGE;
				continue;
			}
			/* fall through */
		case OPT_SIGNATURE:
		case OPT_TRUSTED_KEY:
		case OPT_RELEASE:
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("payload", "payload %s: empty argument", sub);
				return EXIT_USAGE;
			}
			*(c == OPT_OUTPUT	 ? &output
			  : c == OPT_SIGNATURE	 ? &sig
			  : c == OPT_TRUSTED_KEY ? &key
			  : c == OPT_RELEASE	 ? &release
						 : &state_opt) = optarg;
			continue;
		}
		int ec = command_opt(g, "payload", c, optarg);
		if (ec)
			return ec;
	}
	int npos = argc - optind;
	/* Options that do not belong to the subcommand are usage errors, not ignored. */
	struct {
		bool set;
		const char *name, *subs;
	} only[] = {
	    {output != NULL, "--output", "pack"},
	    {sig != NULL, "--signature", "install verify"},
	    {key != NULL, "--trusted-key", "install verify"},
	    {dry_run, "--dry-run", "install"},
	    {no_initramfs, "--no-initramfs", "install remove"},
	    {reload, "--reload", "install"},
	    {release != NULL, "--release", "verify"},
	    {force, "--force", "remove"},
	    {state_opt != NULL, "--state-dir", "install remove"},
	    {no_kernel, "--no-kernel", "install"},
	    {set_default, "--set-default", "install"},
	};
	for (size_t i = 0; i < ELEMENTSOF(only); i++)
		if (only[i].set && !strstr(only[i].subs, sub)) {
			usage_error("payload", "payload %s: %s is for payload %s only", sub, only[i].name,
				    only[i].subs);
			return EXIT_USAGE;
		}
	if (!strcmp(sub, "pack")) {
		if (npos != 1 || !output) {
			usage_error("payload",
				    "payload pack: give the payload/build output directory and --output FILE");
			return EXIT_USAGE;
		}
		return payload_pack(g, argv[optind], output);
	}
	if (!strcmp(sub, "install")) {
		if (npos != 1) {
			usage_error("payload", "payload install: give one bundle FILE");
			return EXIT_USAGE;
		}
		if (dry_run && reload) {
			usage_error("payload", "payload install: --dry-run and --reload together");
			return EXIT_USAGE;
		}
		if (no_kernel && set_default) {
			usage_error("payload", "payload install: --set-default and --no-kernel together");
			return EXIT_USAGE;
		}
		return payload_install(g, argv[optind], sig, key, state_opt, dry_run,
				       (no_initramfs ? PAYLOAD_NO_INITRAMFS : 0) | (reload ? PAYLOAD_RELOAD : 0) |
					   (no_kernel ? PAYLOAD_NO_KERNEL : 0) |
					   (set_default ? PAYLOAD_SET_DEFAULT : 0));
	}
	if (!strcmp(sub, "verify")) {
		if (npos > 1) {
			usage_error("payload", "payload verify: at most one bundle FILE");
			return EXIT_USAGE;
		}
		if ((sig || key) && npos == 0) {
			usage_error("payload", "payload verify: --signature and --trusted-key need a bundle FILE");
			return EXIT_USAGE;
		}
		return payload_verify(g, npos ? argv[optind] : NULL, sig, key, release);
	}
	if (npos) {
		usage_error("payload", "payload remove: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return payload_remove(g, state_opt, force, no_initramfs);
}
