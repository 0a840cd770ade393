/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload's chain of custody for one kernel release, each link a row
 * (expected / actual / state), from the bundle to what the kernel runs:
 *   bundle     the bundle given (signature and contents checked), or the
 *              manifest install left in lib/modules/R/updates/scsitune/
 *   debian     the kernel package the bundle was built against vs the
 *              installed and the running one (a Debian point release that
 *              keeps uname -r is drift)
 *   file       lib/modules/R/updates/scsitune/M.ko by SHA-256
 *   depmod.d   the override line in etc/depmod.d/scsitune.conf
 *   modprobe   what `modprobe M` resolves to (libkmod)
 *   initrd     the copy of M in boot/initrd.img-R (by the initrd's own
 *              modules.dep, then SHA-256)
 *   loaded     /sys/module/M: version marker, srcversion, build-id (notes),
 *              taint letters
 *   iocounterbits  the patched scsi_mod says 64 for every SCSI device
 * The same code serves `payload verify`, `detect` and `report`'s provenance
 * (with fewer links: flags).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "payload/bundle.h"

enum stune_link_state {
	STUNE_LINK_OK = 0,
	STUNE_LINK_PENDING, /* installed, not in effect until a reboot (or reload) */
	STUNE_LINK_DRIFT,   /* not what the bundle says */
	STUNE_LINK_ABSENT,  /* not there (not installed) */
	STUNE_LINK_SKIPPED, /* not checked (note says why) */
	STUNE_LINK_ERROR,   /* could not be read */
	_STUNE_LINK_MAX
};

struct stune_payload_link {
	char *link;   /* bundle, debian, file, depmod.d, modprobe, initrd, loaded, iocounterbits */
	char *module; /* NULL for the bundle as a whole */
	char *expected, *actual;
	enum stune_link_state state;
	char *note;
};

enum stune_payload_verdict {
	STUNE_PAYLOAD_LOADED = 0,     /* every module in memory is the bundle's */
	STUNE_PAYLOAD_REBOOT_PENDING, /* installed; the running kernel still has the stock copies */
	STUNE_PAYLOAD_DRIFT,	      /* something differs from the bundle */
	STUNE_PAYLOAD_NOT_INSTALLED,  /* no payload for this release */
	STUNE_PAYLOAD_UNKNOWN,	      /* could not tell (an error row) */
	STUNE_PAYLOAD_INSTALLED,      /* installed, no module of it in memory: the next modprobe loads ours */
	_STUNE_PAYLOAD_MAX
};

struct stune_payload_status {
	char *release;
	char *payload_version; /* the manifest's, NULL without one */
	char *source;	       /* "bundle FILE" or the installed manifest's path */
	struct stune_payload_link *links;
	size_t n;
	enum stune_payload_verdict verdict;
	size_t modules_loaded; /* the bundle's modules in memory (ours or not), on the running kernel */
};

enum {
	STUNE_PAYLOAD_STATUS_MODPROBE = 1 << 0, /* libkmod resolution */
	STUNE_PAYLOAD_STATUS_INITRD = 1 << 1,	/* read boot/initrd.img-R */
	STUNE_PAYLOAD_STATUS_DEVICES = 1 << 2,	/* iocounterbits of every SCSI device */
	STUNE_PAYLOAD_STATUS_ALL = 7,
};

const char *stune_link_state_name(enum stune_link_state s);
const char *stune_payload_verdict_name(enum stune_payload_verdict v);
void stune_payload_status_free(struct stune_payload_status *s);
DEFINE_CLEANUP_FUNC(struct stune_payload_status, stune_payload_status_free)

/*
 * m: the bundle's manifest (NULL: the installed one of release); release:
 * NULL for m's, else the running kernel's. bundle_link: a first row for the
 * bundle (NULL: none). Returns -errno only for failures to run.
 */
int stune_payload_state(struct stune_ctx *ctx, const struct stune_manifest *m, const char *release, unsigned flags,
			const char *bundle_note, struct stune_payload_status **out);
