/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where and how a result set's runs were made (`report --run`): the host,
 * kernel, HBA and payload from detect's model, the applied profile from
 * apply's journal and whether it was still in effect (verify's rule), and
 * the NUMA binding of the fio process. Filled by the engine, rendered by
 * cli/report/render.c; nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/num.h"

struct stune_ctx;
struct stune_hba;
struct stune_journal;
struct stune_numa_binder;
struct stune_topology;

/* NULL strings are unknown (rendered null). */
struct stune_provenance {
	bool host_facts; /* report --host-facts: fio ran outside scsitune; host and profile as of now */
	const char *host, *kernel;
	bool have_hba; /* the devices' HBA was found in detect's model */
	const char *hba_model, *hba_firmware, *hba_pci_address, *hba_driver;
	struct stune_num hba_numa_node;
	const char *payload_version; /* sys/module/scsi_mod/version */
	/* payload verify's verdict for the running kernel (payload/state.h, without the
	 * modprobe and initrd links): loaded, reboot-pending, drift, not-installed, unknown */
	const char *payload_state;
	/* The applied profile, from apply's journal; NULL name: none applied */
	const char *profile, *profile_digest, *profile_journal_state, *profile_note;
	const char *profile_journal_dir; /* the state directory whose journal.json was read (borrowed) */
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

/*
 * The HBA a device sits behind, in detect's model: a block device by its
 * major:minor (or name); under a sysroot the tree is another host, so the
 * device's base name names one of its disks. NULL when none.
 */
const struct stune_hba *stune_device_hba(const struct stune_topology *t, const char *dev, bool sysroot);

/* The default devices of `report --run`: /dev/NAME of the mpi3mr HBAs' disks,
 * appended to the NULL-terminated *devs (*n counts them). */
int stune_mpi3mr_devices(const struct stune_topology *t, char ***devs, size_t *n);

/* The HBA of the first disk behind an mpi3mr HBA (the default devices of --run), or NULL. */
const struct stune_hba *stune_first_mpi3mr_hba(const struct stune_topology *t);

/*
 * Host, kernel, payload and HBA facts from detect's model (the --sysroot
 * tree's under a sysroot, whose host name wins there). hostname: this
 * machine's, or "" when unknown. Points into t and hostname.
 */
void stune_provenance_host(struct stune_provenance *p, const struct stune_topology *t, const struct stune_hba *hba,
			   bool sysroot, const char *hostname);

/* p->payload_state from the code `payload verify` runs (the --sysroot tree's under a sysroot). */
void stune_provenance_payload(struct stune_ctx *ctx, struct stune_provenance *p);

/*
 * The applied profile, from apply's journal in state_dir: the journal says
 * what apply did; verify_state says whether it was still in effect against
 * the host model t, counted as `scsitune verify` counts. Never fails the
 * report: what cannot be known is left NULL with a note and a warning
 * through ctx's log. *journal owns what p's profile fields point to.
 */
void stune_provenance_profile(struct stune_ctx *ctx, const char *state_dir, const struct stune_topology *t,
			      const char *profile_dir, struct stune_provenance *p, struct stune_journal **journal);

/* What the binding of the fio process is decided from. */
struct stune_bind_opts {
	bool node_set; /* --node N */
	int node;
	bool job_file; /* the job file names the devices: none looked up */
	bool sysroot;  /* the model is another host's */
};

/*
 * The NUMA node fio runs on: --node, else the HBA's numa_node on the live
 * host. Fills p->bound_node (-1: not bound) and p->binding_note, opens
 * libnuma's binder for the child, and the node's CPUs (*cpus, owned by the
 * caller; p->bound_cpus points to it). Not binding is not an error: the note
 * says why, through ctx's log (a warning when libnuma failed). -EINVAL with
 * *err: the node does not exist on this host.
 */
int stune_provenance_bind(struct stune_ctx *ctx, struct stune_provenance *p, const struct stune_hba *hba,
			  const struct stune_bind_opts *o, struct stune_numa_binder **binder, char **cpus, char **note,
			  char **err);
