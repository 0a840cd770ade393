/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The upload spool (report --flush): a batch read back and checked (what a
 * crash, a disk or a hand can leave under STATE/spool/), and a batch spooled
 * by scsitune itself, which the check must accept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "net/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char state[4096], path[4200];
	snprintf(state, sizeof(state), "%s/state", fuzz_dir());
	snprintf(path, sizeof(path), "%s/spool/0123456789abcdef.lp", state);
	fuzz_write(state, "spool/0123456789abcdef.lp", data, size);
	char *body = NULL;
	size_t len = 0;
	if (stune_spool_read(path, &body, &len) == 0) {
		const char *why = stune_spool_check(path, body, len);
		fuzz_check(!why || !strchr(why, '\n'), "why");
		free(body);
	}
	char *aside = NULL;
	if (stune_spool_set_aside(path, &aside) == 0) {
		remove(aside);
		free(aside);
	}
	/* What scsitune spools itself is accepted (text that ends a line). */
	char *spooled = NULL;
	if (size > 0 && data[size - 1] == '\n' && !memchr(data, '\0', size) &&
	    stune_spool_add(state, (const char *)data, size, &spooled) == 0) {
		fuzz_check(stune_spool_read(spooled, &body, &len) == 0, "read back %s", spooled);
		fuzz_check(len == size && !memcmp(body, data, size), "a batch read back differs");
		const char *why = stune_spool_check(spooled, body, len);
		fuzz_check(!why, "a batch scsitune spooled is refused: %s", why);
		fuzz_check(stune_spool_remove(spooled) == 0, "remove");
		free(body);
		free(spooled);
	}
	return 0;
}
