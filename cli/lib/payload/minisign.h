/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * minisign signatures, verified in-process with libsodium (Ed25519; the
 * prehashed "ED" form signs BLAKE2b-512 of the file, the legacy "Ed" form
 * the file itself; the global signature covers the signature and the trusted
 * comment). Formats: https://jedisct1.github.io/minisign/ — a public key is
 * "untrusted comment: ..." then base64("Ed" | key id[8] | key[32]); a
 * signature is "untrusted comment: ...", base64(alg[2] | key id[8] |
 * sig[64]), "trusted comment: TEXT", base64(global sig[64]).
 *
 * Trusted keys: every etc/scsitune/trusted-keys/NAME.pub through the root
 * layer (the --sysroot tree's under --sysroot), plus any file the caller
 * adds. Each is trusted only under the rule of core/trust.h: the key file,
 * its directory and every directory above it up to the real / are root's (or
 * the invoking user's) and not writable by group or others (a sticky
 * directory of root's, /tmp, excepted): whoever can write or replace any of
 * them can make scsitune trust anything.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"
#include "core/macro.h"

#define STUNE_TRUSTED_KEYS_DIR "etc/scsitune/trusted-keys"

struct stune_minisign_key {
	uint8_t id[8];	/* as stored: little-endian; shown as %016llX of its value, like minisign */
	uint8_t pk[32]; /* Ed25519 public key */
	char *source;	/* the file it came from (host path, for messages) */
};

struct stune_keyring {
	struct stune_minisign_key *keys;
	size_t n;
};

void stune_keyring_free(struct stune_keyring *k);
DEFINE_CLEANUP_FUNC(struct stune_keyring, stune_keyring_free)

/* "0123456789ABCDEF": the key id as minisign prints it. buf: at least 17 bytes. */
const char *stune_minisign_keyid_str(const uint8_t id[8], char *buf);

/* Parse a public key file's text. -EBADMSG with *err set on a bad file. */
int stune_minisign_key_parse(const char *text, struct stune_minisign_key *out, char **err);

/*
 * The trusted keys: etc/scsitune/trusted-keys/ *.pub in ctx's root (a missing
 * directory is no key, not an error), then extra (a host path, NULL for none).
 * -EPERM with *err naming the file or directory at fault and the fix when a
 * key file, its directory or one above it is not trusted (core/trust.h),
 * -ELOOP for a key file in the directory that is a symbolic link, -EBADMSG
 * for a malformed key, -EEXIST for the same key id twice with different keys.
 */
int stune_keyring_load(struct stune_ctx *ctx, const char *extra, struct stune_keyring **out, char **err);

struct stune_minisign_result {
	uint8_t key_id[8];
	char *key_source;      /* the trusted key's file */
	char *trusted_comment; /* signed, shown to the user */
	int prehashed;	       /* 1: "ED" (BLAKE2b-512), 0: legacy "Ed" */
};
void stune_minisign_result_clear(struct stune_minisign_result *r);

/*
 * Verify data against the signature file's text sig with one of the keys.
 * 0 verified; -EBADMSG malformed signature file; -ENOKEY no trusted key has
 * this key id; -EKEYREJECTED the signature (or the trusted comment's) does
 * not verify. *err (allocated) says which, naming the key id.
 */
int stune_minisign_verify(const struct stune_keyring *keys, const void *data, size_t len, const char *sig,
			  struct stune_minisign_result *res, char **err);
