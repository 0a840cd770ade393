/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device enumeration and udev properties. On the live system this is libudev;
 * under --sysroot it is the captured tree: sys/class/<subsystem>/ and the udev
 * database files run/udev/data/<id> (the same files udevd writes).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "core/strv.h"

struct stune_props {
	char **kv; /* "KEY=value", NULL terminated */
	size_t n;
	char *text; /* the database file the entries of kv point into (then not allocated one by one) */
};

/* Root-relative canonical device paths of a class, e.g. "scsi_host", "block". */
int stune_devices_list(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n);
/*
 * The same, but under --sysroot without opening each one (one readlinkat a
 * device, not also an open of its long path): a path may then still hold a
 * symlink. *unverified says whether any may; the caller opens each with
 * stune_root_dir_open_canonical() and, when that says it is not canonical,
 * uses stune_root_resolve() of it.
 */
int stune_devices_list_targets(struct stune_ctx *ctx, const char *subsystem, char ***out, size_t *n, bool *unverified);

/*
 * Properties of the device at root-relative syspath. dbid is its udev
 * database name ("b8:0", "+pci:0000:17:00.0"). No properties is not an error.
 */
int stune_props_load(struct stune_ctx *ctx, const char *syspath, const char *dbid, struct stune_props *out);
/* The same; under --sysroot the database file is read relative to udev_data (run/udev/data, opened once). */
int stune_props_load_at(struct stune_ctx *ctx, const struct stune_rdir *udev_data, const char *syspath,
			const char *dbid, struct stune_props *out);
const char *stune_props_get(const struct stune_props *p, const char *key);
void stune_props_clear(struct stune_props *p);
