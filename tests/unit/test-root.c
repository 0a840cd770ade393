/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The root layer and attribute readers, on a temporary tree (never the host). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/root.h"
#include "tap.h"
#include "detect/topology.h"

static char dir[] = "/tmp/stune-test-root-XXXXXX";

static void put(const char *rel, const char *content)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(2);
	}
	fputs(content, f);
	fclose(f);
}

static void mk(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	if (symlink(target, p) < 0) {
		perror(p);
		exit(2);
	}
}

static int warnings;
static char last_path[512];
static void logfn(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	(void)data;
	(void)msg;
	if (level <= STUNE_LOG_WARNING) {
		warnings++;
		snprintf(last_path, sizeof(last_path), "%s", path ? path : "");
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 2;
	mk("sys");
	mk("sys/devices");
	mk("sys/devices/pci0000:00");
	mk("sys/devices/pci0000:00/0000:00:04.0");
	mk("sys/class");
	mk("sys/class/x");
	mk("etc");
	put("sys/devices/pci0000:00/0000:00:04.0/numa_node", "-1\n");
	put("sys/devices/pci0000:00/0000:00:04.0/garbage", "12abc\n");
	put("sys/devices/pci0000:00/0000:00:04.0/counter", "0xffffffff80000123\n");
	put("sys/devices/pci0000:00/0000:00:04.0/two", "a\n\n");
	ln("../../devices/pci0000:00/0000:00:04.0", "sys/class/x/dev0");
	ln("/sys/devices/pci0000:00", "sys/class/x/abs");     /* absolute: inside the root */
	ln("../../../../../../../etc", "sys/class/x/escape"); /* .. above the root stays in it */
	put("etc/marker", "in-root\n");

	struct stune_root *r = NULL;
	char *s = NULL;
	CHECK(stune_root_new(dir, &r) == 0);
	CHECK(!stune_root_is_live(r));

	CHECK(stune_root_resolve(r, "sys/class/x/dev0/numa_node", &s) == 0);
	CHECK_STR(s, "sys/devices/pci0000:00/0000:00:04.0/numa_node");
	free(s);
	CHECK(stune_root_resolve(r, "sys/class/x/abs/0000:00:04.0", &s) == 0);
	CHECK_STR(s, "sys/devices/pci0000:00/0000:00:04.0");
	free(s);
	CHECK(stune_root_resolve(r, "sys/class/x/escape/marker", &s) == 0);
	CHECK_STR(s, "etc/marker");
	free(s);
	CHECK(stune_root_read(r, "sys/class/x/escape/marker", &s) == 0);
	CHECK_STR(s, "in-root");
	free(s);
	CHECK(stune_root_resolve(r, "sys/class/x/missing/foo", &s) == -ENOENT);

	/* One trailing newline goes, the rest stays. */
	CHECK(stune_root_readf(r, &s, "sys/class/x/dev0/%s", "two") == 0);
	CHECK_STR(s, "a\n");
	free(s);
	s = NULL;
	CHECK(stune_root_read(r, "nope", &s) == -ENOENT);
	stune_root_free(r);

	/* A sysroot that does not exist, or is a file, is refused up front. */
	CHECK(stune_root_new("/nonexistent/scsitune-test", &r) == -ENOENT);
	char file[600];
	snprintf(file, sizeof(file), "%s/etc/marker", dir);
	CHECK(stune_root_new(file, &r) == -ENOTDIR);

	/* Attribute readers: garbage warns with the file name, value stays unset. */
	struct stune_ctx *ctx = NULL;
	CHECK(stune_ctx_new(dir, &ctx) == 0);
	stune_ctx_set_log(ctx, logfn, NULL);
	struct stune_num n;
	const char *dev = "sys/devices/pci0000:00/0000:00:04.0";
	CHECK(stune_attr_num(ctx, &n, 0, "%s/numa_node", dev) == 0);
	CHECK(n.set && n.v == -1);
	CHECK(warnings == 0);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/garbage", dev) == -EINVAL);
	CHECK(!n.set);
	CHECK(warnings == 1);
	char want[600];
	snprintf(want, sizeof(want), "%s/%s/garbage", dir, dev);
	CHECK_STR(last_path, want);
	CHECK(stune_attr_num(ctx, &n, STUNE_ATTR_OPTIONAL, "%s/absent", dev) == -ENOENT);
	CHECK(warnings == 1);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/absent", dev) == -ENOENT);
	CHECK(warnings == 2);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/counter", dev) == 0);
	CHECK(n.set && (uint64_t)n.v == UINT64_C(0xffffffff80000123));
	stune_ctx_free(ctx);

	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	TAP_END();
}
