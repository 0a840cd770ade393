/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The payload room's parsers without the binary: minisign signatures (a
 * key and signatures made with Debian's minisign 0.11, prehashed and legacy,
 * kept here as they came out), dpkg's status file, proc/version, the
 * bundle manifest's refusals, and the initrd reader on a Debian-shaped
 * initrd made here with libarchive (an uncompressed cpio, zero padding, a
 * zstd-compressed cpio).
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "payload/bundle.h"
#include "payload/host.h"
#include "payload/initrd.h"
#include "payload/journal.h"
#include "payload/minisign.h"
#include "core/userfile.h"
#include "tap.h"

/* minisign -G -W; minisign -S -m msg -t ...; minisign -S -l (legacy). */
static const char pubkey[] = "untrusted comment: minisign public key AA5595A34F668E13\n"
			     "RWQTjmZPo5VVqoF+r7ybYRzWOmznyAPRBPUfRTG/ULxj+efIuVBl6mn/\n";
static const char message[] = "scsitune payload unit test\n";
static const char sig_ed[] =
    "untrusted comment: signature from minisign secret key\n"
    "RUQTjmZPo5VVqmM/iJQv+mJ+QJMJstQXK3meVZXgQ1OztafmavAd9dqTjVaQURs+LjFI2OfP0YZibDkAborJeGTAajDb46tolAw=\n"
    "trusted comment: unit test prehashed\n"
    "V/4DcH0S9UW7Foshe0Q94EP3g6sg8Y5+xR72yCrrDl88Xc5MuLVVbIZMixfkFlMIBWRbCLL59fukyDlJ6r9mCQ==\n";
static const char sig_legacy[] =
    "untrusted comment: signature from minisign secret key\n"
    "RWQTjmZPo5VVqgbSkSbjuImbKgW6a9mjr/cfxJTJ3Y9YvRAOdt5icPEzVjHhl25pAAw6eGpg+GMv0zyBMkDGf9aR7GRz0UzslAg=\n"
    "trusted comment: unit test legacy\n"
    "Rd/560Y0VtFT75zQVZy2n/T+ACisSBzXeEDHZ5BLbFrZv9dEJ5m7Jmomqz3K5aeyquWYuzOsAQp/ULwyS1spDQ==\n";

/* The public key above, parsed, its source "unit.pub" (freed by key_free). */
static int key_load(struct stune_minisign_key *k)
{
	char *err = NULL;
	*k = (struct stune_minisign_key){0};
	int r = stune_minisign_key_parse(pubkey, k, &err);
	free(err);
	if (r == 0 && !(k->source = strdup("unit.pub")))
		r = -ENOMEM;
	return r;
}

CASE(minisign_verifies, "minisign: the key and its id read; a prehashed and a legacy signature verify")
{
	struct stune_minisign_key k = {0};
	char *err = NULL, id[17];
	CHECK(stune_minisign_key_parse(pubkey, &k, &err) == 0);
	CHECK_STR(stune_minisign_keyid_str(k.id, id), "AA5595A34F668E13");
	k.source = strdup("unit.pub");
	struct stune_keyring ring = {.keys = &k, .n = 1};
	struct stune_minisign_result res = {0};

	CHECK(stune_minisign_verify(&ring, message, strlen(message), sig_ed, &res, &err) == 0);
	CHECK(res.prehashed == 1);
	CHECK_STR(res.trusted_comment, "unit test prehashed");
	stune_minisign_result_clear(&res);
	CHECK(stune_minisign_verify(&ring, message, strlen(message), sig_legacy, &res, &err) == 0);
	CHECK(res.prehashed == 0);
	stune_minisign_result_clear(&res);
	free(err);
	free(k.source);
}

CASE(minisign_refuses,
     "minisign: another message, a changed trusted comment or signature, no such key, garbage refused")
{
	struct stune_minisign_key k;
	char *err = NULL;
	CHECK(key_load(&k) == 0);
	struct stune_keyring ring = {.keys = &k, .n = 1};
	struct stune_minisign_result res = {0};

	/* another message, a changed trusted comment, a changed signature, no such key */
	CHECK(stune_minisign_verify(&ring, "x", 1, sig_ed, &res, &err) == -EKEYREJECTED);
	CHECK(err && strstr(err, "does not verify"));
	char *tc = strdup(sig_ed);
	if (tc) {
		memcpy(strstr(tc, "unit test"), "UNIT", 4);
		CHECK(stune_minisign_verify(&ring, message, strlen(message), tc, &res, &err) == -EKEYREJECTED);
		CHECK(err && strstr(err, "trusted comment"));
		free(tc);
	}
	char *other = strdup(sig_ed);
	if (other) {
		other[60] = other[60] == 'A' ? 'B' : 'A';
		CHECK(stune_minisign_verify(&ring, message, strlen(message), other, &res, &err) < 0);
		free(other);
	}
	struct stune_keyring empty = {0};
	CHECK(stune_minisign_verify(&empty, message, strlen(message), sig_ed, &res, &err) == -ENOKEY);
	CHECK(err && strstr(err, "AA5595A34F668E13"));
	CHECK(stune_minisign_verify(&ring, message, strlen(message), "garbage\n", &res, &err) == -EBADMSG);
	CHECK(stune_minisign_key_parse("RWQTjmZPo5VV\n", &(struct stune_minisign_key){0}, &err) == -EBADMSG);
	stune_minisign_result_clear(&res);
	free(err);
	free(k.source);
}

CASE(journal_hostile, "payload journal: a FIFO, a link to /dev/zero, an oversized file, STATE/payload a link: "
		      "refused at once, said in words")
{
	char state[256], p[300], other[300];
	struct stune_payload_journal *j = NULL;
	snprintf(state, sizeof(state), "%s/state", tap_tmpdir());
	snprintf(p, sizeof(p), "%s/payload", state);
	CHECK(stune_payload_journal_load(state, &j) == -ENOENT);
	CHECK(mkdir(state, 0755) == 0 && mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/payload/journal.json", state);
	time_t t0 = time(NULL);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(stune_payload_journal_load(state, &j) == -STUNE_ENOTREG);
	CHECK_STR(stune_payload_journal_strerror(-STUNE_ENOTREG), "not a regular file");
	CHECK(unlink(p) == 0 && symlink("/dev/zero", p) == 0);
	CHECK(stune_payload_journal_load(state, &j) == -ELOOP);
	CHECK_STR(stune_payload_journal_strerror(-ELOOP), "a symbolic link: refused");
	CHECK(unlink(p) == 0);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 300 << 20) == 0);
	if (fd >= 0)
		close(fd);
	CHECK(stune_payload_journal_load(state, &j) == -EFBIG);
	CHECK_STR(stune_payload_journal_strerror(-EFBIG), "larger than 16 MiB");
	CHECK(time(NULL) - t0 < 5); /* none waited on, nor read whole */
	/* STATE/payload itself a link, to a directory with a journal in it: not followed; the same journal
	 * in STATE/payload is read. */
	snprintf(other, sizeof(other), "%s/other", tap_tmpdir());
	snprintf(p, sizeof(p), "%s/payload/journal.json", state);
	CHECK(unlink(p) == 0);
	snprintf(p, sizeof(p), "%s/payload", state);
	CHECK(rmdir(p) == 0 && mkdir(other, 0700) == 0);
	char jp[400];
	snprintf(jp, sizeof(jp), "%s/journal.json", other);
	FILE *f = fopen(jp, "w");
	CHECK(f && fputs("{\"version\": 1, \"release\": \"r\", \"steps\": []}\n", f) >= 0 && fclose(f) == 0);
	CHECK(symlink(other, p) == 0);
	CHECK(stune_payload_journal_load(state, &j) == -ELOOP && j == NULL);
	CHECK(unlink(p) == 0 && rename(other, p) == 0);
	CHECK(stune_payload_journal_load(state, &j) == 0 && j && !strcmp(j->release, "r"));
	stune_payload_journal_free(j);
	CHECK_STR(stune_payload_journal_strerror(-EBADMSG), "not a scsitune payload journal");
}

CASE(proc_version, "proc/version: Debian's package version read, none without it")
{
	char *v = stune_proc_version_debian(
	    "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-12 (Debian "
	    "12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian "
	    "6.1.192-3 (2025-10-18)\n");
	CHECK_STR(v, "6.1.192-3");
	free(v);
	CHECK(stune_proc_version_debian("Linux version 6.1.0 (gcc (Debian 12)) #1 SMP\n") == NULL);
}

CASE(dpkg_status, "dpkg status: the installed version of exactly that package, config-files only is none")
{
	static const char status[] = "Package: linux-image-6.1.0-57-amd64\n"
				     "Status: deinstall ok config-files\n"
				     "Version: 6.1.192-2\n\n"
				     "Package: linux-image-6.1.0-58-amd64\n"
				     "Status: install ok installed\n"
				     "Priority: optional\n"
				     "Version: 6.1.193-1\n"
				     "Description: Linux 6.1 for 64-bit PCs (signed)\n\n"
				     "Package: linux-image-6.1.0-58-amd64-dbg\n"
				     "Status: install ok installed\n"
				     "Version: 9";
	CHECK(stune_dpkg_status_version(status, "linux-image-6.1.0-57-amd64") == NULL); /* config-files only */
	char *v = stune_dpkg_status_version(status, "linux-image-6.1.0-58-amd64");
	CHECK_STR(v, "6.1.193-1");
	free(v);
	v = stune_dpkg_status_version(status, "linux-image-6.1.0-58-amd64-dbg"); /* the last paragraph, no newline */
	CHECK_STR(v, "9");
	free(v);
	CHECK(stune_dpkg_status_version(status, "linux-image-6.1.0-5") == NULL); /* a prefix is not the package */
}

/* A manifest: its release and its "files" array's contents as given. */
static const char manifest_head[] =
    "{\"format\":\"scsitune-payload\",\"format_version\":1,\"payload_version\":\"1+x\","
    "\"release\":\"%s\",\"debian_package\":\"linux-image-6.1.0-57-amd64\","
    "\"debian_version\":\"6.1.192-3\",\"vermagic\":\"6.1.0-57-amd64 SMP\",\"created\":\"t\","
    "\"files\":[%s],\"modules\":[{\"name\":\"scsi_mod\",\"file\":\"modules/scsi_mod.ko\","
    "\"vermagic\":\"6.1.0-57-amd64 SMP\",\"version\":\"v\",\"srcversion\":\"s\","
    "\"build_id\":\"ab\",\"signed\":false,\"exports\":{\"scsi_host_alloc\":\"0x12345678\"}}]}";
static const char manifest_f1[] = "{\"name\":\"modules/scsi_mod.ko\",\"size\":1,\"sha256\":"
				  "\"0000000000000000000000000000000000000000000000000000000000000000\"}";

CASE(manifest_parses, "bundle manifest: a module and its exports' CRCs read")
{
	char *err = NULL;
	struct stune_manifest *m = NULL;
	char buf[4096];
	snprintf(buf, sizeof(buf), manifest_head, "6.1.0-57-amd64", manifest_f1);
	CHECK(stune_manifest_parse(buf, strlen(buf), &m, &err) == 0);
	CHECK(m && m->n_modules == 1 && m->modules[0].n_exports == 1 && m->modules[0].exports[0].crc == 0x12345678);
	stune_manifest_free(m);
	free(err);
}

CASE(manifest_refused, "bundle manifest refused, saying why: a release path, a debian_package not "
		       "linux-image-RELEASE, a file twice, a \"..\", another format")
{
	char *err = NULL;
	struct stune_manifest *m = NULL;
	char buf[4096];
	snprintf(buf, sizeof(buf), manifest_head, "../../etc", manifest_f1);
	CHECK(stune_manifest_parse(buf, strlen(buf), &m, &err) == -EBADMSG);
	CHECK(err && strstr(err, "\"release\""));
	snprintf(buf, sizeof(buf), manifest_head, "6.1.0-58-amd64", manifest_f1); /* debian_package: ...-57-amd64 */
	CHECK(stune_manifest_parse(buf, strlen(buf), &m, &err) == -EBADMSG && !m);
	CHECK_STR(err, "manifest.json: \"debian_package\" linux-image-6.1.0-57-amd64 is not "
		       "linux-image-6.1.0-58-amd64 (the package of its \"release\")");
	char files[1024];
	snprintf(files, sizeof(files), "%s,%s", manifest_f1, manifest_f1);
	snprintf(buf, sizeof(buf), manifest_head, "6.1.0-57-amd64", files);
	CHECK(stune_manifest_parse(buf, strlen(buf), &m, &err) == -EBADMSG);
	CHECK(err && strstr(err, "listed twice"));
	snprintf(files, sizeof(files), "%s,{\"name\":\"modules/../x\",\"size\":1,\"sha256\":\"%064d\"}", manifest_f1,
		 0);
	snprintf(buf, sizeof(buf), manifest_head, "6.1.0-57-amd64", files);
	CHECK(stune_manifest_parse(buf, strlen(buf), &m, &err) == -EBADMSG);
	CHECK(err && strstr(err, "no \"..\""));
	CHECK(stune_manifest_parse("{\"format\":\"other\"}", 18, &m, &err) == -EBADMSG);
	stune_manifest_free(m);
	free(err);
}

/* --- a Debian-shaped initrd, made with libarchive ------------------------------------ */

struct mem {
	char *p;
	size_t n;
};

static la_ssize_t mem_write(struct archive *a, void *data, const void *buf, size_t len)
{
	(void)a;
	struct mem *m = data;
	m->p = realloc(m->p, m->n + len);
	memcpy(m->p + m->n, buf, len);
	m->n += len;
	return (la_ssize_t)len;
}

static void cpio(struct mem *m, bool zstd, const char *const *names, const char *const *contents)
{
	struct archive *a = archive_write_new();
	if (zstd)
		archive_write_add_filter_zstd(a);
	archive_write_set_format_cpio_newc(a);
	archive_write_set_bytes_in_last_block(a, 1);
	archive_write_open(a, m, NULL, mem_write, NULL);
	for (size_t i = 0; names[i]; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, names[i]);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, (la_int64_t)strlen(contents[i]));
		archive_write_header(a, e);
		archive_write_data(a, contents[i], strlen(contents[i]));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
}

/* The initrd: an uncompressed early cpio (microcode), zero padding, then a
 * zstd-compressed cpio with the stock scsi_mod, ours in updates/,
 * modules.dep naming ours, and sd_mod after them. Caller frees m->p. */
static void debian_initrd(struct mem *m)
{
	static const char *const early[] = {"kernel/x86/microcode/AuthenticAMD.bin", NULL};
	static const char *const early_c[] = {"microcode", NULL};
	*m = (struct mem){0};
	cpio(m, false, early, early_c);
	m->p = realloc(m->p, m->n + 512); /* zero padding between the parts */
	if (!m->p)
		abort();
	memset(m->p + m->n, 0, 512);
	m->n += 512;
	static const char *const main_n[] = {
	    "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/scsi_mod.ko",
	    "usr/lib/modules/6.1.0-57-amd64/updates/scsitune/scsi_mod.ko",
	    "usr/lib/modules/6.1.0-57-amd64/modules.dep",
	    "usr/lib/modules/6.1.0-57-amd64/kernel/drivers/scsi/sd_mod.ko",
	    NULL,
	};
	static const char *const main_c[] = {
	    "stock",
	    "ours",
	    "updates/scsitune/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko\n"
	    "kernel/drivers/scsi/sd_mod.ko: updates/scsitune/scsi_mod.ko\n",
	    "sd",
	    NULL,
	};
	cpio(m, true, main_n, main_c);
}

CASE(initrd_resolves_ours, "initrd: both parts read, our scsi_mod found by modules.dep, stopped once it was known")
{
	struct mem m;
	debian_initrd(&m);
	char *const want[] = {"scsi_mod", "target_core_mod", NULL};
	struct stune_initrd *i = NULL;
	char *err = NULL;
	CHECK(stune_initrd_read((const uint8_t *)m.p, m.n, "6.1.0-57-amd64", want, &i, &err) == 0);
	if (i) {
		CHECK(i->parts == 2);
		char *rel = stune_initrd_resolve(i, "scsi_mod");
		CHECK_STR(rel, "updates/scsitune/scsi_mod.ko");
		const struct stune_initrd_file *f = rel ? stune_initrd_file(i, "scsi_mod", rel) : NULL;
		char ours[STUNE_SHA256_HEX];
		stune_sha256_hex("ours", 4, ours);
		CHECK(f && !strcmp(f->sha256, ours));
		CHECK(stune_initrd_resolve(i, "target_core_mod") == NULL);
		/* stopped once modules.dep and our copy were known: sd_mod was never read */
		CHECK(i->complete && i->entries == 4);
		free(rel);
		stune_initrd_free(i);
	}
	free(err);
	free(m.p);
}

CASE(initrd_cut_short, "initrd: the same cut short is damaged, the part named")
{
	struct mem m;
	debian_initrd(&m);
	struct stune_initrd *i = NULL;
	char *err = NULL;
	CHECK(stune_initrd_read((const uint8_t *)m.p, m.n - 40, "6.1.0-57-amd64", (char *const[]){"sd_mod", NULL}, &i,
				&err) == -EBADMSG);
	CHECK(err && strstr(err, "part 2"));
	stune_initrd_free(i);
	free(err);
	free(m.p);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
