/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc/interrupts (detect): the parser and the hwirq decoding of each line. */
#include <stdlib.h>

#include "detect/interrupts.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct stune_interrupts it = {0};
	unsigned bad = 0;
	if (stune_interrupts_parse(text, &it, &bad) == 0) {
		for (size_t i = 0; i < it.n_lines; i++) {
			char bdf[16];
			unsigned index;
			(void)stune_irq_line_pci(&it.lines[i], bdf, &index);
			fuzz_check(stune_interrupts_find(&it, it.lines[i].irq) != NULL, "irq %u not found",
				   it.lines[i].irq);
		}
		stune_interrupts_clear(&it);
	}
	free(text);
	return 0;
}
