/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bundle file as install, verify and apply --payload take it: read from the
 * host (capped), its minisign signature checked against the trusted keys
 * before a byte of the archive is parsed, then the archive read in memory.
 */
#include "payload/load.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "payload/util.h"

#define SIG_MAX 4096

void stune_loaded_bundle_clear(struct stune_loaded_bundle *b)
{
	stune_manifest_free(b->m);
	stune_minisign_result_clear(&b->sig);
	free(b->sig_path);
	memset(b, 0, sizeof(*b));
}

int stune_bundle_load(struct stune_ctx *ctx, const char *file, const char *sig_opt, const char *trusted_key,
		      struct stune_loaded_bundle *b, char **errp)
{
	_cleanup_free_ uint8_t *data = NULL, *sig = NULL;
	size_t len = 0, sl = 0;
	_cleanup_free_ char *err = NULL, *sig_text = NULL, *shown = stune_ctrl_escape(file);
	int r;
	memset(b, 0, sizeof(*b));
	b->file = file;
	if ((r = stune_read_host_file(file, STUNE_BUNDLE_MAX, &data, &len)) < 0) {
		b->fault = STUNE_BUNDLE_FILE;
		return stune_errf(errp, r, "%s: %s", shown,
				  r == -EFBIG	 ? "larger than a payload bundle can be (256 MiB)"
				  : r == -EINVAL ? "not a regular file"
						 : strerror(-r));
	}
	stune_sha256_hex(data, len, b->sha256);
	b->size = len;
	if (!(b->sig_path = sig_opt ? strdup(sig_opt) : stune_strdupf("%s.minisig", file)))
		return -ENOMEM;
	_cleanup_free_ char *sig_shown = stune_ctrl_escape(b->sig_path);
	if ((r = stune_read_host_file(b->sig_path, SIG_MAX, &sig, &sl)) < 0) {
		b->fault = STUNE_BUNDLE_SIG;
		if (r == -ENOENT)
			return stune_errf(errp, r,
					  "%s: no signature (%s): an unsigned bundle is refused; sign it with minisign "
					  "-S -s KEY -m %s",
					  shown, sig_shown, shown);
		return stune_errf(errp, r, "%s: %s", sig_shown,
				  r == -EFBIG ? "too large for a minisign signature" : strerror(-r));
	}
	if (memchr(sig, '\0', sl) || !(sig_text = strndup((const char *)sig, sl)))
		return b->fault = STUNE_BUNDLE_SIG,
		       stune_errf(errp, -EBADMSG, "%s: not a minisign signature (binary data)", sig_shown);
	_cleanup_(stune_keyring_freep) struct stune_keyring *keys = NULL;
	if ((r = stune_keyring_load(ctx, trusted_key, &keys, &err)) < 0)
		return b->fault = STUNE_BUNDLE_KEYS, stune_errf(errp, r, "%s", err ? err : strerror(-r));
	/* The signature before a byte of the archive is parsed. */
	if ((r = stune_minisign_verify(keys, data, len, sig_text, &b->sig, &err)) < 0) {
		b->fault = r == -EBADMSG  ? STUNE_BUNDLE_SIG
			   : r == -ENOKEY ? STUNE_BUNDLE_UNTRUSTED
					  : STUNE_BUNDLE_MISMATCH;
		return stune_errf(errp, r, "%s: %s: refused", sig_shown, err ? err : strerror(-r));
	}
	stune_minisign_keyid_str(b->sig.key_id, b->key_id);
	free(err);
	err = NULL;
	if ((r = stune_bundle_read(data, len, &b->m, &err)) < 0)
		return b->fault = STUNE_BUNDLE_ARCHIVE, stune_errf(errp, r, "%s: %s", shown, err ? err : strerror(-r));
	return 0;
}
