/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host model that `detect` gathers and every other command reads.
 * Gathered first (stune_topology_scan, detect/scan.h), rendered second
 * (cli/detect/render-topology.c). The model knows no gatherer.
 * Cross-references are array indexes, so the model frees as a whole.
 * A field that could not be read is "unset" and renders as JSON null.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuset.h"
#include "core/macro.h"
#include "core/num.h"
#include "detect/modtrust.h"

struct stune_ctx;

struct stune_node {
	int id;
	struct stune_cpuset cpus;
	struct stune_num mem_total_bytes;
	struct stune_num *distances; /* one per online node, in node order */
	size_t n_distances;
};

struct stune_numa {
	struct stune_cpuset possible; /* node ids */
	struct stune_cpuset online;
	struct stune_node *nodes;
	size_t n_nodes;
	/* Live system only: libnuma's numa_available(); unknown under --sysroot. */
	enum stune_tristate policy_available;
};

struct stune_cpus {
	struct stune_cpuset possible, present, online, offline;
};

struct stune_module {
	char *name;
	bool loaded;   /* sys/module/NAME/initstate or refcnt present */
	bool builtin;  /* sys/module/NAME exists without initstate */
	char *version; /* sys/module/NAME/version: payload marker */
	char *srcversion;
	char *taint;	    /* letters, e.g. "OE" */
	char *updates_path; /* root-relative file under lib/modules/R/updates, if installed */
};

struct stune_kernel {
	char *release;
	char *version;
	char *hostname;
	struct stune_num tainted;
	char *taint_flags; /* decoded letters of proc/sys/kernel/tainted */
	char *lockdown;	   /* the bracketed mode: none / integrity / confidentiality */
	enum stune_tristate sig_enforce;
	struct stune_module_trust *trust; /* Secure Boot, keyrings, keys (detect only; NULL for a plan's scan) */
	struct stune_module *modules;	  /* the payload modules: scsi_mod, target_core_mod */
	size_t n_modules;
};

enum stune_hba_kind {
	STUNE_HBA_OTHER = 0,
	STUNE_HBA_MPI3MR,
};

struct stune_hba {
	char *sysfs_path;  /* root-relative canonical device path (PCI function or parent) */
	char *pci_address; /* NULL when no PCI function was found above the host */
	enum stune_hba_kind kind;
	struct stune_num vendor, device, subsystem_vendor, subsystem_device, class_code, revision;
	char *vendor_name, *model; /* udev hwdb: ID_VENDOR/MODEL_FROM_DATABASE */
	char *driver;		   /* the SCSI driver: first driver bound on the way up from the host */
	char *pci_driver;	   /* driver of the PCI function (differs for virtio_scsi, usb-storage) */
	char *driver_version;
	char *firmware;		    /* mpi3mr version_fw */
	struct stune_num numa_node; /* unset when no PCI function; -1 kept as -1 */
	struct stune_cpuset local_cpus;
	size_t *hosts; /* indexes into topology.hosts */
	size_t n_hosts;
	size_t *irqs; /* indexes into topology.irqs */
	size_t n_irqs;
};

struct stune_hctx {
	unsigned id;
	struct stune_cpuset cpus;
	struct stune_num irq; /* IRQ number serving this hardware queue */
};

struct stune_host {
	unsigned host_no;
	char *sysfs_path; /* class dir, root-relative */
	size_t hba;	  /* index into topology.hbas */
	char *proc_name;
	char *state;
	struct stune_num unique_id, can_queue, cmd_per_lun, nr_hw_queues, sg_tablesize, host_busy;
	enum stune_tristate host_tagset;
	const char *host_tagset_source; /* static string: why we know */
	/* mpi3mr */
	struct stune_num adapter_state, fw_queue_depth, op_req_q_count, reply_queue_count;
	struct stune_hctx *hctx; /* blk-mq map, from the first disk's mq/ */
	size_t n_hctx;
	size_t *disks;
	size_t n_disks;
};

struct stune_irq {
	unsigned irq;
	size_t hba;
	struct stune_num vector; /* MSI/MSI-X index on the PCI function */
	char *name;
	char *chip;
	char *msi_type;		/* msi_irqs/N contents: "msix" / "msi" */
	struct stune_num count; /* total interrupts over online CPUs */
	struct stune_cpuset affinity, effective;
	enum stune_tristate managed;
	const char *managed_rule; /* static string explaining the classification */
	struct stune_num hctx;	  /* hardware queue it serves, if any */
};

/* A disk's tunables whose raw text the plan's scan keeps (stune_disk.raw). */
enum stune_disk_raw {
	STUNE_RAW_SCHEDULER = 0,
	STUNE_RAW_NR_REQUESTS,
	STUNE_RAW_RQ_AFFINITY,
	STUNE_RAW_NOMERGES,
	STUNE_RAW_READ_AHEAD_KB,
	STUNE_RAW_ADD_RANDOM,
	STUNE_RAW_IO_POLL,
	STUNE_RAW_QUEUE_DEPTH,
	_STUNE_RAW_MAX
};

struct stune_disk {
	char *name;
	char *hctl;
	unsigned h, c, t, l;
	size_t host;
	char *devnum; /* "8:0" */
	char *key;    /* "wwn-0x...", else "path-<ID_PATH>", else "hctl-H:C:T:L" */
	const char *key_source;
	char *wwn, *id_path, *serial;
	char *vendor, *model, *rev;
	struct stune_num size_bytes, rotational, scsi_type;
	/* queue settings */
	char *scheduler;   /* the selected one */
	char **schedulers; /* all listed, NULL terminated */
	struct stune_num nr_requests, rq_affinity, nomerges, read_ahead_kb, add_random, io_poll;
	struct stune_num queue_depth, nr_hw_queues;
	char *state;
	struct stune_num iocounterbits, iorequest_cnt, iodone_cnt, ioerr_cnt, iotmo_cnt;
	/* The tunables' text as the plan's scan read it (one trailing newline
	 * removed; NULL: not read or unreadable): apply journals it as the old
	 * value instead of reading the file again. */
	char *raw[_STUNE_RAW_MAX];
};

/* irqbalance as apply sees it (irqbalance.c). */
struct stune_irqbalance {
	bool defaults; /* etc/default/irqbalance exists */
	int args_err;  /* 0, or why IRQBALANCE_ARGS cannot be used: -EINVAL not a plain value, -errno unreadable */
	char *args;    /* IRQBALANCE_ARGS; NULL when not set */
	long pid;      /* a running irqbalance (proc/N/comm); 0 when none is seen */
	bool systemd;  /* run/systemd/system exists: systemctl can restart it */
};

struct stune_topology {
	struct stune_kernel kernel;
	struct stune_irqbalance irqbalance;
	struct stune_cpus cpus;
	struct stune_numa numa;
	struct stune_hba *hbas;
	size_t n_hbas;
	struct stune_host *hosts;
	size_t n_hosts;
	struct stune_irq *irqs;
	size_t n_irqs;
	struct stune_disk *disks;
	size_t n_disks;
	const char *udev_source; /* "libudev" or "udev-db" */
	/*
	 * The plan's scan (stune_topology_scan_for_plan): only what the plan,
	 * apply, verify and report's provenance use is read, and the disks'
	 * raw tunables are kept. Left unset per disk: size_bytes, vendor, model,
	 * rev, scsi_type, state, iocounterbits and the I/O counters; and of the
	 * tunables after rotational and the scheduler, only those in plan_attrs.
	 */
	bool plan_scope;
	unsigned plan_attrs; /* 1 << enum stune_disk_raw: the tunables the plan's scan reads */
	/*
	 * detect's default text (stune_topology_scan_brief): per disk only what
	 * its row shows (name, H:C:T:L, dev, size, rotational, model) and the
	 * udev keys. Left unset: the queue settings and scheduler, vendor, rev,
	 * scsi_type, state, queue_depth, iocounterbits and the I/O counters
	 * (what -v and JSON show): 6 reads per disk instead of 22.
	 */
	bool brief;
};

void stune_topology_free(struct stune_topology *t);
DEFINE_CLEANUP_FUNC(struct stune_topology, stune_topology_free)

const char *stune_hba_kind_name(enum stune_hba_kind k);

/* The node ids whose CPUs cpus touches, into nodes (a set of node ids); -ENOMEM. */
int stune_cpuset_nodes(const struct stune_topology *t, const struct stune_cpuset *cpus, struct stune_cpuset *nodes);

/* Where an IRQ's CPU set lies against its HBA's NUMA node. */
enum stune_placement {
	STUNE_PLACE_UNKNOWN = 0, /* the HBA's node or the set is not known, or the set is in no node */
	STUNE_PLACE_LOCAL,	 /* every CPU on the HBA's node */
	STUNE_PLACE_REMOTE,	 /* no CPU on it */
	STUNE_PLACE_SPANS,	 /* CPUs on it and on other nodes */
};
enum stune_placement stune_irq_placement(const struct stune_topology *t, const struct stune_hba *h,
					 const struct stune_cpuset *cpus);
const char *stune_placement_name(enum stune_placement p);
/*
 * Where an IRQ is served against its HBA's node: its effective affinity (the
 * CPUs it fires on now), else, when that was not read, its affinity (where it
 * may fire). detect's IRQ locality line and scsitune metrics count by it.
 */
enum stune_placement stune_irq_served(const struct stune_topology *t, const struct stune_hba *h,
				      const struct stune_irq *q);

#define STUNE_RAW_ALL ((1u << _STUNE_RAW_MAX) - 1)
/* The raw text the plan's scan kept for a disk's setting ("queue/scheduler", "device/queue_depth"), or NULL. */
const char *stune_disk_raw_value(const struct stune_disk *d, const char *setting);
