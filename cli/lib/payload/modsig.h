/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A module's appended signature ("~Module signature appended~", what the
 * kernel's sign-file writes) and whether the kernel would trust its signer.
 *
 * The signature is a PKCS#7/CMS SignedData (id type 2: the only kind the 6.1
 * kernel verifies), read with libcrypto's CMS parser (d2i_CMS_ContentInfo,
 * CMS_SignerInfo_get0_signer_id): its signer is named by the certificate's
 * issuer and serial number (sign-file's default: modinfo's "signer" is the
 * issuer's CN, "sig_key" the serial), or by its subject key identifier
 * (sign-file -k). libkmod's kmod_module_get_info() gives the same signer
 * and sig_key from the same libcrypto parse, but it needs a file on disk and
 * a kmod_ctx, which reads /proc/cmdline and modprobe.d of this machine even
 * under --sysroot, and it drops the key-identifier form.
 *
 * The kernel accepts a signature when a key in a keyring the verifier
 * searches is the signer's: by issuer and serial, or by SKID
 * (crypto/asymmetric_keys/pkcs7_trust.c; sign-file puts no certificate in the
 * message, so only the direct signer counts). proc/keys names keys by
 * subject and SKID, so a serial is matched through the firmware's copy of
 * the certificate (detect/modtrust.h) when there is one, and by name only
 * when there is none (said so).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "detect/modtrust.h"

struct stune_modsig {
	bool present; /* the marker is there */
	char *signer; /* the issuer's CN (modinfo's signer); NULL for a key-identifier signature */
	char *serial; /* lower-case hex, no leading zero bytes; NULL for a key-identifier signature */
	char *skid;   /* lower-case hex, sign-file -k; NULL otherwise */
	char *hash;   /* "sha256" */
	char *key_id; /* as modinfo shows sig_key: upper-case hex bytes joined by ':' */
};

void stune_modsig_clear(struct stune_modsig *s);

/* 0 (present or not: s->present); -EBADMSG with *err (one line) for a signature that cannot be read. */
int stune_modsig_read(const uint8_t *data, size_t len, struct stune_modsig *s, char **err);

enum stune_sig_trust {
	STUNE_SIG_TRUSTED,	   /* a key in a keyring the verifier searches is the signer's */
	STUNE_SIG_TRUSTED_BY_NAME, /* a key the verifier searches has the signer's name; its serial is shown nowhere */
	STUNE_SIG_UNTRUSTED,	   /* the signer's key is only in keyrings the verifier does not search (.platform) */
	STUNE_SIG_ABSENT,	   /* no key the kernel holds can be the signer's */
	STUNE_SIG_UNKNOWN,	   /* the keys or their keyrings could not be read */
};

struct stune_sig_verdict {
	enum stune_sig_trust trust;
	const struct stune_kkey *key;		 /* the key that matched; NULL for absent and unknown */
	const struct stune_sys_keyring *keyring; /* the key's keyring (NULL when not known) */
	const struct stune_kkey *other; /* absent: a key of the signer's name whose certificate has another serial */
	bool by_cert;			/* matched through the firmware's certificate (MokListRT, db) */
};

void stune_modsig_trust(const struct stune_module_trust *t, const struct stune_modsig *s, struct stune_sig_verdict *v);
const char *stune_sig_trust_name(enum stune_sig_trust t); /* trusted, trusted-by-name, untrusted, absent, unknown */
