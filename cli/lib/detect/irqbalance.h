/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irqbalance, as Debian ships it (1.9.2 in Debian 12): the daemon reads its
 * options from IRQBALANCE_ARGS in /etc/default/irqbalance (the systemd unit's
 * EnvironmentFile=, and sourced by the sysvinit script), and --banirq=N keeps
 * it off IRQ N. The file is a list of VAR=value lines, comments starting with
 * '#'; systemd does no shell expansion in it, so a value with $ or ` is not
 * one scsitune can extend safely. Pure text functions plus the gatherer
 * (detect/gather.h); no printing. Restarting the daemon is tune/irqbalance.h.
 */
#pragma once

#include <stdbool.h>

#include "core/ctx.h"

#define STUNE_IRQBALANCE_DEFAULTS "etc/default/irqbalance"
#define STUNE_IRQBALANCE_VAR	  "IRQBALANCE_ARGS"

/*
 * The value of the last active IRQBALANCE_ARGS= line of text (quotes
 * removed; "export" allowed). *args NULL: not set. -EINVAL: set, but not
 * a plain value (expansions, unbalanced quotes).
 */
int stune_irqbalance_args(const char *text, char **args);
/* Does args ban IRQ irq (--banirq=N, --banirq N, -i N)? */
bool stune_irqbalance_bans(const char *args, unsigned irq);
/*
 * Every IRQ args bans, sorted, each once (*irqs NULL when none): one pass
 * over args, so checking I IRQs costs O(I log I), not I passes.
 */
int stune_irqbalance_banned(const char *args, unsigned **irqs, size_t *n);
/* Is irq in a list stune_irqbalance_banned() made? (binary search) */
bool stune_irqbalance_banned_has(const unsigned *irqs, size_t n, unsigned irq);
/*
 * text with IRQBALANCE_ARGS set to args: the last active line replaced in
 * place, else a line appended; a comment line naming scsitune goes above it.
 */
int stune_irqbalance_edit(const char *text, const char *args, const char *comment, char **out);
