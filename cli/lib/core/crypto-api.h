/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcrypto (OpenSSL 3), loaded on first use (core/dlib.h says why): X.509
 * certificates and keys read by detect/modtrust.c and the payload, CMS module
 * signatures read by payload/modsig.c. Include this, not <openssl/...>, in
 * the files that call it; its load function before the first call.
 */
#pragma once

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/cms.h>
#include <openssl/conf.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define STUNE_CRYPTO_SYMS(X)             \
	X(ASN1_INTEGER_to_BN)            \
	X(ASN1_STRING_get0_data)         \
	X(ASN1_STRING_length)            \
	X(ASN1_STRING_to_UTF8)           \
	X(BN_bn2bin)                     \
	X(BN_free)                       \
	X(BN_num_bits)                   \
	X(CMS_ContentInfo_free)          \
	X(CMS_SignerInfo_get0_algs)      \
	X(CMS_SignerInfo_get0_signer_id) \
	X(CMS_get0_SignerInfos)          \
	X(CONF_modules_load_file)        \
	X(CRYPTO_free)                   \
	X(ERR_clear_error)               \
	X(OBJ_nid2sn)                    \
	X(OBJ_obj2nid)                   \
	X(OPENSSL_init_crypto)           \
	X(OPENSSL_load_builtin_modules)  \
	X(OPENSSL_sk_num)                \
	X(OPENSSL_sk_value)              \
	X(X509_ALGOR_get0)               \
	X(X509_NAME_ENTRY_get_data)      \
	X(X509_NAME_get_entry)           \
	X(X509_NAME_get_index_by_NID)    \
	X(X509_free)                     \
	X(X509_get0_serialNumber)        \
	X(X509_get0_subject_key_id)      \
	X(X509_get_issuer_name)          \
	X(X509_get_subject_name)         \
	X(d2i_CMS_ContentInfo)           \
	X(d2i_X509)

struct stune_crypto_api {
#define STUNE_DLIB_MEMBER(f) __typeof__(f) *f;
	STUNE_CRYPTO_SYMS(STUNE_DLIB_MEMBER)
#undef STUNE_DLIB_MEMBER
};
extern struct stune_crypto_api stune_crypto;

/* libcrypto.so.3 loaded (once; under a sysroot without the host's configuration: core/hostcrypto.h), or -ENOPKG */
int stune_crypto_load(char **err);

/* The names as the library's (not in the file that fills the struct). */
#ifndef STUNE_DLIB_LOADER
#define ASN1_INTEGER_to_BN	      (*stune_crypto.ASN1_INTEGER_to_BN)
#define ASN1_STRING_get0_data	      (*stune_crypto.ASN1_STRING_get0_data)
#define ASN1_STRING_length	      (*stune_crypto.ASN1_STRING_length)
#define ASN1_STRING_to_UTF8	      (*stune_crypto.ASN1_STRING_to_UTF8)
#define BN_bn2bin		      (*stune_crypto.BN_bn2bin)
#define BN_free			      (*stune_crypto.BN_free)
#define BN_num_bits		      (*stune_crypto.BN_num_bits)
#define CMS_ContentInfo_free	      (*stune_crypto.CMS_ContentInfo_free)
#define CMS_SignerInfo_get0_algs      (*stune_crypto.CMS_SignerInfo_get0_algs)
#define CMS_SignerInfo_get0_signer_id (*stune_crypto.CMS_SignerInfo_get0_signer_id)
#define CMS_get0_SignerInfos	      (*stune_crypto.CMS_get0_SignerInfos)
#define CONF_modules_load_file	      (*stune_crypto.CONF_modules_load_file)
#define CRYPTO_free		      (*stune_crypto.CRYPTO_free)
#define ERR_clear_error		      (*stune_crypto.ERR_clear_error)
#define OBJ_nid2sn		      (*stune_crypto.OBJ_nid2sn)
#define OBJ_obj2nid		      (*stune_crypto.OBJ_obj2nid)
#define OPENSSL_init_crypto	      (*stune_crypto.OPENSSL_init_crypto)
#define OPENSSL_load_builtin_modules  (*stune_crypto.OPENSSL_load_builtin_modules)
#define OPENSSL_sk_num		      (*stune_crypto.OPENSSL_sk_num)
#define OPENSSL_sk_value	      (*stune_crypto.OPENSSL_sk_value)
#define X509_ALGOR_get0		      (*stune_crypto.X509_ALGOR_get0)
#define X509_NAME_ENTRY_get_data      (*stune_crypto.X509_NAME_ENTRY_get_data)
#define X509_NAME_get_entry	      (*stune_crypto.X509_NAME_get_entry)
#define X509_NAME_get_index_by_NID    (*stune_crypto.X509_NAME_get_index_by_NID)
#define X509_free		      (*stune_crypto.X509_free)
#define X509_get0_serialNumber	      (*stune_crypto.X509_get0_serialNumber)
#define X509_get0_subject_key_id      (*stune_crypto.X509_get0_subject_key_id)
#define X509_get_issuer_name	      (*stune_crypto.X509_get_issuer_name)
#define X509_get_subject_name	      (*stune_crypto.X509_get_subject_name)
#define d2i_CMS_ContentInfo	      (*stune_crypto.d2i_CMS_ContentInfo)
#define d2i_X509		      (*stune_crypto.d2i_X509)
#endif
