/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "report/fio.h"
#include "report/session.h"
#include "out.h"

/* The result-set document (schema_version, phase, runs, summary), plus "compare" when c is set. */
void render_report(struct out *o, const struct stune_report_set *s, const struct stune_report_compare *c);
