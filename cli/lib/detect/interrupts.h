/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc/interrupts, parsed by its header (columns are the *online* CPUs). */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct stune_irq_line {
	unsigned irq;
	uint64_t count; /* sum over the online-CPU columns */
	char *chip;	/* "PCI-MSI", "IR-PCI-MSI", "PCI-MSIX-0000:00:04.0", "IO-APIC" */
	uint64_t hwirq;
	int has_hwirq;
	char *name; /* action names, ", " separated when shared */
};

struct stune_interrupts {
	unsigned *cpus; /* CPU id of each column */
	size_t n_cpus;
	struct stune_irq_line *lines;
	size_t n_lines;
	size_t *by_irq; /* line indexes sorted by IRQ (then file order): find in O(log n) */
};

/* Parse the text of /proc/interrupts. -EINVAL on a malformed header or line. */
int stune_interrupts_parse(const char *text, struct stune_interrupts *out, unsigned *bad_line);
void stune_interrupts_clear(struct stune_interrupts *it);
/* The first line (in file order) of IRQ irq, or NULL. */
const struct stune_irq_line *stune_interrupts_find(const struct stune_interrupts *it, unsigned irq);

/*
 * The PCI function and MSI index an MSI IRQ line belongs to. 6.1's global
 * PCI-MSI domain encodes them in hwirq (index | devid << 11 | domain << 27);
 * per-device domains (6.2+) name the function in the chip ("PCI-MSIX-BDF")
 * and hwirq is the index. Returns 0 and fills bdf ("0000:17:00.0") and index.
 */
int stune_irq_line_pci(const struct stune_irq_line *l, char bdf[16], unsigned *index);
