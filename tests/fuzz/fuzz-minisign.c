/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * minisign (payload install/check --signature, etc/scsitune/trusted-keys/):
 * the public key parser and the signature parser and verifier. The input is
 * a public key file, a signature file and the signed data, separated by lines
 * "%%". The key that parses is the one trusted key; the seed is a real
 * minisign key and signature (so the fuzzer starts on the verifying path).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "payload/minisign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *parts[3];
	size_t lens[3];
	size_t n = fuzz_split(data, size, "\n%%\n", parts, lens, 3);
	char *keytext = fuzz_str(parts[0], lens[0]);
	char *sig = fuzz_str(n > 1 ? parts[1] : (const uint8_t *)"", n > 1 ? lens[1] : 0);
	struct stune_minisign_key key = {0};
	char *err = NULL;
	int r = stune_minisign_key_parse(keytext, &key, &err);
	fuzz_check(r == 0 || r == -ENOMEM || (r == -EBADMSG && err && *err), "key refused (%d) without saying why", r);
	free(err);
	err = NULL;
	if (r == 0 && !(key.source = strdup("fuzz.pub"))) /* what stune_keyring_load() sets */
		abort();
	struct stune_keyring ring = {.keys = r == 0 ? &key : NULL, .n = r == 0 ? 1 : 0};
	struct stune_minisign_result res = {0};
	r = stune_minisign_verify(&ring, n > 2 ? parts[2] : NULL, n > 2 ? lens[2] : 0, sig, &res, &err);
	fuzz_check(r == 0 || r == -ENOMEM || ((r == -EBADMSG || r == -ENOKEY || r == -EKEYREJECTED) && err && *err),
		   "signature refused (%d) without saying why", r);
	/* Verified: it was this key's, and its trusted comment is one line of text. */
	if (r == 0) {
		fuzz_check(res.key_source && ring.n == 1 && !memcmp(res.key_id, key.id, 8),
			   "verified with no key or another key");
		fuzz_check(res.trusted_comment && !strchr(res.trusted_comment, '\n'), "trusted comment");
	}
	stune_minisign_result_clear(&res);
	free(err);
	free(key.source);
	free(sig);
	free(keytext);
	return 0;
}
