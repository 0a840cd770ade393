/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bundle file loaded: signature first, then the archive (load.c). */
#pragma once

#include <stddef.h>

#include "core/ctx.h"
#include "payload/bundle.h"
#include "payload/minisign.h"
#include "payload/util.h"

/* Where stune_bundle_load stopped: what the next step is depends on it. */
enum stune_bundle_fault {
	STUNE_BUNDLE_OK = 0,
	STUNE_BUNDLE_FILE,	/* the bundle file itself cannot be read */
	STUNE_BUNDLE_SIG,	/* its signature file: missing, unreadable or not minisign's format */
	STUNE_BUNDLE_KEYS,	/* the trusted keys */
	STUNE_BUNDLE_UNTRUSTED, /* signed by a key that is not trusted */
	STUNE_BUNDLE_MISMATCH,	/* the signature does not verify: file or signature changed since signing */
	STUNE_BUNDLE_ARCHIVE,	/* signed, but the archive or its manifest is refused */
};

struct stune_loaded_bundle {
	const char *file; /* as given (not copied) */
	enum stune_bundle_fault fault;
	char *sig_path; /* FILE.minisig, or the --signature given */
	char sha256[STUNE_SHA256_HEX];
	size_t size;
	struct stune_minisign_result sig;
	char key_id[17]; /* the signing key's id, 16 hex digits */
	struct stune_manifest *m;
};

void stune_loaded_bundle_clear(struct stune_loaded_bundle *b);
/*
 * file (a host path: the bundle is outside the --sysroot tree) read (at most
 * STUNE_BUNDLE_MAX), its signature (sig_opt, else FILE.minisig) verified
 * against the trusted keys (and trusted_key, when given), then the archive
 * read and checked. 0, or -errno with *err saying which file and why.
 */
int stune_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
		      struct stune_loaded_bundle *b, char **err);
