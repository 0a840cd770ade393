/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kernel trusts for module signatures, as the target host shows it
 * (the live system, or a --sysroot tree), every file through the root layer:
 *
 *   - how it booted and whether UEFI Secure Boot is on: sys/firmware/efi and
 *     the EFI global variables SecureBoot and SetupMode in efivarfs
 *     (sys/firmware/efi/efivars/NAME-8be4df61-93ca-11d2-aa0d-00e098032b8c:
 *     4 bytes of attributes, then one byte, 0 or 1). No sys/firmware/efi
 *     under a sys/firmware: a BIOS boot. No SecureBoot variable in a
 *     mounted efivarfs: firmware without Secure Boot (UEFI 2.3.1 says the
 *     variable is there whenever the firmware supports it), so off. An empty
 *     efivars directory (efivarfs not mounted) or no sys/firmware at all (a
 *     tree that did not capture it): unknown, never "off".
 *
 *   - the system keyrings the module verifier uses and the X.509 keys the
 *     kernel holds. proc/keys lists every key root may view (serial, type,
 *     description: "SUBJECT: SKID" for an X.509 key, the certificate's serial
 *     instead of the SKID when it has none) but not which keyring holds it.
 *     Membership is what KEYCTL_READ on a keyring gives (libkeyutils'
 *     keyctl_read_alloc) on the live system (once KEYCTL_DESCRIBE shows each
 *     serial proc/keys gave to be that keyring in this kernel: else unknown),
 *     and under --sysroot what
 *     tests/fixtures/capture-host.sh recorded the same way, in the tree's
 *     STUNE_KEYRINGS_CAPTURE file (one line per keyring: "SERIAL: MEMBER ...",
 *     serials in proc/keys' hexadecimal). The verifier searches
 *     .secondary_trusted_keys (or .builtin_trusted_keys without it) and every
 *     keyring linked into it (.machine, on 6.1 with
 *     INTEGRITY_MACHINE_KEYRING=y): a key is trusted for modules when it sits
 *     in a keyring reachable from there, as the graph read says, not as a
 *     table of names says. .platform (UEFI db) is reachable only for kexec.
 *
 *   - the certificates staged for enrolment: efivars MokNew, the same
 *     EFI_SIGNATURE_LIST form, which mokutil --import writes and shim's
 *     MokManager consumes at the next boot (listed, never trusted).
 *
 *   - the certificates behind MOK and db keys: the firmware's lists
 *     (sys/firmware/efi/mok-variables/MokListRT, else efivars MokListRT, and
 *     efivars db), EFI_SIGNATURE_LISTs of X.509 certificates read with
 *     libcrypto. A module signature made by sign-file names its key by the
 *     certificate's issuer and serial number (what modinfo shows as signer
 *     and sig_key), proc/keys by subject and SKID: a certificate is what
 *     ties the two together, so a key whose certificate is in one of those
 *     lists can be matched to a signature exactly.
 *
 * Nothing read here is taken on trust: proc/keys at most 4 MiB and a regular
 * file, malformed lines counted and skipped, the capture file and the EFI
 * lists checked field by field.
 */
#pragma once

#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "core/num.h"

struct stune_ctx;

/* Under a --sysroot tree: the keyring membership capture-host.sh recorded. */
#define STUNE_KEYRINGS_CAPTURE "scsitune-capture/keyrings"
#define STUNE_PROC_KEYS_MAX    (4u << 20)

enum stune_boot { STUNE_BOOT_UNKNOWN = 0, STUNE_BOOT_UEFI, STUNE_BOOT_BIOS };

enum stune_keyring_kind {
	STUNE_KEYRING_BUILTIN = 0, /* .builtin_trusted_keys: compiled into the kernel */
	STUNE_KEYRING_SECONDARY,   /* .secondary_trusted_keys: what the module verifier searches */
	STUNE_KEYRING_MACHINE,	   /* .machine: shim's MOK list */
	STUNE_KEYRING_PLATFORM,	   /* .platform: UEFI db, for kexec only */
	_STUNE_KEYRING_MAX
};

struct stune_sys_keyring {
	const char *name; /* static: ".builtin_trusted_keys" */
	bool present;	  /* listed in proc/keys */
	uint32_t serial;
	bool members_known;
	uint32_t *members; /* the serials linked into it: keys and keyrings */
	size_t n_members;
	enum stune_tristate trusted; /* searched by the module verifier */
	size_t n_keys;		     /* X.509 keys directly in it (members_known) */
};

/* A certificate the firmware lists (MokListRT, db). */
struct stune_cert {
	char *subject_cn, *issuer_cn; /* NULL without a CN */
	char *kernel_name;	      /* the key's name in proc/keys: "O: CN" or the CN (x509_fabricate_name) */
	char *serial;		      /* lower-case hex, no leading zero bytes */
	char *skid;		      /* lower-case hex; NULL without the extension */
	const char *source;	      /* static: "MokListRT", "db" */
};

/* An X.509 key the kernel holds (proc/keys). */
struct stune_kkey {
	uint32_t serial;
	char *name;		     /* the subject as the kernel names it: CN, or "O: CN" */
	char *id;		     /* lower-case hex after the name: the SKID, or the serial (id_is_serial) */
	bool id_is_serial;	     /* the certificate has no SKID: the kernel names it by serial */
	unsigned keyrings;	     /* 1 << enum stune_keyring_kind of each keyring it is directly in */
	enum stune_tristate trusted; /* for modules */
	size_t cert;		     /* index into certs (the same SKID); SIZE_MAX when none */
};

struct stune_module_trust {
	enum stune_boot boot;
	enum stune_tristate secure_boot, setup_mode;
	const char *secure_boot_source; /* static: how it is known, or why not */
	bool keys_read;			/* proc/keys was read */
	char *keys_error;		/* why not: one line naming the file */
	const char *members_source;	/* "keyctl", "capture"; NULL when unknown */
	char *members_error;		/* why membership is unknown, one line */
	size_t bad_lines;		/* proc/keys lines that did not parse (skipped) */
	char *certs_error;		/* a firmware list that did not parse */
	const char *verifier; /* the keyring the module verifier searches (static name); NULL when none is listed */
	struct stune_sys_keyring keyrings[_STUNE_KEYRING_MAX];
	struct stune_kkey *keys;
	size_t n_keys;
	struct stune_cert *certs;
	size_t n_certs;
	/* Staged for enrolment (efivars MokNew, what mokutil --import writes): shim's MokManager asks at the next boot.
	 * Never trusted. pending_error: a MokNew that did not parse. */
	struct stune_cert *pending;
	size_t n_pending;
	char *pending_error;
};

void stune_module_trust_free(struct stune_module_trust *t);
DEFINE_CLEANUP_FUNC(struct stune_module_trust, stune_module_trust_free)

/* All of the above; only -ENOMEM is an error (what cannot be read stays unknown, with why). */
int stune_module_trust_read(struct stune_ctx *ctx, struct stune_module_trust **out);

/* The keyring (of t->keyrings) a key is in: the first trusted one, else the first. NULL when none is known. */
const struct stune_sys_keyring *stune_kkey_keyring(const struct stune_module_trust *t, const struct stune_kkey *k);
/* CN is the key's name (a self-signed certificate: its issuer), or the name's "O: CN" form ends with it. */
bool stune_kkey_named(const struct stune_kkey *k, const char *cn);
const char *stune_boot_name(enum stune_boot b); /* "uefi", "bios"; NULL when unknown */
/* The first CN of an X.509 name as UTF-8 (a certificate's subject; for a module's signer, what modinfo's "signer"
 * shows of the issuer); NULL without one or out of memory. */
char *stune_x509_name_cn(const X509_NAME *n);
/* One DER X.509 certificate into *c (source kept); whole: nothing may follow it. -EBADMSG when it is not one,
 * -ENOMEM. */
int stune_cert_from_der(const unsigned char *der, size_t len, bool whole, struct stune_cert *c);
void stune_cert_clear(struct stune_cert *c); /* frees its strings, keeps source */
