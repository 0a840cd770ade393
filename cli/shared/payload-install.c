/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `payload install` and `apply --payload` share: the bundle loaded
 * (signature first, then the archive in memory), the preflight and install
 * rendered, the payload's state as verify and apply show it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/root.h"
#include "core/statefile.h"
#include "core/strv.h"
#include "payload/bundle.h"
#include "payload/host.h"
#include "payload/install.h"
#include "payload/journal.h"
#include "payload/preflight.h"
#include "payload/state.h"
#include "cli.h"
#include "payload-install.h"
#include "wrap.h"

int payload_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
			struct stune_loaded_bundle *b)
{
	_cleanup_free_ char *err = NULL;
	int r = stune_bundle_load(ctx, file, sig_opt, trusted_key, b, &err);
	if (r >= 0)
		return 0;
	error_msg("%s", err ? err : strerror(-r));
	/* The next step, by where it stopped (a missing signature's message says it already). */
	const char *next = NULL;
	_cleanup_free_ char *trust = NULL;
	switch (b->fault) {
	case STUNE_BUNDLE_FILE:
		next = r == -ENOENT ? "a bundle is made by scsitune payload pack DIR --output FILE and signed with "
				      "minisign -S -s KEY -m FILE (scsitune-payload(8))"
				    : NULL;
		break;
	case STUNE_BUNDLE_SIG:
		next = r == -ENOENT ? NULL
				    : "a signature is what minisign -S -s KEY -m FILE writes as FILE.minisig: sign the "
				      "bundle again (scsitune-payload(8))";
		break;
	case STUNE_BUNDLE_UNTRUSTED:
		/* The tree's directory under --sysroot ("" + "/etc/..." on the live root). */
		next = trust = stune_strdupf("to trust a key: its .pub file, root's and not writable by others, in "
					     "%s/etc/scsitune/trusted-keys/, or --trusted-key FILE "
					     "(scsitune-payload(8), SECURITY)",
					     stune_root_prefix(ctx->root));
		break;
	case STUNE_BUNDLE_MISMATCH:
		next = "the bundle or its signature changed after signing: take both again from where they "
		       "were published (scsitune-payload(8))";
		break;
	case STUNE_BUNDLE_ARCHIVE: /* signed by a trusted key: what is wrong in it is said, for its signer */
	case STUNE_BUNDLE_KEYS:	   /* the trust refusal names the fix (chmod, chown) */
	case STUNE_BUNDLE_OK:
		break;
	}
	if (next)
		hint_msg("%s", next);
	return -1;
}

void payload_render_bundle(struct out *o, const struct stune_loaded_bundle *b)
{
	const struct stune_manifest *m = b->m;
	/* Text from outside as it is: out_str escapes it for the terminal (a tab as a space, U+202E as \u202e),
	 * JSON as JSON does. */
	out_obj_begin(o, "bundle");
	out_str(o, "file", "Bundle %s", b->file);
	out_str(o, "sha256", NULL, b->sha256);
	out_int(o, "size", NULL, (long long)b->size);
	out_obj_begin(o, "signature");
	out_str(o, "file", NULL, b->sig_path);
	out_str(o, "key_id", "\n  signed by key %s", b->key_id);
	out_str(o, "key_file", " (%s)", b->sig.key_source);
	out_str(o, "algorithm", ", %s", b->sig.prehashed ? "ED" : "Ed");
	out_str(o, "trusted_comment", "\n  trusted comment: %s\n", b->sig.trusted_comment);
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
		const struct stune_payload_module *pm = &m->modules[i];
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

static void render_preflight(struct out *o, const struct stune_preflight *p)
{
	out_obj_begin(o, "preflight");
	out_bool(o, "passed", NULL, p->passed ? STUNE_YES : STUNE_NO);
	out_text(o, "Preflight:\n");
	out_arr_begin(o, "checks");
	for (size_t i = 0; i < p->n; i++) {
		const struct stune_payload_check *c = &p->rows[i];
		out_obj_begin(o, NULL);
		out_str(o, "check", NULL, c->check);
		out_str(o, "module", NULL, c->module);
		out_str(o, "expected", NULL, c->expected);
		out_str(o, "actual", NULL, c->actual);
		out_bool(o, "passed", NULL, c->passed ? STUNE_YES : STUNE_NO);
		out_str(o, "why", NULL, c->why);
		out_obj_end(o);
		_cleanup_free_ char *why = stune_ctrl_escape(c->why);
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

static const char *need_name(enum stune_payload_need n)
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

static const char *need_text(enum stune_payload_need n, bool running)
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

/* The journal's steps, as install left them. */
static void render_install_steps(struct out *o, const struct stune_payload_journal *j)
{
	out_text(o, "Install:\n");
	out_arr_begin(o, "steps");
	for (size_t i = 0; j && i < j->n; i++) {
		const struct stune_payload_step *s = &j->steps[i];
		out_obj_begin(o, NULL);
		out_str(o, "step", NULL, stune_payload_step_kind_name(s->kind));
		out_str(o, "state", NULL, stune_payload_step_state_name(s->state));
		out_rootpath(o, "path", NULL, s->path);
		out_str(o, "sha256", NULL, s->sha256);
		out_str(o, "old_sha256", NULL, s->old_sha256);
		out_str(o, "target", NULL, s->target);
		out_str(o, "old_target", NULL, s->old_target);
		out_str(o, "note", NULL, s->note);
		out_text(o, "  %-8s %-10s " WRAP_HANG "%s%s%s%s\n", stune_payload_step_state_name(s->state),
			 stune_payload_step_kind_name(s->kind), s->path ? "/" : "", s->path ? s->path : "",
			 s->note ? (s->path ? ": " : "") : "", s->note ? s->note : "");
		out_obj_end(o);
	}
	out_arr_end(o);
}

/* What modprobe resolves each module to, what it needs, how its reload went; false when one is not ours. */
static bool render_resolution(struct out *o, const struct stune_manifest *m, const struct stune_payload_host *h,
			      const struct stune_payload_install_result *res)
{
	bool ok = true;
	out_arr_begin(o, "resolution");
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		bool ours = stune_payload_install_ours(m, res, i);
		if (!res->unresolved)
			ok &= ours;
		enum stune_payload_need need = res->need[i];
		int k = res->reload ? res->reload[i] : 0;
		const char *reload_result = k > 0 ? "reloaded" : k < 0 ? "failed" : NULL;
		const char *rerr = res->reload_err ? res->reload_err[i] : NULL;
		if (k < 0)
			ok = false;
		out_obj_begin(o, NULL);
		out_str(o, "name", "modprobe %s", pm->name);
		_cleanup_free_ char *shown = stune_strdupf("/lib/modules/%s/%s", m->release, res->resolved[i]);
		out_str_shown(o, "resolves_to", " -> %s", res->resolved[i],
			      res->resolved[i] && *res->resolved[i] ? shown : NULL);
		out_bool(o, "ours",
			 res->unresolved
			     ? ": not checked (--sysroot needs root: libkmod runs in a chroot of the tree)\n"
			 : ours ? " (ours)\n"
				: " (NOT ours)\n",
			 ours ? STUNE_YES : STUNE_NO);
		out_str(o, "needs", NULL, need_name(need));
		out_text(o, "  " WRAP_HANG "%s\n", need_text(need, h->running));
		out_str(o, "reload", reload_result ? "  reload: %s\n" : NULL, reload_result);
		out_str(o, "reload_error", rerr ? "  %s\n" : NULL, rerr);
		out_obj_end(o);
	}
	out_arr_end(o);
	return ok;
}

int payload_install_locked(struct global_opts *g, struct stune_ctx *ctx, struct out *o,
			   const struct stune_loaded_bundle *b, const char *state_dir, unsigned flags, bool *refused)
{
	bool reload = flags & PAYLOAD_RELOAD;
	const struct stune_manifest *m = b->m;
	_cleanup_(stune_payload_host_freep) struct stune_payload_host *h = NULL;
	_cleanup_(stune_preflight_freep) struct stune_preflight *p = NULL;
	int r;
	(void)g;
	*refused = false;
	if ((r = stune_payload_host_read(ctx, m->release, &h)) < 0 || (r = stune_payload_host_read_trust(ctx, h)) < 0 ||
	    (r = stune_payload_preflight(ctx, m, h, &p)) < 0 ||
	    (!(flags & PAYLOAD_NO_KERNEL) && (r = stune_payload_preflight_boot(m, h, p)) < 0)) {
		error_msg("preflight: %s", strerror(-r));
		return EXIT_ERROR;
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
		const char *hint = NULL;
		for (size_t i = 0; i < p->n; i++)
			if (!p->rows[i].passed) {
				error_msg("refused: %s%s%s: %s", p->rows[i].check, p->rows[i].module ? " " : "",
					  p->rows[i].module ? p->rows[i].module : "",
					  p->rows[i].why ? p->rows[i].why : "");
				if (!hint)
					hint = p->rows[i].hint;
			}
		if (hint)
			hint_msg("%s", hint);
		return EXIT_ERROR;
	}
	if (!state_dir) { /* dry run */
		out_str(o, "result", "Dry run: the preflight passed; nothing was changed.\n", "dry-run");
		return EXIT_OK;
	}
	struct stune_payload_install_opts io = {.state_dir = state_dir,
						.no_initramfs = flags & PAYLOAD_NO_INITRAMFS,
						.no_kernel = flags & PAYLOAD_NO_KERNEL,
						.set_default = flags & PAYLOAD_SET_DEFAULT,
						.bundle_sha256 = b->sha256,
						.key_id = b->key_id};
	_cleanup_(stune_payload_install_result_clear) struct stune_payload_install_result res = {0};
	_cleanup_free_ char *err = NULL;
	r = stune_payload_install(ctx, m, h, &io, &res, &err);
	render_install_steps(o, res.journal);
	if (r < 0) {
		out_str(o, "resolution", NULL, NULL);
		out_str(o, "initrd", NULL, NULL);
		out_str(o, "result", "Failed.\n", "failed");
		error_msg(
		    "install: %s (the journal in %s/payload says how far it got: 'scsitune payload remove' undoes "
		    "it)",
		    err ? err : strerror(-r), state_dir);
		return EXIT_ERROR;
	}
	if (reload && (r = stune_payload_reload(ctx, m, h, &res)) < 0) {
		error_msg("install --reload: %s", strerror(-r));
		return EXIT_ERROR;
	}
	bool ok = render_resolution(o, m, h, &res);
	out_obj_begin(o, "initrd");
	out_bool(o, "ok", NULL, res.initrd_ok ? STUNE_YES : STUNE_NO);
	out_str(o, "note", "initrd: %s\n", res.initrd_note);
	out_obj_end(o);
	const struct stune_payload_step *is = NULL;
	for (size_t i = 0; i < res.journal->n; i++)
		if (res.journal->steps[i].kind == STUNE_PAYLOAD_STEP_INITRD)
			is = &res.journal->steps[i];
	if (is && is->state == STUNE_PAYLOAD_STEP_STATE_DONE && !res.initrd_ok) {
		ok = false;
		error_msg("the new initrd does not hold the payload: %s", res.initrd_note ? res.initrd_note : "?");
	}
	out_str(o, "result", ok ? "Installed.\n" : "Installed, with errors (above).\n", ok ? "installed" : "failed");
	out_text(o, "Journal: %s/payload/journal.json ('scsitune payload remove' undoes this)\n", state_dir);
	return ok ? EXIT_OK : EXIT_ERROR;
}

int payload_journal_read(const char *state_dir, struct stune_payload_journal **j)
{
	*j = NULL;
	int r = stune_payload_journal_load(state_dir, j);
	if (r == -ENOENT)
		return EXIT_OK;
	if (r < 0) {
		error_msg("%s/payload/journal.json: %s", state_dir, stune_payload_journal_strerror(r));
		return EXIT_ERROR;
	}
	_cleanup_free_ char *bad = NULL;
	if (stune_payload_journal_check(*j, &bad) < 0) {
		error_msg("%s/payload/journal.json: %s: refused before any change", state_dir,
			  bad ? bad : "out of memory");
		stune_payload_journal_free(*j);
		*j = NULL;
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * A remove that stopped half way (killed, or files changed since install; its journal j
 * marked) finished as 'payload remove' would (no
 * --force): 0, the journal gone; or -1 after one line naming what is half-done and the
 * command that finishes it.
 */
static int finish_remove(struct stune_ctx *ctx, struct stune_payload_journal *j, const char *state_dir,
			 bool no_initramfs)
{
	_cleanup_(stune_payload_remove_result_clear) struct stune_payload_remove_result res = {0};
	_cleanup_free_ char *err = NULL, *half = strdup("");
	int r = stune_payload_remove(ctx, j, state_dir, false, no_initramfs, &res, &err);
	if (r == 0)
		return 0;
	bool changed = false;
	for (size_t i = 0; half && i < res.n; i++) {
		const struct stune_payload_rm_row *w = &res.rows[i];
		/* left as it is: changed since install, failed, or an initrd that may still hold the payload */
		if (w->outcome != STUNE_PAYLOAD_RM_CHANGED && w->outcome != STUNE_PAYLOAD_RM_FAILED &&
		    !(w->outcome == STUNE_PAYLOAD_RM_SKIPPED && w->kind == STUNE_PAYLOAD_STEP_INITRD && w->actual))
			continue;
		changed |= w->outcome == STUNE_PAYLOAD_RM_CHANGED;
		char *n = stune_strdupf("%s%s%s%s%s (%s)", half, *half ? ", " : "",
					stune_payload_step_kind_name(w->kind), w->path ? " /" : "",
					w->path ? w->path : "", stune_payload_rm_outcome_name(w->outcome));
		free(half);
		half = n;
	}
	_cleanup_free_ char *e = stune_ctrl_escape(err ? err : strerror(-r));
	error_msg("a 'payload remove' that stopped half way (payload %s for %s, %s/payload/journal.json) cannot be "
		  "finished: %s%s%s; 'scsitune payload remove%s' finishes it, then install again",
		  j->payload_version ? j->payload_version : "?", j->release, state_dir, e ? e : "?",
		  half && *half ? "; half-done: " : "", half ? half : "", changed ? " --force" : "");
	return -1;
}

void payload_gate_clear(struct payload_gate *gate)
{
	free(gate->finished_version);
	free(gate->finished_release);
	memset(gate, 0, sizeof(*gate));
}

int payload_journal_gate(struct stune_ctx *ctx, const struct stune_loaded_bundle *b, const char *state_dir,
			 bool no_initramfs, struct payload_gate *gate)
{
	_cleanup_(stune_payload_journal_freep) struct stune_payload_journal *j = NULL;
	memset(gate, 0, sizeof(*gate));
	int r;
	/* Checked before install acts on it (finishing a remove). */
	if (payload_journal_read(state_dir, &j) != EXIT_OK)
		return EXIT_ERROR;
	if (!j)
		return EXIT_OK;
	if (j->remove_started) {
		if (finish_remove(ctx, j, state_dir, no_initramfs) < 0)
			return EXIT_ERROR;
		gate->finished_version = steal_pointer(&j->payload_version);
		gate->finished_release = steal_pointer(&j->release);
		return EXIT_OK;
	}
	if (!j->complete) {
		error_msg("an install of payload %s for %s was interrupted (%s/payload/journal.json): "
			  "'scsitune payload remove' undoes it first",
			  j->payload_version ? j->payload_version : "?", j->release, state_dir);
		return EXIT_ERROR;
	}
	char msha[STUNE_SHA256_HEX];
	stune_sha256_hex(b->m->json, b->m->json_len, msha);
	if (strcmp(j->release, b->m->release) || !j->manifest_sha256 || strcmp(j->manifest_sha256, msha)) {
		error_msg("payload %s is installed for %s: 'scsitune payload remove' first",
			  j->payload_version ? j->payload_version : "?", j->release);
		return EXIT_ERROR;
	}
	/* Already installed only while its files are what install wrote. */
	_cleanup_free_ char *path = NULL;
	bool missing;
	if ((r = stune_payload_installed_intact(ctx, j, &path, &missing)) < 0) {
		error_msg("payload %s for %s: checking its files: %s", j->payload_version ? j->payload_version : "?",
			  j->release, strerror(-r));
		return EXIT_ERROR;
	}
	if (r == 0) {
		error_msg("payload %s is journaled as installed for %s (%s/payload/journal.json), but /%s %s: "
			  "'scsitune payload remove%s', then install again",
			  j->payload_version ? j->payload_version : "?", j->release, state_dir, path,
			  missing ? "is gone" : "is not what install wrote", missing ? "" : " --force");
		return EXIT_ERROR;
	}
	gate->already = true;
	return EXIT_OK;
}

void payload_render_finished(struct out *o, const struct payload_gate *gate, const char *state_dir)
{
	if (!gate->finished_release) {
		out_str(o, "finished_remove", NULL, NULL);
		return;
	}
	out_obj_begin(o, "finished_remove");
	out_str(o, "payload_version", "A 'payload remove' that stopped half way (payload %s", gate->finished_version);
	out_str(o, "release", " for %s", gate->finished_release);
	out_text(o, ", %s/payload/journal.json) was finished first: the tree is as before that install.\n", state_dir);
	out_obj_end(o);
}

int payload_apply_install(struct global_opts *g, struct stune_ctx *ctx, const struct stune_loaded_bundle *b,
			  const char *state_dir, bool dry_run)
{
	_cleanup_(payload_gate_clear) struct payload_gate gate = {0};
	if (!dry_run) {
		if (payload_journal_gate(ctx, b, state_dir, false, &gate) != EXIT_OK)
			return EXIT_ERROR;
		if (gate.already) {
			if (g->format != OUT_JSON)
				printf("Payload %s already installed for %s (%s/payload/journal.json).\n",
				       b->m->payload_version, b->m->release, state_dir);
			return EXIT_OK;
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
		if (!(mem = open_memstream(&buf, &len))) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		f = mem;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, f);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PAYLOAD_SCHEMA_VERSION);
	out_str(o, "command", NULL, "install");
	out_bool(o, "dry_run", NULL, dry_run ? STUNE_YES : STUNE_NO);
	payload_render_bundle(o, b);
	payload_render_finished(o, &gate, state_dir);
	bool refused;
	int r = payload_install_locked(g, ctx, o, b, dry_run ? NULL : state_dir, 0, &refused);
	out_str(o, "journal", NULL, dry_run ? NULL : state_dir);
	out_obj_end(o);
	int w = out_finish(o);
	if (w < 0) {
		error_msg("writing output: %s", strerror(-w));
		return EXIT_ERROR;
	}
	if (mem) {
		fclose(mem);
		mem = NULL;
		if (r != EXIT_OK && fwrite(buf, 1, len, stdout) != len) {
			error_msg("writing output: %s", strerror(errno));
			return EXIT_ERROR;
		}
	} else
		fputc('\n', stdout);
	return r;
}

void payload_render_state(struct out *o, const struct stune_payload_status *s, int verbose)
{
	out_str(o, "release", "Kernel %s", s->release);
	out_str(o, "payload_version", s->payload_version ? ", payload %s" : NULL, s->payload_version);
	out_str(o, "source", NULL, s->source);
	out_str(o, "verdict", ": %s", stune_payload_verdict_name(s->verdict));
	if (s->verdict == STUNE_PAYLOAD_INSTALLED)
		out_text(o, " (no module of it is loaded: the next modprobe loads ours)");
	out_text(o, "\n");
	const struct stune_payload_link *prev = NULL;
	out_arr_begin(o, "links");
	for (size_t i = 0; i < s->n; i++) {
		const struct stune_payload_link *l = &s->links[i];
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
		_cleanup_free_ char *note = stune_ctrl_escape(l->note);
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
