/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What `payload install` and `apply --payload` share (payload-install.c). */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "payload/bundle.h"
#include "payload/load.h"
#include "payload/minisign.h"
#include "payload/state.h"
#include "cli.h"
#include "out.h"

/* The payload's JSON documents (scsitune-payload(8), schema/payload.schema.json). */
#define STUNE_PAYLOAD_SCHEMA_VERSION 1

/* Signature (sig_opt, default FILE.minisig) checked, then the archive read in memory. Prints the error; -1. */
/* stune_bundle_load, its error printed: 0 or -1. */
int payload_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
			struct stune_loaded_bundle *b);
/*
 * Preflight and install, the lock held (state_dir NULL: dry run, preflight
 * only). Renders into o (keys preflight, steps, modules, initrd, result);
 * EXIT_OK, or EXIT_ERROR after printing why (*refused: the preflight refused).
 */
enum {
	PAYLOAD_NO_INITRAMFS = 1 << 0, /* --no-initramfs */
	PAYLOAD_RELOAD = 1 << 1,       /* --reload */
	PAYLOAD_NO_KERNEL = 1 << 2,    /* --no-kernel */
	PAYLOAD_SET_DEFAULT = 1 << 3,  /* --set-default */
};
int payload_install_locked(struct global_opts *g, struct stune_ctx *ctx, struct out *o,
			   const struct stune_loaded_bundle *b, const char *state_dir, unsigned flags, bool *refused);
struct stune_payload_journal;

/*
 * STATE/payload/journal.json read and checked (stune_payload_journal_check:
 * only what install could have journaled): EXIT_OK with *j (NULL when there
 * is none), or EXIT_ERROR after one line naming the journal and why.
 */
int payload_journal_read(const char *state_dir, struct stune_payload_journal **j);
/*
 * What the payload journal in state_dir says before an install of b (the lock
 * held). A remove that was interrupted (killed, power lost) is finished first,
 * as 'payload remove' would (finished_*: the payload it removed; the journal
 * is gone then); already: b is installed and its files are what install wrote.
 * EXIT_OK (install goes on unless already), or EXIT_ERROR after one line: an
 * unreadable journal, an interrupted install, another payload, an installed
 * payload's file gone or changed, a remove that cannot be finished (what is
 * half-done and the command that finishes it).
 */
struct payload_gate {
	bool already;
	char *finished_version, *finished_release;
};
void payload_gate_clear(struct payload_gate *gate);
int payload_journal_gate(struct stune_ctx *ctx, const struct stune_loaded_bundle *b, const char *state_dir,
			 bool no_initramfs, struct payload_gate *gate);
/* The install document's finished_remove: null, or the payload whose interrupted remove
 * was finished first (text: one line). */
void payload_render_finished(struct out *o, const struct payload_gate *gate, const char *state_dir);
/*
 * apply --payload: preflight and install b with the lock held (dry_run: the
 * preflight only). Text goes to stdout ahead of apply's; in JSON the install
 * document is printed only when the install did not go through (then it is
 * the only document). EXIT_OK installed (or already), EXIT_ERROR refused or
 * failed, its reason printed.
 */
int payload_apply_install(struct global_opts *g, struct stune_ctx *ctx, const struct stune_loaded_bundle *b,
			  const char *state_dir, bool dry_run);
/* The bundle: file, SHA-256, signature, manifest (text and JSON "bundle"). */
void payload_render_bundle(struct out *o, const struct stune_loaded_bundle *b);
/* The chain of custody (keys release, payload_version, source, verdict, links). */
void payload_render_state(struct out *o, const struct stune_payload_status *s, int verbose);
