/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The root layer and attribute readers, on a temporary tree (never the host). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/root.h"
#include "tap.h"
#include "detect/topology.h"

/* REL in this case's directory. */
static void path_in(char *p, size_t size, const char *rel)
{
	snprintf(p, size, "%s/%s", tap_tmpdir(), rel);
}

static void put(const char *rel, const char *content)
{
	char p[512];
	path_in(p, sizeof(p), rel);
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
	path_in(p, sizeof(p), rel);
	mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
	char p[512];
	path_in(p, sizeof(p), rel);
	if (symlink(target, p) < 0) {
		perror(p);
		exit(2);
	}
}

/* What the log was told: the warnings and the path of the last one. */
struct seen {
	int warnings;
	char last_path[512];
};

static void logfn(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	struct seen *seen = data;
	(void)msg;
	if (level <= STUNE_LOG_WARNING) {
		seen->warnings++;
		snprintf(seen->last_path, sizeof(seen->last_path), "%s", path ? path : "");
	}
}

static char *host_file(const char *rel)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", tap_tmpdir(), rel) < 0)
		exit(2);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char buf[256] = "";
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

#define DEVDIR "sys/devices/pci0000:00/0000:00:04.0"

/* The tree every case reads, in this case's directory: a PCI device with its
 * attributes, class links to it (relative, absolute, through a link, with a
 * ".." in the middle), links that climb above the root, and an etc/ that says
 * in-root where the host's would say something else. Its path. */
static const char *make_tree(void)
{
	mk("sys");
	mk("sys/devices");
	mk("sys/devices/pci0000:00");
	mk(DEVDIR);
	mk("sys/class");
	mk("sys/class/x");
	mk("etc");
	put(DEVDIR "/numa_node", "-1\n");
	put(DEVDIR "/garbage", "12abc\n");
	put(DEVDIR "/counter", "0xffffffff80000123\n");
	put(DEVDIR "/two", "a\n\n");
	ln("../../devices/pci0000:00/0000:00:04.0", "sys/class/x/dev0");
	ln("/sys/devices/pci0000:00", "sys/class/x/abs");     /* absolute: inside the root */
	ln("../../../../../../../etc", "sys/class/x/escape"); /* .. above the root stays in it */
	put("etc/marker", "in-root\n");
	put("etc/hostname", "in-root\n");
	put("etc/scsitune-wfile", "v0\n");
	ln("/etc/hostname", DEVDIR "/abs-hostname");
	ln("../../../../../../../../../../etc/hostname", DEVDIR "/up-hostname");
	ln("/etc", DEVDIR "/etcdir");
	ln("../../../../../../../../etc", DEVDIR "/up-dir");
	ln("/etc/scsitune-wfile", DEVDIR "/abs-wfile");
	ln("/etc", "sys/class/x/absetc");
	mk("sys/devices/linked");
	ln("pci0000:00", "sys/devices/pcilink");
	ln("../../devices/pcilink/0000:00:04.0", "sys/class/x/via-link"); /* a link on the way */
	ln("../../devices/linked/../pci0000:00/0000:00:04.0", "sys/class/x/dotdot-mid");
	put("sys/class/x/file", "f\n");
	return tap_tmpdir();
}

/* The root on a fresh tree, paths resolved by hand (as without openat2) when asked; NULL when it fails (checked). */
static struct stune_root *tree_root(bool by_hand)
{
	struct stune_root *r = NULL;
	CHECK(stune_root_new(make_tree(), &r) == 0);
	if (r && by_hand)
		stune_root_force_resolve_by_hand(r);
	return r;
}

CASE(resolve_inside, "links resolve inside the root: relative, absolute, and \"..\" above the root")
{
	struct stune_root *r = NULL;
	char *s = NULL;
	CHECK(stune_root_new(make_tree(), &r) == 0);
	if (!r)
		return;
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
	stune_root_free(r);
}

CASE(confined, "the host's resolution of a tree path: links inside pass, an absolute one or \"..\" above the top named")
{
	char root[512];
	path_in(root, sizeof(root), "t");
	mk("t");
	mk("t/usr");
	mk("t/usr/lib");
	mk("t/usr/lib/modules");
	mk("t/usr/lib/modules/R");
	ln("usr/lib", "t/lib");			   /* relative, inside: as Debian 12's */
	ln("/srv/host-boot", "t/boot");		   /* absolute */
	ln("../../../outside", "t/usr/lib/up");	   /* relative, above the top */
	ln("up/x", "t/usr/lib/via");		   /* a chain: the link that went above is named */
	ln("/usr/lib/modules/R", "t/usr/lib/abs"); /* absolute into the tree: the host's /usr, not the tree's */
	put("t/usr/file", "x");
	struct stune_root *r = NULL, *live = NULL;
	char *link = NULL, *target = NULL;
	CHECK(stune_root_new(root, &r) == 0);
	if (!r)
		return;
	CHECK(stune_root_confined(r, "lib/modules/R", &link, &target) == 0 && !link && !target);
	CHECK(stune_root_confined(r, "/lib/modules/R/missing/deeper", &link, &target) == 0);
	CHECK(stune_root_confined(r, "usr/file/beyond", &link, &target) == 0);
	CHECK(stune_root_confined(r, "etc", &link, &target) == 0); /* not there: nothing to follow */
	CHECK(stune_root_confined(r, "boot", &link, &target) == -EXDEV);
	CHECK_STR(link, "/boot");
	CHECK_STR(target, "/srv/host-boot");
	free(link);
	free(target);
	CHECK(stune_root_confined(r, "lib/up/y", &link, &target) == -EXDEV);
	CHECK_STR(link, "/usr/lib/up");
	CHECK_STR(target, "../../../outside");
	free(link);
	free(target);
	CHECK(stune_root_confined(r, "lib/via", &link, &target) == -EXDEV);
	CHECK_STR(link, "/usr/lib/up");
	free(link);
	free(target);
	CHECK(stune_root_confined(r, "lib/abs", &link, &target) == -EXDEV);
	CHECK_STR(link, "/usr/lib/abs");
	free(link);
	free(target);
	CHECK(stune_root_new(NULL, &live) == 0);
	CHECK(live && stune_root_confined(live, "boot", &link, &target) == 0 && !link);
	stune_root_free(live);
	stune_root_free(r);
}

CASE(read_newline, "one trailing newline goes, the rest stays; a missing file is -ENOENT")
{
	struct stune_root *r = NULL;
	char *s = NULL;
	CHECK(stune_root_new(make_tree(), &r) == 0);
	if (!r)
		return;
	CHECK(stune_root_readf(r, &s, "sys/class/x/dev0/%s", "two") == 0);
	CHECK_STR(s, "a\n");
	free(s);
	s = NULL;
	CHECK(stune_root_read(r, "nope", &s) == -ENOENT);
	stune_root_free(r);
}

CASE(sysroot_refused, "a sysroot that does not exist, or is a file, is refused up front")
{
	struct stune_root *r = NULL;
	CHECK(stune_root_new("/nonexistent/scsitune-test", &r) == -ENOENT);
	char file[600];
	snprintf(file, sizeof(file), "%s/etc/marker", make_tree());
	CHECK(stune_root_new(file, &r) == -ENOTDIR);
	stune_root_free(r);
}

CASE(attr_readers, "attribute readers: garbage warns with the file name, the value stays unset")
{
	struct stune_ctx *ctx = NULL;
	struct seen seen = {0};
	CHECK(stune_ctx_new(make_tree(), &ctx) == 0);
	if (!ctx)
		return;
	stune_ctx_set_log(ctx, logfn, &seen);
	struct stune_num n;
	const char *dev = DEVDIR;
	CHECK(stune_attr_num(ctx, &n, 0, "%s/numa_node", dev) == 0);
	CHECK(n.set && n.v == -1);
	CHECK(seen.warnings == 0);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/garbage", dev) == -EINVAL);
	CHECK(!n.set);
	CHECK(seen.warnings == 1);
	char want[600];
	snprintf(want, sizeof(want), "%s/%s/garbage", tap_tmpdir(), dev);
	CHECK_STR(seen.last_path, want);
	CHECK(stune_attr_num(ctx, &n, STUNE_ATTR_OPTIONAL, "%s/absent", dev) == -ENOENT);
	CHECK(seen.warnings == 1);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/absent", dev) == -ENOENT);
	CHECK(seen.warnings == 2);
	CHECK(stune_attr_num(ctx, &n, 0, "%s/counter", dev) == 0);
	CHECK(n.set && (uint64_t)n.v == UINT64_C(0xffffffff80000123));
	stune_ctx_free(ctx);
}
/*
 * Directories opened once, entries read relative to them: the same files
 * as the full-path reads, and never one outside the root, whether through
 * an absolute link, a ".." above the directory or the root, or a link to a
 * directory (by_hand: as without openat2, every path resolved by hand).
 */

/* A directory by its own path: canonical; its files read relative to it.
 * Escapes: an absolute link, ".." links and ".." paths reach the root's
 * etc/, never the host's (the host has an /etc/hostname; the tree's says in-root). */
static void rdir_reads(bool by_hand)
{
	struct stune_root *r = tree_root(by_hand);
	struct stune_rdir d = STUNE_RDIR_INIT;
	char *s = NULL;
	if (!r)
		return;
	CHECK(stune_root_dir_open(r, "sys/devices/pci0000:00/0000:00:04.0", &d) == 0 && d.fd >= 0);
	CHECK(stune_root_read_at(r, &d, "numa_node", &s) == 0);
	CHECK_STR(s, "-1");
	free(s);
	s = NULL;
	CHECK(stune_root_read_at(r, &d, "absent", &s) == -ENOENT && !s);

	static const char *const rels[] = {
	    "abs-hostname",    "up-hostname",	  "../../../../../../../../../etc/hostname",
	    "etcdir/hostname", "up-dir/hostname", "../../../../etc/hostname"};
	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
		s = NULL;
		int rr = stune_root_read_at(r, &d, rels[i], &s);
		CHECK(rr == 0);
		if (rr != 0 || !s || strcmp(s, "in-root"))
			fprintf(stderr, "  read_at %s%s: %d '%s'\n", rels[i], by_hand ? " (by hand)" : "", rr,
				s ? s : "");
		CHECK_STR(s, "in-root");
		free(s);
	}
	/* The same through readlink: the link itself, not followed. */
	s = NULL;
	CHECK(stune_root_readlink_at(r, &d, "abs-hostname", &s) == 0);
	CHECK_STR(s, "/etc/hostname");
	free(s);
	stune_root_dir_close(&d);
	CHECK(d.fd == -1 && !d.path);
	stune_root_free(r);
}

CASE(rdir_reads, "a directory opened once: its files read relative to it, escaping links and \"..\" stay in the root")
{
	rdir_reads(false);
}

CASE(rdir_reads_by_hand, "a directory opened once: its files read relative to it, escaping links and \"..\" stay in "
			 "the root (by hand)")
{
	rdir_reads(true);
}

/* A write through an escaping link lands in the root, not on the host. */
static void rdir_write(bool by_hand)
{
	struct stune_root *r = tree_root(by_hand);
	struct stune_rdir d = STUNE_RDIR_INIT;
	char *s = NULL, *want = NULL;
	if (!r)
		return;
	CHECK(stune_root_dir_open(r, "sys/devices/pci0000:00/0000:00:04.0", &d) == 0 && d.fd >= 0);
	CHECK(stune_root_write_read_at(r, &d, "abs-wfile", "v1\n", &s) == 0);
	CHECK_STR(s, "v1");
	free(s);
	want = host_file("etc/scsitune-wfile");
	s = slurp(want);
	CHECK_STR(s, "v1\n");
	free(s);
	free(want);
	CHECK(access("/etc/scsitune-wfile", F_OK) < 0);
	s = NULL;
	CHECK(stune_root_write_read_at(r, &d, "../../../../../../../etc/scsitune-wfile", "v2\n", &s) == 0);
	CHECK_STR(s, "v2");
	free(s);
	CHECK(access("/etc/scsitune-wfile", F_OK) < 0);
	stune_root_dir_close(&d);
	stune_root_free(r);
}

CASE(rdir_write, "a write through an escaping link or \"..\" lands in the root, not on the host")
{
	rdir_write(false);
}

CASE(rdir_write_by_hand, "a write through an escaping link or \"..\" lands in the root, not on the host (by hand)")
{
	rdir_write(true);
}

/* revert's read, write back and read back on one open file: a shorter value cuts the file, a longer one replaces it. */
CASE(rewrite_fd, "an attribute read and written on one open file: shorter values cut the file, longer ones replace it")
{
	struct stune_root *r = tree_root(false);
	struct stune_rdir d = STUNE_RDIR_INIT;
	char *now = NULL, *back = NULL, *path = host_file(DEVDIR "/rw-attr");
	if (!r)
		return;
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("12345\n", f) >= 0 && fclose(f) == 0);
	CHECK(stune_root_dir_open(r, DEVDIR, &d) == 0 && d.fd >= 0);
	int fd = stune_root_open_rw_at(r, &d, "rw-attr", &now);
	CHECK(fd >= 0);
	CHECK_STR(now, "12345");
	CHECK(stune_root_rewrite_fd(fd, "9\n", strlen(now) + 1, &back) == 0);
	CHECK_STR(back, "9");
	char *s = slurp(path);
	CHECK_STR(s, "9\n"); /* nothing of "12345" left behind */
	free(s);
	free(back);
	back = NULL;
	CHECK(stune_root_rewrite_fd(fd, "[mq-deadline] none\n", 2, &back) == 0);
	CHECK_STR(back, "[mq-deadline] none");
	free(back);
	s = slurp(path);
	CHECK_STR(s, "[mq-deadline] none\n");
	free(s);
	stune_root_close_written(fd);
	free(now);
	now = NULL;
	/* Not there, or a FIFO (never a blocking read): an error, no descriptor. */
	CHECK(stune_root_open_rw_at(r, &d, "no-such-attr", &now) == -ENOENT && !now);
	char *fifo = host_file(DEVDIR "/rw-fifo");
	CHECK(mkfifo(fifo, 0600) == 0);
	fd = stune_root_open_rw_at(r, &d, "rw-fifo", &now);
	CHECK(fd < 0 && !now);
	if (fd >= 0)
		close(fd);
	free(fifo);
	free(path);
	stune_root_dir_close(&d);
	stune_root_free(r);
}

/* An entry followed to its directory: the canonical path stune_root_resolve gives. */
static void rdir_entries(bool by_hand)
{
	struct stune_root *r = tree_root(by_hand);
	struct stune_rdir cls = STUNE_RDIR_INIT, e = STUNE_RDIR_INIT;
	char *want = NULL;
	if (!r)
		return;
	CHECK(stune_root_dir_open_canonical(r, "sys/class/x", &cls) == 0);
	static const char *const entries[] = {"dev0", "abs", "escape", "absetc", "via-link", "dotdot-mid"};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char full[128];
		snprintf(full, sizeof(full), "sys/class/x/%s", entries[i]);
		CHECK(stune_root_resolve(r, full, &want) == 0);
		CHECK(stune_root_dir_open_entry(r, &cls, entries[i], &e) == 0);
		CHECK_STR(e.path, want);
		if (!e.path || !want || strcmp(e.path, want))
			fprintf(stderr, "  entry %s%s\n", entries[i], by_hand ? " (by hand)" : "");
		CHECK(e.canonical && e.fd >= 0);
		stune_root_dir_close(&e);
		/* The entry's target unopened: the same directory, proven canonical by
		 * opening it, or resolved when that open says it is not (what detect's
		 * disk scan does with the listing's paths). */
		char *cand = NULL, *res = NULL;
		int t = stune_root_dir_entry_target(r, &cls, entries[i], &cand);
		CHECK(t == 0 || (t == -EAGAIN && !cand));
		if (t == 0 && stune_root_dir_open_canonical(r, cand, &e) == 0) {
			if (e.canonical) {
				CHECK_STR(cand, want);
			} else {
				CHECK(stune_root_resolve(r, cand, &res) == 0);
				CHECK_STR(res, want);
			}
			stune_root_dir_close(&e);
		} else if (t == 0) {
			CHECK(!"the target of an entry that opens does not open");
		}
		free(res);
		free(cand);
		free(want);
		want = NULL;
	}
	/* Without openat2 (by hand), or below a directory not proven canonical: not given. */
	{
		char *cand = NULL;
		int t = stune_root_dir_entry_target(r, &cls, "dev0", &cand);
		CHECK(by_hand ? t == -EAGAIN && !cand : t == 0 && cand);
		free(cand);
		cand = NULL;
		CHECK(stune_root_dir_entry_target(r, &cls, "..", &cand) == -EAGAIN && !cand);
		CHECK(stune_root_dir_entry_target(r, &cls, "a/b", &cand) == -EAGAIN && !cand);
	}
	stune_root_dir_close(&cls);
	stune_root_free(r);
}

CASE(rdir_entries, "an entry followed to its directory: the canonical path resolve gives, its target the same")
{
	rdir_entries(false);
}

CASE(rdir_entries_by_hand, "an entry followed to its directory: the canonical path resolve gives; no target without "
			   "openat2 (by hand)")
{
	rdir_entries(true);
}

/* Entries that escape land on the root's etc/; a missing entry, a file: errors;
 * a directory reached through links opens inside the root. */
static void rdir_entry_dirs(bool by_hand)
{
	struct stune_root *r = tree_root(by_hand);
	struct stune_rdir cls = STUNE_RDIR_INIT, e = STUNE_RDIR_INIT;
	char *s = NULL;
	if (!r)
		return;
	CHECK(stune_root_dir_open_canonical(r, "sys/class/x", &cls) == 0);
	/* escape and absetc both land on the root's etc/. */
	CHECK(stune_root_dir_open_entry(r, &cls, "escape", &e) == 0);
	CHECK_STR(e.path, "etc");
	CHECK(stune_root_read_at(r, &e, "hostname", &s) == 0);
	CHECK_STR(s, "in-root");
	free(s);
	stune_root_dir_close(&e);
	CHECK(stune_root_dir_open_entry(r, &cls, "absetc", &e) == 0);
	CHECK_STR(e.path, "etc");
	stune_root_dir_close(&e);
	/* A missing entry, a file: errors, as resolving and opening them gives. */
	CHECK(stune_root_dir_open_entry(r, &cls, "missing", &e) == -ENOENT && e.fd < 0);
	CHECK(stune_root_dir_open_entry(r, &cls, "file", &e) == -ENOTDIR && e.fd < 0);
	/* A directory reached through links opens inside the root too. */
	CHECK(stune_root_dir_open(r, "sys/class/x/escape", &e) == 0 && !e.canonical);
	stune_root_dir_close(&e);
	CHECK(stune_root_dir_open_canonical(r, "sys/class/x/escape", &e) == 0 && !e.canonical);
	s = NULL;
	CHECK(stune_root_read_at(r, &e, "hostname", &s) == 0);
	CHECK_STR(s, "in-root");
	free(s);
	stune_root_dir_close(&e);
	stune_root_dir_close(&cls);
	stune_root_free(r);
}

CASE(rdir_entry_dirs, "escaping entries open the root's etc/, a missing entry or a file is an error, links stay inside")
{
	rdir_entry_dirs(false);
}

CASE(rdir_entry_dirs_by_hand, "escaping entries open the root's etc/, a missing entry or a file is an error, links "
			      "stay inside (by hand)")
{
	rdir_entry_dirs(true);
}

static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * Batched closes: every file read is closed by the end of the batch, and
 * descriptors opened in between by someone else (interleaved numbers, a run
 * broken by them) stay open.
 */
CASE(batch_closes, "batched closes: every file read is closed by the end, others' descriptors opened between stay open")
{
	struct stune_root *r = NULL;
	struct stune_rdir d = STUNE_RDIR_INIT;
	CHECK(stune_root_new(make_tree(), &r) == 0);
	if (!r)
		return;
	CHECK(stune_root_dir_open(r, "sys/devices/pci0000:00/0000:00:04.0", &d) == 0);
	int base = open_fds(), foreign[40], n_foreign = 0, reads_ok = 0;
	stune_root_batch(r, true);
	for (int i = 0; i < 100; i++) {
		char *s = NULL;
		reads_ok += stune_root_read_at(r, &d, "numa_node", &s) == 0 && s && !strcmp(s, "-1");
		free(s);
		if (i % 3 == 0 && n_foreign < 40)
			foreign[n_foreign++] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	stune_root_batch(r, false);
	CHECK(reads_ok == 100);
	bool all_open = true;
	for (int i = 0; i < n_foreign; i++)
		all_open = all_open && foreign[i] >= 0 && fcntl(foreign[i], F_GETFD) >= 0;
	CHECK(all_open);
	CHECK(open_fds() == base + n_foreign);
	for (int i = 0; i < n_foreign; i++)
		close(foreign[i]);
	CHECK(open_fds() == base);
	stune_root_dir_close(&d);
	stune_root_free(r);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
