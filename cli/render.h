/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "detect/topology.h"
#include "out.h"

#define STUNE_DETECT_SCHEMA_VERSION 1

void render_topology(struct out *o, const struct stune_topology *t, const char *sysroot);
