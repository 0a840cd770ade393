/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Values that may be unknown: what an attribute reader (core/ctx.h) gives
 * back and what the host model (detect/topology.h) keeps.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* A number that may be unknown. */
struct stune_num {
	int64_t v;
	bool set;
};
#define STUNE_NUM(x) ((struct stune_num){.v = (x), .set = true})

enum stune_tristate { STUNE_UNKNOWN = 0, STUNE_NO, STUNE_YES };
