/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the kernel trusts for module signatures: Secure Boot, keyrings, the firmware's certificates (modtrust.h). */
#include "detect/modtrust.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <keyutils.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/crypto-api.h"
#include "core/ctx.h"
#include "core/strv.h"
#include "core/userfile.h"

#define EFI_GLOBAL_GUID "8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define EFI_SHIM_GUID	"605dab50-e046-4300-abb6-3dd810dd8b23"
#define EFI_DB_GUID	"d719b2cb-3d3a-4596-a3bc-dad00e67656f"
#define EFIVARS		"sys/firmware/efi/efivars"
#define EFI_LIST_MAX	(1u << 20) /* a MOK list or db: a few certificates */
#define CERTS_MAX	256
#define MEMBERS_MAX	65536

static const char *const keyring_names[_STUNE_KEYRING_MAX] = {
    [STUNE_KEYRING_BUILTIN] = ".builtin_trusted_keys",
    [STUNE_KEYRING_SECONDARY] = ".secondary_trusted_keys",
    [STUNE_KEYRING_MACHINE] = ".machine",
    [STUNE_KEYRING_PLATFORM] = ".platform",
};

void stune_module_trust_free(struct stune_module_trust *t)
{
	if (!t)
		return;
	free(t->keys_error);
	free(t->members_error);
	free(t->certs_error);
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
		free(t->keyrings[i].members);
	for (size_t i = 0; i < t->n_keys; i++) {
		free(t->keys[i].name);
		free(t->keys[i].id);
	}
	free(t->keys);
	for (size_t i = 0; i < t->n_certs; i++)
		stune_cert_clear(&t->certs[i]);
	free(t->certs);
	for (size_t i = 0; i < t->n_pending; i++)
		stune_cert_clear(&t->pending[i]);
	free(t->pending);
	free(t->pending_error);
	free(t);
}

const char *stune_boot_name(enum stune_boot b)
{
	return b == STUNE_BOOT_UEFI ? "uefi" : b == STUNE_BOOT_BIOS ? "bios" : NULL;
}

/* A whole file of the root: a regular file only (no FIFO, device or directory), at most cap bytes. */
static int read_file(struct stune_ctx *ctx, const char *path, size_t cap, unsigned flags, char **out, size_t *len)
{
	_cleanup_close_ int fd = stune_root_open(ctx->root, path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -STUNE_ENOTREG;
	return stune_read_user_fd(fd, cap, flags, out, len);
}

/* ---- Secure Boot ------------------------------------------------------------------------------------------- */

/* An EFI boolean variable: 4 bytes of attributes, then 0 or 1. -ENOENT when absent, -EBADMSG for anything else. */
static int efi_bool(struct stune_ctx *ctx, const char *name, enum stune_tristate *out)
{
	_cleanup_free_ char *path = stune_strdupf(EFIVARS "/%s-" EFI_GLOBAL_GUID, name), *data = NULL;
	size_t len = 0;
	if (!path)
		return -ENOMEM;
	int r = read_file(ctx, path, 64, 0, &data, &len);
	if (r == -ENOMEM || r == -ENOENT)
		return r;
	if (r < 0) {
		stune_warn_path(ctx, path, "%s", stune_user_file_strerror(r, 64));
		return r;
	}
	if (len != 5 || (data[4] != 0 && data[4] != 1)) {
		stune_warn_path(ctx, path, "unexpected contents (%zu bytes): not an EFI boolean variable", len);
		return -EBADMSG;
	}
	*out = data[4] ? STUNE_YES : STUNE_NO;
	return 0;
}

/* Whether efivars holds any variable: an empty directory is efivarfs not mounted. */
static bool efivars_mounted(struct stune_ctx *ctx)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	if (stune_root_opendir(ctx->root, EFIVARS, &d) < 0)
		return false;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			return true;
	return false;
}

static int read_secure_boot(struct stune_ctx *ctx, struct stune_module_trust *t)
{
	if (!stune_root_exists(ctx->root, "sys/firmware")) {
		t->secure_boot_source = "no sys/firmware";
		return 0;
	}
	if (!stune_root_exists(ctx->root, "sys/firmware/efi")) {
		t->boot = STUNE_BOOT_BIOS;
		t->secure_boot = STUNE_NO;
		t->secure_boot_source = "no sys/firmware/efi: a legacy BIOS boot";
		return 0;
	}
	t->boot = STUNE_BOOT_UEFI;
	int r = efi_bool(ctx, "SecureBoot", &t->secure_boot);
	if (r == -ENOMEM)
		return r;
	if (r == 0)
		t->secure_boot_source = "the EFI variable SecureBoot";
	else if (r == -ENOENT && efivars_mounted(ctx)) {
		t->secure_boot = STUNE_NO; /* UEFI 2.3.1: the variable exists whenever Secure Boot is supported */
		t->secure_boot_source = "no SecureBoot variable: firmware without it";
	} else if (r == -ENOENT)
		t->secure_boot_source = "efivarfs not mounted";
	else
		t->secure_boot_source = "the SecureBoot variable unreadable";
	if ((r = efi_bool(ctx, "SetupMode", &t->setup_mode)) == -ENOMEM)
		return r;
	return 0;
}

/* ---- the firmware's certificates --------------------------------------------------------------------------- */

static char *hex_lower(const unsigned char *b, size_t n)
{
	char *s = malloc(2 * n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", b[i]);
	s[2 * n] = '\0';
	return s;
}

static char *name_entry(const X509_NAME *n, int nid);

char *stune_x509_name_cn(const X509_NAME *n)
{
	return name_entry(n, NID_commonName);
}

/* The first entry of a name's NID as UTF-8; NULL without one or out of memory. */
static char *name_entry(const X509_NAME *n, int nid)
{
	int i = n ? X509_NAME_get_index_by_NID(n, nid, -1) : -1;
	unsigned char *u = NULL;
	if (i < 0)
		return NULL;
	int len = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(n, i)));
	if (len < 0)
		return NULL;
	char *s = strndup((const char *)u, (size_t)len);
	OPENSSL_free(u);
	return s;
}

void stune_cert_clear(struct stune_cert *c)
{
	free(c->subject_cn);
	free(c->issuer_cn);
	free(c->kernel_name);
	free(c->serial);
	free(c->skid);
	*c = (struct stune_cert){.source = c->source};
}

int stune_cert_from_der(const unsigned char *der, size_t len, bool whole, struct stune_cert *c)
{
	int r = stune_crypto_load(NULL);
	if (r < 0)
		return r;
	const unsigned char *p = der;
	X509 *x = len <= 65536 ? d2i_X509(NULL, &p, (long)len) : NULL;
	if (!x || (whole && p != der + len)) {
		X509_free(x);
		return -EBADMSG; /* not one certificate */
	}
	r = -ENOMEM;
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	_cleanup_free_ char *o = name_entry(X509_get_subject_name(x), NID_organizationName);
	if (!bn)
		goto out;
	c->subject_cn = stune_x509_name_cn(X509_get_subject_name(x));
	c->issuer_cn = stune_x509_name_cn(X509_get_issuer_name(x));
	/* crypto/asymmetric_keys/x509_cert_parser.c, x509_fabricate_name: the CN alone when it begins with the O,
	 * or when both are 7 bytes or longer and their first 7 bytes agree ("a significant portion"). */
	if (c->subject_cn && o)
		c->kernel_name = !strncmp(c->subject_cn, o, strlen(o)) ||
					 (strlen(c->subject_cn) >= 7 && strlen(o) >= 7 && !strncmp(c->subject_cn, o, 7))
				     ? strdup(c->subject_cn)
				     : stune_strdupf("%s: %s", o, c->subject_cn);
	else if (c->subject_cn || o)
		c->kernel_name = strdup(c->subject_cn ? c->subject_cn : o);
	if ((c->subject_cn || o) && !c->kernel_name)
		goto out;
	unsigned char sb[64];
	int sl = BN_num_bytes(bn);
	if (sl > (int)sizeof(sb)) {
		r = -EBADMSG;
		goto out;
	}
	if (!(c->serial = hex_lower(sb, (size_t)BN_bn2bin(bn, sb))))
		goto out;
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);
	if (skid && !(c->skid = hex_lower(ASN1_STRING_get0_data(skid), (size_t)ASN1_STRING_length(skid))))
		goto out;
	r = 0;
out:
	if (r < 0)
		stune_cert_clear(c);
	BN_free(bn);
	X509_free(x);
	return r;
}

/* A list of certificates: the firmware's (certs) or shim's pending one (pending). */
struct cert_list {
	struct stune_cert **v;
	size_t *n;
};

static int add_cert(struct cert_list l, const unsigned char *der, size_t len, const char *source)
{
	if (*l.n >= CERTS_MAX)
		return -EBADMSG; /* more than a firmware list holds */
	struct stune_cert c = {.source = source};
	int r = stune_cert_from_der(der, len, false, &c);
	if (r < 0)
		return r;
	struct stune_cert *n = realloc(*l.v, (*l.n + 1) * sizeof(*n));
	if (!n) {
		stune_cert_clear(&c);
		return -ENOMEM;
	}
	*l.v = n;
	n[(*l.n)++] = c;
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* EFI_SIGNATURE_LISTs back to back (UEFI 2.10, 32.4.1): the X.509 ones' certificates added. -EBADMSG: malformed. */
static int parse_siglists(struct cert_list l, const unsigned char *p, size_t n, const char *source)
{
	/* EFI_CERT_X509_GUID a5c059a1-94e4-4aa7-87b5-ab155c2bf072, as it lies in memory */
	static const unsigned char x509_guid[16] = {0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
						    0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72};
	while (n > 0) {
		if (n < 28)
			return -EBADMSG;
		uint32_t list = le32(p + 16), hdr = le32(p + 20), size = le32(p + 24);
		if (list < 28 || list > n || hdr > list - 28 || size <= 16 || (list - 28 - hdr) % size)
			return -EBADMSG;
		if (!memcmp(p, x509_guid, 16))
			for (size_t off = 28 + hdr; off < list; off += size) {
				int r = add_cert(l, p + off + 16, size - 16, source);
				if (r < 0)
					return r;
			}
		p += list;
		n -= list;
	}
	return 0;
}

/* One firmware list into l: skip bytes of attributes first (efivars: 4). Absent: nothing. A malformed one: *error
 * (the first). */
static int read_list(struct stune_ctx *ctx, struct cert_list l, char **error, const char *path, size_t skip,
		     const char *source)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = read_file(ctx, path, EFI_LIST_MAX, 0, &data, &len);
	if (r == -ENOENT || r == -ENOMEM)
		return r;
	if (r == 0 && len < skip)
		r = -EBADMSG;
	if (r == 0)
		r = parse_siglists(l, (const unsigned char *)data + skip, len - skip, source);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && !*error)
		*error = stune_strdupf("/%s: %s", path,
				       r == -EBADMSG ? "not a list of EFI signature lists"
						     : stune_user_file_strerror(r, EFI_LIST_MAX));
	return 0;
}

static int read_certs(struct stune_ctx *ctx, struct stune_module_trust *t, const char *path, size_t skip,
		      const char *source)
{
	return read_list(ctx, (struct cert_list){&t->certs, &t->n_certs}, &t->certs_error, path, skip, source);
}

static int read_firmware_certs(struct stune_ctx *ctx, struct stune_module_trust *t)
{
	if (t->boot != STUNE_BOOT_UEFI)
		return 0;
	/* The MOK list: the kernel's mokvar table has it whole; efivars' MokListRT when it fits one variable. */
	int r = read_certs(ctx, t, "sys/firmware/efi/mok-variables/MokListRT", 0, "MokListRT");
	if (r == -ENOENT)
		r = read_certs(ctx, t, EFIVARS "/MokListRT-" EFI_SHIM_GUID, 4, "MokListRT");
	if (r == -ENOMEM)
		return r;
	r = read_certs(ctx, t, EFIVARS "/db-" EFI_DB_GUID, 4, "db");
	if (r == -ENOMEM)
		return r;
	/* What mokutil --import staged for shim's MokManager at the next boot: MokNew (with MokAuth, the password's
	 * hash). Only listed, never trusted. */
	r = read_list(ctx, (struct cert_list){&t->pending, &t->n_pending}, &t->pending_error,
		      EFIVARS "/MokNew-" EFI_SHIM_GUID, 4, "MokNew");
	return r == -ENOMEM ? r : 0;
}

/* ---- proc/keys --------------------------------------------------------------------------------------------- */

static bool is_hex(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static char *token(char **p)
{
	while (**p == ' ')
		(*p)++;
	if (!**p)
		return NULL;
	char *s = *p;
	while (**p && **p != ' ')
		(*p)++;
	if (**p)
		*(*p)++ = '\0';
	return s;
}

/*
 * An X.509 key's description (security/keys/proc.c, crypto/asymmetric_keys):
 * "SUBJECT: HEX: X509.ALGO TAIL []" where SUBJECT: HEX is the key's own
 * description (x509_public_key.c: HEX is the SKID, or the serial number
 * without one) and TAIL the last 4 bytes of the SKID, absent without one.
 * 1: not an X.509 key; -EBADMSG: malformed.
 */
static int parse_x509(struct stune_kkey *k, const char *desc)
{
	const char *sub = NULL;
	for (const char *s = strstr(desc, ": X509."); s; s = strstr(s + 1, ": X509."))
		sub = s;
	if (!sub)
		return 1;
	const char *colon = NULL;
	for (const char *s = desc; s < sub; s++)
		if (s[0] == ':' && s[1] == ' ')
			colon = s;
	if (!colon || colon == desc || !is_hex(colon + 2, (size_t)(sub - colon - 2)) || (sub - colon - 2) % 2)
		return -EBADMSG;
	size_t idlen = (size_t)(sub - colon - 2);
	/* After "X509.ALGO": " TAIL []" with the SKID, " []" without. */
	const char *rest = strchr(sub + 7, ' ');
	if (!rest)
		return -EBADMSG;
	if (rest[1] != '[') {
		if (strlen(rest) != 12 || !is_hex(rest + 1, 8) || strcmp(rest + 9, " []") || idlen < 8 ||
		    memcmp(rest + 1, sub - 8, 8))
			return -EBADMSG;
		k->id_is_serial = false;
	} else {
		if (strcmp(rest, " []"))
			return -EBADMSG;
		k->id_is_serial = true;
	}
	if (!(k->name = strndup(desc, (size_t)(colon - desc))) || !(k->id = strndup(colon + 2, idlen)))
		return -ENOMEM;
	return 0;
}

/* One line of proc/keys; 1 when it is no X.509 key and no system keyring; -EBADMSG malformed. */
static int parse_key_line(struct stune_module_trust *t, char *line)
{
	char *p = line, *f[8];
	for (size_t i = 0; i < ELEMENTSOF(f); i++)
		if (!(f[i] = token(&p)))
			return -EBADMSG;
	while (*p == ' ')
		p++;
	char *end = NULL;
	errno = 0;
	unsigned long serial = strtoul(f[0], &end, 16);
	if (errno || *end || strlen(f[0]) != 8 || !serial || strlen(f[1]) != 7 || !*p)
		return -EBADMSG;
	if (!strcmp(f[7], "keyring")) {
		for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
			size_t n = strlen(keyring_names[i]);
			if (strncmp(p, keyring_names[i], n) || (p[n] && p[n] != ':'))
				continue;
			if (t->keyrings[i].present)
				return -EBADMSG; /* one keyring of each name */
			t->keyrings[i].present = true;
			t->keyrings[i].serial = (uint32_t)serial;
			return 0;
		}
		return 1;
	}
	if (strcmp(f[7], "asymmetri") && strcmp(f[7], "asymmetric")) /* the type's name, cut at 9 characters */
		return 1;
	struct stune_kkey k = {.serial = (uint32_t)serial, .cert = SIZE_MAX};
	int r = parse_x509(&k, p);
	if (r != 0) {
		free(k.name);
		free(k.id);
		return r;
	}
	struct stune_kkey *n = realloc(t->keys, (t->n_keys + 1) * sizeof(*n));
	if (!n) {
		free(k.name);
		free(k.id);
		return -ENOMEM;
	}
	t->keys = n;
	n[t->n_keys++] = k;
	return 0;
}

static int read_proc_keys(struct stune_ctx *ctx, struct stune_module_trust *t)
{
	_cleanup_free_ char *text = NULL;
	int r = read_file(ctx, "proc/keys", STUNE_PROC_KEYS_MAX, STUNE_UF_TEXT, &text, NULL);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		t->keys_error = r == -ENOENT
				    ? stune_strdupf("/proc/keys: not there")
				    : stune_strdupf("/proc/keys: %s", stune_user_file_strerror(r, STUNE_PROC_KEYS_MAX));
		return t->keys_error ? 0 : -ENOMEM;
	}
	for (char *line = text, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = '\0';
		if (!*line)
			continue;
		r = parse_key_line(t, line);
		if (r == -ENOMEM)
			return r;
		if (r == -EBADMSG)
			t->bad_lines++;
	}
	if (t->bad_lines)
		stune_warn_path(ctx, "proc/keys", "%zu line%s not in the kernel's format, skipped", t->bad_lines,
				t->bad_lines == 1 ? "" : "s");
	t->keys_read = true;
	return 0;
}

/* ---- keyring membership ------------------------------------------------------------------------------------ */

static struct stune_sys_keyring *keyring_by_serial(struct stune_module_trust *t, uint32_t serial)
{
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
		if (t->keyrings[i].present && t->keyrings[i].serial == serial)
			return &t->keyrings[i];
	return NULL;
}

/*
 * The serial proc/keys gave a keyring names that keyring in this kernel: KEYCTL_DESCRIBE says
 * "keyring;UID;GID;PERM;NAME". A proc/keys that is not this kernel's (a test bed's, a tree
 * bind-mounted over /proc) names serials this kernel does not have, or has for other keys: its
 * membership is then unknown, never another kernel's keyrings read in its place. 1 when it does,
 * 0 when not (t->members_error says why), -ENOMEM.
 */
static int keyring_is_this_kernels(struct stune_module_trust *t, const struct stune_sys_keyring *kr)
{
	_cleanup_free_ char *desc = NULL;
	if (keyctl_describe_alloc((key_serial_t)kr->serial, &desc) < 0) {
		int e = errno;
		if (e == ENOMEM)
			return -ENOMEM;
		free(t->members_error);
		t->members_error = stune_strdupf("/proc/keys names %s %08x, which this kernel does not describe "
						 "(keyctl describe: %s): proc/keys is not this kernel's",
						 kr->name, kr->serial, strerror(e));
		return t->members_error ? 0 : -ENOMEM;
	}
	const char *name = strrchr(desc, ';');
	if (strncmp(desc, "keyring;", 8) || !name || strcmp(name + 1, kr->name)) {
		free(t->members_error);
		t->members_error = stune_strdupf("/proc/keys names %s %08x, which is \"%.80s\" in this kernel: "
						 "proc/keys is not this kernel's",
						 kr->name, kr->serial, desc);
		return t->members_error ? 0 : -ENOMEM;
	}
	return 1;
}

/* Live: KEYCTL_READ of each system keyring (libkeyutils), what `keyctl rlist` prints, once
 * KEYCTL_DESCRIBE has shown each serial to be that keyring in this kernel. */
static int read_members_live(struct stune_module_trust *t)
{
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
		if (!t->keyrings[i].present)
			continue;
		int r = keyring_is_this_kernels(t, &t->keyrings[i]);
		if (r <= 0)
			return r;
	}
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
		struct stune_sys_keyring *kr = &t->keyrings[i];
		void *buf = NULL;
		if (!kr->present)
			continue;
		long n = keyctl_read_alloc((key_serial_t)kr->serial, &buf);
		if (n < 0) {
			int e = errno;
			if (e == ENOMEM)
				return -ENOMEM;
			free(t->members_error);
			t->members_error =
			    stune_strdupf("keyctl read %s (%08x): %s", kr->name, kr->serial, strerror(e));
			return t->members_error ? 0 : -ENOMEM;
		}
		size_t m = (size_t)n / sizeof(key_serial_t);
		if (m > MEMBERS_MAX)
			m = MEMBERS_MAX;
		kr->members = calloc(m ? m : 1, sizeof(uint32_t));
		if (!kr->members) {
			free(buf);
			return -ENOMEM;
		}
		memcpy(kr->members, buf, m * sizeof(uint32_t));
		free(buf);
		kr->n_members = m;
		kr->members_known = true;
	}
	t->members_source = "keyctl";
	return 0;
}

/* "SERIAL: MEMBER MEMBER ..." of the capture file: -EBADMSG when malformed, a keyring given twice included. */
static int parse_capture_line(struct stune_module_trust *t, char *line)
{
	char *colon = strchr(line, ':'), *end = NULL;
	if (!colon || colon - line != 8 || !is_hex(line, 8))
		return -EBADMSG;
	*colon = '\0';
	struct stune_sys_keyring *kr = keyring_by_serial(t, (uint32_t)strtoul(line, &end, 16));
	if (!kr)
		return 0; /* a keyring the module verifier does not use */
	if (kr->members_known)
		return -EBADMSG;
	char *p = colon + 1, *tok;
	size_t cap = 0;
	while ((tok = token(&p))) {
		if (strlen(tok) != 8 || !is_hex(tok, 8) || kr->n_members >= MEMBERS_MAX)
			return -EBADMSG;
		if (kr->n_members == cap) {
			uint32_t *n = realloc(kr->members, (cap = cap ? 2 * cap : 16) * sizeof(*n));
			if (!n)
				return -ENOMEM;
			kr->members = n;
		}
		kr->members[kr->n_members++] = (uint32_t)strtoul(tok, &end, 16);
	}
	kr->members_known = true;
	return 0;
}

static int read_members_capture(struct stune_ctx *ctx, struct stune_module_trust *t)
{
	_cleanup_free_ char *text = NULL;
	int r = read_file(ctx, STUNE_KEYRINGS_CAPTURE, STUNE_PROC_KEYS_MAX, STUNE_UF_TEXT, &text, NULL);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		t->members_error = r == -ENOENT ? stune_strdupf("/%s: not in the tree", STUNE_KEYRINGS_CAPTURE)
						: stune_strdupf("/%s: %s", STUNE_KEYRINGS_CAPTURE,
								stune_user_file_strerror(r, STUNE_PROC_KEYS_MAX));
		return t->members_error ? 0 : -ENOMEM;
	}
	size_t lineno = 0;
	for (char *line = text, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = '\0';
		lineno++;
		if (!*line || *line == '#')
			continue;
		if ((r = parse_capture_line(t, line)) == -ENOMEM)
			return r;
		if (r < 0) {
			/* Half a graph says nothing sure: all of it unknown. */
			for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
				free(t->keyrings[i].members);
				t->keyrings[i].members = NULL;
				t->keyrings[i].n_members = 0;
				t->keyrings[i].members_known = false;
			}
			t->members_error = stune_strdupf("/%s:%zu: not \"KEYRING: KEY ...\" in proc/keys' hexadecimal "
							 "(or a keyring given twice)",
							 STUNE_KEYRINGS_CAPTURE, lineno);
			return t->members_error ? 0 : -ENOMEM;
		}
	}
	t->members_source = "capture";
	return 0;
}

/* ---- what the verifier trusts ------------------------------------------------------------------------------ */

/*
 * The keyrings the module verifier searches: its own (.secondary_trusted_keys,
 * or .builtin_trusted_keys on a kernel without it) and every keyring linked
 * into one it searches. Complete when the membership of each keyring reached
 * is known; a keyring not reached is then not searched.
 */
static void compute_trust(struct stune_module_trust *t)
{
	struct stune_sys_keyring *root =
	    t->keyrings[STUNE_KEYRING_SECONDARY].present ? &t->keyrings[STUNE_KEYRING_SECONDARY]
	    : t->keyrings[STUNE_KEYRING_BUILTIN].present ? &t->keyrings[STUNE_KEYRING_BUILTIN]
							 : NULL;
	bool reached[_STUNE_KEYRING_MAX] = {false}, complete = root != NULL;
	if (root) {
		t->verifier = root->name;
		reached[root - t->keyrings] = true;
	}
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
			if (!reached[i])
				continue;
			if (!t->keyrings[i].members_known) {
				complete = false;
				continue;
			}
			for (size_t m = 0; m < t->keyrings[i].n_members; m++) {
				struct stune_sys_keyring *kr = keyring_by_serial(t, t->keyrings[i].members[m]);
				if (kr && !reached[kr - t->keyrings])
					grew = reached[kr - t->keyrings] = true;
			}
		}
	}
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
		t->keyrings[i].trusted = reached[i] ? STUNE_YES : complete ? STUNE_NO : STUNE_UNKNOWN;
	for (size_t k = 0; k < t->n_keys; k++) {
		struct stune_kkey *key = &t->keys[k];
		key->trusted = complete ? STUNE_NO : STUNE_UNKNOWN;
		for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
			for (size_t m = 0; m < t->keyrings[i].n_members; m++)
				if (t->keyrings[i].members[m] == key->serial) {
					key->keyrings |= 1u << i;
					t->keyrings[i].n_keys++;
					if (t->keyrings[i].trusted == STUNE_YES)
						key->trusted = STUNE_YES;
				}
		for (size_t c = 0; !key->id_is_serial && c < t->n_certs; c++)
			if (t->certs[c].skid && !strcmp(t->certs[c].skid, key->id)) {
				key->cert = c;
				break;
			}
	}
}

int stune_module_trust_read(struct stune_ctx *ctx, struct stune_module_trust **out)
{
	_cleanup_(stune_module_trust_freep) struct stune_module_trust *t = calloc(1, sizeof(*t));
	int r;
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++)
		t->keyrings[i].name = keyring_names[i];
	if ((r = read_secure_boot(ctx, t)) < 0 || (r = read_firmware_certs(ctx, t)) < 0 ||
	    (r = read_proc_keys(ctx, t)) < 0)
		return r;
	if (t->keys_read) {
		r = stune_root_is_live(ctx->root) ? read_members_live(t) : read_members_capture(ctx, t);
		if (r < 0)
			return r;
	}
	compute_trust(t);
	*out = steal_pointer(&t);
	return 0;
}

const struct stune_sys_keyring *stune_kkey_keyring(const struct stune_module_trust *t, const struct stune_kkey *k)
{
	const struct stune_sys_keyring *first = NULL;
	for (size_t i = 0; i < _STUNE_KEYRING_MAX; i++) {
		if (!(k->keyrings & 1u << i))
			continue;
		if (t->keyrings[i].trusted == STUNE_YES)
			return &t->keyrings[i];
		if (!first)
			first = &t->keyrings[i];
	}
	return first;
}

bool stune_kkey_named(const struct stune_kkey *k, const char *cn)
{
	size_t n = strlen(k->name), c = cn ? strlen(cn) : 0;
	if (!c)
		return false;
	if (n == c)
		return !strcmp(k->name, cn);
	return n > c + 2 && !strcmp(k->name + n - c, cn) && !memcmp(k->name + n - c - 2, ": ", 2);
}
