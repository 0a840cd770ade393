/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a kernel module (.ko, in memory) says about itself, read with libelf:
 * its .modinfo fields (name, vermagic, srcversion, version, the payload's
 * scsitune_patches, depends), its GNU build-id (the note the kernel shows in
 * /sys/module/M/notes/.note.gnu.build-id), whether a signature is appended
 * ("~Module signature appended~"), and its exported symbols with their
 * CRCs (modversions: each __crc_SYM symbol labels the CRC's 4 bytes in
 * __kcrctab / __kcrctab_gpl), and the symbols it imports with the CRCs it
 * was built against (__versions: struct modversion_info, an unsigned long
 * CRC and a 56-byte name, as the kernel's check_version() reads them).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/macro.h"

#define STUNE_KO_SIG_MARKER "~Module signature appended~\n"

struct stune_symcrc {
	char *symbol;
	uint32_t crc;
};

struct stune_ko {
	char *name; /* modinfo name= */
	char *vermagic, *srcversion, *version, *patches, *depends;
	char *build_id; /* hex, NULL without a build-id note */
	bool is_signed;
	struct stune_symcrc *exports; /* sorted by symbol */
	size_t n_exports;
	struct stune_symcrc *imports; /* __versions, sorted by symbol */
	size_t n_imports;
};

void stune_ko_free(struct stune_ko *k);
DEFINE_CLEANUP_FUNC(struct stune_ko, stune_ko_free)

/* -EBADMSG with *err set when data is not a relocatable x86-64 kernel module. */
int stune_ko_read(const void *data, size_t len, struct stune_ko **out, char **err);
/* The export named symbol, or NULL. */
const struct stune_symcrc *stune_ko_export(const struct stune_ko *k, const char *symbol);
/* symbol in a sorted array, or NULL. */
const struct stune_symcrc *stune_symcrc_find(const struct stune_symcrc *v, size_t n, const char *symbol);
/* The import named symbol, or NULL. */
const struct stune_symcrc *stune_ko_import(const struct stune_ko *k, const char *symbol);
