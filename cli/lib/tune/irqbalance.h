/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What apply and revert do to irqbalance beyond editing its defaults file
 * (detect/irqbalance.h has the file format): make the daemon read it again.
 */
#pragma once

struct stune_ctx;

/* The live system's irqbalance restarted to read its defaults file:
 * `systemctl try-restart irqbalance.service`. -EOPNOTSUPP under a sysroot,
 * -ENOENT without systemctl, -EIO when it fails. */
int stune_irqbalance_restart(const struct stune_ctx *ctx);
