/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What `payload` shares with `apply --payload`, `detect` and `report`. */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"
#include "out.h"
#include "payload/bundle.h"
#include "payload/minisign.h"
#include "payload/state.h"
#include "scsitune.h"

struct payload_bundle {
	const char *file;
	char *sig_path;
	char sha256[STUNE_SHA256_HEX];
	size_t size;
	struct stune_minisign_result sig;
	char key_id[17];
	struct stune_manifest *m;
};

void payload_bundle_clear(struct payload_bundle *b);
/* Signature (sig_opt, default FILE.minisig) checked, then the archive read in memory. Prints the error; -1. */
int payload_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
			struct payload_bundle *b);
/*
 * Preflight and install, the lock held (state_dir NULL: dry run, preflight
 * only). Renders into o (keys preflight, steps, modules, initrd, result);
 * prints errors; -1 on refusal (*refused) or failure.
 */
int payload_install_locked(struct global_opts *g, struct stune_ctx *ctx, struct out *o, const struct payload_bundle *b,
			   const char *state_dir, bool no_initramfs, bool reload, bool *refused);
/* remove, the lock held: renders into o; -1 after printing the error, -2 when nothing was rendered. */
int payload_remove_locked(struct stune_ctx *ctx, struct out *o, const char *state_dir, bool force, bool no_initramfs);
/* The chain of custody (keys release, payload_version, source, verdict, links). */
void payload_render_state(struct out *o, const struct stune_pstate *s, int verbose);
