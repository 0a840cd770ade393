/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Line protocol encoding, the upload URL, auth files, the settings file and the spool. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "report/points.h"
#include "core/root.h"
#include "core/statefile.h"
#include "tap.h"
#include "net/http.h"
#include "net/spool.h"

static char *escape(const char *s)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	stune_lp_escape_tag(f, s);
	fclose(f);
	return buf;
}

static void check_escape(const char *in, const char *want)
{
	char *got = escape(in);
	CHECK_STR(got, want);
	free(got);
}

static void check_dbl(double v, const char *want)
{
	char buf[64];
	stune_lp_format_double(buf, sizeof(buf), v);
	CHECK_STR(buf, want);
}

static void check_url(const char *in, const char *want)
{
	char *out = NULL, *err = NULL;
	int r = stune_upload_url(in, &out, &err);
	if (want) {
		CHECK(r == 0);
		CHECK_STR(out, want);
	} else {
		CHECK(r == -EINVAL);
		CHECK(err != NULL);
	}
	free(out);
	free(err);
}

/* TEXT written as NAME in this case's directory, chmod MODE: its path (caller frees), NULL when not written. */
static char *write_file(const char *name, const char *text, mode_t mode)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", tap_tmpdir(), name) < 0)
		return NULL;
	FILE *f = fopen(p, "w");
	if (!f) {
		free(p);
		return NULL;
	}
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
	return p;
}

static int auth(const char *text, mode_t mode, struct stune_auth **a, char **err)
{
	char *p = write_file("auth", text, mode);
	if (!p)
		return -EIO;
	int r = stune_auth_load(p, a, err);
	free(p);
	return r;
}

/* TEXT as the settings file: stune_config_load's result (-EIO: not written). */
static int config_text(const char *text, bool missing_ok, struct stune_config **c, char **err)
{
	char *p = write_file("conf", text, 0644);
	if (!p)
		return -EIO;
	int r = stune_config_load(p, missing_ok, c, err);
	free(p);
	return r;
}

/* One fio run (randread 4k, 64 deep, 16 jobs; read latencies) encoded with
 * facts, its start time timestamp_ms (0: none in the file). */
static int encode_run(const struct stune_lp_facts *facts, int64_t timestamp_ms, char **out, size_t *len)
{
	struct stune_kv opts[] = {{"rw", "randread"}, {"bs", "4k"}, {"iodepth", "64"}, {"numjobs", "16"}};
	struct stune_fio_job job = {.name = "seed", .options = opts, .n_options = 4};
	struct stune_fio_run run = {.path = "/some/dir/run 1,a=b.json",
				    .fio_version = "fio-3.33",
				    .timestamp_ms = timestamp_ms,
				    .jobs = &job,
				    .n_jobs = 1,
				    .iops = 6255000.5,
				    .bw_kib_s = 25020002,
				    .n_failed = 0};
	run.total[STUNE_FIO_READ] = (struct stune_fio_io){.iops = 6255000.5, .bw_kib_s = 25020002, .io_bytes = 4096};
	run.total[STUNE_FIO_READ].clat = (struct stune_lat){
	    .samples = 10, .mean_ns = 123.25, .pct_set = {true, true, false}, .pct_ns = {100, 39680, 0}};
	return stune_lp_encode((struct stune_fio_run *[]){&run}, 1, facts, out, len);
}

CASE(escape_tags, "tag values escaped: space, comma, equals backslashed; backslash, newline, tab to _; UTF-8 kept")
{
	check_escape("plain", "plain");
	check_escape("a b,c=d", "a\\ b\\,c\\=d");
	check_escape("back\\slash", "back_slash");
	check_escape("new\nline\ttab", "new_line_tab");
	check_escape("ünïcode", "ünïcode");
}

CASE(format_double, "doubles: the shortest text that reads back, no negative zero")
{
	check_dbl(0, "0");
	check_dbl(-0.0, "0");
	check_dbl(39680, "39680");
	check_dbl(6255.0005, "6255.0005");
	check_dbl(0.1, "0.1");
	check_dbl(46793.206793000005, "46793.206793000005");
	check_dbl(1e20, "1e+20");
	check_dbl(-2.5, "-2.5");
}

CASE(upload_url, "upload URL: precision=ms added to the query as it is")
{
	check_url("http://h:8428/write", "http://h:8428/write?precision=ms");
	check_url("https://h/write?db=scsitune", "https://h/write?db=scsitune&precision=ms");
	check_url("http://h/api/v2/write?org=o&bucket=b", "http://h/api/v2/write?org=o&bucket=b&precision=ms");
	check_url("http://h/write?", "http://h/write?precision=ms");
	check_url("http://h/write?db=x&", "http://h/write?db=x&precision=ms");
}

CASE(upload_url_refused, "upload URL refused with a message: its own precision, a fragment, not http(s)")
{
	check_url("http://h/write?db=x&precision=ns", NULL);
	check_url("http://h/write#frag", NULL);
	check_url("ftp://h/write", NULL);
	check_url("h:8428/write", NULL);
}

CASE(run_line, "a run as one line: tags sorted and escaped, fields, the start time in ms")
{
	struct stune_lp_facts facts = {.host = "host 01", .kernel = "6.1.0-27-amd64", .phase = "", .fallback_ms = 1};
	char *out = NULL;
	size_t len = 0;
	CHECK(encode_run(&facts, 1796014800123, &out, &len) == 0);
	CHECK_STR(out, "scsitune_fio,bs=4k,file=run\\ 1\\,a\\=b.json,fio_version=fio-3.33,host=host\\ 01,iodepth=64,"
		       "kernel=6.1.0-27-amd64,numjobs=16,output_format=json,rw=randread "
		       "iops=6255000.5,kiops=6255.0005,bw_kib_s=25020002,read_iops=6255000.5,read_bw_kib_s=25020002,"
		       "read_io_bytes=4096i,read_clat_mean_ns=123.25,read_clat_p50_ns=100,read_clat_p99_ns=39680,"
		       "write_iops=0,write_bw_kib_s=0,write_io_bytes=0i,jobs=1i,errors=0i 1796014800123\n");
	CHECK(out && len == strlen(out));
	free(out);
}

CASE(run_line_devices, "a run on two devices: their count, the fairness and the worst device's read p99 as fields")
{
	struct stune_fio_job job = {.name = "/dev/sdb"};
	struct stune_fio_dev devs[2] = {{.filename = "/dev/sdb", .n_jobs = 1, .iops = 3000},
					{.filename = "/dev/sdc", .n_jobs = 1, .iops = 1000}};
	devs[0].clat[STUNE_FIO_READ] =
	    (struct stune_lat){.samples = 5, .pct_set = {true, true, true}, .pct_ns = {1, 700, 9}};
	devs[1].clat[STUNE_FIO_READ] =
	    (struct stune_lat){.samples = 5, .pct_set = {true, true, true}, .pct_ns = {1, 900, 9}};
	struct stune_fio_run run = {.path = "r.json",
				    .jobs = &job,
				    .n_jobs = 1,
				    .iops = 4000,
				    .devs = devs,
				    .n_devs = 2,
				    .fairness = 0.8,
				    .timestamp_ms = 5};
	run.total[STUNE_FIO_READ] = (struct stune_fio_io){.iops = 4000, .clat = {.samples = 10}};
	struct stune_lp_facts facts = {.host = "h", .fallback_ms = 1};
	char *out = NULL;
	size_t len = 0;
	CHECK(stune_lp_encode((struct stune_fio_run *[]){&run}, 1, &facts, &out, &len) == 0);
	CHECK_MSG(out && strstr(out, ",jobs=1i,errors=0i,devices=2i,fairness=0.8,worst_clat_p99_ns=900 5\n"), "%s",
		  out ? out : "(null)");
	free(out);
}

CASE(run_line_fallback_time, "a run with no start time in the file: the fallback time")
{
	struct stune_lp_facts facts = {.host = "host 01", .kernel = "6.1.0-27-amd64", .phase = "", .fallback_ms = 1};
	char *out = NULL;
	size_t len = 0;
	CHECK(encode_run(&facts, 0, &out, &len) == 0);
	CHECK(out && len > 3 && !strcmp(out + len - 3, " 1\n"));
	free(out);
}

CASE(run_line_provenance, "report --run's provenance facts: tags, sorted with the others, escaped")
{
	struct stune_lp_facts facts = {.host = "host 01", .kernel = "6.1.0-27-amd64", .phase = "", .fallback_ms = 1};
	char *out = NULL;
	size_t len = 0;
	facts.hba_model = "MPI3 Gen2, 9600";
	facts.firmware = "8.9.1.0";
	facts.payload = "scsitune-1";
	facts.profile = "numa";
	CHECK(encode_run(&facts, 1796014800123, &out, &len) == 0);
	static const char want[] =
	    "scsitune_fio,bs=4k,file=run\\ 1\\,a\\=b.json,fio_version=fio-3.33,firmware=8.9.1.0,"
	    "hba_model=MPI3\\ Gen2\\,\\ 9600,host=host\\ 01,iodepth=64,kernel=6.1.0-27-amd64,numjobs=16,"
	    "output_format=json,payload=scsitune-1,profile=numa,rw=randread iops=";
	CHECK(out && !strncmp(out, want, strlen(want)));
	free(out);
}

CASE(auth_file, "auth file: a scheme and token as the Authorization header, user:password as such, first line only")
{
	struct stune_auth *a = NULL;
	char *err = NULL;
	CHECK(auth("Bearer tok-123\n", 0600, &a, &err) == 0);
	CHECK(a && a->header && !a->userpwd);
	CHECK_STR(a ? a->header : NULL, "Authorization: Bearer tok-123");
	stune_auth_free(a);
	a = NULL;
	CHECK(auth("Token abc\r\nsecond line\n", 0640, &a, &err) == 0);
	CHECK_STR(a ? a->header : NULL, "Authorization: Token abc");
	stune_auth_free(a);
	a = NULL;
	CHECK(auth("scsitune:s3:cret\n", 0400, &a, &err) == 0);
	CHECK_STR(a ? a->userpwd : NULL, "scsitune:s3:cret");
	stune_auth_free(a);
	free(err);
}

CASE(auth_file_refused, "auth file refused with a message: readable by others, a bare or empty token, empty")
{
	struct stune_auth *a = NULL;
	char *err = NULL;
	CHECK(auth("scsitune:s3cret\n", 0644, &a, &err) == -EPERM);
	CHECK(err && strstr(err, "0644"));
	free(err);
	err = NULL;
	CHECK(auth("just-a-token\n", 0600, &a, &err) == -EINVAL && err);
	free(err);
	err = NULL;
	CHECK(auth("Bearer \n", 0600, &a, &err) == -EINVAL && err);
	free(err);
	err = NULL;
	CHECK(auth("", 0600, &a, &err) == -EINVAL && err);
	free(err);
	CHECK(a == NULL);
	stune_auth_free(a);
}

CASE(config_upload, "settings file: the [upload] keys read, comments skipped")
{
	struct stune_config *c = NULL;
	char *err = NULL;
	CHECK(config_text("# comment\n[upload]\nurl = http://127.0.0.1:1/write\nauth_file=/a\nca_file = /c\n", false,
			  &c, &err) == 0);
	CHECK_STR(c ? c->upload_url : NULL, "http://127.0.0.1:1/write");
	CHECK_STR(c ? c->upload_auth_file : NULL, "/a");
	CHECK_STR(c ? c->upload_ca_file : NULL, "/c");
	stune_config_free(c);
	free(err);
}

CASE(config_refused, "settings file: an unknown key or a syntax error refused, the line named")
{
	struct stune_config *c = NULL;
	char *err = NULL;
	CHECK(config_text("[upload]\nurl = x\n\nuser = me\n", false, &c, &err) == -EINVAL);
	CHECK_STR(err, "4: unknown key 'upload.user'");
	free(err);
	err = NULL;
	CHECK(config_text("[upload\n", false, &c, &err) == -EINVAL);
	CHECK_STR(err, "1: syntax error");
	free(err);
	stune_config_free(c);
}

CASE(config_missing, "settings file missing: an error, or the empty settings when that is allowed")
{
	struct stune_config *c = NULL;
	char *err = NULL;
	CHECK(stune_config_load("/nonexistent/scsitune.conf", false, &c, &err) == -ENOENT);
	CHECK(stune_config_load("/nonexistent/scsitune.conf", true, &c, &err) == 0 && c && !c->upload_url);
	CHECK(c && c->upload_timeout_s == 0);
	stune_config_free(c);
	free(err);
}

CASE(config_timeout, "upload.timeout: whole seconds from 1 to 3600, anything else refused by name")
{
	/* timeout = SECONDS, 1 to 3600. */
	struct stune_config *c = NULL;
	char *err = NULL;
	CHECK(config_text("[upload]\ntimeout = 7\n", false, &c, &err) == 0 && c && c->upload_timeout_s == 7);
	stune_config_free(c);
	c = NULL;
	const char *bad_timeouts[] = {"0", "3601", "-1", "+5", "5s", "1e3", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad_timeouts) / sizeof(*bad_timeouts); i++) {
		char text[128];
		snprintf(text, sizeof(text), "[upload]\nurl = x\ntimeout = %s\n", bad_timeouts[i]);
		CHECK(config_text(text, false, &c, &err) == -EINVAL);
		char want[128];
		snprintf(want, sizeof(want), "3: upload.timeout: '%s' is not a number of seconds from 1 to 3600",
			 bad_timeouts[i]);
		CHECK_STR(err, want);
		free(err);
		err = NULL;
	}
	stune_config_free(c);
	long t = 0;
	CHECK(stune_parse_upload_timeout("3600", &t) == 0 && t == 3600);
	CHECK(stune_parse_upload_timeout("", &t) == -EINVAL);
}

CASE(config_in_root,
     "the default settings file through the root layer: ROOT/etc/scsitune/scsitune.conf, never the host's")
{
	/* The default file through the root layer: ROOT/etc/scsitune/scsitune.conf, never the host's. */
	struct stune_config *c = NULL;
	char *err = NULL, *tree = NULL, *etc = NULL, *p = NULL;
	struct stune_root *root = NULL;
	CHECK(asprintf(&tree, "%s/conf-root", tap_tmpdir()) > 0 && asprintf(&etc, "%s/etc/scsitune", tree) > 0);
	CHECK(etc && stune_mkdir_p(etc, 0755) == 0);
	CHECK(stune_root_new(tree, &root) == 0);
	if (!root) {
		free(etc);
		free(tree);
		return;
	}
	CHECK(stune_config_load_root(root, true, &c, &err) == 0 && c && !c->upload_url); /* missing: empty */
	stune_config_free(c);
	c = NULL;
	CHECK(stune_config_load_root(root, false, &c, &err) == -ENOENT);
	CHECK(asprintf(&p, "%s/scsitune.conf", etc) > 0);
	FILE *f = p ? fopen(p, "we") : NULL;
	CHECK(f && fputs("[upload]\nurl = http://tree/write\ntimeout = 3\n", f) >= 0 && fclose(f) == 0);
	CHECK(stune_config_load_root(root, false, &c, &err) == 0 && c && c->upload_timeout_s == 3);
	CHECK_STR(c ? c->upload_url : NULL, "http://tree/write");
	stune_config_free(c);
	c = NULL;
	f = p ? fopen(p, "we") : NULL;
	CHECK(f && fputs("[upload]\nfrob = 1\n", f) >= 0 && fclose(f) == 0);
	CHECK(stune_config_load_root(root, true, &c, &err) == -EINVAL);
	CHECK_STR(err, "2: unknown key 'upload.frob'");
	stune_config_free(c);
	free(err);
	stune_root_free(root);
	free(p);
	free(etc);
	free(tree);
}

CASE(spool, "spool: a batch kept once (the same batch, the same file), listed, read back, removed")
{
	const char *dir = tap_tmpdir();
	char **paths = NULL, *p1 = NULL, *p2 = NULL, *body = NULL;
	size_t n = 9, len = 0;
	CHECK(stune_spool_list(dir, &paths, &n) == 0 && n == 0);
	stune_spool_list_free(paths, n);
	CHECK(stune_spool_add(dir, "a 1\n", 4, &p1) == 0);
	CHECK(stune_spool_add(dir, "a 1\n", 4, &p2) == 0); /* the same batch: the same file */
	CHECK_STR(p1, p2);
	free(p2);
	p2 = NULL;
	CHECK(stune_spool_add(dir, "b 2\n", 4, &p2) == 0);
	CHECK(stune_spool_list(dir, &paths, &n) == 0 && n == 2);
	stune_spool_list_free(paths, n);
	if (!p1 || !p2) {
		CHECK(p1 && p2);
		free(p1);
		free(p2);
		return;
	}
	CHECK(stune_spool_read(p1, &body, &len) == 0 && len == 4 && !memcmp(body, "a 1\n", 4));
	free(body);
	CHECK(stune_spool_remove(p1) == 0 && stune_spool_remove(p2) == 0);
	CHECK(stune_spool_list(dir, &paths, &n) == 0 && n == 0);
	stune_spool_list_free(paths, n);
	free(p1);
	free(p2);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
