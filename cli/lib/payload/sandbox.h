/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The --sysroot tree as the programs payload runs see it. scsitune's own
 * reads and writes resolve every symlink inside the tree (core/root.c);
 * update-initramfs and apt-get (and dpkg under it) run chrooted into the
 * tree; depmod, which a tree need not have, runs the host's binary in a root
 * of its own (stune_payload_depmod): in a private mount namespace, a tmpfs
 * over the tree's directory holds the host's /usr (read-only) with its bin,
 * sbin and lib64 links, the tree's lib/modules/RELEASE (the one writable
 * part) and etc/depmod.d (read-only), both opened inside the tree, and the
 * child chroots there. An absolute symlink in the tree then means a file of
 * the tree (or nothing), never one of the host.
 */
#pragma once

#include "core/ctx.h"

/*
 * Before anything changes under --sysroot (install's preflight, remove):
 * lib/modules/RELEASE, boot and etc must not be, or lie under, a symlink
 * that leads out of the tree as the host resolves it (an absolute target,
 * or ".." above the top: stune_root_confined); and depmod's root must be
 * possible here (it is set up once in a child that exits before the exec).
 * 0, or -errno with *why (one line, allocated): -EXDEV for a symlink (its
 * path and where it points), -EPERM when the root cannot be made. The live
 * root: 0.
 */
int stune_payload_tree_check(struct stune_ctx *ctx, const char *release, char **why);

/*
 * depmod RELEASE (-C /etc/depmod.d: the tree's configuration only) in its
 * own root, made of the tree (above); as stune_run: the exit status, or
 * -errno, with *output what it printed (the root's setup failing: 126, and
 * a line saying which step). Under --sysroot only.
 */
int stune_payload_depmod(struct stune_ctx *ctx, const char *release, char **output);
