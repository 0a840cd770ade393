/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A result set as InfluxDB line protocol: one point per fio run, measurement
 * `scsitune_fio`, string facts as tags, numbers as fields, the run's start
 * time as the timestamp in milliseconds (the upload always sends
 * precision=ms). The same runs always give the same text, so re-sending is
 * idempotent at the server. The schema is documented in scsitune-report(8).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/fio.h"

#include "net/lineproto.h"

/* Facts of the whole set; NULL or "" leaves the tag out. */
struct stune_lp_facts {
	const char *host;
	const char *kernel;
	const char *phase;
	const char *hba_model, *firmware; /* the HBA of the devices (report --run) */
	const char *payload;		  /* payload version (scsi_mod's version marker) */
	const char *profile;		  /* the applied profile's name */
	const char *profile_digest;	  /* its SHA-256, from apply's journal */
	const char *verify_state;	  /* in-effect, drifted, none-applied (verify's rule) */
	const char *set;		  /* the result set: its saved name without .json */
	int64_t fallback_ms;		  /* timestamp of a run whose fio output has none */
};

/* Every run of a set into a new string (*out, freed by the caller). */
int stune_lp_encode(struct stune_fio_run *const *runs, size_t n, const struct stune_lp_facts *facts, char **out,
		    size_t *len);
