/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kernel trusts for modules (detect/modtrust.c) and a module
 * signature's signer against it (payload/modsig.c), on trees made here: the
 * EFI variables under their real GUID, proc/keys as security/keys/proc.c
 * prints it, the keyring membership capture-host.sh records, EFI signature
 * lists with certificates, and module signatures made here with libcrypto's
 * CMS the way the kernel's sign-file makes them (issuer and serial, or
 * -k's key identifier; no certificate in the message).
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx.h"
#include "detect/modtrust.h"
#include "payload/modsig.h"
#include "tap.h"

#define GLOBAL	"8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define EFIVARS "sys/firmware/efi/efivars/"

static void path_in(char *p, size_t size, const char *rel)
{
	snprintf(p, size, "%s/%s", tap_tmpdir(), rel);
}

/* rel with len bytes of data, its directories made. */
static void put_bytes(const char *rel, const void *data, size_t len)
{
	char p[512];
	path_in(p, sizeof(p), rel);
	for (char *s = p + strlen(tap_tmpdir()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
}

static void put(const char *rel, const char *text)
{
	put_bytes(rel, text, strlen(text));
}

static void mk(const char *rel)
{
	char p[512];
	path_in(p, sizeof(p), rel);
	mkdir(p, 0755);
}

static int warnings;
static void logfn(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	(void)data, (void)level, (void)path, (void)msg;
	warnings++;
}

/* The tree's trust, read (NULL on failure: a check fails). */
static struct stune_module_trust *trust(void)
{
	struct stune_ctx *ctx = NULL;
	struct stune_module_trust *t = NULL;
	warnings = 0;
	if (stune_ctx_new(tap_tmpdir(), &ctx) < 0)
		return NULL;
	stune_ctx_set_log(ctx, logfn, NULL);
	int r = stune_module_trust_read(ctx, &t);
	stune_ctx_free(ctx);
	CHECK(r == 0);
	return t;
}

/* proc/keys as the kernel prints a keyring's and an X.509 key's line. */
static void keyring_line(FILE *f, const char *serial, const char *name)
{
	fprintf(f, "%s I------     1 perm 1f0b0000     0     0 keyring   %s: 1\n", serial, name);
}

static void key_line(FILE *f, const char *serial, const char *name, const char *skid)
{
	fprintf(f, "%s I------     1 perm 1f030000     0     0 asymmetri %s: %s: X509.rsa %s []\n", serial, name, skid,
		skid + strlen(skid) - 8);
}

#define BUILTIN	    "0b3e7a0d"
#define SECONDARY   "1c2d0e4f"
#define MACHINE	    "2f0a1b7c"
#define PLATFORM    "3a9d4e21"
#define DEBIAN_SKID "6ccece7e4c6c0d1f6149f3dd27dfcc5cbb419ea1"

/* A Debian 12 host: the four keyrings, the Debian CA built in; extra (may be NULL) more key lines. */
static void keys_tree(const char *extra, const char *capture)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	keyring_line(f, BUILTIN, ".builtin_trusted_keys");
	keyring_line(f, SECONDARY, ".secondary_trusted_keys");
	keyring_line(f, MACHINE, ".machine");
	keyring_line(f, PLATFORM, ".platform");
	key_line(f, "0f4b6c11", "Debian Secure Boot CA", DEBIAN_SKID);
	fputs(extra ? extra : "", f);
	fclose(f);
	put("proc/keys", text);
	free(text);
	char p[512];
	path_in(p, sizeof(p), STUNE_KEYRINGS_CAPTURE);
	unlink(p);
	if (capture)
		put(STUNE_KEYRINGS_CAPTURE, capture);
}

/* The membership capture-host.sh records: every system keyring, an empty one as "SERIAL:". */
#define LINKS(machine, platform)                                                                              \
	"# keyctl rlist\n" BUILTIN ": 0f4b6c11\n" SECONDARY ": " BUILTIN " " MACHINE "\n" MACHINE ":" machine \
	"\n" PLATFORM ":" platform "\n"
#define LINKED LINKS("", "")

CASE(secure_boot_guid,
     "SecureBoot is read under the EFI global variable's GUID (8be4df61-...-00e098032b8c): 4 bytes of "
     "attributes, then 1 is on; a variable under another GUID is not taken for it")
{
	static const uint8_t on[] = {6, 0, 0, 0, 1}, off[] = {6, 0, 0, 0, 0};
	put_bytes(EFIVARS "SecureBoot-8be4df61-93ca-11d2-aa0d-e98032b8c4b4", on, sizeof(on)); /* the old, wrong GUID */
	put_bytes(EFIVARS "SetupMode-" GLOBAL, off, sizeof(off));
	struct stune_module_trust *t = trust();
	CHECK(t && t->boot == STUNE_BOOT_UEFI && t->secure_boot == STUNE_NO); /* efivarfs mounted, no SecureBoot */
	CHECK(t && t->setup_mode == STUNE_NO);
	stune_module_trust_free(t);
	put_bytes(EFIVARS "SecureBoot-" GLOBAL, on, sizeof(on));
	t = trust();
	CHECK(t && t->secure_boot == STUNE_YES);
	CHECK_STR(t ? t->secure_boot_source : NULL, "the EFI variable SecureBoot");
	stune_module_trust_free(t);
	put_bytes(EFIVARS "SecureBoot-" GLOBAL, off, sizeof(off));
	t = trust();
	CHECK(t && t->secure_boot == STUNE_NO && warnings == 0);
	stune_module_trust_free(t);
}

CASE(boot_mode, "no sys/firmware/efi under a sys/firmware is a BIOS boot (off); no sys/firmware at all, or an empty "
		"efivars (efivarfs not mounted), is unknown, never off")
{
	struct stune_module_trust *t = trust();
	CHECK(t && t->boot == STUNE_BOOT_UNKNOWN && t->secure_boot == STUNE_UNKNOWN);
	stune_module_trust_free(t);
	mk("sys");
	mk("sys/firmware");
	t = trust();
	CHECK(t && t->boot == STUNE_BOOT_BIOS && t->secure_boot == STUNE_NO);
	stune_module_trust_free(t);
	mk("sys/firmware/efi");
	mk("sys/firmware/efi/efivars");
	t = trust();
	CHECK(t && t->boot == STUNE_BOOT_UEFI && t->secure_boot == STUNE_UNKNOWN);
	CHECK(t && strstr(t->secure_boot_source, "not mounted"));
	stune_module_trust_free(t);
}

CASE(secure_boot_garbage, "a SecureBoot variable of the wrong size, a value other than 0 or 1, or a FIFO is unknown "
			  "with a warning; the FIFO is not opened for a blocking read")
{
	static const uint8_t shortv[] = {6, 0, 1}, two[] = {6, 0, 0, 0, 2};
	put_bytes(EFIVARS "SecureBoot-" GLOBAL, shortv, sizeof(shortv));
	struct stune_module_trust *t = trust();
	CHECK(t && t->secure_boot == STUNE_UNKNOWN && warnings == 1);
	stune_module_trust_free(t);
	put_bytes(EFIVARS "SecureBoot-" GLOBAL, two, sizeof(two));
	t = trust();
	CHECK(t && t->secure_boot == STUNE_UNKNOWN && warnings == 1);
	stune_module_trust_free(t);
	char p[512];
	path_in(p, sizeof(p), EFIVARS "SecureBoot-" GLOBAL);
	unlink(p);
	CHECK(mkfifo(p, 0644) == 0);
	t = trust();
	CHECK(t && t->secure_boot == STUNE_UNKNOWN && warnings == 1);
	stune_module_trust_free(t);
}

CASE(keyrings, "the verifier's keyrings are what the membership links: .builtin and .machine through "
	       ".secondary_trusted_keys; .platform not; each key in its keyring with its SKID")
{
	char extra[512];
	snprintf(extra, sizeof(extra),
		 "25e1c3a8 I------     1 perm 1f030000     0     0 asymmetri stor-fleet: "
		 "4d1f0c2a9e7b3355d8a6c0f1e2b49a7c5d3e8f60: X509.rsa 5d3e8f60 []\n"
		 "31d7f90b I------     1 perm 1f030000     0     0 asymmetri Microsoft Corporation UEFI CA 2011: "
		 "13adbf4309bd82709c8cd54f316ed522988a1bd4: X509.rsa 988a1bd4 []\n"
		 "00000001 I--Q---   100 perm 3f010000     0     0 user      some user key: 4\n");
	keys_tree(extra, LINKS(" 25e1c3a8", " 31d7f90b"));
	struct stune_module_trust *t = trust();
	CHECK(t && t->keys_read && t->n_keys == 3 && t->bad_lines == 0);
	CHECK_STR(t ? t->members_source : NULL, "capture");
	CHECK_STR(t ? t->verifier : NULL, ".secondary_trusted_keys");
	CHECK(t && t->keyrings[STUNE_KEYRING_BUILTIN].trusted == STUNE_YES);
	CHECK(t && t->keyrings[STUNE_KEYRING_MACHINE].trusted == STUNE_YES);
	CHECK(t && t->keyrings[STUNE_KEYRING_PLATFORM].trusted == STUNE_NO);
	CHECK(t && t->keyrings[STUNE_KEYRING_MACHINE].n_keys == 1 && t->keyrings[STUNE_KEYRING_PLATFORM].n_keys == 1);
	for (size_t i = 0; t && i < t->n_keys; i++) {
		const struct stune_kkey *k = &t->keys[i];
		if (!strcmp(k->name, "stor-fleet"))
			CHECK(k->trusted == STUNE_YES && !k->id_is_serial &&
			      !strcmp(k->id, "4d1f0c2a9e7b3355d8a6c0f1e2b49a7c5d3e8f60"));
		else if (!strcmp(k->name, "Microsoft Corporation UEFI CA 2011"))
			CHECK(k->trusted == STUNE_NO && !strcmp(stune_kkey_keyring(t, k)->name, ".platform"));
		else
			CHECK_STR(k->id, DEBIAN_SKID);
	}
	stune_module_trust_free(t);
	/* .machine not linked into .secondary_trusted_keys (a kernel without INTEGRITY_MACHINE_KEYRING): not trusted */
	keys_tree(extra, "# keyctl rlist\n" BUILTIN ": 0f4b6c11\n" SECONDARY ": " BUILTIN "\n" MACHINE
			 ": 25e1c3a8\n" PLATFORM ":\n");
	t = trust();
	CHECK(t && t->keyrings[STUNE_KEYRING_MACHINE].trusted == STUNE_NO);
	stune_module_trust_free(t);
}

CASE(membership_unknown, "without the capture file, or with a malformed one, which keyring holds a key is unknown "
			 "(said why, the line named), never guessed from names")
{
	keys_tree(NULL, NULL);
	struct stune_module_trust *t = trust();
	CHECK(t && t->keys_read && !t->members_source && t->members_error);
	CHECK(t && t->n_keys == 1 && t->keys[0].trusted == STUNE_UNKNOWN);
	stune_module_trust_free(t);
	keys_tree(NULL,
		  "# keyctl rlist\n" BUILTIN ": 0f4b6c11\n" SECONDARY ": " BUILTIN "\n" MACHINE ": 25e1c3a8 zz\n");
	t = trust();
	CHECK(t && !t->members_source && t->members_error && strstr(t->members_error, "keyrings:4:"));
	CHECK(t && t->keyrings[STUNE_KEYRING_BUILTIN].members_known == false);
	stune_module_trust_free(t);
	keys_tree(NULL, LINKED BUILTIN ": 0f4b6c11\n"); /* a keyring given twice */
	t = trust();
	CHECK(t && !t->members_source);
	stune_module_trust_free(t);
}

CASE(proc_keys_hostile, "proc/keys: malformed lines are counted and skipped (a wrong SKID tail, no serial, a keyring "
			"named twice, a cut line), the good ones kept; larger than 4 MiB, a FIFO or a directory: one "
			"line naming /proc/keys, nothing read")
{
	char extra[1024];
	snprintf(extra, sizeof(extra),
		 "25e1c3a8 I------     1 perm 1f030000     0     0 asymmetri stor-fleet: "
		 "4d1f0c2a9e7b3355d8a6c0f1e2b49a7c5d3e8f60: X509.rsa deadbeef []\n" /* tail is not the SKID's */
		 "zzzz I------ 1 perm 1f030000 0 0 asymmetri x: 00: X509.rsa []\n"
		 "3a9d4e22 I------     1 perm 1f0b0000     0     0 keyring   .platform: 1\n" /* a second .platform */
		 "25e1c3a9 I------     1 perm\n"
		 "25e1c3aa I------     1 perm 1f030000     0     0 asymmetri O: CN: 0102: X509.rsa []\n"
		 "25e1c3ab I------     1 perm 1f030000     0     0 asymmetri no-skid-upper: ABCD: X509.rsa []\n");
	keys_tree(extra, LINKED);
	struct stune_module_trust *t = trust();
	CHECK(t && t->keys_read && t->bad_lines == 5 && warnings == 1);
	CHECK(t && t->n_keys == 2);
	CHECK(t && t->n_keys == 2 && !strcmp(t->keys[1].name, "O: CN") && t->keys[1].id_is_serial &&
	      !strcmp(t->keys[1].id, "0102"));
	CHECK(t && t->n_keys == 2 && stune_kkey_named(&t->keys[1], "CN") && !stune_kkey_named(&t->keys[1], "O"));
	stune_module_trust_free(t);

	char p[512];
	path_in(p, sizeof(p), "proc/keys");
	FILE *f = fopen(p, "w");
	for (size_t i = 0; f && i < (5u << 20) / 100; i++)
		key_line(f, "0f4b6c11", "Debian Secure Boot CA padding the file to more than four MiB ....",
			 DEBIAN_SKID);
	CHECK(f && fclose(f) == 0);
	t = trust();
	CHECK(t && !t->keys_read && t->keys_error && strstr(t->keys_error, "/proc/keys: ") &&
	      strstr(t->keys_error, "larger than"));
	stune_module_trust_free(t);
	unlink(p);
	CHECK(mkfifo(p, 0644) == 0);
	t = trust();
	CHECK(t && !t->keys_read && t->keys_error && strstr(t->keys_error, "not a regular file"));
	stune_module_trust_free(t);
	unlink(p);
	mkdir(p, 0755);
	t = trust();
	CHECK(t && !t->keys_read && t->keys_error && !strchr(t->keys_error, '\n'));
	stune_module_trust_free(t);
}

/* ---- signatures ---------------------------------------------------------------------------------------------- */

struct signer {
	EVP_PKEY *key;
	X509 *cert;
	unsigned char *der;
	int der_len;
	char serial[64], skid[64];
};

/* A throwaway self-signed certificate with a SKID, CN cn, serial serial (sign-file's MOK key, in short). */
static void signer_new(struct signer *s, const char *cn, long serial)
{
	memset(s, 0, sizeof(*s));
	s->key = EVP_RSA_gen(2048);
	s->cert = X509_new();
	X509_set_version(s->cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(s->cert), serial);
	X509_gmtime_adj(X509_getm_notBefore(s->cert), 0);
	X509_gmtime_adj(X509_getm_notAfter(s->cert), 86400);
	X509_NAME *n = X509_get_subject_name(s->cert);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(s->cert, n);
	X509_set_pubkey(s->cert, s->key);
	X509V3_CTX v3;
	X509V3_set_ctx(&v3, s->cert, s->cert, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_key_identifier, "hash");
	X509_add_ext(s->cert, e, -1);
	X509_EXTENSION_free(e);
	X509_sign(s->cert, s->key, EVP_sha256());
	s->der_len = i2d_X509(s->cert, &s->der);
	snprintf(s->serial, sizeof(s->serial), "%lx", serial);
	const ASN1_OCTET_STRING *id = X509_get0_subject_key_id(s->cert);
	for (int i = 0; id && i < ASN1_STRING_length(id) && i < 31; i++)
		snprintf(s->skid + 2 * i, 3, "%02x", ASN1_STRING_get0_data(id)[i]);
}

static void signer_free(struct signer *s)
{
	EVP_PKEY_free(s->key);
	X509_free(s->cert);
	OPENSSL_free(s->der);
}

/* A ".ko" of some bytes signed as sign-file signs (CMS, detached, no certificate; keyid: -k). Freed by the caller. */
static uint8_t *signed_module(const struct signer *s, bool keyid, size_t *len)
{
	static const char body[] = "\x7f"
				   "ELF not really a module, signed as one";
	BIO *in = BIO_new_mem_buf(body, sizeof(body));
	unsigned flags = CMS_NOCERTS | CMS_BINARY | CMS_DETACHED | CMS_NOSMIMECAP | CMS_NOATTR;
	CMS_ContentInfo *cms = CMS_sign(NULL, NULL, NULL, NULL, flags | CMS_PARTIAL | CMS_STREAM);
	CMS_add1_signer(cms, s->cert, s->key, EVP_sha256(), flags | (keyid ? CMS_USE_KEYID : 0));
	CMS_final(cms, in, NULL, flags);
	unsigned char *sig = NULL;
	int sl = i2d_CMS_ContentInfo(cms, &sig);
	CMS_ContentInfo_free(cms);
	BIO_free(in);
	static const char marker[] = "~Module signature appended~\n";
	*len = sizeof(body) + (size_t)sl + 12 + strlen(marker);
	uint8_t *m = malloc(*len), *p = m;
	memcpy(p, body, sizeof(body));
	p += sizeof(body);
	memcpy(p, sig, (size_t)sl);
	p += sl;
	uint8_t info[12] = {
	    0, 0, 2, 0, 0, 0, 0, 0, (uint8_t)(sl >> 24), (uint8_t)(sl >> 16), (uint8_t)(sl >> 8), (uint8_t)sl};
	memcpy(p, info, 12);
	memcpy(p + 12, marker, strlen(marker));
	OPENSSL_free(sig);
	return m;
}

/* An efivars file (4 bytes of attributes) holding one EFI_SIGNATURE_LIST of the certificates. */
static void put_siglist(const char *rel, const struct signer *const *s, size_t n)
{
	static const uint8_t x509[16] = {0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
					 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72};
	uint8_t buf[16384] = {7, 0, 0, 0}, *p = buf + 4;
	for (size_t i = 0; i < n; i++) {
		uint32_t size = 16 + (uint32_t)s[i]->der_len, list = 28 + size, hdr = 0;
		memcpy(p, x509, 16);
		memcpy(p + 16, &list, 4);
		memcpy(p + 20, &hdr, 4);
		memcpy(p + 24, &size, 4);
		memset(p + 28, 0x11, 16); /* the owner's GUID */
		memcpy(p + 44, s[i]->der, (size_t)s[i]->der_len);
		p += list;
	}
	put_bytes(rel, buf, (size_t)(p - buf));
}

/* A key line for signer s (its CN and SKID) at serial ser. */
static void signer_line(char *buf, size_t size, const char *ser, const struct signer *s, const char *cn)
{
	snprintf(buf, size, "%s I------     1 perm 1f030000     0     0 asymmetri %s: %s: X509.rsa %s []\n", ser, cn,
		 s->skid, s->skid + strlen(s->skid) - 8);
}

/* What a verdict names, kept past the trust it points into. */
struct named {
	char key[128], keyring[64], other[128];
	bool by_cert;
};

static enum stune_sig_trust verdict(const uint8_t *mod, size_t len, struct named *n)
{
	struct stune_sig_verdict vv, *v = &vv;
	struct stune_modsig s;
	char *err = NULL;
	CHECK(stune_modsig_read(mod, len, &s, &err) == 0 && s.present);
	struct stune_module_trust *t = trust();
	stune_modsig_trust(t, &s, v);
	enum stune_sig_trust r = v->trust;
	snprintf(n->key, sizeof(n->key), "%s", v->key ? v->key->name : "");
	snprintf(n->keyring, sizeof(n->keyring), "%s", v->keyring ? v->keyring->name : "");
	snprintf(n->other, sizeof(n->other), "%s", v->other ? v->other->name : "");
	n->by_cert = v->by_cert;
	stune_modsig_clear(&s);
	stune_module_trust_free(t);
	free(err);
	return r;
}

CASE(signature_read, "a sign-file signature gives modinfo's signer (the issuer's CN) and sig_key (the serial, "
		     "upper-case hex joined by ':'); -k's gives the SKID; a cut or garbage one is one line of error")
{
	struct signer a;
	signer_new(&a, "stor-fleet test", 0x1a2b3c4dL);
	size_t len;
	uint8_t *m = signed_module(&a, false, &len);
	struct stune_modsig s;
	char *err = NULL;
	CHECK(stune_modsig_read(m, len, &s, &err) == 0 && s.present);
	CHECK_STR(s.signer, "stor-fleet test");
	CHECK_STR(s.serial, "1a2b3c4d");
	CHECK_STR(s.key_id, "1A:2B:3C:4D");
	CHECK_STR(s.hash, "sha256");
	CHECK(!s.skid);
	stune_modsig_clear(&s);
	free(m);
	m = signed_module(&a, true, &len);
	CHECK(stune_modsig_read(m, len, &s, &err) == 0 && s.present && !s.serial);
	CHECK_STR(s.skid, a.skid);
	stune_modsig_clear(&s);
	uint8_t *info = m + len - 28 - 12;
	size_t sl = (size_t)info[10] << 8 | info[11];
	memset(info - sl, 0, sl); /* the PKCS#7 message zeroed */
	CHECK(stune_modsig_read(m, len, &s, &err) == -EBADMSG && err && strstr(err, "not a PKCS#7 message"));
	stune_modsig_clear(&s);
	info[8] = 0x7f; /* its length: more than the module */
	CHECK(stune_modsig_read(m, len, &s, &err) == -EBADMSG && err && strstr(err, "does not fit") &&
	      !strchr(err, '\n'));
	stune_modsig_clear(&s);
	info[2] = 1; /* a PGP-style id type */
	CHECK(stune_modsig_read(m, len, &s, &err) == -EBADMSG && err && strstr(err, "PKCS#7 (2) only"));
	stune_modsig_clear(&s);
	static const char plain[] = "\x7f"
				    "ELF unsigned";
	CHECK(stune_modsig_read((const uint8_t *)plain, sizeof(plain), &s, &err) == 0 && !s.present);
	free(err);
	free(m);
	signer_free(&a);
}

CASE(signer_trust, "the signer against the keyrings: in .machine with its certificate in MokListRT: trusted (by "
		   "issuer and serial); in .machine without one: trusted by name only; only in .platform (db): "
		   "untrusted; in no keyring: absent; a key of the same name with another serial: absent, named; "
		   "-k: by SKID")
{
	struct signer a, b;
	signer_new(&a, "stor-fleet test", 0x1a2b3c4dL);
	signer_new(&b, "stor-fleet test", 0x55667788L); /* the same name, another key */
	size_t len;
	uint8_t *m = signed_module(&a, false, &len), *mk_id = NULL;
	char line[512];
	struct named v;
	const struct signer *la[] = {&a}, *lb[] = {&b};
	static const uint8_t on[] = {6, 0, 0, 0, 1};
	put_bytes(EFIVARS "SecureBoot-" GLOBAL, on, sizeof(on));

	signer_line(line, sizeof(line), "25e1c3a8", &a, "stor-fleet test");
	keys_tree(line, LINKS(" 25e1c3a8", ""));
	put_siglist(EFIVARS "MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23", la, 1);
	CHECK(verdict(m, len, &v) == STUNE_SIG_TRUSTED && v.by_cert && !strcmp(v.keyring, ".machine"));

	char p[512];
	path_in(p, sizeof(p), EFIVARS "MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23");
	unlink(p);
	CHECK(verdict(m, len, &v) == STUNE_SIG_TRUSTED_BY_NAME && !v.by_cert);

	keys_tree(line, LINKS("", " 25e1c3a8"));
	put_siglist(EFIVARS "db-d719b2cb-3d3a-4596-a3bc-dad00e67656f", la, 1);
	CHECK(verdict(m, len, &v) == STUNE_SIG_UNTRUSTED && !strcmp(v.keyring, ".platform"));

	keys_tree(NULL, LINKED);
	CHECK(verdict(m, len, &v) == STUNE_SIG_ABSENT && !*v.key && !*v.other);

	signer_line(line, sizeof(line), "25e1c3a8", &b, "stor-fleet test");
	keys_tree(line, LINKS(" 25e1c3a8", ""));
	put_siglist(EFIVARS "MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23", lb, 1);
	CHECK(verdict(m, len, &v) == STUNE_SIG_ABSENT && !strcmp(v.other, "stor-fleet test"));

	keys_tree(line, NULL); /* membership unknown: the key of that name cannot be placed */
	unlink(p);
	CHECK(verdict(m, len, &v) == STUNE_SIG_UNKNOWN);

	signer_line(line, sizeof(line), "25e1c3a8", &a, "another name");
	keys_tree(line, LINKS(" 25e1c3a8", ""));
	mk_id = signed_module(&a, true, &len);
	CHECK(verdict(mk_id, len, &v) == STUNE_SIG_TRUSTED && !strcmp(v.key, "another name"));
	free(mk_id);
	free(m);
	signer_free(&a);
	signer_free(&b);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
