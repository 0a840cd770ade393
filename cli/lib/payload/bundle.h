/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload bundle: one tar archive, zstd-compressed, written and read
 * with libarchive. Its first entry is manifest.json; then the files the
 * manifest names (modules/M.ko, patches/...). The bundle is signed as a
 * whole (minisign, payload/minisign.h) and the signature is checked before
 * a byte of it is parsed.
 *
 * Reading happens in memory only (never archive_write_disk): every entry
 * must be a regular file named in the manifest, once, within the size caps;
 * links, devices, directories, absolute names and ".." are refused; every
 * file's size and SHA-256 must equal the manifest's, and each module's
 * own facts (read with libelf: payload/ko.h) the manifest's claims.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"
#include "payload/ko.h"
#include "payload/util.h"

#define STUNE_BUNDLE_FORMAT	    "scsitune-payload"
#define STUNE_BUNDLE_FORMAT_VERSION 1
#define STUNE_BUNDLE_MAX	    (256u << 20) /* the bundle file */
#define STUNE_BUNDLE_ENTRY_MAX	    (64u << 20)	 /* one file, uncompressed */
#define STUNE_BUNDLE_TOTAL_MAX	    (256u << 20) /* all files, uncompressed */
#define STUNE_BUNDLE_ENTRIES_MAX    64
#define STUNE_MANIFEST_MAX	    (1u << 20)

struct stune_payload_file {
	char *name; /* relative: modules/scsi_mod.ko */
	uint64_t size;
	char sha256[STUNE_SHA256_HEX];
	uint8_t *data; /* a read bundle: the contents; NULL in a bare manifest */
};

struct stune_payload_module {
	char *name; /* scsi_mod */
	char *file; /* modules/scsi_mod.ko (one of files) */
	char *build_id, *srcversion, *version, *vermagic;
	char **patches; /* ids, NULL-terminated */
	bool is_signed; /* a kernel module signature is appended */
	struct stune_symcrc *exports;
	size_t n_exports;
};

struct stune_payload_patch {
	char *id, *file, *lands_in;
};

/* A kernel image package the bundle may carry (payload/build --kernel: make bindeb-pkg). */
struct stune_payload_kernel {
	char *release;	/* its uname -r: 6.1.192-scsitune */
	char *package;	/* linux-image-RELEASE */
	char *version;	/* its Debian version */
	char *file;	/* kernel/PACKAGE_VERSION_amd64.deb (one of files) */
	char *build_id; /* vmlinux's GNU build-id (what /sys/kernel/notes shows) */
	char **patches; /* ids, NULL-terminated */
	/* payload/sign of a --kernel build ("signed"): its vmlinuz signed for shim (sbsign) with the bundle's
	 * signer, and how many of its modules; false and 0 when the package is unsigned. */
	bool image_signed;
	int signed_modules;
	/* payload/build --sign-cert ("trusts"): the certificate built into its .builtin_trusted_keys, by SHA-256 of
	 * its DER and SKID; NULL when none was recorded. */
	char *trusts_sha256;
	char *trusts_skid;
};

/*
 * Who signed the modules, as payload/sign recorded it (payload/build --sign-key): the certificate
 * travels in the bundle (one of files: what `payload enroll` stages with mokutil). Reading a bundle
 * checks that the certificate says what this says and that every module's signature names it.
 */
struct stune_payload_signer {
	char *certificate; /* signer.der */
	char *kernel_name; /* the key's name in /proc/keys ("O: CN" or the CN, as the kernel makes it) */
	char *issuer_cn;   /* what modinfo shows as signer; NULL without a CN */
	char *serial;	   /* lower-case hex, no leading zero bytes: modinfo's sig_key */
	char *skid;	   /* lower-case hex: what /proc/keys shows after the name; NULL without one */
};

struct stune_manifest {
	int format_version;
	char *payload_version;
	char *release;	      /* uname -r the modules are for */
	char *debian_package; /* linux-image-RELEASE */
	char *debian_version; /* its exact Debian version, e.g. 6.1.192-3 */
	char *vermagic;
	char *created;
	struct stune_payload_module *modules;
	size_t n_modules;
	struct stune_payload_patch *patches;
	size_t n_patches;
	struct stune_payload_file *files;
	size_t n_files;
	struct stune_payload_kernel *kernel; /* NULL: modules only */
	struct stune_payload_signer *signer; /* NULL: no signer recorded (unsigned, or signed by other means) */
	char *json;			     /* the manifest's own bytes, as signed */
	size_t json_len;
};

void stune_manifest_free(struct stune_manifest *m);
DEFINE_CLEANUP_FUNC(struct stune_manifest, stune_manifest_free)

/* Parse and validate a manifest (names, digests, the release as a path component). -EBADMSG + *err. */
int stune_manifest_parse(const char *json, size_t len, struct stune_manifest **out, char **err);
const struct stune_payload_file *stune_manifest_file(const struct stune_manifest *m, const char *name);
const struct stune_payload_module *stune_manifest_module(const struct stune_manifest *m, const char *name);

/*
 * Read a bundle (already signature-checked) from memory. On success every
 * file of *out has its data, checked. -EBADMSG with *err (one line naming
 * the entry) for anything refused; -EFBIG for a size cap.
 */
int stune_bundle_read(const void *data, size_t len, struct stune_manifest **out, char **err);

/*
 * pack: a payload/build output directory (host path: DIR/manifest.json,
 * DIR/modules/ *.ko, DIR/patches/) -> the bundle in memory. The build
 * manifest's SHA-256s must match the files; the modules are read with
 * libelf and their facts go into the bundle's manifest. created: the
 * manifest's timestamp (unix seconds; SOURCE_DATE_EPOCH-style).
 */
int stune_bundle_pack(const char *dir, long long created, uint8_t **data, size_t *len, struct stune_manifest **manifest,
		      char **err);
