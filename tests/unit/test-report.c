/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report engine without a command line (cli/lib/report/session.c,
 * provenance.c): ingest of real fio outputs, statistics, save and --compare
 * by phase, the spool and a flush that cannot get through, the provenance
 * helpers on a small model. argv[1]: tests/report/fio.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/strv.h"
#include "detect/topology.h"
#include "report/fio.h"
#include "report/resultset.h"
#include "report/session.h"
#include "report/upload.h"
#include "tap.h"

static int n_bad;
static char last_bad[512];

static void on_bad(void *data, const char *msg)
{
	(void)data;
	n_bad++;
	snprintf(last_bad, sizeof(last_bad), "%s", msg);
}

static int n_retry;
static void on_retry(void *data, const char *msg, unsigned s)
{
	(void)data;
	(void)msg;
	(void)s;
	n_retry++;
}

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static void test_ingest_stats_compare(struct stune_ctx *ctx, const char *fio, const char *state)
{
	_cleanup_free_ char *a = path_in(fio, "fio-3.33-randread-2jobs-json.json");
	_cleanup_free_ char *b = path_in(fio, "fio-3.33-randread-2jobs-jsonplus.json");
	_cleanup_free_ char *bad = path_in(fio, "SOURCES.md");
	char *files[] = {a, b};

	struct stune_report_set s = {.phase = "base"};
	CHECK(stune_report_ingest(ctx, files, 2, &s, on_bad, NULL) == 0);
	CHECK(n_bad == 0 && s.n_runs == 2);
	CHECK(stune_report_set_stats(&s) == 0);
	CHECK(s.stats.n == 2);
	CHECK(s.kiops[0] == s.runs[0]->iops / 1000.0 && s.kiops[1] == s.runs[1]->iops / 1000.0);
	CHECK(s.stats.min <= s.stats.avg && s.stats.avg <= s.stats.max);
	CHECK(stune_report_set_start_ms(&s) > 0);

	/* Saved under its phase (a minimal document with the runs' KIOPS), found again
	 * by the phase's name: the same runs compare as no change. */
	_cleanup_free_ char *saved = NULL, *doc = NULL;
	CHECK(asprintf(&doc, "{\"schema_version\":2,\"phase\":\"base\",\"runs\":[{\"kiops\":%.17g},{\"kiops\":%.17g}]}",
		       s.kiops[0], s.kiops[1]) > 0);
	CHECK(stune_report_save(state, &s, doc, &saved) == 0 && saved && access(saved, R_OK) == 0);
	CHECK(saved && strstr(saved, "/reports/base/") != NULL);
	struct stune_saved_set *ref = NULL;
	struct stune_report_compare cmp;
	_cleanup_free_ char *err = NULL;
	CHECK(stune_report_reference(state, "base", &s, &ref, &cmp, &err) == 0);
	CHECK(ref && ref->n == 2 && cmp.cmp.avg_change == 0.0);
	CHECK_STR(cmp.ref_label, "base");
	CHECK_STR(cmp.cur_label, "base");
	stune_saved_set_free(ref);
	ref = NULL;
	stune_report_set_clear(&s);
	CHECK(s.runs == NULL && s.n_runs == 0);

	/* A file that is not fio output: one message naming it, the rest still read. */
	char *mixed[] = {a, bad};
	struct stune_report_set m = {0};
	CHECK(stune_report_ingest(ctx, mixed, 2, &m, on_bad, NULL) == -EINVAL);
	CHECK(n_bad == 1 && strstr(last_bad, "SOURCES.md") != NULL);
	CHECK(m.runs[0] != NULL && m.runs[1] == NULL);
	stune_report_set_clear(&m);

	/* --compare of a phase never saved: -ENOENT, the message names the phase and directory. */
	struct stune_report_set c = {0};
	free(err);
	err = NULL;
	CHECK(stune_report_ingest(ctx, files, 2, &c, on_bad, NULL) == 0 && stune_report_set_stats(&c) == 0);
	CHECK(stune_report_reference(state, "nosuch", &c, &ref, &cmp, &err) == -ENOENT);
	CHECK(err && strstr(err, "no saved result set for phase 'nosuch'") && strstr(err, state));
	stune_saved_set_free(ref);
	stune_report_set_clear(&c);
	CHECK(stune_report_is_file_arg("x.json") && stune_report_is_file_arg("./x") &&
	      !stune_report_is_file_arg("base"));
}

static void test_spool_flush(struct stune_ctx *ctx, const char *fio, const char *state)
{
	_cleanup_free_ char *a = path_in(fio, "fio-3.33-randread-2jobs-json.json");
	char *files[] = {a};
	struct stune_report_set s = {.phase = "tuned"};
	CHECK(stune_report_ingest(ctx, files, 1, &s, on_bad, NULL) == 0);
	_cleanup_free_ char *spooled = NULL;
	CHECK(stune_report_spool(state, &s, 1700000000000LL, &spooled) == 0 && spooled);
	CHECK(access(spooled, R_OK) == 0);

	/* Nothing listens on port 1: retried twice, kept, exit 3's case. */
	struct stune_upload u = {.url = "http://127.0.0.1:1/write", .timeout_s = 2};
	struct stune_flush_cb cb = {.retry = on_retry};
	struct stune_flush_result res;
	CHECK(stune_report_flush(state, &u, &cb, &res) == -EAGAIN);
	CHECK(res.batches == 1 && res.sent == 0 && res.retryable && res.err);
	CHECK(n_retry == 2);
	CHECK(access(spooled, R_OK) == 0);
	stune_flush_result_clear(&res);
	stune_report_set_clear(&s);
}

static void test_provenance(struct stune_ctx *ctx, const char *state)
{
	struct stune_hba hbas[2] = {{.kind = STUNE_HBA_OTHER, .numa_node = STUNE_NUM(-1)},
				    {.kind = STUNE_HBA_MPI3MR, .numa_node = STUNE_NUM(1)}};
	struct stune_host hosts[2] = {{.hba = 0}, {.hba = 1}};
	struct stune_disk disks[3] = {
	    {.name = "sda", .host = 0}, {.name = "sdb", .host = 1}, {.name = "sdc", .host = 1}};
	struct stune_topology t = {
	    .hbas = hbas, .n_hbas = 2, .hosts = hosts, .n_hosts = 2, .disks = disks, .n_disks = 3};

	char **devs = NULL;
	size_t n = 0;
	CHECK(stune_mpi3mr_devices(&t, &devs, &n) == 0 && n == 2);
	CHECK(devs && !strcmp(devs[0], "/dev/sdb") && !strcmp(devs[1], "/dev/sdc") && !devs[2]);
	stune_strv_free(devs);

	/* Under a sysroot the base name names the tree's disk. */
	CHECK(stune_device_hba(&t, "/dev/sdb", true) == &hbas[1]);
	CHECK(stune_device_hba(&t, "/dev/sda", true) == &hbas[0]);
	CHECK(stune_device_hba(&t, "/dev/nosuch", true) == NULL);

	/* No journal: none applied. */
	struct stune_provenance p = {0};
	struct stune_journal *j = NULL;
	stune_provenance_profile(ctx, state, &t, "/nonexistent", &p, &j);
	CHECK(j == NULL);
	CHECK_STR(p.profile_verify_state, "none-applied");
	CHECK(p.profile == NULL);

	/* Binding: an HBA without locality is not bound, and says why. */
	struct stune_bind_opts bo = {0};
	char *cpus = NULL, *note = NULL, *err = NULL;
	CHECK(stune_provenance_bind(ctx, &p, &hbas[0], &bo, NULL, &cpus, &note, &err) == 0);
	CHECK(p.bound_node == -1 && p.binding_note && strstr(p.binding_note, "numa_node is -1"));
	bo.sysroot = true;
	CHECK(stune_provenance_bind(ctx, &p, &hbas[1], &bo, NULL, &cpus, &note, &err) == 0);
	CHECK(p.bound_node == -1 && strstr(p.binding_note, "--sysroot"));
	CHECK(!cpus && !note && !err);

	stune_provenance_host(&p, &t, &hbas[1], true, "here");
	CHECK(p.have_hba && p.hba_numa_node.v == 1);
	CHECK_STR(p.host, "here"); /* the tree names no host: this machine's */
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-report FIO_DIR\n");
		return 2;
	}
	char tmpl[] = "/tmp/test-report.XXXXXX";
	const char *state = mkdtemp(tmpl);
	struct stune_ctx *ctx = NULL;
	/* The engine's context over a tree that is not this host (the fio directory): parsing needs only its log. */
	if (!state || stune_ctx_new(argv[1], &ctx) < 0) {
		fprintf(stderr, "test-report: cannot set up\n");
		return 2;
	}
	test_ingest_stats_compare(ctx, argv[1], state);
	test_spool_flush(ctx, argv[1], state);
	test_provenance(ctx, state);
	stune_ctx_free(ctx);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
	if (system(cmd) != 0)
		fprintf(stderr, "test-report: %s left behind\n", state);
	TAP_END();
}
