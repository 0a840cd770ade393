/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * InfluxDB line protocol, the wire format of the upload and of the fleet's
 * queries: the measurement both sides name, tag escaping and number text.
 * What a point of a fio run holds is report/points.h; the schema is
 * documented in scsitune-report(8).
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#define STUNE_LP_MEASUREMENT "scsitune_fio"

/*
 * Write an escaped tag key or value: ',', '=' and ' ' get a backslash; a
 * backslash or a control character (which no parser reads back the same)
 * becomes '_'.
 */
void stune_lp_escape_tag(FILE *f, const char *s);
/* The shortest decimal text that reads back as exactly v (finite v only). */
void stune_lp_format_double(char *buf, size_t size, double v);
