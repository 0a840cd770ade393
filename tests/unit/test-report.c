/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The report engine without a command line (cli/lib/report/session.c,
 * provenance.c): ingest of real fio outputs, statistics, save and --compare
 * by phase, the spool and a flush that cannot get through, the provenance
 * helpers on a small model. tap_arg(0): tests/report/fio.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/strv.h"
#include "detect/topology.h"
#include "report/comparable.h"
#include "report/fio.h"
#include "report/resultset.h"
#include "report/session.h"
#include "net/http.h"
#include "tap.h"

/* What the callbacks were told: the ingest's complaints (the last one) and the flush's retries. */
struct seen {
	int n_bad, n_retry;
	char last_bad[512];
};

static void on_bad(void *data, const char *msg)
{
	struct seen *seen = data;
	seen->n_bad++;
	snprintf(seen->last_bad, sizeof(seen->last_bad), "%s", msg);
}

static void on_retry(void *data, const char *msg, unsigned s)
{
	struct seen *seen = data;
	(void)msg;
	(void)s;
	seen->n_retry++;
}

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* NAME in the fio directory (tap_arg(0)). */
static char *fio_file(const char *name)
{
	return path_in(tap_arg(0), name);
}

/* The engine's context over a tree that is not this host (the fio directory):
 * parsing needs only its log. NULL when it cannot be made (checked). */
static struct stune_ctx *fio_ctx(void)
{
	struct stune_ctx *ctx = NULL;
	CHECK(stune_ctx_new(tap_arg(0), &ctx) == 0);
	return ctx;
}

/* The two runs of the same job (json, json+) ingested into *s under phase base, with their statistics. */
static void ingest_two(struct stune_ctx *ctx, struct stune_report_set *s, struct seen *seen)
{
	_cleanup_free_ char *a = fio_file("fio-3.33-randread-2jobs-json.json");
	_cleanup_free_ char *b = fio_file("fio-3.33-randread-2jobs-jsonplus.json");
	char *files[] = {a, b};
	*s = (struct stune_report_set){.phase = "base"};
	CHECK(stune_report_ingest(ctx, files, 2, s, on_bad, seen) == 0);
	CHECK(seen->n_bad == 0 && s->n_runs == 2);
	CHECK(stune_report_set_stats(s) == 0);
}

CASE(ingest_stats, "two fio outputs ingested: their KIOPS, the statistics over them, the start")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	struct stune_report_set s;
	if (!ctx)
		return;
	ingest_two(ctx, &s, &seen);
	CHECK(s.stats.n == 2);
	CHECK(s.n_runs == 2 && s.kiops[0] == s.runs[0]->iops / 1000.0 && s.kiops[1] == s.runs[1]->iops / 1000.0);
	CHECK(s.stats.min <= s.stats.avg && s.stats.avg <= s.stats.max);
	CHECK(stune_report_set_start_ms(&s) > 0);
	stune_report_set_clear(&s);
	CHECK(s.runs == NULL && s.n_runs == 0);
}

CASE(save_reference, "saved under its phase, found again by the phase's name: the same runs compare as no change")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	struct stune_report_set s;
	const char *state = tap_tmpdir();
	if (!ctx)
		return;
	ingest_two(ctx, &s, &seen);
	if (s.n_runs != 2) {
		stune_report_set_clear(&s);
		return;
	}
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
	/* The minimal document knows neither fio version nor job options: nothing to tell apart. */
	CHECK(cmp.n_mismatch == 0);
	stune_report_compare_clear(&cmp);
	stune_saved_set_free(ref);
	stune_report_set_clear(&s);
}

CASE(not_fio_output, "a file that is not fio output: one message naming it, the rest still read")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	if (!ctx)
		return;
	_cleanup_free_ char *a = fio_file("fio-3.33-randread-2jobs-json.json");
	_cleanup_free_ char *bad = fio_file("SOURCES.md");
	char *mixed[] = {a, bad};
	struct stune_report_set m = {0};
	CHECK(stune_report_ingest(ctx, mixed, 2, &m, on_bad, &seen) == -EINVAL);
	CHECK(seen.n_bad == 1 && strstr(seen.last_bad, "SOURCES.md") != NULL);
	CHECK(m.runs && m.runs[0] != NULL && m.runs[1] == NULL);
	stune_report_set_clear(&m);
}

CASE(compare_unsaved, "--compare of a phase never saved: -ENOENT, the message names the phase and directory; "
		      "a path is a file, a bare name a phase")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	struct stune_report_set c;
	const char *state = tap_tmpdir();
	if (!ctx)
		return;
	ingest_two(ctx, &c, &seen);
	struct stune_saved_set *ref = NULL;
	struct stune_report_compare cmp;
	_cleanup_free_ char *err = NULL;
	CHECK(stune_report_reference(state, "nosuch", &c, &ref, &cmp, &err) == -ENOENT);
	CHECK(err && strstr(err, "no saved result set for phase 'nosuch'") && strstr(err, state));
	stune_report_compare_clear(&cmp);
	stune_saved_set_free(ref);
	stune_report_set_clear(&c);
	CHECK(stune_report_is_file_arg("x.json") && stune_report_is_file_arg("./x") &&
	      !stune_report_is_file_arg("base"));
}

CASE(spool_flush, "spooled, then a flush nobody answers: retried twice, the batch kept (exit 3's case)")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	const char *state = tap_tmpdir();
	if (!ctx)
		return;
	_cleanup_free_ char *a = fio_file("fio-3.33-randread-2jobs-json.json");
	char *files[] = {a};
	struct stune_report_set s = {.phase = "tuned"};
	CHECK(stune_report_ingest(ctx, files, 1, &s, on_bad, &seen) == 0);
	_cleanup_free_ char *spooled = NULL;
	CHECK(stune_report_spool(state, &s, 1700000000000LL, &spooled) == 0 && spooled);
	CHECK(spooled && access(spooled, R_OK) == 0);

	/* Nothing listens on port 1: retried twice, kept, exit 3's case. */
	struct stune_upload u = {.url = "http://127.0.0.1:1/write", .timeout_s = 2};
	struct stune_flush_cb cb = {.retry = on_retry, .data = &seen};
	struct stune_flush_result res;
	CHECK(stune_report_flush(state, &u, &cb, &res) == -EAGAIN);
	CHECK(res.batches == 1 && res.sent == 0 && res.retryable && res.err);
	CHECK(seen.n_retry == 2);
	CHECK(spooled && access(spooled, R_OK) == 0);
	stune_flush_result_clear(&res);
	stune_report_set_clear(&s);
}

/* A small model: an HBA without locality (sda), an mpi3mr one on node 1 (sdb, sdc). */
struct model {
	struct stune_hba hbas[2];
	struct stune_host hosts[2];
	struct stune_disk disks[3];
	struct stune_topology t;
};

static void model_init(struct model *m)
{
	*m = (struct model){
	    .hbas = {{.kind = STUNE_HBA_OTHER, .numa_node = STUNE_NUM(-1)},
		     {.kind = STUNE_HBA_MPI3MR, .numa_node = STUNE_NUM(1)}},
	    .hosts = {{.hba = 0}, {.hba = 1}},
	    .disks = {{.name = "sda", .host = 0}, {.name = "sdb", .host = 1}, {.name = "sdc", .host = 1}},
	};
	m->t = (struct stune_topology){
	    .hbas = m->hbas, .n_hbas = 2, .hosts = m->hosts, .n_hosts = 2, .disks = m->disks, .n_disks = 3};
}

CASE(model_devices, "the mpi3mr HBAs' disks are the default devices; under a sysroot a base name names the tree's disk")
{
	struct model m;
	model_init(&m);
	char **devs = NULL;
	size_t n = 0;
	CHECK(stune_mpi3mr_devices(&m.t, &devs, &n) == 0 && n == 2);
	CHECK(devs && !strcmp(devs[0], "/dev/sdb") && !strcmp(devs[1], "/dev/sdc") && !devs[2]);
	stune_strv_free(devs);

	/* Under a sysroot the base name names the tree's disk. */
	CHECK(stune_device_hba(&m.t, "/dev/sdb", true) == &m.hbas[1]);
	CHECK(stune_device_hba(&m.t, "/dev/sda", true) == &m.hbas[0]);
	CHECK(stune_device_hba(&m.t, "/dev/nosuch", true) == NULL);
}

CASE(provenance_no_journal, "provenance without a journal: none applied, no profile")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct model m;
	if (!ctx)
		return;
	model_init(&m);
	struct stune_provenance p = {0};
	struct stune_journal *j = NULL;
	stune_provenance_profile(ctx, tap_tmpdir(), &m.t, "/nonexistent", &p, &j);
	CHECK(j == NULL);
	CHECK_STR(p.profile_verify_state, "none-applied");
	CHECK(p.profile == NULL);
}

CASE(provenance_bind, "binding: an HBA without locality, or any under a sysroot, is not bound, and says why")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct model m;
	if (!ctx)
		return;
	model_init(&m);
	struct stune_provenance p = {0};
	struct stune_bind_opts bo = {0};
	char *cpus = NULL, *note = NULL, *err = NULL;
	CHECK(stune_provenance_bind(ctx, &p, &m.hbas[0], &bo, NULL, &cpus, &note, &err) == 0);
	CHECK(p.bound_node == -1 && p.binding_note && strstr(p.binding_note, "numa_node is -1"));
	bo.sysroot = true;
	CHECK(stune_provenance_bind(ctx, &p, &m.hbas[1], &bo, NULL, &cpus, &note, &err) == 0);
	CHECK(p.bound_node == -1 && p.binding_note && strstr(p.binding_note, "--sysroot"));
	CHECK(!cpus && !note && !err);
	free(cpus);
	free(note);
	free(err);
}

CASE(provenance_host, "provenance of the host: the HBA's locality; a tree that names no host is this machine")
{
	struct model m;
	model_init(&m);
	struct stune_provenance p = {0};
	stune_provenance_host(&p, &m.t, &m.hbas[1], true, "here");
	CHECK(p.have_hba && p.hba_numa_node.v == 1);
	CHECK_STR(p.host, "here"); /* the tree names no host: this machine's */
}

/* Options of a made-up run for stune_sig_build: jobs[i] is "key=value,key=value". */
static const char *fake_opt(void *data, size_t job, const char *key)
{
	static char buf[64];
	const char *const *jobs = data;
	size_t kl = strlen(key);
	for (const char *p = jobs[job]; p && *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(buf, sizeof(buf), "%.*s", (int)(l - kl - 1), p + kl + 1);
			return buf;
		}
		p = e ? e + 1 : NULL;
	}
	return NULL;
}

static size_t sig_diffs(const char *va, const char *ja, const char *vb, const char *jb, char ***d)
{
	const char *a[] = {ja}, *b[] = {jb};
	_cleanup_(stune_sig_clear) struct stune_sig sa = {0}, sb = {0};
	size_t n = 0;
	*d = NULL;
	CHECK(stune_sig_build(va, 1, *ja != 0, fake_opt, a, &sa) == 0);
	CHECK(stune_sig_build(vb, 1, *jb != 0, fake_opt, b, &sb) == 0);
	CHECK(stune_sig_diff(&sa, &sb, d, &n) == 0);
	return n;
}

static char *copy_to(const char *src, const char *dir, const char *name)
{
	char *dst = path_in(dir, name), *cmd = NULL;
	CHECK(asprintf(&cmd, "cp '%s' '%s'", src, dst) > 0 && system(cmd) == 0);
	free(cmd);
	return dst;
}

CASE(sig_diff, "job signatures: sizes in bytes, defaults and aliases the same job; each difference named, the "
	       "first run's first; the version only where both are known")
{
	char **d = NULL;
	/* Sizes in bytes, unset is fio's default, aliases: the same job. */
	CHECK(sig_diffs("fio-3.33", "rw=randread,bs=4k,iodepth=1", "fio-3.33", "readwrite=randread,blocksize=4096",
			&d) == 0);
	stune_strv_free(d);
	/* Each difference named, the first run's value first. */
	CHECK(sig_diffs("fio-3.33", "rw=randread,bs=4k,numjobs=1", "fio-3.1", "rw=randrw,bs=8k,numjobs=2,size=1g",
			&d) == 5);
	CHECK(d && d[0] && d[4]);
	if (d && d[0] && d[4]) {
		CHECK_STR(d[0], "fio version fio-3.33 vs fio-3.1");
		CHECK_STR(d[1], "rw randread vs randrw");
		CHECK_STR(d[2], "bs 4096 vs 8192");
		CHECK_STR(d[3], "numjobs 1 vs 2");
		CHECK_STR(d[4], "size unset vs 1073741824");
	}
	stune_strv_free(d);
	/* Options unknown on one side (fio 2.1 records none): only the version is compared. */
	CHECK(sig_diffs("fio-2.1.4", "", "fio-3.33", "rw=randwrite", &d) == 1);
	stune_strv_free(d);
	/* The fio version compared only where both are known. */
	CHECK(sig_diffs(NULL, "rw=read", "fio-3.33", "rw=read", &d) == 0);
	stune_strv_free(d);
}

CASE(ingest_mismatch, "the same job in json and json+ is comparable; numjobs 2 vs 1 is refused naming the odd "
		      "file and the option, and with allow_mixed ingested with a mismatch naming both files")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	if (!ctx)
		return;
	_cleanup_free_ char *two = fio_file("fio-3.33-randread-2jobs-json.json");
	_cleanup_free_ char *two_plus = fio_file("fio-3.33-randread-2jobs-jsonplus.json");
	_cleanup_free_ char *one = fio_file("fio-3.33-randread-1job-jsonplus.json");

	/* The same numjobs=2 job in json and json+: comparable. */
	char *same[] = {two, two_plus};
	struct stune_report_set s = {0};
	CHECK(stune_report_ingest(ctx, same, 2, &s, on_bad, &seen) == 0 && s.n_mismatch == 0);
	stune_report_set_clear(&s);

	/* numjobs 2 vs 1: refused, one message naming the odd file, the first and the option. */
	char *diff[] = {two, one};
	CHECK(stune_report_ingest(ctx, diff, 2, &s, on_bad, &seen) == -EINVAL && seen.n_bad == 1);
	CHECK_MSG(strstr(seen.last_bad, "1job-jsonplus.json: not the same fio job as ") &&
		      strstr(seen.last_bad, "2jobs-json.json (numjobs 2 vs 1)") &&
		      strstr(seen.last_bad, "--allow-mixed"),
		  "%s", seen.last_bad);
	stune_report_set_clear(&s);

	/* allow_mixed: ingested (a warning, not an error), the mismatch names both files. */
	s = (struct stune_report_set){.allow_mixed = true};
	CHECK(stune_report_ingest(ctx, diff, 2, &s, on_bad, &seen) == 0 && s.n_mismatch == 1 && seen.n_bad == 1);
	if (s.n_mismatch == 1)
		CHECK(strstr(s.mismatch[0], "run 2 (") && strstr(s.mismatch[0], "1job-jsonplus.json") &&
		      strstr(s.mismatch[0], "2jobs-json.json") && strstr(s.mismatch[0], "numjobs 2 vs 1"));
	stune_report_set_clear(&s);
	CHECK(s.mismatch == NULL && s.n_mismatch == 0);
}

CASE(ingest_duplicate, "the same content under two names: refused, naming both")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	if (!ctx)
		return;
	_cleanup_free_ char *two = fio_file("fio-3.33-randread-2jobs-json.json");
	_cleanup_free_ char *copy = copy_to(two, tap_tmpdir(), "copy.json");
	struct stune_report_set s = {0};
	int bad0 = seen.n_bad;
	char *dup[] = {two, copy};
	CHECK(stune_report_ingest(ctx, dup, 2, &s, on_bad, &seen) == -EINVAL && seen.n_bad == bad0 + 1);
	CHECK(strstr(seen.last_bad, copy) && strstr(seen.last_bad, two) && strstr(seen.last_bad, "the same run as"));
	stune_report_set_clear(&s);
}

CASE(stonewall_groups, "two stonewall groups (real fio 3.33): refused whole, naming the groups; one group kept; "
		       "a group not there refused")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	if (!ctx)
		return;
	_cleanup_free_ char *sw = fio_file("fio-3.33-stonewall-2groups-json.json");
	char *swf[] = {sw};
	struct stune_report_set s = {0};
	int bad0 = seen.n_bad;
	CHECK(stune_report_ingest(ctx, swf, 1, &s, on_bad, &seen) == -EINVAL && seen.n_bad == bad0 + 1);
	CHECK(strstr(seen.last_bad, "2 fio groups") && strstr(seen.last_bad, "0 (randread), 1 (randwrite)") &&
	      strstr(seen.last_bad, "--group N"));
	stune_report_set_clear(&s);
	struct stune_report_set g = {.group_set = true, .group = 1};
	CHECK(stune_report_ingest(ctx, swf, 1, &g, on_bad, &seen) == 0 && g.n_runs == 1);
	if (g.n_runs == 1 && g.runs[0]) {
		const struct stune_fio_run *r = g.runs[0];
		CHECK(r->n_jobs == 1 && r->group == 1 && r->n_groups == 1);
		CHECK_STR(r->jobs[0].name, "randwrite");
		CHECK(r->total[STUNE_FIO_READ].iops == 0 && r->iops == r->jobs[0].io[STUNE_FIO_WRITE].iops &&
		      r->iops > 0);
	}
	stune_report_set_clear(&g);
	struct stune_report_set g5 = {.group_set = true, .group = 5};
	bad0 = seen.n_bad;
	CHECK(stune_report_ingest(ctx, swf, 1, &g5, on_bad, &seen) == -EINVAL && seen.n_bad == bad0 + 1);
	CHECK(strstr(seen.last_bad, "no fio group 5") && strstr(seen.last_bad, "0 (randread), 1 (randwrite)"));
	stune_report_set_clear(&g5);
}

CASE(compare_other_job, "--compare against a saved set of another job: the differences, reference first")
{
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = fio_ctx();
	struct seen seen = {0};
	const char *state = tap_tmpdir();
	if (!ctx)
		return;
	_cleanup_free_ char *one = fio_file("fio-3.33-randread-1job-jsonplus.json");
	char *cur[] = {one};
	struct stune_report_set c = {0};
	CHECK(stune_report_ingest(ctx, cur, 1, &c, on_bad, &seen) == 0 && stune_report_set_stats(&c) == 0);
	_cleanup_free_ char *ref_path = path_in(state, "ref.json");
	FILE *f = fopen(ref_path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"schema_version\":2,\"phase\":\"old\",\"provenance\":{\"source\":\"run\",\"host\":\"other\"},"
		      "\"runs\":[{\"kiops\":10,\"fio_version\":\"fio-3.1\",\"global_options\":{\"bs\":\"8k\","
		      "\"ioengine\":\"psync\"},"
		      "\"jobs\":[{\"options\":{\"rw\":\"randread\"}}]}]}",
		      f);
		fclose(f);
	}
	struct stune_provenance prov = {.host = "here"};
	c.prov = &prov;
	struct stune_saved_set *ref = NULL;
	struct stune_report_compare cmp;
	_cleanup_free_ char *err = NULL;
	CHECK(stune_report_reference(state, ref_path, &c, &ref, &cmp, &err) == 0);
	CHECK(cmp.n_mismatch == 5);
	if (cmp.n_mismatch == 5) {
		CHECK_STR(cmp.mismatch[0], "fio version fio-3.1 vs fio-3.33");
		CHECK_STR(cmp.mismatch[1], "bs 8192 vs 4096");
		CHECK_STR(cmp.mismatch[2], "size unset vs 8388608");
		CHECK_STR(cmp.mismatch[3], "runtime unset vs 1");
		CHECK_STR(cmp.mismatch[4], "host other vs here");
	}
	stune_report_compare_clear(&cmp);
	stune_saved_set_free(ref);
	stune_report_set_clear(&c);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
