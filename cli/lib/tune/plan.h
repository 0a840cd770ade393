/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan: topology x profile -> the list of changes, one per object and
 * setting. A pure function (no I/O): dry-run prints it; apply, verify and
 * revert (next) walk the same list.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/macro.h"
#include "tune/profile.h"
#include "detect/topology.h"

enum stune_change_state {
	STUNE_CHANGE = 0,     /* current differs from desired: apply writes it */
	STUNE_ALREADY,	      /* current already means desired */
	STUNE_NOT_SETTABLE,   /* the kernel refuses or ignores the write (managed IRQ: EIO) */
	STUNE_NOT_APPLICABLE, /* this object cannot take the setting (no attribute, no locality...) */
};

enum stune_object_kind {
	STUNE_OBJ_DISK = 0,
	STUNE_OBJ_IRQ,
	STUNE_OBJ_MODULE,
	STUNE_OBJ_IRQBALANCE,
	STUNE_OBJ_PERSIST, /* apply --persist: a file (setting "file") or symlink ("symlink") under etc/ */
};

struct stune_change {
	enum stune_object_kind kind;
	enum stune_profile_section cls;
	char *object;  /* stable key: disk key, "irq:N", "module:NAME", "irqbalance" */
	char *device;  /* for people: "sda", "mpi3mr0-msix0 0000:01:00.0"; NULL if none */
	size_t index;  /* into topology.disks / topology.irqs / topology.hbas */
	char *setting; /* "queue/scheduler", "smp_affinity_list", "parameters/poll_queues" */
	char *path;    /* root-relative file apply writes ("sys/block/sda/queue/scheduler") */
	char *current; /* normalised; NULL = unknown */
	char *desired; /* normalised; NULL = nothing to write */
	enum stune_change_state state;
	const struct stune_profile_value *source; /* the profile value behind it (owned by the profile) */
	char *note;				  /* why this state, and what is done instead; NULL for plain changes */
};

/* Per HBA of the host: whether the profile's [hba] takes it, and why. */
struct stune_plan_hba {
	size_t index; /* into topology.hbas */
	bool in_scope;
	char *why; /* "driver ahci: not in match_driver = mpi3mr (numa:18)" */
};

struct stune_plan {
	const struct stune_profile *profile;
	const struct stune_topology *topology; /* the host model it was built from; outlives the plan */
	struct stune_change *changes;
	size_t n_changes;
	struct stune_plan_hba *hbas; /* one per topology HBA, in topology order */
	size_t n_hbas;
	size_t cap_changes; /* allocated (doubled as rows are added) */
};

int stune_plan_build(const struct stune_topology *t, const struct stune_profile *p, struct stune_plan **out);
/* The disks' tunables (1 << enum stune_disk_raw) the plan of p reads: the scan of the host need read no other
 * (stune_topology_scan_for_plan_attrs). */
unsigned stune_plan_disk_attrs(const struct stune_profile *p);
void stune_plan_free(struct stune_plan *plan);
DEFINE_CLEANUP_FUNC(struct stune_plan, stune_plan_free)

/*
 * Does raw (a file as read back, one trailing newline removed) mean the row's
 * desired value? By meaning, as the plan compares: the selected word of
 * "[none] mq-deadline", CPU lists as sets, numbers as numbers.
 */
bool stune_change_in_effect(const struct stune_change *c, const char *raw);
/*
 * The current (desired false) or desired value for people: as is, except
 * a persist row's whole file, shown as "absent", "other content" or "N lines"
 * (a symlink: its target). buf holds what is made here.
 */
const char *stune_change_display(const struct stune_change *c, bool desired, char *buf, size_t len);

const char *stune_change_state_name(enum stune_change_state s);
/* Counts per state (array of 4). */
void stune_plan_count(const struct stune_plan *plan, size_t counts[4]);
