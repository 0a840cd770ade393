/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Preflight of payload install: every check made before anything on disk
 * changes, each a row (what, expected, actual, passed, why). A failed row
 * is a named refusal; install goes ahead only when every row passed.
 *   tree        (--sysroot) no symlink on the way to lib/modules/RELEASE, boot
 *               or etc leads out of the tree, and depmod's root can be made
 *               (payload/sandbox.h); refused, nothing else is checked
 *   release     lib/modules/RELEASE is there (the kernel is installed)
 *   debian      the installed linux-image-RELEASE package's version (dpkg's
 *               status file; the running kernel's from proc/version when
 *               dpkg says nothing) equals the bundle's
 *   vermagic    each module's vermagic equals the kernel package's copy's
 *   kabi        every symbol that a stock module depending on ours imports
 *               (its __versions) has the CRC our module exports
 *   signatures  module signature enforcement, lockdown and Secure Boot
 *               against whether our modules carry a signature
 *   trust       (each signed module) whether a key in a keyring the module
 *               verifier searches is its signer's (payload/modsig.h):
 *               refused under enforcement when none is (the key only in
 *               .platform, or in no keyring), a note otherwise
 *   target      updates/scsitune/ and etc/depmod.d/scsitune.conf are not
 *               there already (nothing scsitune did not record is touched)
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "payload/bundle.h"
#include "payload/host.h"

struct stune_payload_check {
	char *check;  /* tree, release, debian, vermagic, kabi, signatures, trust, target */
	char *module; /* NULL for the bundle as a whole */
	char *expected, *actual;
	bool passed;
	char *why;  /* the refusal, or a note */
	char *hint; /* a refusal's next step, when it is not in why; NULL otherwise */
};

struct stune_preflight {
	struct stune_payload_check *rows;
	size_t n;
	bool passed;
	size_t dependents; /* stock modules whose imports were checked */
	size_t imports;	   /* symbols checked across them */
};

void stune_preflight_free(struct stune_preflight *p);
DEFINE_CLEANUP_FUNC(struct stune_preflight, stune_preflight_free)

/* Only -errno for failures to run it (out of memory); refusals are rows. */
int stune_payload_preflight(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			    struct stune_preflight **out);
/*
 * boot: with the bundle's kernel package to be installed on a Secure Boot host, its image must be one shim boots:
 * signed (payload/sign) by a certificate in shim's MOK list (efivars MokListRT, or a key in .machine) or the
 * firmware's db (or .platform). Else a row that refuses: Debian's GRUB would put the new kernel first and the next
 * boot would stop at "bad shim signature". No row when Secure Boot is not on or m has no kernel. Only -ENOMEM.
 */
int stune_payload_preflight_boot(const struct stune_manifest *m, const struct stune_payload_host *h,
				 struct stune_preflight *p);
