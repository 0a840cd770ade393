/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A module's appended signature and whether the kernel trusts its signer (modsig.h). */
#include "payload/modsig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/crypto-api.h"

#include "core/strv.h"
#include "payload/ko.h"

/* include/linux/module_signature.h: the block before the marker. */
struct module_signature {
	uint8_t algo, hash, id_type, signer_len, key_id_len, pad[3];
	uint8_t sig_len[4]; /* big endian */
};
#define PKEY_ID_PKCS7 2

void stune_modsig_clear(struct stune_modsig *s)
{
	free(s->signer);
	free(s->serial);
	free(s->skid);
	free(s->hash);
	free(s->key_id);
	*s = (struct stune_modsig){0};
}

static char *hex(const unsigned char *b, size_t n, bool modinfo)
{
	char *s = malloc(3 * n + 1), *p = s;
	if (!s)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, modinfo ? "%s%02X" : "%s%02x", modinfo && i ? ":" : "", b[i]);
	return s;
}

/* The signer's identity out of one SignerInfo. */
static int signer_id(CMS_SignerInfo *si, struct stune_modsig *s)
{
	ASN1_OCTET_STRING *keyid = NULL;
	X509_NAME *issuer = NULL;
	ASN1_INTEGER *sno = NULL;
	if (CMS_SignerInfo_get0_signer_id(si, &keyid, &issuer, &sno) != 1)
		return -EBADMSG;
	if (keyid) {
		size_t n = (size_t)ASN1_STRING_length(keyid);
		if (!(s->skid = hex(ASN1_STRING_get0_data(keyid), n, false)) ||
		    !(s->key_id = hex(ASN1_STRING_get0_data(keyid), n, true)))
			return -ENOMEM;
		return 0;
	}
	BIGNUM *bn = sno ? ASN1_INTEGER_to_BN(sno, NULL) : NULL;
	unsigned char b[64];
	if (!bn || BN_num_bytes(bn) > (int)sizeof(b)) {
		BN_free(bn);
		return -EBADMSG;
	}
	size_t n = (size_t)BN_bn2bin(bn, b);
	BN_free(bn);
	s->signer = stune_x509_name_cn(issuer);
	if (!(s->serial = hex(b, n, false)) || !(s->key_id = hex(b, n, true)))
		return -ENOMEM;
	return 0;
}

int stune_modsig_read(const uint8_t *data, size_t len, struct stune_modsig *s, char **err)
{
	size_t ml = strlen(STUNE_KO_SIG_MARKER);
	struct module_signature ms;
	*s = (struct stune_modsig){0};
	if (len < ml || memcmp(data + len - ml, STUNE_KO_SIG_MARKER, ml))
		return 0;
	s->present = true;
	if (len < ml + sizeof(ms))
		return stune_errf(err, -EBADMSG, "the signature block is cut short");
	memcpy(&ms, data + len - ml - sizeof(ms), sizeof(ms));
	size_t sig_len =
	    (size_t)ms.sig_len[0] << 24 | (size_t)ms.sig_len[1] << 16 | (size_t)ms.sig_len[2] << 8 | ms.sig_len[3];
	if (ms.id_type != PKEY_ID_PKCS7)
		return stune_errf(err, -EBADMSG, "signature of id type %u: the kernel verifies PKCS#7 (2) only",
				  ms.id_type);
	if (!sig_len || sig_len > len - ml - sizeof(ms))
		return stune_errf(err, -EBADMSG, "signature length %zu does not fit the module", sig_len);
	int r = stune_crypto_load(err);
	if (r < 0)
		return r;
	const unsigned char *p = data + len - ml - sizeof(ms) - sig_len;
	CMS_ContentInfo *cms = d2i_CMS_ContentInfo(NULL, &p, (long)sig_len);
	STACK_OF(CMS_SignerInfo) *sis = cms ? CMS_get0_SignerInfos(cms) : NULL;
	CMS_SignerInfo *si = sis && sk_CMS_SignerInfo_num(sis) == 1 ? sk_CMS_SignerInfo_value(sis, 0) : NULL;
	r = si ? signer_id(si, s) : -EBADMSG;
	X509_ALGOR *dig = NULL;
	if (r == 0) {
		const ASN1_OBJECT *o = NULL;
		CMS_SignerInfo_get0_algs(si, NULL, NULL, &dig, NULL);
		X509_ALGOR_get0(&o, NULL, NULL, dig);
		const char *sn = o ? OBJ_nid2sn(OBJ_obj2nid(o)) : NULL;
		if (sn && !(s->hash = strdup(sn)))
			r = -ENOMEM;
		if (s->hash)
			for (char *c = s->hash; *c; c++)
				*c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
	}
	CMS_ContentInfo_free(cms);
	if (r == -EBADMSG)
		return stune_errf(err, r, "%s",
				  !cms ? "the signature is not a PKCS#7 message"
				       : "the PKCS#7 message has not exactly one signer with an issuer and serial or a "
					 "key identifier");
	return r;
}

const char *stune_sig_trust_name(enum stune_sig_trust t)
{
	switch (t) {
	case STUNE_SIG_TRUSTED:
		return "trusted";
	case STUNE_SIG_TRUSTED_BY_NAME:
		return "trusted-by-name";
	case STUNE_SIG_UNTRUSTED:
		return "untrusted";
	case STUNE_SIG_ABSENT:
		return "absent";
	case STUNE_SIG_UNKNOWN:
		return "unknown";
	}
	return "?";
}

/* Strip leading "00" pairs (the kernel keeps a DER sign byte in a serial it shows). */
static const char *hex_trim(const char *h)
{
	while (h[0] == '0' && h[1] == '0' && h[2])
		h += 2;
	return h;
}

enum match { M_NO = 0, M_OTHER_SERIAL, M_NAME, M_EXACT };

static enum match match_key(const struct stune_module_trust *t, const struct stune_kkey *k,
			    const struct stune_modsig *s, bool *by_cert)
{
	*by_cert = false;
	if (s->skid)
		return !k->id_is_serial && !strcmp(k->id, s->skid) ? M_EXACT : M_NO;
	if (k->id_is_serial) /* no SKID: the kernel shows the serial itself */
		return !strcmp(hex_trim(k->id), hex_trim(s->serial)) ? M_EXACT : M_NO;
	if (k->cert != SIZE_MAX) {
		const struct stune_cert *c = &t->certs[k->cert];
		bool same = !strcmp(hex_trim(c->serial), hex_trim(s->serial)) && c->issuer_cn && s->signer &&
			    !strcmp(c->issuer_cn, s->signer);
		*by_cert = same;
		return same ? M_EXACT : stune_kkey_named(k, s->signer) ? M_OTHER_SERIAL : M_NO;
	}
	return stune_kkey_named(k, s->signer) ? M_NAME : M_NO;
}

/* Rank of a match for the verdict: a sure match before a match by name, trusted before unknown before not. */
static int rank(enum match m, enum stune_tristate trusted)
{
	static const int r[4][3] = {
	    /* UNKNOWN NO YES */
	    [M_EXACT] = {4, 3, 6},
	    [M_NAME] = {2, 1, 5},
	};
	return m == M_EXACT || m == M_NAME ? r[m][trusted] : 0;
}

void stune_modsig_trust(const struct stune_module_trust *t, const struct stune_modsig *s, struct stune_sig_verdict *v)
{
	*v = (struct stune_sig_verdict){.trust = STUNE_SIG_UNKNOWN};
	if (!t || !t->keys_read || !t->verifier || !s->present || (!s->skid && !s->serial))
		return; /* no keys, or no keyring the verifier searches: nothing can be said */
	int best = 0;
	for (size_t i = 0; i < t->n_keys; i++) {
		const struct stune_kkey *k = &t->keys[i];
		bool by_cert = false;
		enum match m = match_key(t, k, s, &by_cert);
		if (m == M_OTHER_SERIAL && !v->other)
			v->other = k;
		int rk = rank(m, k->trusted);
		if (rk > best) {
			best = rk;
			v->key = k;
			v->by_cert = by_cert;
		}
	}
	static const enum stune_sig_trust verdicts[] = {
	    STUNE_SIG_ABSENT,  STUNE_SIG_UNTRUSTED,	  STUNE_SIG_UNKNOWN, STUNE_SIG_UNTRUSTED,
	    STUNE_SIG_UNKNOWN, STUNE_SIG_TRUSTED_BY_NAME, STUNE_SIG_TRUSTED,
	};
	v->trust = verdicts[best];
	v->keyring = v->key ? stune_kkey_keyring(t, v->key) : NULL;
}
