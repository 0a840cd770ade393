/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A strict reader of InfluxDB line protocol (InfluxDB 1.x "Line protocol
 * reference": measurement[,tag=value...] field=value[,field=value...]
 * [timestamp]), for the round trip of the fuzz-lineproto harness: what
 * scsitune writes must read back, under the protocol's own escaping rules, as
 * exactly the tags and fields it meant. Stricter than the servers: tags must
 * be sorted by key and unique (InfluxDB's advice, which scsitune follows), no
 * key or tag value may be empty, a backslash escapes only what the protocol
 * lets it escape, floats must be plain decimal (no NaN, no Inf), integers
 * must fit int64, the timestamp is required.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LP_MAX 64

enum lp_type { LP_FLOAT, LP_INT, LP_STRING, LP_BOOL };

struct lp_point {
	char *measurement;
	char *tag_key[LP_MAX], *tag_value[LP_MAX];
	size_t n_tags;
	char *field_key[LP_MAX];
	enum lp_type field_type[LP_MAX];
	double field_float[LP_MAX];
	int64_t field_int[LP_MAX];
	char *field_string[LP_MAX];
	bool field_bool[LP_MAX];
	size_t n_fields;
	int64_t timestamp;
};

/* One line (without its '\n'): 0, or -1 with *why. */
int lp_parse(const char *line, size_t len, struct lp_point *p, const char **why);
void lp_point_clear(struct lp_point *p);
const char *lp_tag(const struct lp_point *p, const char *key);
/* The field's index, or -1. */
int lp_field(const struct lp_point *p, const char *key);
