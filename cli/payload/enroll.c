/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune payload enroll FILE --password-file PW | --status: the bundle's
 * signer staged for enrolment into shim's MOK list (mokutil --import), and
 * where the host stands with it (lib/payload/mok.h). The confirmation in
 * MokManager at the next boot stays a person's step at the console.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "detect/modtrust.h"
#include "payload/bundle.h"
#include "payload/load.h"
#include "payload/mok.h"
#include "payload-install.h"
#include "cli.h"
#include "enroll.h"
#include "wrap.h"

/* The signer's certificate of a loaded bundle into *c; EXIT_OK or EXIT_ERROR after saying why. */
static int bundle_signer(const struct stune_loaded_bundle *b, struct stune_cert *c,
			 const struct stune_payload_file **der)
{
	const struct stune_manifest *m = b->m;
	if (!m->signer) {
		error_msg("%s: its modules are unsigned (the manifest names no signer): nothing to enroll", b->file);
		hint_msg(
		    "sign them with payload/sign --key KEY --cert CERT DIR before pack (scsitune-payload(8), SECURE "
		    "BOOT)");
		return EXIT_ERROR;
	}
	*der = stune_manifest_file(m, m->signer->certificate);
	int r = *der ? stune_cert_from_der((*der)->data, (*der)->size, true, c) : -EBADMSG;
	if (r < 0) { /* (stune_bundle_load checked it: only out of memory is left) */
		error_msg("%s: the signer's certificate %s: %s", b->file, m->signer->certificate, strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static void render_standing(struct out *o, const struct stune_module_trust *t, const struct stune_cert *c,
			    const struct stune_mok_standing *s)
{
	out_obj_begin(o, "signer");
	out_str(o, "name", "Signer %s\n", c->kernel_name ? c->kernel_name : c->subject_cn);
	out_str(o, "skid", "  key identifier %s\n", c->skid);
	out_str(o, "serial", "  serial         %s\n", c->serial);
	out_obj_end(o);
	out_str_shown(o, "boot", "  boot:          %s\n", stune_boot_name(t->boot),
		      t->boot == STUNE_BOOT_UEFI   ? "UEFI"
		      : t->boot == STUNE_BOOT_BIOS ? "BIOS"
						   : "unknown");
	out_bool(o, "secure_boot", "  Secure Boot:   %s", t->secure_boot);
	out_text(o, " (" WRAP_HANG "%s)\n", t->secure_boot_source ? t->secure_boot_source : "?");
	out_str(o, "state", "  standing:      %s\n", stune_mok_state_name(s->state));
	out_bool(o, "enrolled", "  in MokListRT:  %s\n", s->enrolled ? STUNE_YES : STUNE_NO);
	out_bool(o, "pending",
		 s->pending ? "  in MokNew:     %s (staged: MokManager asks at the next boot)\n"
			    : "  in MokNew:     %s\n",
		 s->pending ? STUNE_YES : STUNE_NO);
	const char *kr = s->key && s->keyring ? s->keyring->name : NULL;
	out_str(o, "keyring", NULL, kr);
	out_text(o, "  kernel key in: %s\n",
		 kr				     ? kr
		 : s->key			     ? "a keyring not known"
		 : t->keys_read && t->members_source ? "none"
						     : "none known");
	const char *kerr = t->keys_error ? t->keys_error : t->members_error;
	out_str(o, "keyrings_error", NULL, kerr);
	if (kerr)
		out_text(o, "  (keyrings: " WRAP_HANG "%s)\n", kerr);
	out_str(o, "pending_error", NULL, t->pending_error);
	if (t->pending_error)
		out_text(o, "  (MokNew: " WRAP_HANG "%s)\n", t->pending_error);
}

/* What the next step is, by standing. */
static void render_next(struct out *o, const char *file, enum stune_mok_state st)
{
	switch (st) {
	case STUNE_MOK_TRUSTED:
		out_text(o, "The kernel trusts this signer for modules: scsitune payload install %s\n", file);
		break;
	case STUNE_MOK_PENDING:
		out_text(o,
			 "Next: reboot; at the console, shim's MokManager asks: Enroll MOK, Continue, Yes, the "
			 "password from the password file, Reboot. Then: scsitune payload enroll %s --status\n",
			 file);
		break;
	case STUNE_MOK_ENROLLED:
		out_text(o, "In the MOK list but in no keyring the module verifier searches: a kernel without "
			    "INTEGRITY_MACHINE_KEYRING, or MokListTrusted off (mokutil --trust-mok, reboot)\n");
		break;
	case STUNE_MOK_ABSENT:
	case STUNE_MOK_UNKNOWN:
		out_text(o, "To stage it: scsitune payload enroll %s --password-file FILE\n", file);
		break;
	}
}

/* Stage c (der) unless the host already trusts it or has it pending; *staged. dry_run: every check, the password's
 * hash made, no mokutil (*staged stays false). EXIT_OK or EXIT_ERROR. */
static int stage(const struct stune_module_trust *t, const struct stune_mok_standing *s,
		 const struct stune_payload_file *der, const char *pwfile, bool dry_run, bool *staged)
{
	*staged = false;
	if (s->state == STUNE_MOK_TRUSTED || s->state == STUNE_MOK_PENDING)
		return EXIT_OK;
	if (s->enrolled) { /* mokutil would skip it ("already enrolled"): another request changes nothing */
		error_msg(
		    "payload enroll: the signer is in the MOK list already (MokListRT), but in no keyring the module "
		    "verifier searches: nothing to stage; let the kernel trust MOK keys (mokutil --trust-mok, "
		    "reboot) or boot a kernel with INTEGRITY_MACHINE_KEYRING");
		return EXIT_ERROR;
	}
	if (t->boot != STUNE_BOOT_UEFI) {
		error_msg("payload enroll: this host did not boot through UEFI (%s): a MOK is enrolled by shim, "
			  "which only a UEFI boot runs",
			  t->boot == STUNE_BOOT_BIOS ? "no /sys/firmware/efi" : "unknown");
		return EXIT_ERROR;
	}
	_cleanup_free_ char *err = NULL, *hash = NULL, *output = NULL;
	char *pw = NULL;
	int r = stune_mok_password_load(pwfile, &pw, &err);
	if (r < 0) {
		error_msg("--password-file %s: %s", pwfile, err ? err : strerror(-r));
		return EXIT_ERROR;
	}
	r = stune_mok_hash(pw, &hash);
	stune_mok_password_free(pw);
	if (r < 0) {
		error_msg("payload enroll: the password's hash: %s", r == -EIO ? "libcrypt refused it" : strerror(-r));
		return EXIT_ERROR;
	}
	if (dry_run) {
		explicit_bzero(hash, strlen(hash));
		return EXIT_OK;
	}
	r = stune_mok_stage(der->data, der->size, hash, getenv("TMPDIR"), &output);
	explicit_bzero(hash, strlen(hash));
	if (r == -ENOENT) {
		error_msg("payload enroll: mokutil is not installed (apt-get install mokutil)");
		return EXIT_ERROR;
	}
	if (r != 0) {
		_cleanup_free_ char *last = stune_last_line(output);
		error_msg("payload enroll: mokutil --import failed (%s%d): %s", r < 0 ? "errno " : "exit ",
			  r < 0 ? -r : r,
			  last	  ? last
			  : r < 0 ? strerror(-r)
				  : "no output");
		return EXIT_ERROR;
	}
	*staged = true;
	return EXIT_OK;
}

int payload_enroll(struct global_opts *g, const char *file, const char *sig, const char *key, const char *pwfile,
		   bool dry_run)
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	if (pwfile && !dry_run && !stune_root_is_live(ctx->root)) {
		usage_error("payload", "payload enroll: --password-file stages the key in this machine's firmware "
				       "variables: not under --sysroot (--status and --dry-run read a tree)");
		return EXIT_USAGE;
	}
	_cleanup_(stune_loaded_bundle_clear) struct stune_loaded_bundle b = {0};
	if (payload_bundle_load(ctx, file, sig, key, &b) < 0)
		return EXIT_ERROR;
	struct stune_cert c = {0};
	const struct stune_payload_file *der = NULL;
	if (bundle_signer(&b, &c, &der) != EXIT_OK)
		return EXIT_ERROR;
	_cleanup_(stune_module_trust_freep) struct stune_module_trust *t = NULL;
	struct stune_mok_standing s;
	bool staged = false;
	int ec = EXIT_ERROR, r = stune_module_trust_read(ctx, &t);
	if (r < 0)
		error_msg("payload enroll: %s", strerror(-r));
	else {
		stune_mok_standing(t, &c, &s);
		ec = pwfile ? stage(t, &s, der, pwfile, dry_run, &staged) : EXIT_OK;
	}
	if (ec == EXIT_OK && staged) { /* what the firmware says now, not what mokutil said */
		stune_module_trust_free(t);
		t = NULL;
		if ((r = stune_module_trust_read(ctx, &t)) < 0) {
			error_msg("payload enroll: %s", strerror(-r));
			ec = EXIT_ERROR;
		} else if (stune_mok_standing(t, &c, &s), s.state != STUNE_MOK_PENDING) {
			error_msg(
			    "payload enroll: mokutil --import succeeded, but /sys/firmware/efi/efivars/MokNew does "
			    "not list the signer (%s)",
			    t->pending_error ? t->pending_error : "not there");
			ec = EXIT_ERROR;
		}
	}
	if (ec != EXIT_OK) {
		stune_cert_clear(&c);
		return ec;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		stune_cert_clear(&c);
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "enroll");
	payload_render_bundle(o, &b);
	render_standing(o, t, &c, &s);
	out_bool(o, "staged", NULL, staged ? STUNE_YES : STUNE_NO);
	out_bool(o, "dry_run", NULL, dry_run ? STUNE_YES : STUNE_NO);
	bool would = dry_run && s.state != STUNE_MOK_TRUSTED && s.state != STUNE_MOK_PENDING;
	if (pwfile)
		out_text(o, "%s\n",
			 staged	 ? "Staged now with mokutil --import."
			 : would ? "Would stage it with mokutil --import (--dry-run: nothing written)."
			 : s.state == STUNE_MOK_TRUSTED ? "Nothing staged: the kernel trusts it already."
							: "Nothing staged: it is staged already (MokNew lists it).");
	render_next(o, file, s.state);
	out_obj_end(o);
	stune_cert_clear(&c);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	if (pwfile)
		return EXIT_OK;
	return s.state == STUNE_MOK_TRUSTED   ? EXIT_OK
	       : s.state == STUNE_MOK_PENDING ? EXIT_PENDING
	       : s.state == STUNE_MOK_UNKNOWN ? EXIT_ERROR
					      : EXIT_DRIFT;
}
