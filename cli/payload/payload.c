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
#include "payload-install.h"
#include "cli.h"
#include "commands.h"
#include "enroll.h"
#include "modes.h"
#include "statedir.h"
#include "wrap.h"

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
	OPT_PASSWORD_FILE,
	OPT_STATUS,
};
/* The subcommands, and which options go with which (modes.h): the refusals, getopt's table and
 * --help's "Options by mode" come from here. */
enum { M_PACK, M_INSTALL, M_VERIFY, M_REMOVE, M_ENROLL, N_MODES };
static const struct mode_def payload_modes[N_MODES] = {
    [M_PACK] = {"payload pack", 1, 1, "payload pack: give the payload/build output directory and --output FILE"},
    [M_INSTALL] = {"payload install", 1, 1, "payload install: give one bundle FILE"},
    [M_VERIFY] = {"payload verify", 0, 1, "payload verify: at most one bundle FILE"},
    [M_REMOVE] = {"payload remove", 0, 0, "payload remove: takes no argument"},
    [M_ENROLL] = {"payload enroll", 1, 1, "payload enroll: give one bundle FILE"},
};
/* --output FILE is pack's; for the other subcommands --output (and -o) is the global output format. */
static const struct mode_opt payload_opts_table[] = {
    {"output", required_argument, OPT_OUTPUT, MODE(M_PACK)},
    {"signature", required_argument, OPT_SIGNATURE, MODE(M_INSTALL) | MODE(M_VERIFY) | MODE(M_ENROLL)},
    {"trusted-key", required_argument, OPT_TRUSTED_KEY, MODE(M_INSTALL) | MODE(M_VERIFY) | MODE(M_ENROLL)},
    {"dry-run", no_argument, OPT_DRY_RUN, MODE(M_INSTALL) | MODE(M_ENROLL)},
    {"no-initramfs", no_argument, OPT_NO_INITRAMFS, MODE(M_INSTALL) | MODE(M_REMOVE)},
    {"reload", no_argument, OPT_RELOAD, MODE(M_INSTALL)},
    {"no-kernel", no_argument, OPT_NO_KERNEL, MODE(M_INSTALL)},
    {"set-default", no_argument, OPT_SET_DEFAULT, MODE(M_INSTALL)},
    {"release", required_argument, OPT_RELEASE, MODE(M_VERIFY)},
    {"force", no_argument, OPT_FORCE, MODE(M_REMOVE)},
    {"state-dir", required_argument, OPT_STATE_DIR, MODE(M_INSTALL) | MODE(M_REMOVE)},
    {"password-file", required_argument, OPT_PASSWORD_FILE, MODE(M_ENROLL)},
    {"status", no_argument, OPT_STATUS, MODE(M_ENROLL)},
};
static const struct mode_table payload_table = {"payload", payload_modes, N_MODES, payload_opts_table,
						ELEMENTSOF(payload_opts_table)};

void help_payload(FILE *f)
{
	fputs("Usage: scsitune payload pack DIR --output FILE [options]\n"
	      "       scsitune payload install FILE [--signature SIG] [--dry-run]\n"
	      "                                     [--no-initramfs] [--reload]\n"
	      "                                     [--no-kernel | --set-default]\n"
	      "       scsitune payload verify [FILE] [--signature SIG]\n"
	      "       scsitune payload remove [--force] [--no-initramfs]\n"
	      "       scsitune payload enroll FILE --password-file PW [--dry-run] | --status\n"
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
	      "  enroll   Secure Boot: stage FILE's signer certificate for shim's MOK list\n"
	      "           (with mokutil; a person confirms it in MokManager at the console at\n"
	      "           the next boot), or show where the host stands with it (--status).\n"
	      "\nOptions:\n"
	      "      --output FILE        pack: the bundle to write\n"
	      "      --signature SIG      the minisign signature (default FILE.minisig)\n"
	      "      --trusted-key FILE   trust this minisign public key as well as\n"
	      "                           /etc/scsitune/trusted-keys/*.pub\n"
	      "      --dry-run            install: check the signature, the bundle and the\n"
	      "                           preflight; enroll: every check, no mokutil; change\n"
	      "                           nothing\n"
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
	      "      --password-file PW   enroll: the one-time password MokManager asks for,\n"
	      "                           one line in a file of root's, mode 0600\n"
	      "      --status             enroll: trusted (0), staged (3) or neither (2)\n"
	      "      --state-dir DIR      where the journal is (default " STUNE_STATE_DIR ",\n"
	      "                           inside the --sysroot tree when one is given)\n\n",
	      f);
	mode_help(f, &payload_table);
	fputc('\n', f);
	print_global_options(f);
	fputs("\nExit status: 0 success (verify: the loaded modules are the bundle's), 1 error\n"
	      "or refusal, 2 verify: drift, not installed or reboot pending; enroll --status:\n"
	      "not trusted and not staged, 3 enroll --status: staged, 64 usage.\n"
	      "See scsitune-payload(8).\n",
	      f);
}

/* --- the bundle: signature first, then the archive in memory ----------------------- */

/* --- pack ------------------------------------------------------------------------ */

/* pack's account of what it packed: each module's facts, the signer, the kernel package. */
static void pack_render_contents(struct out *o, const struct stune_manifest *m)
{
	out_arr_begin(o, "modules");
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
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
	if (m->signer) {
		out_obj_begin(o, "signer");
		out_str(o, "kernel_name", "  signer %s", m->signer->kernel_name);
		out_str(o, "serial", " (serial %s", m->signer->serial);
		out_str(o, "skid", m->signer->skid ? ", SKID %s" : NULL, m->signer->skid);
		out_str(o, "issuer_cn", NULL, m->signer->issuer_cn);
		out_str(o, "certificate", "); certificate %s in the bundle\n", m->signer->certificate);
		out_obj_end(o);
	} else {
		out_str(o, "signer", NULL, NULL);
		out_text(o, m->n_modules && m->modules[0].is_signed
				? "  signer not recorded (the modules were not signed with payload/sign)\n"
				: "  unsigned: refused where module signatures are enforced (payload/sign)\n");
	}
	if (m->kernel) {
		out_obj_begin(o, "kernel");
		out_str(o, "package", "  kernel %s", m->kernel->package);
		out_str(o, "version", " %s", m->kernel->version);
		out_str(o, "release", " (%s)", m->kernel->release);
		out_str(o, "build_id", " build-id %.12s...\n", m->kernel->build_id);
		out_bool(o, "image_signed",
			 m->kernel->image_signed ? "    image signed for shim (sbsign) by the signer"
						 : "    image unsigned: shim refuses to boot it under "
						   "Secure Boot (payload/sign)",
			 m->kernel->image_signed ? STUNE_YES : STUNE_NO);
		out_int(o, "signed_modules", m->kernel->image_signed ? ", %s of its modules signed\n" : "\n",
			m->kernel->signed_modules);
		/* (the bundle's reader checked that a kernel trusting a certificate trusts the signer's, if any) */
		const char *trusts = !m->kernel->trusts_sha256 ? NULL
				     : m->signer ? (m->kernel->trusts_skid ? "    built to trust the signer (SKID %s)\n"
									   : "    built to trust the signer\n")
				     : m->kernel->trusts_skid
					 ? "    built to trust the certificate of SKID %s (payload/build "
					   "--sign-cert); nothing signed with it yet\n"
					 : "    built to trust a certificate (payload/build --sign-cert); "
					   "nothing signed with it yet\n";
		out_str(o, "trusts_skid", trusts, m->kernel->trusts_skid);
		out_obj_end(o);
	} else
		out_str(o, "kernel", NULL, NULL);
}

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
	pack_render_contents(o, m);
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

/* The same bundle installed already, its files as install wrote them: nothing changes. */
static int install_already(struct global_opts *g, const struct stune_loaded_bundle *b, const char *state_dir)
{
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "install");
	out_bool(o, "dry_run", NULL, STUNE_NO);
	payload_render_bundle(o, b);
	out_str(o, "finished_remove", NULL, NULL);
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
	_cleanup_(stune_loaded_bundle_clear) struct stune_loaded_bundle b = {0};
	if (payload_bundle_load(ctx, file, sig, key, &b) < 0)
		return EXIT_ERROR;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	_cleanup_(payload_gate_clear) struct payload_gate gate = {0};
	if (!dry_run) {
		if (cli_lock(ctx, state_opt, "payload install", &state_dir, &lock) != EXIT_OK)
			return EXIT_ERROR;
		if (payload_journal_gate(ctx, &b, state_dir, flags & PAYLOAD_NO_INITRAMFS, &gate) != EXIT_OK)
			return EXIT_ERROR;
		if (gate.already)
			return install_already(g, &b, state_dir);
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "install");
	out_bool(o, "dry_run", NULL, dry_run ? STUNE_YES : STUNE_NO);
	payload_render_bundle(o, &b);
	payload_render_finished(o, &gate, state_dir);
	bool refused;
	int r = payload_install_locked(g, ctx, o, &b, dry_run ? NULL : state_dir, flags, &refused);
	out_str(o, "journal", NULL, state_dir);
	out_obj_end(o);
	int w = out_finish(o);
	if (w < 0) {
		error_msg("writing output: %s", strerror(-w));
		return EXIT_ERROR;
	}
	return r;
}

/* --- apply --payload -------------------------------------------------------------- */

/* --- verify ----------------------------------------------------------------------- */

static int payload_verify(struct global_opts *g, const char *file, const char *sig, const char *key,
			  const char *release)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(stune_loaded_bundle_clear) struct stune_loaded_bundle b = {0};
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
	_cleanup_(stune_payload_status_freep) struct stune_payload_status *s = NULL;
	int r = stune_payload_state(ctx, b.m, release, STUNE_PAYLOAD_STATUS_ALL, note, &s);
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
	if (s->verdict == STUNE_PAYLOAD_NOT_INSTALLED)
		out_text(o, "To install one: scsitune payload install BUNDLE (scsitune-payload(8))\n");
	out_obj_end(o);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	switch (s->verdict) {
	case STUNE_PAYLOAD_LOADED:
	case STUNE_PAYLOAD_INSTALLED:
		return EXIT_OK;
	case STUNE_PAYLOAD_UNKNOWN:
		return EXIT_ERROR;
	default:
		return EXIT_DRIFT;
	}
}

/* --- remove ------------------------------------------------------------------------ */

/* remove, the lock held, j its journal: renders into o; EXIT_OK, or EXIT_ERROR after printing why. */
static int payload_remove_locked(struct stune_ctx *ctx, struct out *o, struct stune_payload_journal *j,
				 const char *state_dir, bool force, bool no_initramfs)
{
	int r;
	_cleanup_(stune_payload_remove_result_clear) struct stune_payload_remove_result res = {0};
	_cleanup_free_ char *err = NULL;
	r = stune_payload_remove(ctx, j, state_dir, force, no_initramfs, &res, &err);
	out_str(o, "payload_version", "Payload %s", j->payload_version);
	out_str(o, "release", " for %s:\n", j->release);
	out_bool(o, "install_complete", NULL, j->complete ? STUNE_YES : STUNE_NO);
	out_arr_begin(o, "steps");
	for (size_t i = 0; i < res.n; i++) {
		const struct stune_payload_rm_row *w = &res.rows[i];
		out_obj_begin(o, NULL);
		out_str(o, "step", NULL, stune_payload_step_kind_name(w->kind));
		out_str(o, "outcome", NULL, stune_payload_rm_outcome_name(w->outcome));
		out_rootpath(o, "path", NULL, w->path);
		out_str(o, "expected", NULL, w->expected);
		out_str(o, "actual", NULL, w->actual);
		out_str(o, "note", NULL, w->note);
		out_text(o, "  %-13s %-10s " WRAP_HANG "%s%s%s%s\n", stune_payload_rm_outcome_name(w->outcome),
			 stune_payload_step_kind_name(w->kind), w->path ? "/" : "", w->path ? w->path : "",
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
		return EXIT_ERROR;
	}
	out_text(o, "Removed: the kernel package's modules are in force again%s.\n",
		 res.index_same ? "" : " (depmod's index differs from before: see above)");
	return EXIT_OK;
}

/* remove without a journal: one line (a document with -o json), exit 0. */
static int remove_nothing(struct global_opts *g, const char *state_dir, bool tree)
{
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "remove");
	out_bool(o, "nothing_installed", NULL, STUNE_YES);
	out_str(o, "release", NULL, NULL);
	out_str(o, "payload_version", NULL, NULL);
	out_bool(o, "install_complete", NULL, STUNE_UNKNOWN);
	out_arr_begin(o, "steps");
	out_arr_end(o);
	out_str(o, "depmod_index", NULL, NULL);
	out_bool(o, "complete", NULL, STUNE_YES);
	out_text(o, "No payload journal in %s/payload: nothing to remove%s.\n", state_dir,
		 tree ? " (--state-dir of the install?)" : "");
	out_obj_end(o);
	return out_finish(o) < 0 ? EXIT_ERROR : EXIT_OK;
}

static int payload_remove(struct global_opts *g, const char *state_opt, bool force, bool no_initramfs)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (cli_lock(ctx, state_opt, "payload remove", &state_dir, &lock) != EXIT_OK)
		return EXIT_ERROR;
	/* No journal: nothing was installed (or the last remove completed): nothing to undo is success, as for
	 * revert (an undo step in automation must not fail when there is nothing to undo). */
	_cleanup_(stune_payload_journal_freep) struct stune_payload_journal *j = NULL;
	/* Only what install could have journaled, before any step is undone. */
	if (payload_journal_read(state_dir, &j) != EXIT_OK)
		return EXIT_ERROR;
	if (!j)
		return remove_nothing(g, state_dir, !stune_root_is_live(ctx->root));
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o)
		return EXIT_ERROR;
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "remove");
	out_bool(o, "nothing_installed", NULL, STUNE_NO);
	int r = payload_remove_locked(ctx, o, j, state_dir, force, no_initramfs);
	out_obj_end(o);
	int w = out_finish(o);
	if (w < 0) {
		error_msg("writing output: %s", strerror(-w));
		return EXIT_ERROR;
	}
	return r;
}

/* --- the command -------------------------------------------------------------------- */

/* payload's options, for every subcommand (the table below says which go with which). */
struct payload_opts {
	const char *output, *sig, *key, *release, *state_opt, *pwfile;
	bool help, dry_run, no_initramfs, reload, force, no_kernel, set_default, status;
};

/* One option of payload's own into *po: CLI_GO_ON, or CLI_NOT_MINE for a global one. */
static int payload_opt(struct payload_opts *po, const char *sub, int c, const char *arg)
{
	switch (c) {
	case OPT_DRY_RUN:
		po->dry_run = true;
		return CLI_GO_ON;
	case OPT_NO_INITRAMFS:
		po->no_initramfs = true;
		return CLI_GO_ON;
	case OPT_RELOAD:
		po->reload = true;
		return CLI_GO_ON;
	case OPT_FORCE:
		po->force = true;
		return CLI_GO_ON;
	case OPT_NO_KERNEL:
		po->no_kernel = true;
		return CLI_GO_ON;
	case OPT_SET_DEFAULT:
		po->set_default = true;
		return CLI_GO_ON;
	case OPT_STATUS:
		po->status = true;
		return CLI_GO_ON;
	case OPT_OUTPUT:
	case OPT_SIGNATURE:
	case OPT_TRUSTED_KEY:
	case OPT_RELEASE:
	case OPT_STATE_DIR:
	case OPT_PASSWORD_FILE:
		if (!*arg) {
			usage_error("payload", "payload %s: empty argument", sub);
			return EXIT_USAGE;
		}
		*(c == OPT_OUTPUT	 ? &po->output
		  : c == OPT_SIGNATURE	 ? &po->sig
		  : c == OPT_TRUSTED_KEY ? &po->key
		  : c == OPT_RELEASE	 ? &po->release
		  : c == OPT_STATE_DIR	 ? &po->state_opt
					 : &po->pwfile) = arg;
		return CLI_GO_ON;
	}
	return CLI_NOT_MINE;
}

/*
 * The options after "payload SUB" into *po, checked against the table: one
 * that does not go with SUB, or arguments SUB does not take, is a usage
 * error. CLI_GO_ON, or the exit code.
 */
static int payload_options(struct global_opts *g, size_t mode, int argc, char **argv, struct payload_opts *po)
{
	const char *sub = payload_modes[mode].name + strlen("payload ");
	_cleanup_free_ struct option *longopts = mode_longopts(&payload_table);
	uint64_t given = 0;
	int c, ec;
	if (!longopts) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS, longopts, "payload")) != -1) {
		if (c == 'h') {
			po->help = true;
			return CLI_GO_ON;
		}
		if (c == OPT_OUTPUT && mode != M_PACK)
			c = 'o';
		mode_given(&payload_table, c, &given);
		if ((ec = payload_opt(po, sub, c, optarg)) == CLI_GO_ON)
			continue;
		if (ec != CLI_NOT_MINE)
			return ec;
		if ((ec = command_opt(g, "payload", c, optarg)))
			return ec;
	}
	return mode_check(&payload_table, mode, given, argc - optind);
}

int cmd_payload(struct global_opts *g, int argc, char **argv)
{
	/* "payload SUB ...": the subcommand first, then its options (and the global ones). */
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			help_payload(stdout);
			return EXIT_OK;
		}
		usage_error("payload", "payload: which one? pack, install, verify, remove or enroll");
		return EXIT_USAGE;
	}
	size_t mode = 0;
	while (mode < N_MODES && strcmp(argv[1], payload_modes[mode].name + strlen("payload ")))
		mode++;
	if (mode == N_MODES) {
		usage_error("payload", "payload: unknown subcommand '%s' (pack, install, verify, remove, enroll)",
			    argv[1]);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	struct payload_opts po = {0};
	int ec = payload_options(g, mode, argc, argv, &po);
	if (ec != CLI_GO_ON)
		return ec;
	if (po.help) {
		help_payload(stdout);
		return EXIT_OK;
	}
	int npos = argc - optind;
	if (mode == M_PACK) {
		if (!po.output) {
			usage_error("payload",
				    "payload pack: give the payload/build output directory and --output FILE");
			return EXIT_USAGE;
		}
		return payload_pack(g, argv[optind], po.output);
	}
	if (mode == M_INSTALL) {
		if (po.dry_run && po.reload) {
			usage_error("payload", "payload install: --dry-run and --reload together");
			return EXIT_USAGE;
		}
		if (po.no_kernel && po.set_default) {
			usage_error("payload", "payload install: --set-default and --no-kernel together");
			return EXIT_USAGE;
		}
		return payload_install(g, argv[optind], po.sig, po.key, po.state_opt, po.dry_run,
				       (po.no_initramfs ? PAYLOAD_NO_INITRAMFS : 0) | (po.reload ? PAYLOAD_RELOAD : 0) |
					   (po.no_kernel ? PAYLOAD_NO_KERNEL : 0) |
					   (po.set_default ? PAYLOAD_SET_DEFAULT : 0));
	}
	if (mode == M_VERIFY) {
		if ((po.sig || po.key) && npos == 0) {
			usage_error("payload", "payload verify: --signature and --trusted-key need a bundle FILE");
			return EXIT_USAGE;
		}
		return payload_verify(g, npos ? argv[optind] : NULL, po.sig, po.key, po.release);
	}
	if (mode == M_ENROLL) {
		if (!po.pwfile == !po.status) {
			usage_error("payload",
				    "payload enroll: give --password-file FILE (stage the signer) or --status");
			return EXIT_USAGE;
		}
		if (po.dry_run && !po.pwfile) {
			usage_error("payload", "payload enroll: --dry-run goes with --password-file");
			return EXIT_USAGE;
		}
		return payload_enroll(g, argv[optind], po.sig, po.key, po.pwfile, po.dry_run);
	}
	return payload_remove(g, po.state_opt, po.force, po.no_initramfs);
}
