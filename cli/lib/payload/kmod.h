/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkmod: which file `modprobe NAME` would load for a release (the
 * depmod index under lib/modules/RELEASE and the modprobe.d configuration,
 * the --sysroot tree's under --sysroot), and a module reload on the live
 * system.
 */
#pragma once

#include "core/ctx.h"

/*
 * *out: the file relative to lib/modules/RELEASE ("updates/scsitune/scsi_mod.ko");
 * -ENOENT: nothing by that name. Under --sysroot libkmod runs in a child
 * chrooted into the tree (it reads /proc/cmdline and modprobe.d by absolute
 * path): root only, -EPERM otherwise.
 */
int stune_kmod_resolve(struct stune_ctx *ctx, const char *release, const char *name, char **out);
/* Live only: unload name (it must not be in use) and load it again as modprobe resolves it. */
int stune_kmod_reload(struct stune_ctx *ctx, const char *name, char **err);
