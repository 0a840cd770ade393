/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "detect/topology.h"
#include "out.h"
#include "wrap.h"

#include <stdint.h>

/* 2: PCI IDs, class and revision as lspci writes them (hex strings), pci_id, subsystem_id, prog_if. */
#define STUNE_DETECT_SCHEMA_VERSION 2

/* verbose: the text adds per disk, per hctx and per IRQ detail (JSON is always whole);
 * only: the index of the one HBA to show (--hba), SIZE_MAX for all. */
struct stune_payload_status;
/* payload: payload verify's state of the running kernel (NULL: unknown). */
void render_topology(struct out *o, const struct stune_topology *t, const char *sysroot, int verbose, size_t only,
		     const struct stune_payload_status *payload);
