/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPUs and NUMA nodes from sysfs, through the root layer (never libnuma: it
 * hard-codes /sys and cannot read a captured tree; see numa-live.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "detect/gather.h"

static int cpuset_minus(struct stune_cpuset *out, const struct stune_cpuset *a, const struct stune_cpuset *b)
{
	stune_cpuset_clear(out);
	out->valid = true;
	stune_cpuset_foreach (cpu, a) {
		if (!stune_cpuset_has(b, (unsigned)cpu)) {
			int r = stune_cpuset_set(out, (unsigned)cpu);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static void scan_meminfo(struct stune_ctx *ctx, struct stune_node *n)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "sys/devices/system/node/node%d/meminfo", n->id) < 0)
		return;
	if (stune_attr_str(ctx, &text, 0, "%s", path) < 0)
		return;
	/* "Node 0 MemTotal:       65536000 kB" */
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		int id;
		unsigned long long kb;
		char unit[4];
		if (sscanf(line, "Node %d MemTotal: %llu %3s", &id, &kb, unit) == 3) {
			if (id != n->id || strcmp(unit, "kB") != 0 || kb > INT64_MAX / 1024)
				break;
			n->mem_total_bytes = STUNE_NUM((int64_t)kb * 1024);
			return;
		}
	}
	stune_warn_path(ctx, path, "no valid MemTotal line");
}

/*
 * Linux has at most 1024 NUMA nodes (MAX_NUMNODES: NODES_SHIFT is at most 10).
 * A node list beyond it is tree garbage: a warning naming the file, and the
 * list unknown (each online node is read with a distance per online node:
 * 0-65535 would be 65536 x 65536 of them).
 */
#define STUNE_MAX_NUMA_NODES 1024u

static bool node_ids_in_range(struct stune_ctx *ctx, struct stune_cpuset *s, const char *path)
{
	if (!s->valid || stune_cpuset_next(s, STUNE_MAX_NUMA_NODES) < 0)
		return true;
	stune_warn_path(ctx, path, "names node %d, beyond Linux's %u nodes: treated as unknown",
			stune_cpuset_next(s, STUNE_MAX_NUMA_NODES), STUNE_MAX_NUMA_NODES);
	stune_cpuset_clear(s);
	return false;
}

static void scan_distance(struct stune_ctx *ctx, struct stune_node *n, size_t n_online)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *path = NULL;
	size_t k = 0;

	if (asprintf(&path, "sys/devices/system/node/node%d/distance", n->id) < 0)
		return;
	if (stune_attr_str(ctx, &text, 0, "%s", path) < 0)
		return;
	n->distances = calloc(n_online ? n_online : 1, sizeof(*n->distances));
	if (!n->distances)
		return;
	/* One distance per online node, space separated. */
	char *save = NULL;
	for (char *tok = strtok_r(text, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		int64_t v;
		if (k >= n_online || stune_parse_int64(tok, &v) < 0 || v < 0 || v > 255) {
			stune_warn_path(ctx, path, "unexpected value (expected %zu distances 0-255)", n_online);
			free(n->distances);
			n->distances = NULL;
			return;
		}
		n->distances[k++] = STUNE_NUM(v);
	}
	if (k != n_online) {
		stune_warn_path(ctx, path, "has %zu distances for %zu online nodes", k, n_online);
		free(n->distances);
		n->distances = NULL;
		return;
	}
	n->n_distances = k;
}

int stune_scan_cpus_numa(struct stune_ctx *ctx, struct stune_topology *t)
{
	struct stune_cpus *c = &t->cpus;
	struct stune_numa *nm = &t->numa;
	int r;

	stune_attr_cpulist(ctx, &c->possible, 0, "sys/devices/system/cpu/possible");
	stune_attr_cpulist(ctx, &c->present, STUNE_ATTR_OPTIONAL, "sys/devices/system/cpu/present");
	stune_attr_cpulist(ctx, &c->online, 0, "sys/devices/system/cpu/online");
	if (c->possible.valid && c->online.valid)
		if ((r = cpuset_minus(&c->offline, &c->possible, &c->online)) < 0)
			return r;

	/* No node directory: a kernel built without NUMA. Nothing to claim. */
	if (!stune_root_exists(ctx->root, "sys/devices/system/node"))
		return 0;
	stune_attr_cpulist(ctx, &nm->possible, STUNE_ATTR_OPTIONAL, "sys/devices/system/node/possible");
	node_ids_in_range(ctx, &nm->possible, "sys/devices/system/node/possible");
	if (stune_attr_cpulist(ctx, &nm->online, 0, "sys/devices/system/node/online") < 0 ||
	    !node_ids_in_range(ctx, &nm->online, "sys/devices/system/node/online"))
		return 0;

	size_t n_online = stune_cpuset_count(&nm->online);
	nm->nodes = calloc(n_online ? n_online : 1, sizeof(*nm->nodes));
	if (!nm->nodes)
		return -ENOMEM;
	stune_cpuset_foreach (id, &nm->online) {
		struct stune_node *n = &nm->nodes[nm->n_nodes++];
		n->id = id;
		stune_attr_cpulist(ctx, &n->cpus, 0, "sys/devices/system/node/node%d/cpulist", id);
		scan_meminfo(ctx, n);
		scan_distance(ctx, n, n_online);
	}
	return 0;
}
