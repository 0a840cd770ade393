/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * apply --persist: what makes a plan survive reboot and hotplug, as files
 * under the root, each one plan row (kind STUNE_OBJ_PERSIST):
 *   etc/udev/rules.d/90-scsitune.rules
 *       one rule per disk the plan tunes (matched by its stable key: WWN,
 *       ID_PATH, else H:C:T:L), ATTR{queue/...} for the disk's settings in
 *       plan order (scheduler first): udev applies them on every add and
 *       change event, so a hot-added disk, a rescan or a revalidate (sd sets
 *       add_random again) gets them too; the rules are sorted by that key
 *       and name no sdX (kernel names change between boots, and verify
 *       compares the file's text);
 *   etc/systemd/system/scsitune-apply.service and its enabling link in
 *   multi-user.target.wants/
 *       a oneshot unit that runs `scsitune apply` of the same profile at boot,
 *       after udev settles and before irqbalance: IRQ numbers change between
 *       boots, so IRQ placement is planned again on the booted host; its
 *       journal goes to /run/scsitune (gone at the next boot);
 *   etc/modprobe.d/scsitune.conf
 *       "options DRIVER key=value" for the profile's [module:DRIVER]
 *       parameters (load time only; an HBA the boot disk sits behind loads
 *       from the initramfs: update-initramfs -u is needed there).
 * The generators are pure; stune_persist_plan reads the current files
 * through the root layer and appends the rows. A missing directory (no
 * udev, no systemd, no modprobe.d) makes its row not applicable: nothing
 * is created above an existing directory.
 */
#pragma once

#include "core/ctx.h"
#include "tune/plan.h"
#include "detect/topology.h"

#define STUNE_PERSIST_RULES	 "etc/udev/rules.d/90-scsitune.rules"
#define STUNE_PERSIST_UNIT	 "etc/systemd/system/scsitune-apply.service"
#define STUNE_PERSIST_WANTS	 "etc/systemd/system/multi-user.target.wants/scsitune-apply.service"
#define STUNE_PERSIST_UNIT_AT	 "/" STUNE_PERSIST_UNIT /* the link's target */
#define STUNE_PERSIST_MODPROBE	 "etc/modprobe.d/scsitune.conf"
#define STUNE_PERSIST_BOOT_STATE "/run/scsitune"

/* The udev rules for the plan's disk rows; *out NULL when no disk is tuned. */
int stune_persist_udev_rules(const struct stune_plan *plan, const struct stune_topology *t, char **out);
/* The modprobe.d file for the plan's module rows; *out NULL when there are none. */
int stune_persist_modprobe(const struct stune_plan *plan, char **out);
/* The boot unit: bin is scsitune's installed path, profile and profile_dir absolute. */
int stune_persist_unit(const char *bin, const char *profile, const char *profile_dir, char **out);

/* Append the persist rows to plan (reads the current files under ctx's root). */
int stune_persist_plan(struct stune_ctx *ctx, struct stune_plan *plan, const struct stune_topology *t, const char *bin,
		       const char *profile, const char *profile_dir);
