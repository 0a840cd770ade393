/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host as a whole: a copy of the dual-socket-mpi3mr fixture tree (made
 * once, in a directory of this process's own) whose attribute files the
 * input overwrites, then what `scsitune detect` and `apply --profile numa
 * --dry-run` do on it through the root layer (--sysroot): the scan, the
 * payload's state and the detect text and JSON; the plan's scan and the
 * plan of the numa profile.
 *
 * The input is up to four records separated by a line "%%"; a record is two
 * bytes, the index (big endian, modulo the count) of a file in
 * sysfs-files.txt (every file detect and the plan read on that tree), then
 * that file's new content. After each input the files written get their
 * original content back, so inputs are independent.
 *
 * Properties: the scan and the plan refuse only with an -errno; a warning
 * names its file; every HBA's numa_node is unset, -1 or a possible node;
 * every CPU of an IRQ's planned affinity is an online CPU (a present or
 * possible one when online is unknown; none when all are unknown); the
 * detect text has no control character but its own newlines, and a newline
 * inside a string of the model adds no line to it; detect's JSON parses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/ctx.h"
#include "detect/scan.h"
#include "fuzz.h"
#include "out.h"
#include "payload/state.h"
#include "render-topology.h"
#include "tune/plan.h"
#include "tune/profile.h"

#define MAX_FILES   2048
#define MAX_RECORDS 4

static char root[4096];
static char *files[MAX_FILES];
static char *orig[MAX_FILES];
static size_t orig_len[MAX_FILES];
static size_t n_files;
static struct stune_profile *numa;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	fuzz_check(f != NULL, "open %s", path);
	char *buf = NULL;
	size_t cap = 0, n = 0;
	FILE *m = open_memstream(&buf, &cap);
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		fwrite(chunk, 1, k, m);
		n += k;
	}
	fclose(f);
	fuzz_check(fclose(m) == 0, "memory");
	*len = n;
	return buf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (n_files)
		return 0;
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	fuzz_write(root, ".keep", "", 0);
	char *cmd;
	if (asprintf(&cmd, "tar -xJf '%s/tests/fixtures/dual-socket-mpi3mr.tar.xz' -C '%s'", FUZZ_SOURCE_DIR, root) < 0)
		abort();
	fuzz_check(system(cmd) == 0, "%s", cmd);
	free(cmd);

	char *list;
	if (asprintf(&list, "%s/tests/fuzz/sysfs-files.txt", FUZZ_SOURCE_DIR) < 0)
		abort();
	FILE *f = fopen(list, "re");
	fuzz_check(f != NULL, "open %s", list);
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		fuzz_check(n_files < MAX_FILES && !strstr(line, "..") && *line != '/', "%s: line '%s'", list, line);
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", root, line);
		files[n_files] = strdup(line);
		orig[n_files] = slurp(path, &orig_len[n_files]);
		n_files++;
	}
	fclose(f);
	fuzz_check(n_files > 0, "%s: no file", list);
	free(list);

	char *dir;
	if (asprintf(&dir, "%s/profiles", FUZZ_SOURCE_DIR) < 0)
		abort();
	char *err = NULL;
	fuzz_check(stune_profile_load("numa", dir, &numa, &err) == 0, "profile numa: %s", err ? err : "?");
	free(dir);
	return 0;
}

static void on_log(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	(void)data;
	/* Bad input is a warning naming the file (SPEC: one line naming the file). */
	fuzz_check(level != STUNE_LOG_WARNING || (path && *path), "a warning without its file: %s", msg);
	fuzz_check(msg != NULL, "a message without text");
}

static void check_refusal(int r, const char *what)
{
	fuzz_check(r >= 0 || (r > -4096), "%s: %d is no -errno", what, r);
}

/* Every string of the model, to fn. */
static void each_str(struct stune_topology *t, void (*fn)(char *))
{
#define S(x)                   \
	do {                   \
		if (x)         \
			fn(x); \
	} while (0)
	struct stune_kernel *k = &t->kernel;
	S(k->release);
	S(k->version);
	S(k->hostname);
	S(k->taint_flags);
	S(k->lockdown);
	for (size_t i = 0; i < k->n_modules; i++) {
		struct stune_module *m = &k->modules[i];
		S(m->name);
		S(m->version);
		S(m->srcversion);
		S(m->taint);
		S(m->updates_path);
	}
	S(t->irqbalance.args);
	for (size_t i = 0; i < t->n_hbas; i++) {
		struct stune_hba *h = &t->hbas[i];
		S(h->sysfs_path);
		S(h->pci_address);
		S(h->vendor_name);
		S(h->model);
		S(h->driver);
		S(h->pci_driver);
		S(h->driver_version);
		S(h->firmware);
	}
	for (size_t i = 0; i < t->n_hosts; i++) {
		S(t->hosts[i].sysfs_path);
		S(t->hosts[i].proc_name);
		S(t->hosts[i].state);
	}
	for (size_t i = 0; i < t->n_irqs; i++) {
		S(t->irqs[i].name);
		S(t->irqs[i].chip);
		S(t->irqs[i].msi_type);
	}
	for (size_t i = 0; i < t->n_disks; i++) {
		struct stune_disk *d = &t->disks[i];
		S(d->name);
		S(d->hctl);
		S(d->devnum);
		S(d->key);
		S(d->wwn);
		S(d->id_path);
		S(d->serial);
		S(d->vendor);
		S(d->model);
		S(d->rev);
		S(d->scheduler);
		S(d->state);
		for (char **s = d->schedulers; s && *s; s++)
			fn(*s);
		for (size_t j = 0; j < _STUNE_RAW_MAX; j++)
			S(d->raw[j]);
	}
#undef S
}

static size_t n_newlines;

static void count_newlines(char *s)
{
	n_newlines += strchr(s, '\n') != NULL;
}

static void unnewline(char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			*s = '_';
}

static char *render(const struct stune_topology *t, enum out_format fmt, bool wrap,
		    const struct stune_payload_status *ps, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	fuzz_check(m != NULL, "memory");
	struct out *o = out_new(fmt, m);
	fuzz_check(o != NULL, "memory");
	if (wrap)
		out_set_wrap(o, WRAP_DEFAULT_COLS);
	render_topology(o, t, root, 1, SIZE_MAX, ps);
	fuzz_check(out_finish(o) == 0, "rendering");
	out_free(o);
	fuzz_check(fclose(m) == 0, "memory");
	return buf;
}

static size_t lines(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/* What scsitune detect does, and its output. */
static void detect(struct stune_ctx *ctx)
{
	struct stune_topology *t = NULL;
	int r = stune_topology_scan(ctx, &t);
	check_refusal(r, "scan");
	if (r < 0)
		return;
	for (size_t i = 0; i < t->n_hbas; i++) {
		const struct stune_num *n = &t->hbas[i].numa_node;
		fuzz_check(!n->set || n->v == -1 ||
			       (n->v >= 0 && n->v <= 65535 &&
				(t->numa.possible.valid ? stune_cpuset_has(&t->numa.possible, (unsigned)n->v)
				 : t->numa.online.valid ? stune_cpuset_has(&t->numa.online, (unsigned)n->v)
							: n->v == 0)),
			   "HBA %zu: numa_node %lld is no possible node", i, (long long)n->v);
	}
	struct stune_payload_status *ps = NULL;
	if (stune_payload_state(ctx, NULL, NULL, 0, NULL, &ps) < 0)
		ps = NULL;
	size_t len;
	char *text = render(t, OUT_TEXT, true, ps, &len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		fuzz_check((c >= 0x20 && c != 0x7f) || c == '\n',
			   "detect's text has the control character 0x%02x: %.*s", c,
			   (int)(len - i < 60 ? len - i : 60), text + i);
		fuzz_check(!(c == 0xc2 && i + 1 < len && (unsigned char)text[i + 1] < 0xa0 &&
			     (unsigned char)text[i + 1] >= 0x80),
			   "detect's text has a C1 control character");
	}
	free(text);
	/* detect --json: one JSON document (json-c's parser; it does not check UTF-8). */
	text = render(t, OUT_JSON, false, ps, &len);
	json_object *doc = json_tokener_parse(text);
	fuzz_check(doc != NULL, "detect --json is no JSON: %.200s", text);
	json_object_put(doc);
	free(text);
	/* A newline of the model's strings is escaped: the same lines without it. */
	n_newlines = 0;
	each_str(t, count_newlines);
	if (n_newlines) {
		text = render(t, OUT_TEXT, false, ps, &len);
		size_t before = lines(text, len);
		free(text);
		each_str(t, unnewline);
		text = render(t, OUT_TEXT, false, ps, &len);
		fuzz_check(lines(text, len) == before,
			   "a string's newline reached detect's text unescaped (%zu lines, %zu)", before,
			   lines(text, len));
		free(text);
	}
	stune_payload_status_free(ps);
	stune_topology_free(t);
}

/* Is cpu one the host has? */
static bool host_cpu(const struct stune_topology *t, unsigned cpu)
{
	const struct stune_cpus *c = &t->cpus;
	const struct stune_cpuset *s = c->online.valid ? &c->online : c->present.valid ? &c->present : &c->possible;
	return s->valid && stune_cpuset_has(s, cpu);
}

/* What apply --profile numa --dry-run does. */
static void plan(struct stune_ctx *ctx)
{
	struct stune_topology *t = NULL;
	int r = stune_topology_scan_for_plan_attrs(ctx, stune_plan_disk_attrs(numa), &t);
	check_refusal(r, "the plan's scan");
	if (r < 0)
		return;
	struct stune_plan *p = NULL;
	r = stune_plan_build(t, numa, &p);
	check_refusal(r, "the plan");
	for (size_t i = 0; r >= 0 && i < p->n_changes; i++) {
		const struct stune_change *c = &p->changes[i];
		if (c->kind != STUNE_OBJ_IRQ || !c->desired || strcmp(c->setting, "smp_affinity_list"))
			continue;
		struct stune_cpuset want = {0};
		fuzz_check(stune_cpuset_parse_list(&want, c->desired) == 0, "%s: desired '%s' is no cpulist", c->object,
			   c->desired);
		stune_cpuset_foreach (cpu, &want) {
			fuzz_check(host_cpu(t, (unsigned)cpu), "%s: desired CPU %d (of %s) is not on the host",
				   c->object, cpu, c->desired);
		}
		stune_cpuset_clear(&want);
	}
	if (r >= 0)
		stune_plan_free(p);
	stune_topology_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!n_files)
		LLVMFuzzerInitialize(NULL, NULL);
	const uint8_t *parts[MAX_RECORDS];
	size_t lens[MAX_RECORDS];
	size_t n = fuzz_split(data, size, "\n%%\n", parts, lens, MAX_RECORDS);
	size_t touched[MAX_RECORDS];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (lens[i] < 2)
			continue;
		size_t idx = (((size_t)parts[i][0] << 8) | parts[i][1]) % n_files;
		fuzz_write(root, files[idx], parts[i] + 2, lens[i] - 2);
		touched[k++] = idx;
	}
	struct stune_ctx *ctx = NULL;
	fuzz_check(stune_ctx_new(root, &ctx) == 0, "a context on %s", root);
	stune_ctx_set_log(ctx, on_log, NULL);
	detect(ctx);
	plan(ctx);
	stune_ctx_free(ctx);
	for (size_t i = 0; i < k; i++)
		fuzz_write(root, files[touched[i]], orig[touched[i]], orig_len[touched[i]]);
	return 0;
}
