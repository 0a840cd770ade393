/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "report/fio.h"
#include "report/stats.h"
#include "out.h"

/* Where and how the runs were made (report --run); NULL strings are unknown (null). */
struct report_provenance {
	const char *host, *kernel;
	bool have_hba; /* the devices' HBA was found in detect's model */
	const char *hba_model, *hba_firmware, *hba_pci_address, *hba_driver;
	struct stune_num hba_numa_node;
	const char *payload_version; /* sys/module/scsi_mod/version */
	/* The applied profile, from apply's journal; NULL name: none applied */
	const char *profile, *profile_digest, *profile_journal_state, *profile_note;
	/* Was it in effect when the runs started (verify's rule): "in-effect", "drifted",
	 * "none-applied", or NULL (could not be checked; the note says why); settings drifted. */
	const char *profile_verify_state;
	struct stune_num profile_verify_drifted;
	const char *fio_path, *fio_version;
	char *const *fio_args; /* the job options, as given to fio (NULL-terminated) */
	char *const *devices;
	size_t n_devices;
	const char *job_file;
	bool readonly;
	int bound_node;		/* -1: not bound */
	const char *bound_cpus; /* libnuma's CPUs of that node */
	const char *binding_note;
	int64_t start_ms;
	unsigned runs;
};

/* One result set: the runs of one configuration, one fio file per run. */
struct report_set {
	const char *phase;		      /* NULL: unlabelled */
	const struct report_provenance *prov; /* NULL: fio files ingested */
	struct stune_fio_run **runs;
	size_t n_runs;
	double *kiops;		  /* per run: (read + write IOPS summed over all jobs) / 1000 */
	struct stune_stats stats; /* over kiops */
};

/* --compare: the reference set against this one. */
struct report_compare {
	const char *ref_label;	/* phase, or the file name */
	const char *ref_source; /* the saved file */
	struct stune_stats ref;
	const char *cur_label;
	struct stune_stats_cmp cmp;
};

/* The result-set document (schema_version, phase, runs, summary), plus "compare" when c is set. */
void render_report(struct out *o, const struct report_set *s, const struct report_compare *c);
