/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SCSI hosts and the adapters (HBAs) they sit on. A host's adapter is found
 * by walking up the device tree from hostN to the first ancestor on the PCI
 * bus, through whatever lies between (virtioN, ata ports). Hosts with no PCI
 * ancestor (scsi_debug, tcm_loop) get their parent device as adapter.
 */
#include <errno.h>
#include <search.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/devices.h"
#include "detect/gather.h"

const char *stune_hba_kind_name(enum stune_hba_kind k)
{
	return k == STUNE_HBA_MPI3MR ? "mpi3mr" : "other";
}

static bool is_pci_function(struct stune_ctx *ctx, const char *dir)
{
	_cleanup_free_ char *sub = NULL, *resolved = NULL;
	if (stune_path_join(&sub, dir, "subsystem") < 0)
		return false;
	if (stune_root_resolve(ctx->root, sub, &resolved) < 0)
		return false;
	size_t n = strlen(resolved);
	return n >= 8 && strcmp(resolved + n - 8, "/bus/pci") == 0;
}

/* Name of the driver bound to dir, or NULL. */
static char *driver_of(struct stune_ctx *ctx, const char *dir)
{
	_cleanup_free_ char *link = NULL, *target = NULL;
	if (stune_path_join(&link, dir, "driver") < 0)
		return NULL;
	if (stune_root_readlink(ctx->root, link, &target) < 0)
		return NULL;
	return strdup(stune_path_basename(target));
}

static int read_driver_version(struct stune_ctx *ctx, struct stune_hba *h)
{
	if (!h->driver)
		return 0;
	/* The module of driver "usb-storage" is usb_storage. */
	_cleanup_free_ char *module = strdup(h->driver);
	if (!module)
		return -ENOMEM;
	for (char *p = module; *p; p++)
		if (*p == '-')
			*p = '_';
	stune_attr_str(ctx, &h->driver_version, STUNE_ATTR_OPTIONAL, "sys/module/%s/version", module);
	return 0;
}

/*
 * A numa_node outside -1 and the possible nodes (the online ones when
 * node/possible is missing, node 0 without NUMA) is firmware or tree garbage:
 * a warning naming the file, and the node unknown (never "-1", never a node
 * that does not exist).
 */
static void check_numa_node(struct stune_ctx *ctx, const struct stune_topology *t, const char *pci,
			    struct stune_num *node)
{
	if (!node->set || node->v == -1)
		return;
	const struct stune_cpuset *nodes = t->numa.possible.valid ? &t->numa.possible
					   : t->numa.online.valid ? &t->numa.online
								  : NULL;
	if (node->v >= 0 && node->v <= INT_MAX && (nodes ? stune_cpuset_has(nodes, (unsigned)node->v) : node->v == 0))
		return;
	_cleanup_free_ char *path = NULL, *list = NULL;
	if (asprintf(&path, "%s/numa_node", pci) < 0)
		path = NULL;
	if (nodes && stune_cpuset_format(nodes, &list) < 0)
		list = NULL;
	stune_warn_path(ctx, path ? path : pci,
			"numa_node %lld is neither -1 nor a possible node (%s): treated as unknown", (long long)node->v,
			list ? list : "0");
	node->set = false;
}

/* HBAs by their adapter's path: a binary tree (tsearch), so a host's HBA is
 * found in log(HBAs), not by a walk over every HBA for every host. */
struct hba_key {
	const char *path; /* the HBA's sysfs_path (its own allocation: stable) */
	size_t idx;
};

static int hba_key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct hba_key *)a)->path, ((const struct hba_key *)b)->path);
}

static void hba_index_free(void **root)
{
	tdestroy(*root, free);
}

static int find_or_add_hba(struct stune_ctx *ctx, struct stune_topology *t, void **index, const char *hostdir,
			   size_t *idx)
{
	_cleanup_free_ char *parent = NULL, *pci = NULL, *driver = NULL;
	int r;

	if ((r = stune_path_dirname(hostdir, &parent)) < 0)
		return r;
	/* Walk up: the first driver link seen is the SCSI driver (virtio_scsi on virtioN). */
	_cleanup_free_ char *cur = strdup(parent);
	if (!cur)
		return -ENOMEM;
	while (strncmp(cur, "sys/devices/", 12) == 0) {
		if (!driver)
			driver = driver_of(ctx, cur);
		if (is_pci_function(ctx, cur)) {
			pci = strdup(cur);
			if (!pci)
				return -ENOMEM;
			break;
		}
		char *up;
		if ((r = stune_path_dirname(cur, &up)) < 0)
			return r;
		free(cur);
		cur = up;
	}
	const char *adapter = pci ? pci : parent;

	struct hba_key probe = {.path = adapter};
	void *found = tfind(&probe, index, hba_key_cmp);
	if (found) {
		*idx = (*(struct hba_key **)found)->idx;
		return 0;
	}

	if (stune_grow(&t->hbas, t->n_hbas, sizeof(*t->hbas)) < 0)
		return -ENOMEM;
	struct stune_hba *h = &t->hbas[t->n_hbas];
	*h = (struct stune_hba){0};
	*idx = t->n_hbas++;
	if (!(h->sysfs_path = strdup(adapter)))
		return -ENOMEM;
	struct hba_key *key = malloc(sizeof(*key));
	if (!key)
		return -ENOMEM;
	*key = (struct hba_key){.path = h->sysfs_path, .idx = *idx};
	if (!tsearch(key, index, hba_key_cmp)) {
		free(key);
		return -ENOMEM;
	}
	h->driver = steal_pointer(&driver);
	if (!pci)
		return read_driver_version(ctx, h);

	h->pci_address = strdup(stune_path_basename(pci));
	if (!h->pci_address)
		return -ENOMEM;
	stune_attr_num(ctx, &h->vendor, 0, "%s/vendor", pci);
	stune_attr_num(ctx, &h->device, 0, "%s/device", pci);
	stune_attr_num(ctx, &h->subsystem_vendor, STUNE_ATTR_OPTIONAL, "%s/subsystem_vendor", pci);
	stune_attr_num(ctx, &h->subsystem_device, STUNE_ATTR_OPTIONAL, "%s/subsystem_device", pci);
	stune_attr_num(ctx, &h->class_code, STUNE_ATTR_OPTIONAL, "%s/class", pci);
	stune_attr_num(ctx, &h->revision, STUNE_ATTR_OPTIONAL, "%s/revision", pci);
	/* numa_node: -1 is NUMA_NO_NODE, "no locality known"; kept as -1, never 0. */
	stune_attr_num(ctx, &h->numa_node, 0, "%s/numa_node", pci);
	check_numa_node(ctx, t, pci, &h->numa_node);
	stune_attr_cpulist(ctx, &h->local_cpus, 0, "%s/local_cpulist", pci);
	h->pci_driver = driver_of(ctx, pci);
	if (!h->driver && h->pci_driver && !(h->driver = strdup(h->pci_driver)))
		return -ENOMEM;
	if ((r = read_driver_version(ctx, h)) < 0)
		return r;

	_cleanup_free_ char *dbid = NULL;
	struct stune_props props;
	if (asprintf(&dbid, "+pci:%s", h->pci_address) < 0)
		return -ENOMEM;
	if ((r = stune_props_load(ctx, pci, dbid, &props)) < 0)
		return r;
	const char *v = stune_props_get(&props, "ID_VENDOR_FROM_DATABASE");
	const char *m = stune_props_get(&props, "ID_MODEL_FROM_DATABASE");
	h->vendor_name = v ? strdup(v) : NULL;
	h->model = m ? strdup(m) : NULL;
	stune_props_clear(&props);
	return 0;
}

static int add_index(size_t **v, size_t *n, size_t idx)
{
	if (stune_grow(v, *n, sizeof(**v)) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = idx;
	return 0;
}

static int host_cmp(const void *a, const void *b)
{
	const struct stune_host *x = a, *y = b;
	return (x->host_no > y->host_no) - (x->host_no < y->host_no);
}

int stune_scan_hosts(struct stune_ctx *ctx, struct stune_topology *t)
{
	_cleanup_(stune_strv_freep) char **paths = NULL;
	size_t n = 0;
	int r;

	if ((r = stune_devices_list(ctx, "scsi_host", &paths, &n)) < 0)
		return r;
	t->hosts = calloc(n ? n : 1, sizeof(*t->hosts));
	if (!t->hosts)
		return -ENOMEM;

	/* Class dirs are DEV/hostN/scsi_host/hostN. */
	for (size_t i = 0; i < n; i++) {
		const char *cls = paths[i];
		unsigned no;
		char tail;
		if (sscanf(stune_path_basename(cls), "host%u%c", &no, &tail) != 1) {
			stune_warn_path(ctx, cls, "not a SCSI host name, skipped");
			continue;
		}
		struct stune_host *h = &t->hosts[t->n_hosts++];
		h->host_no = no;
		if (!(h->sysfs_path = strdup(cls)))
			return -ENOMEM;
	}
	qsort(t->hosts, t->n_hosts, sizeof(*t->hosts), host_cmp);

	size_t kept = 0;
	_cleanup_(hba_index_free) void *hba_index = NULL;
	for (size_t i = 0; i < t->n_hosts; i++) {
		/* Hotplug: a host removed since the listing is dropped, not shown as nulls. */
		if (!stune_root_exists(ctx->root, t->hosts[i].sysfs_path)) {
			stune_log(ctx, STUNE_LOG_INFO, NULL, "host%u disappeared during the scan", t->hosts[i].host_no);
			free(t->hosts[i].sysfs_path);
			continue;
		}
		if (kept != i)
			t->hosts[kept] = t->hosts[i];
		struct stune_host *h = &t->hosts[kept];
		const char *cls = h->sysfs_path;
		_cleanup_free_ char *up = NULL, *hostdir = NULL;

		if ((r = stune_path_dirname(cls, &up)) < 0 || (r = stune_path_dirname(up, &hostdir)) < 0)
			return r;
		if ((r = find_or_add_hba(ctx, t, &hba_index, hostdir, &h->hba)) < 0)
			return r;
		struct stune_hba *hba = &t->hbas[h->hba];
		if ((r = add_index(&hba->hosts, &hba->n_hosts, kept++)) < 0)
			return r;

		stune_attr_str(ctx, &h->proc_name, 0, "%s/proc_name", cls);
		stune_attr_str(ctx, &h->state, STUNE_ATTR_OPTIONAL, "%s/state", cls);
		stune_attr_num(ctx, &h->unique_id, 0, "%s/unique_id", cls);
		stune_attr_num(ctx, &h->can_queue, 0, "%s/can_queue", cls);
		stune_attr_num(ctx, &h->cmd_per_lun, 0, "%s/cmd_per_lun", cls);
		stune_attr_num(ctx, &h->nr_hw_queues, 0, "%s/nr_hw_queues", cls);
		stune_attr_num(ctx, &h->sg_tablesize, STUNE_ATTR_OPTIONAL, "%s/sg_tablesize", cls);
		stune_attr_num(ctx, &h->host_busy, STUNE_ATTR_OPTIONAL, "%s/host_busy", cls);

		bool mpi3mr = (h->proc_name && !strcmp(h->proc_name, "mpi3mr")) ||
			      (hba->driver && !strcmp(hba->driver, "mpi3mr"));
		if (mpi3mr) {
			hba->kind = STUNE_HBA_MPI3MR;
			/* mpi3mr_app.c host attributes; adp_state 1..4. */
			if (!hba->firmware)
				stune_attr_str(ctx, &hba->firmware, 0, "%s/version_fw", cls);
			stune_attr_num(ctx, &h->adapter_state, 0, "%s/adp_state", cls);
			stune_attr_num(ctx, &h->fw_queue_depth, STUNE_ATTR_OPTIONAL, "%s/fw_queue_depth", cls);
			stune_attr_num(ctx, &h->op_req_q_count, STUNE_ATTR_OPTIONAL, "%s/op_req_q_count", cls);
			stune_attr_num(ctx, &h->reply_queue_count, STUNE_ATTR_OPTIONAL, "%s/reply_queue_count", cls);
			/* mpi3mr_probe sets shost->host_tagset = 1 unconditionally. */
			h->host_tagset = STUNE_YES;
			h->host_tagset_source = "driver: mpi3mr always uses host-wide shared tags";
		} else if (h->proc_name && !strcmp(h->proc_name, "virtio_scsi")) {
			h->host_tagset = STUNE_NO;
			h->host_tagset_source = "driver: virtio_scsi does not set host_tagset";
		} else if (h->proc_name && !strcmp(h->proc_name, "scsi_debug")) {
			struct stune_num hmq;
			if (stune_attr_num(ctx, &hmq, STUNE_ATTR_OPTIONAL,
					   "sys/module/scsi_debug/parameters/host_max_queue") == 0) {
				h->host_tagset = hmq.v ? STUNE_YES : STUNE_NO;
				h->host_tagset_source = "driver: scsi_debug host_max_queue parameter";
			}
		}
	}
	t->n_hosts = kept;
	return 0;
}
