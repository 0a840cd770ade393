/* SPDX-License-Identifier: GPL-2.0-or-later */
/* scsitune report: ingest fio JSON output (one file per run), statistics, save, compare. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "report/fio.h"
#include "report/fiorun.h"
#include "tune/journal.h"
#include "report/lineproto.h"
#include "report/resultset.h"
#include "core/root.h"
#include "report/stats.h"
#include "detect/scan.h"
#include "report/upload.h"
#include "tune/verify.h"
#include "render-report.h"
#include "scsitune.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

#define DEFAULT_STATE_DIR "/var/lib/scsitune"

void help_report(FILE *f)
{
	fputs("Usage: scsitune report [options] FILE...\n"
	      "       scsitune report --run [--runs N] [--device DEV]... [job options] [options]\n"
	      "       scsitune report --flush [--upload URL] [--state-dir DIR]\n"
	      "\nIngest fio JSON output (fio 2.x or 3.x, output format json or json+), one file per run,\n"
	      "and show per run: IOPS (read + write, summed over all jobs), bandwidth, completion\n"
	      "latency (mean, p50, p99, p99.9), errors; across runs: avg, min-max, spread\n"
	      "((max - min) / max), sample standard deviation and coefficient of variation.\n"
	      "\nOptions:\n"
	      "      --phase NAME         label the result set (e.g. baseline, tuned) and save it\n"
	      "                           under STATE_DIR/reports/NAME/\n"
	      "      --state-dir DIR      where result sets are saved (default " DEFAULT_STATE_DIR ")\n"
	      "      --compare PHASE|FILE compare with the newest saved set of PHASE, or a saved\n"
	      "                           result-set FILE: avg KIOPS, range, spread and their change\n"
	      "      --upload URL         send each run as InfluxDB line protocol to the write URL\n"
	      "                           (VictoriaMetrics /write, InfluxDB /write?db=DB, ...);\n"
	      "                           spooled under STATE_DIR/spool/ until the server took it\n"
	      "      --flush              send only what is spooled (no FILE)\n"
	      "      --auth-file FILE     credentials: 'Bearer TOKEN', 'Token TOKEN' or 'user:password'\n"
	      "                           (the file must not be readable by others)\n"
	      "      --ca-file FILE       verify the server's TLS certificate against these CAs\n"
	      "      --upload-timeout S   seconds one upload attempt may take (default 30; 3 tries)\n"
	      "      --config FILE        settings file (default " STUNE_CONFIG_DEFAULT " inside the\n"
	      "                           --sysroot tree, or $SCSITUNE_CONFIG)\n"
	      "\nRunning fio (--run; the outputs are kept in STATE_DIR/runs/):\n"
	      "      --run                run fio N times and report those runs (no FILE)\n"
	      "      --runs N             how many runs (default 3)\n"
	      "      --device DEV         a block device (or file) to read; repeatable (default:\n"
	      "                           the disks of the mpi3mr HBAs detect finds)\n"
	      "      --rw MODE            fio rw= (default randread; writing modes need --destructive)\n"
	      "      --bs SIZE            block size (default 4k)\n"
	      "      --iodepth N          queue depth per job (default 64)\n"
	      "      --numjobs N          jobs (default 16)\n"
	      "      --runtime S          seconds per run, time based (default 60)\n"
	      "      --job-file FILE      a fio job file instead of the job above (it names its devices)\n"
	      "      --destructive        allow writing jobs (otherwise fio runs read-only)\n"
	      "      --node N             bind fio to NUMA node N (default: the devices' HBA's node)\n"
	      "      --fio PATH           the fio program (default: fio in PATH)\n\n",
	      f);
	print_global_options(f);
	fputs("\nA file that is not fio output, or a run in which a fio job failed, is an error\n"
	      "(exit 1) and nothing is saved. An upload that did not get through keeps the\n"
	      "runs in the spool: exit 3 when the server could not be reached or failed (5xx),\n"
	      "1 when it refused them (4xx, TLS). See scsitune-report(8).\n",
	      f);
}

struct report_opts {
	const char *phase;
	const char *state_dir;
	const char *compare;
	const char *upload;
	const char *auth_file;
	const char *ca_file;
	const char *config;
	long upload_timeout_s; /* 0: the settings file's, else STUNE_UPLOAD_DEFAULT_TIMEOUT_S */
	bool flush;
	/* --run */
	bool run, node_set;
	unsigned runs;
	int node;
	const char *fio;
	bool state_dir_given;
	char **devices; /* NULL-terminated */
	size_t n_devices;
	struct stune_fio_job_opts job;
};

static void runs_free(struct stune_fio_run **runs, size_t n)
{
	for (size_t i = 0; runs && i < n; i++)
		stune_fio_run_free(runs[i]);
	free(runs);
}

/* Parse every file; each bad one gets its own line. Returns false if any was bad. */
static bool ingest(struct stune_ctx *ctx, char **files, size_t n, struct stune_fio_run **runs)
{
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *err = NULL;
		int r = stune_fio_parse_file(ctx, files[i], &runs[i], &err);
		if (r < 0) {
			error_msg("%s: %s", files[i], err ? err : strerror(-r));
			ok = false;
			continue;
		}
		const struct stune_fio_run *run = runs[i];
		if (run->n_failed > 0) {
			const struct stune_fio_job *j = &run->jobs[run->first_failed_job];
			error_msg("%s: fio job %zu '%s' failed with error %d (%s)%s", files[i], run->first_failed_job,
				  j->name, j->error, strerror(j->error),
				  run->n_failed > 1 ? ", and more jobs failed" : "");
			ok = false;
		}
	}
	return ok;
}

static bool is_file_arg(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".json"));
}

/* Load the --compare reference. False after printing the error. */
static bool load_reference(const struct report_opts *ro, struct stune_saved_set **ref)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	int r;
	if (is_file_arg(ro->compare)) {
		path = strdup(ro->compare);
		if (!path) {
			error_msg("out of memory");
			return false;
		}
	} else {
		r = stune_resultset_find(ro->state_dir, ro->compare, &path);
		if (r == -ENOENT) {
			error_msg("--compare %s: no saved result set for phase '%s' in %s/reports/%s", ro->compare,
				  ro->compare, ro->state_dir, ro->compare);
			return false;
		}
		if (r < 0) {
			error_msg("--compare %s: %s/reports/%s: %s", ro->compare, ro->state_dir, ro->compare,
				  strerror(-r));
			return false;
		}
	}
	r = stune_saved_set_load(path, ref, &err);
	if (r < 0) {
		error_msg("--compare %s: %s: %s", ro->compare, path, err ? err : strerror(-r));
		return false;
	}
	return true;
}

/* The result set as its saved document (no comparison in it). */
static int save(const struct report_opts *ro, const struct report_set *set, char **saved)
{
	char *doc = NULL;
	size_t size = 0;
	int64_t start = 0;
	int r;

	for (size_t i = 0; i < set->n_runs; i++)
		if (set->runs[i]->timestamp_ms > 0 && (start == 0 || set->runs[i]->timestamp_ms < start))
			start = set->runs[i]->timestamp_ms;
	if (start == 0) /* no run says when it started: name the set after now */
		start = (int64_t)time(NULL) * 1000;
	_cleanup_free_ char *name = NULL;
	if ((r = stune_resultset_name(start, &name)) < 0)
		return r;
	FILE *m = open_memstream(&doc, &size);
	if (!m)
		return -ENOMEM;
	struct out *o = out_new(OUT_JSON, m);
	if (!o) {
		fclose(m);
		free(doc);
		return -ENOMEM;
	}
	render_report(o, set, NULL);
	r = out_finish(o);
	out_free(o);
	if (fclose(m) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = stune_resultset_save(ro->state_dir, ro->phase, name, doc, saved);
	free(doc);
	return r;
}

/*
 * The settings file fills what the command line left unset. It is read only
 * when an upload is asked for (--upload, --flush) or --config names it.
 * --config FILE and $SCSITUNE_CONFIG (tests point it away from /etc) are host
 * paths; the default is etc/scsitune/scsitune.conf through the root layer, so
 * under --sysroot DIR it is the tree's, like every other system path.
 */
static bool load_config(const struct global_opts *g, struct report_opts *ro, struct stune_config **cfg)
{
	_cleanup_free_ char *err = NULL, *shown = NULL;
	const char *def = getenv("SCSITUNE_CONFIG");
	const char *path = ro->config ? ro->config : def && *def ? def : NULL;
	int r;
	if (!ro->config && !ro->upload && !ro->flush)
		return true;
	if (path)
		r = stune_config_load(path, !ro->config, cfg, &err);
	else {
		_cleanup_(stune_root_freep) struct stune_root *root = NULL;
		r = stune_root_new(g->sysroot, &root);
		if (r < 0) {
			error_msg("--sysroot %s: %s", g->sysroot, strerror(-r));
			return false;
		}
		if (stune_root_host_path(root, STUNE_CONFIG_PATH, &shown) < 0) {
			error_msg("out of memory");
			return false;
		}
		path = shown;
		r = stune_config_load_root(root, true, cfg, &err);
	}
	if (r < 0) {
		error_msg("%s%s%s", path, err ? ":" : ": ", err ? err : strerror(-r));
		return false;
	}
	if (!ro->upload)
		ro->upload = (*cfg)->upload_url;
	if (!ro->auth_file)
		ro->auth_file = (*cfg)->upload_auth_file;
	if (!ro->ca_file)
		ro->ca_file = (*cfg)->upload_ca_file;
	if (!ro->upload_timeout_s)
		ro->upload_timeout_s = (*cfg)->upload_timeout_s;
	if (!ro->upload_timeout_s)
		ro->upload_timeout_s = STUNE_UPLOAD_DEFAULT_TIMEOUT_S;
	return true;
}

/* The set's runs as one spooled batch of line protocol. */
static int spool_set(const struct report_opts *ro, const struct report_set *set, int64_t now_ms, char **path)
{
	struct utsname u;
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	bool have_uname = uname(&u) == 0;
	struct stune_lp_facts facts = {
	    .host = host, .kernel = have_uname ? u.release : NULL, .phase = ro->phase, .fallback_ms = now_ms};
	const struct report_provenance *p = set->prov;
	if (p) { /* report --run: what detect saw (the --sysroot tree's, under --sysroot) */
		if (p->host)
			facts.host = p->host;
		if (p->kernel)
			facts.kernel = p->kernel;
		facts.hba_model = p->hba_model;
		facts.firmware = p->hba_firmware;
		facts.payload = p->payload_version;
		facts.profile = p->profile;
	}
	_cleanup_free_ char *lines = NULL;
	size_t len = 0;
	int r = stune_lp_encode(set->runs, set->n_runs, &facts, &lines, &len);
	if (r < 0)
		return r;
	return stune_spool_add(ro->state_dir, lines, len, path);
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

/*
 * Send every spooled batch, oldest name first; a batch is deleted only after a
 * 2xx. Up to 3 tries per batch (1 s, 2 s apart) while the failure is
 * retryable; the first batch that does not get through stops the flush.
 */
static int flush_spool(const struct global_opts *g, const struct report_opts *ro, const struct stune_auth *auth)
{
	char **paths = NULL;
	size_t n = 0, sent = 0, points = 0;
	int r = stune_spool_list(ro->state_dir, &paths, &n);
	if (r < 0) {
		error_msg("--state-dir %s: reading %s/spool: %s", ro->state_dir, ro->state_dir, strerror(-r));
		return EXIT_ERROR;
	}
	struct stune_upload u = {
	    .url = ro->upload, .ca_file = ro->ca_file, .auth = auth, .timeout_s = ro->upload_timeout_s};
	_cleanup_free_ char *err = NULL;
	int ret = EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *body = NULL;
		size_t len = 0;
		if ((r = stune_spool_read(paths[i], &body, &len)) < 0) {
			free(err);
			if (asprintf(&err, "%s: %s", paths[i], strerror(-r)) < 0)
				err = NULL;
			ret = EXIT_ERROR;
			break;
		}
		for (int t = 0; t < 3; t++) {
			free(err);
			err = NULL;
			r = stune_upload_send(&u, body, len, &err);
			if (r != -EAGAIN || t == 2)
				break;
			if (g->verbose)
				fprintf(stderr, "scsitune: upload to %s: %s; retrying in %d s\n", ro->upload,
					err ? err : strerror(-r), 1 << t);
			sleep(1u << t);
		}
		if (r < 0) {
			ret = r == -EAGAIN ? EXIT_PENDING : EXIT_ERROR;
			break;
		}
		if ((r = stune_spool_remove(paths[i])) < 0)
			fprintf(stderr, "scsitune: warning: %s: sent but not removed: %s\n", paths[i], strerror(-r));
		sent++;
		points += count_lines(body, len);
	}
	if (ret != EXIT_OK)
		error_msg("upload to %s: %s; not sent, kept in spool: %zu batch%s in %s/spool", ro->upload,
			  err ? err : strerror(-r), n - sent, n - sent == 1 ? "" : "es", ro->state_dir);
	else if (n == 0)
		fprintf(stderr, "scsitune: spool is empty: nothing to upload\n");
	else
		fprintf(stderr, "scsitune: uploaded %zu point%s in %zu batch%s to %s\n", points, points == 1 ? "" : "s",
			sent, sent == 1 ? "" : "es", ro->upload);
	stune_spool_list_free(paths, n);
	return ret;
}

/* Checks on the upload settings before anything is written. False after printing the error. */
static bool upload_prepare(const struct report_opts *ro, struct stune_auth **auth)
{
	_cleanup_free_ char *url = NULL, *err = NULL;
	int r = stune_upload_url(ro->upload, &url, &err);
	if (r < 0) {
		error_msg("--upload %s: %s", ro->upload, err ? err : strerror(-r));
		return false;
	}
	if (ro->ca_file && access(ro->ca_file, R_OK) < 0) {
		error_msg("--ca-file %s: %s", ro->ca_file, strerror(errno));
		return false;
	}
	if (ro->auth_file) {
		r = stune_auth_load(ro->auth_file, auth, &err);
		if (r < 0) {
			error_msg("--auth-file %s: %s", ro->auth_file, err ? err : strerror(-r));
			return false;
		}
	}
	return true;
}

/* What report --run owns while the set is reported. */
struct run_state {
	struct stune_topology *topo;
	char *fio_path, *fio_version, *rundir, *cpus, *note;
	char **fio_args;
	char **default_devices; /* no --device: /dev/NAME of the mpi3mr disks */
	char **files;		/* the fio outputs, one per run */
	struct stune_journal *journal;
	size_t n_files;
	char host[256];
	struct report_provenance prov;
};

static void run_state_clear(struct run_state *rs)
{
	stune_topology_free(rs->topo);
	free(rs->fio_path);
	free(rs->fio_version);
	free(rs->rundir);
	free(rs->cpus);
	free(rs->note);
	stune_strv_free(rs->fio_args);
	stune_strv_free(rs->default_devices);
	stune_journal_free(rs->journal);
	for (size_t i = 0; i < rs->n_files; i++)
		free(rs->files[i]);
	free(rs->files);
}

static bool parse_uint(const char *opt, const char *arg, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || arg[0] == '-' || v < min || v > max) {
		usage_error("report", "%s: '%s' is not a number from %u to %u", opt, arg, min, max);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

/*
 * The HBA a device sits behind, in detect's model: a block device by its
 * major:minor (or name); under --sysroot the tree is another host, so the
 * device's base name names one of its disks.
 */
static const struct stune_hba *device_hba(const struct global_opts *g, const struct stune_topology *t, const char *dev)
{
	struct stat st;
	char mm[32] = "";
	const char *base = strrchr(dev, '/');
	base = base ? base + 1 : dev;
	_cleanup_free_ char *real = realpath(dev, NULL);
	bool blk = stat(dev, &st) == 0 && S_ISBLK(st.st_mode);
	if (blk) {
		snprintf(mm, sizeof(mm), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
		if (real && strrchr(real, '/'))
			base = strrchr(real, '/') + 1;
	}
	if (!blk && !g->sysroot)
		return NULL;
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if ((g->sysroot && d->name && !strcmp(d->name, base)) || (*mm && d->devnum && !strcmp(d->devnum, mm)) ||
		    (blk && d->name && !strcmp(d->name, base)))
			return d->host < t->n_hosts ? &t->hbas[t->hosts[d->host].hba] : NULL;
	}
	return NULL;
}

/* The default devices: the disks of the mpi3mr HBAs. */
static int default_devices(const struct stune_topology *t, char ***devs, size_t *n)
{
	for (size_t i = 0; i < t->n_disks; i++) {
		const struct stune_disk *d = &t->disks[i];
		if (!d->name || d->host >= t->n_hosts || t->hbas[t->hosts[d->host].hba].kind != STUNE_HBA_MPI3MR)
			continue;
		char **nv = realloc(*devs, (*n + 2) * sizeof(char *));
		if (!nv)
			return -ENOMEM;
		*devs = nv;
		if (asprintf(&nv[*n], "/dev/%s", d->name) < 0) {
			nv[*n] = NULL;
			return -ENOMEM;
		}
		nv[++*n] = NULL;
	}
	return 0;
}

struct progress {
	unsigned k, n, per_run_s; /* per_run_s 0: unknown (job file) */
	bool tty;
};

static void fmt_secs(char *buf, size_t size, unsigned s)
{
	snprintf(buf, size, "%u:%02u", s / 60, s % 60);
}

static void progress_tick(void *data, unsigned elapsed)
{
	const struct progress *p = data;
	char el[32], rem[32] = "-";
	if (!p->tty)
		return;
	fmt_secs(el, sizeof(el), elapsed);
	if (p->per_run_s) {
		unsigned left_this = elapsed < p->per_run_s ? p->per_run_s - elapsed : 0;
		fmt_secs(rem, sizeof(rem), left_this + (p->n - p->k) * p->per_run_s);
	}
	fprintf(stderr, "\rscsitune: fio run %u of %u: elapsed %s, remaining ~%s (all runs)\033[K", p->k, p->n, el,
		rem);
	fflush(stderr);
}

/* Binding: which node, and whether libnuma can do it. Fills rs->prov's binding fields. */
static int choose_binding(const struct global_opts *g, const struct report_opts *ro, struct run_state *rs,
			  const struct stune_hba *hba, struct stune_numa_binder **binder)
{
	struct report_provenance *p = &rs->prov;
	int node = -1;
	p->bound_node = -1;
	if (ro->node_set) {
		node = ro->node;
	} else if (!hba && ro->job.job_file) {
		p->binding_note = "--job-file: its devices are not looked up: no node to bind to (--node N binds)";
	} else if (!hba) {
		p->binding_note = "the devices are not behind an HBA detect knows: no node to bind to";
	} else if (!hba->numa_node.set) {
		p->binding_note = "the HBA's numa_node is unknown: not bound";
	} else if (hba->numa_node.v < 0) {
		p->binding_note = "no locality: the HBA's numa_node is -1: not bound";
	} else if (g->sysroot) {
		p->binding_note = "--sysroot: the tree is not this host: not bound (--node N binds)";
	} else {
		node = (int)hba->numa_node.v;
	}
	if (node < 0) {
		fprintf(stderr, "scsitune: %s\n", p->binding_note);
		return 0;
	}
	_cleanup_free_ char *err = NULL;
	int r = stune_numa_binder_open(binder, &err);
	if (r < 0) {
		if (asprintf(&rs->note, "libnuma: %s: not bound", err ? err : strerror(-r)) < 0)
			return -ENOMEM;
		p->binding_note = rs->note;
		fprintf(stderr, "scsitune: warning: %s\n", rs->note);
		return 0;
	}
	r = stune_numa_binder_node_cpus(*binder, node, &rs->cpus);
	if (r < 0 || !*rs->cpus) {
		error_msg("%s %d: no such NUMA node on this host (libnuma: %s)",
			  ro->node_set ? "--node" : "HBA numa_node", node, r < 0 ? strerror(-r) : "no CPUs");
		return -EINVAL;
	}
	p->bound_node = node;
	p->bound_cpus = rs->cpus;
	if (g->verbose)
		fprintf(stderr, "scsitune: binding fio to NUMA node %d (CPUs %s) with libnuma numa_run_on_node\n", node,
			rs->cpus);
	return 0;
}

/*
 * The applied profile, from apply's journal (issue 4): in --state-dir when
 * given, else in /var/lib/scsitune (of the --sysroot tree under --sysroot).
 * The journal says what apply did; verify_state says whether it was still in
 * effect when the runs started: the journal's profile planned against the
 * host model read before fio ran, counted as `scsitune verify` counts.
 */
static void profile_provenance(const struct report_opts *ro, struct stune_ctx *ctx, struct run_state *rs)
{
	struct report_provenance *p = &rs->prov;
	_cleanup_free_ char *dir = NULL;
	if (ro->state_dir_given)
		dir = strdup(ro->state_dir);
	else if (asprintf(&dir, "%s%s", stune_root_prefix(ctx->root), STUNE_STATE_DIR) < 0)
		dir = NULL;
	int r = dir ? stune_journal_load(dir, &rs->journal) : -ENOMEM;
	if (r == -ENOENT) {
		p->profile_note = "no applied profile: no apply journal (stock settings, or reverted)";
		p->profile_verify_state = "none-applied";
		return;
	}
	if (r < 0 || !rs->journal) {
		p->profile_note = "apply journal unreadable: profile unknown";
		fprintf(stderr, "scsitune: warning: %s/journal.json: %s\n", dir ? dir : "?",
			r == -EBADMSG ? "not a scsitune journal" : strerror(-r));
		return;
	}
	const struct stune_journal *j = rs->journal;
	size_t bad = 0, reverted = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (j->entries[i].state == STUNE_J_PENDING || j->entries[i].state == STUNE_J_FAILED)
			bad++;
		if (j->entries[i].state == STUNE_J_REVERTED)
			reverted++;
	}
	p->profile = j->profile;
	p->profile_digest = j->digest;
	p->profile_journal_state = reverted ? "partly-reverted" : bad ? "incomplete" : "applied";

	struct stune_verify_summary v;
	_cleanup_free_ char *err = NULL;
	r = stune_verify_journal(rs->topo, j, SCSITUNE_PROFILE_DIR, &v, &err);
	if (r < 0) {
		p->profile_note = "from apply's journal; verify_state unknown: the profile could not be read";
		fprintf(stderr, "scsitune: warning: verify_state unknown: %s\n",
			err		? err
			: r == -EBADMSG ? "the journal names no profile file"
					: strerror(-r));
		return;
	}
	p->profile_verify_state = v.drifted ? "drifted" : "in-effect";
	p->profile_verify_drifted = STUNE_NUM((int64_t)v.drifted);
	p->profile_note = v.profile_changed ? "from apply's journal; verify_state as scsitune verify: the profile file "
					      "changed since it was applied (checked as it is now)"
					    : "from apply's journal; verify_state as scsitune verify, before the runs";
}

/*
 * report --run: detect, check, run fio N times. On success rs->files are the
 * outputs, in run order. Returns an exit code (EXIT_OK to go on).
 */
static int run_fio(const struct global_opts *g, struct report_opts *ro, struct stune_ctx *ctx, struct run_state *rs)
{
	struct report_provenance *p = &rs->prov;
	int r;
	if ((r = stune_fio_find(ro->fio ? ro->fio : "fio", &rs->fio_path)) < 0) {
		if (ro->fio)
			error_msg("--fio %s: %s", ro->fio, strerror(-r));
		else
			error_msg("fio: not found in PATH (install fio, or give --fio PATH)");
		return EXIT_ERROR;
	}
	if ((r = stune_fio_version(rs->fio_path, &rs->fio_version)) < 0) {
		error_msg("%s: not a working fio ('%s --version' failed)", rs->fio_path, rs->fio_path);
		return EXIT_ERROR;
	}
	if ((r = stune_topology_scan_for_plan(ctx, &rs->topo)) < 0) {
		error_msg("detect: %s", strerror(-r));
		return EXIT_ERROR;
	}
	if (!ro->job.job_file && ro->n_devices == 0) {
		r = default_devices(rs->topo, &rs->default_devices, &ro->n_devices);
		ro->devices = rs->default_devices;
		if (r < 0) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		if (ro->n_devices == 0) {
			error_msg("--run: no disk behind an mpi3mr HBA found: name the devices with --device DEV");
			return EXIT_ERROR;
		}
	}
	const struct stune_hba *hba = NULL;
	for (size_t i = 0; i < ro->n_devices; i++) {
		struct stat st;
		if (stat(ro->devices[i], &st) < 0) {
			error_msg("--device %s: %s", ro->devices[i], strerror(errno));
			return EXIT_ERROR;
		}
		if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
			error_msg("--device %s: not a block device or a regular file", ro->devices[i]);
			return EXIT_ERROR;
		}
		const struct stune_hba *h = device_hba(g, rs->topo, ro->devices[i]);
		if (!hba)
			hba = h;
		else if (h && h != hba)
			fprintf(stderr,
				"scsitune: warning: --device %s is behind another HBA (%s) than the first device's\n",
				ro->devices[i], h->pci_address ? h->pci_address : "?");
	}
	_cleanup_(stune_numa_binder_freep) struct stune_numa_binder *binder = NULL;
	if (choose_binding(g, ro, rs, hba, &binder) < 0)
		return EXIT_ERROR;
	if ((r = stune_resultset_rundir(ro->state_dir, &rs->rundir)) < 0) {
		error_msg("--state-dir %s: creating %s/runs: %s", ro->state_dir, ro->state_dir, strerror(-r));
		return EXIT_ERROR;
	}

	/* Provenance: detect's model (the --sysroot tree's under --sysroot). */
	const struct stune_kernel *k = &rs->topo->kernel;
	if (gethostname(rs->host, sizeof(rs->host) - 1) < 0)
		rs->host[0] = '\0';
	p->host = g->sysroot && k->hostname ? k->hostname : (*rs->host ? rs->host : k->hostname);
	p->kernel = k->release;
	for (size_t i = 0; i < k->n_modules; i++)
		if (!strcmp(k->modules[i].name, "scsi_mod"))
			p->payload_version = k->modules[i].version;
	if (hba) {
		p->have_hba = true;
		p->hba_model = hba->model;
		p->hba_firmware = hba->firmware;
		p->hba_pci_address = hba->pci_address;
		p->hba_driver = hba->driver;
		p->hba_numa_node = hba->numa_node;
	}
	profile_provenance(ro, ctx, rs);
	p->fio_path = rs->fio_path;
	p->fio_version = rs->fio_version;
	p->devices = ro->devices;
	p->n_devices = ro->n_devices;
	p->job_file = ro->job.job_file;
	p->readonly = !ro->job.destructive;
	p->runs = ro->runs;
	p->start_ms = (int64_t)time(NULL) * 1000;

	_cleanup_free_ char *stamp = NULL;
	if ((r = stune_resultset_name(p->start_ms, &stamp)) < 0 || !(rs->files = calloc(ro->runs, sizeof(char *)))) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	stamp[strlen(stamp) - 5] = '\0'; /* no ".json" */
	struct progress pr = {.n = ro->runs, .per_run_s = ro->job.job_file ? 0 : ro->job.runtime_s, .tty = isatty(2)};
	for (unsigned i = 0; i < ro->runs; i++) {
		_cleanup_free_ char *errpath = NULL, *err = NULL;
		if (asprintf(&rs->files[i], "%s/%s-run%u.json", rs->rundir, stamp, i + 1) < 0 ||
		    asprintf(&errpath, "%s/%s-run%u.stderr", rs->rundir, stamp, i + 1) < 0) {
			rs->files[i] = NULL;
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		rs->n_files = i + 1;
		struct stune_fio_spawn sp = {.fio = rs->fio_path,
					     .job = &ro->job,
					     .devices = ro->devices,
					     .n_devices = ro->n_devices,
					     .output = rs->files[i],
					     .stderr_path = errpath,
					     .binder = p->bound_node >= 0 ? binder : NULL,
					     .node = p->bound_node,
					     .tick = progress_tick,
					     .tick_data = &pr};
		if (i == 0 && (r = stune_fio_argv(&sp, &rs->fio_args)) < 0) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		if (i == 0) /* the job, without the program and the per-run --output= */
			for (size_t a = 0, b = 0;; a++) {
				if (rs->fio_args[a] && (a == 0 || !strncmp(rs->fio_args[a], "--output=", 9))) {
					free(rs->fio_args[a]);
					continue;
				}
				if (!(rs->fio_args[b++] = rs->fio_args[a]))
					break;
			}
		p->fio_args = rs->fio_args;
		pr.k = i + 1;
		progress_tick(&pr, 0);
		r = stune_fio_spawn_run(&sp, &err);
		if (pr.tty)
			fputs("\r\033[K", stderr);
		if (r < 0) {
			error_msg("fio run %u of %u: %s (output kept: %s, %s)", i + 1, ro->runs,
				  err ? err : strerror(-r), rs->files[i], errpath);
			return EXIT_ERROR;
		}
		_cleanup_(stune_fio_run_freep) struct stune_fio_run *fr = NULL;
		_cleanup_free_ char *perr = NULL;
		if ((r = stune_fio_parse_file(ctx, rs->files[i], &fr, &perr)) < 0) {
			error_msg("fio run %u of %u: %s: %s", i + 1, ro->runs, rs->files[i],
				  perr ? perr : strerror(-r));
			return EXIT_ERROR;
		}
		char kiops[32];
		out_fmt_dbl(kiops, sizeof(kiops), fr->iops / 1000.0, 1);
		fprintf(stderr, "scsitune: fio run %u of %u done: %s KIOPS, %s\n", i + 1, ro->runs, kiops,
			rs->files[i]);
	}
	return EXIT_OK;
}

int cmd_report(struct global_opts *g, int argc, char **argv)
{
	enum {
		OPT_PHASE = 0x100,
		OPT_STATE_DIR,
		OPT_COMPARE,
		OPT_UPLOAD,
		OPT_FLUSH,
		OPT_AUTH_FILE,
		OPT_CA_FILE,
		OPT_CONFIG,
		OPT_UPLOAD_TIMEOUT,
		OPT_RUN,
		OPT_RUNS,
		OPT_DEVICE,
		OPT_RW,
		OPT_BS,
		OPT_IODEPTH,
		OPT_NUMJOBS,
		OPT_RUNTIME,
		OPT_JOB_FILE,
		OPT_DESTRUCTIVE,
		OPT_NODE,
		OPT_FIO
	};
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"phase", required_argument, NULL, OPT_PHASE},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"compare", required_argument, NULL, OPT_COMPARE},
						 {"upload", required_argument, NULL, OPT_UPLOAD},
						 {"flush", no_argument, NULL, OPT_FLUSH},
						 {"auth-file", required_argument, NULL, OPT_AUTH_FILE},
						 {"ca-file", required_argument, NULL, OPT_CA_FILE},
						 {"config", required_argument, NULL, OPT_CONFIG},
						 {"upload-timeout", required_argument, NULL, OPT_UPLOAD_TIMEOUT},
						 {"run", no_argument, NULL, OPT_RUN},
						 {"runs", required_argument, NULL, OPT_RUNS},
						 {"device", required_argument, NULL, OPT_DEVICE},
						 {"rw", required_argument, NULL, OPT_RW},
						 {"bs", required_argument, NULL, OPT_BS},
						 {"iodepth", required_argument, NULL, OPT_IODEPTH},
						 {"numjobs", required_argument, NULL, OPT_NUMJOBS},
						 {"runtime", required_argument, NULL, OPT_RUNTIME},
						 {"job-file", required_argument, NULL, OPT_JOB_FILE},
						 {"destructive", no_argument, NULL, OPT_DESTRUCTIVE},
						 {"node", required_argument, NULL, OPT_NODE},
						 {"fio", required_argument, NULL, OPT_FIO},
						 {NULL, 0, NULL, 0}};
	struct report_opts ro = {.state_dir = DEFAULT_STATE_DIR,
				 .runs = STUNE_FIO_DEFAULT_RUNS,
				 .job = {.rw = STUNE_FIO_SEED_RW,
					 .bs = STUNE_FIO_SEED_BS,
					 .iodepth = STUNE_FIO_SEED_IODEPTH,
					 .numjobs = STUNE_FIO_SEED_NUMJOBS,
					 .runtime_s = STUNE_FIO_SEED_RUNTIME}};
	_cleanup_(stune_strv_freep) char **devices = NULL;
	bool job_opts = false, job_shape = false; /* a --run option given; one the job file would ignore */
	int c;

	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help_report(stdout);
			return EXIT_OK;
		case OPT_PHASE:
			if (!stune_phase_valid(optarg)) {
				usage_error("report", "--phase: invalid name '%s' (letters, digits, '.', '_', '-')",
					    optarg);
				return EXIT_USAGE;
			}
			ro.phase = optarg;
			continue;
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("report", "--state-dir: empty directory name");
				return EXIT_USAGE;
			}
			ro.state_dir = optarg;
			ro.state_dir_given = true;
			continue;
		case OPT_COMPARE:
			if (!is_file_arg(optarg) && !stune_phase_valid(optarg)) {
				usage_error("report", "--compare: '%s' is neither a phase name nor a file", optarg);
				return EXIT_USAGE;
			}
			ro.compare = optarg;
			continue;
		case OPT_UPLOAD:
		case OPT_AUTH_FILE:
		case OPT_CA_FILE:
		case OPT_CONFIG:
			if (!*optarg) {
				usage_error("report", "%s: empty argument",
					    c == OPT_UPLOAD	 ? "--upload"
					    : c == OPT_AUTH_FILE ? "--auth-file"
					    : c == OPT_CA_FILE	 ? "--ca-file"
								 : "--config");
				return EXIT_USAGE;
			}
			*(c == OPT_UPLOAD      ? &ro.upload
			  : c == OPT_AUTH_FILE ? &ro.auth_file
			  : c == OPT_CA_FILE   ? &ro.ca_file
					       : &ro.config) = optarg;
			continue;
		case OPT_FLUSH:
			ro.flush = true;
			continue;
		case OPT_UPLOAD_TIMEOUT:
			if (stune_parse_upload_timeout(optarg, &ro.upload_timeout_s) < 0) {
				usage_error("report", "--upload-timeout: '%s' is not a number of seconds from %d to %d",
					    optarg, STUNE_UPLOAD_TIMEOUT_MIN, STUNE_UPLOAD_TIMEOUT_MAX);
				return EXIT_USAGE;
			}
			continue;
		case OPT_RUN:
			ro.run = true;
			continue;
		case OPT_DESTRUCTIVE:
			ro.job.destructive = job_opts = true;
			continue;
		case OPT_RUNS:
			if (!parse_uint("--runs", optarg, 1, 1000, &ro.runs))
				return EXIT_USAGE;
			job_opts = true;
			continue;
		case OPT_IODEPTH:
		case OPT_NUMJOBS:
		case OPT_RUNTIME:
			if (!parse_uint(c == OPT_IODEPTH   ? "--iodepth"
					: c == OPT_NUMJOBS ? "--numjobs"
							   : "--runtime",
					optarg, 1, c == OPT_RUNTIME ? 86400 : 65536,
					c == OPT_IODEPTH   ? &ro.job.iodepth
					: c == OPT_NUMJOBS ? &ro.job.numjobs
							   : &ro.job.runtime_s))
				return EXIT_USAGE;
			job_opts = job_shape = true;
			continue;
		case OPT_NODE: {
			unsigned node;
			if (!parse_uint("--node", optarg, 0, 4095, &node))
				return EXIT_USAGE;
			ro.node = (int)node;
			ro.node_set = job_opts = true;
			continue;
		}
		case OPT_DEVICE:
		case OPT_RW:
		case OPT_BS:
		case OPT_JOB_FILE:
		case OPT_FIO:
			if (!*optarg || strchr(optarg, '\n')) {
				const struct option *lo = longopts;
				while (lo->name && lo->val != c)
					lo++;
				usage_error("report", "--%s: empty or multi-line argument", lo->name);
				return EXIT_USAGE;
			}
			job_opts = true;
			if (c == OPT_DEVICE) {
				char **nv = realloc(devices, (ro.n_devices + 2) * sizeof(char *));
				if (!nv || !(nv[ro.n_devices] = strdup(optarg))) {
					if (nv)
						devices = nv;
					error_msg("out of memory");
					return EXIT_ERROR;
				}
				devices = nv;
				devices[++ro.n_devices] = NULL;
				job_shape = true;
			} else if (c == OPT_RW) {
				ro.job.rw = optarg;
				job_shape = true;
			} else if (c == OPT_BS) {
				ro.job.bs = optarg;
				job_shape = true;
			} else {
				*(c == OPT_JOB_FILE ? &ro.job.job_file : &ro.fio) = optarg;
			}
			continue;
		}
		int ec = command_opt(g, "report", c, optarg);
		if (ec)
			return ec;
	}
	if (job_opts && !ro.run) {
		usage_error("report", "--runs, --device, --rw, --bs, --iodepth, --numjobs, --runtime, --job-file, "
				      "--destructive, --node and --fio go with --run");
		return EXIT_USAGE;
	}
	if (ro.run) {
		if (optind < argc) {
			usage_error("report", "--run makes its own fio outputs: no FILE");
			return EXIT_USAGE;
		}
		if (ro.flush) {
			usage_error("report", "--run and --flush: one or the other");
			return EXIT_USAGE;
		}
		if (ro.job.job_file && job_shape) {
			usage_error("report", "--job-file: the job file says the devices and job options (no --device, "
					      "--rw, --bs, --iodepth, --numjobs, --runtime)");
			return EXIT_USAGE;
		}
		if (!ro.job.destructive && stune_fio_rw_writes(ro.job.rw)) {
			usage_error("report", "--rw %s writes to the devices: refused without --destructive",
				    ro.job.rw);
			return EXIT_USAGE;
		}
		if (ro.job.job_file) {
			bool writes = false;
			_cleanup_free_ char *line = NULL;
			int r = stune_fio_job_file_writes(ro.job.job_file, &writes, &line);
			if (r < 0) {
				error_msg("--job-file %s: %s", ro.job.job_file, strerror(-r));
				return EXIT_ERROR;
			}
			if (writes && !ro.job.destructive) {
				usage_error("report", "--job-file %s: '%s' writes: refused without --destructive",
					    ro.job.job_file, line);
				return EXIT_USAGE;
			}
		}
		ro.devices = devices;
	}
	_cleanup_(stune_config_freep) struct stune_config *cfg = NULL;
	if (!load_config(g, &ro, &cfg))
		return EXIT_ERROR;
	if (ro.flush) {
		if (optind < argc) {
			usage_error("report", "--flush sends the spool only: no FILE");
			return EXIT_USAGE;
		}
		if (!ro.upload) {
			usage_error("report", "--flush: no --upload URL (nor url= in [upload] of the settings file)");
			return EXIT_USAGE;
		}
		if (ro.phase || ro.compare) {
			usage_error("report", "--flush: no --phase or --compare");
			return EXIT_USAGE;
		}
	} else if (!ro.run && optind >= argc) {
		usage_error("report", "report: no fio JSON file given (or --run)");
		return EXIT_USAGE;
	}
	_cleanup_(stune_auth_freep) struct stune_auth *auth = NULL;
	if (ro.upload && !upload_prepare(&ro, &auth))
		return EXIT_ERROR;
	if (ro.flush)
		return flush_spool(g, &ro, auth);
	int64_t now_ms = (int64_t)time(NULL) * 1000;

	/* Ingest: logging only. --run: detect's model (the --sysroot tree's under --sysroot). */
	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;

	_cleanup_(run_state_clear) struct run_state rs = {0};
	char **files = argv + optind;
	size_t n = (size_t)(argc - optind);
	if (ro.run) {
		int rr = run_fio(g, &ro, ctx, &rs);
		if (rr != EXIT_OK)
			return rr;
		files = rs.files;
		n = rs.n_files;
	}
	struct report_set set = {.phase = ro.phase, .n_runs = n, .prov = ro.run ? &rs.prov : NULL};
	set.runs = calloc(n, sizeof(*set.runs));
	_cleanup_free_ double *kiops = set.kiops = calloc(n, sizeof(double));
	if (!set.runs || !set.kiops) {
		free(set.runs);
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	int ret = EXIT_ERROR, r;
	_cleanup_(stune_saved_set_freep) struct stune_saved_set *ref = NULL;
	_cleanup_free_ char *saved = NULL;
	_cleanup_(out_freep) struct out *o = NULL;
	struct report_compare cmp;
	if (!ingest(ctx, files, n, set.runs))
		goto out;
	for (size_t i = 0; i < n; i++)
		set.kiops[i] = set.runs[i]->iops / 1000.0;
	r = stune_stats_compute(set.kiops, n, &set.stats);
	if (r < 0) {
		error_msg("statistics: %s", strerror(-r));
		goto out;
	}

	/* Everything that can fail on input is checked before anything is written. */
	cmp = (struct report_compare){.cur_label = ro.phase ? ro.phase : "this set"};
	if (ro.compare) {
		if (!load_reference(&ro, &ref))
			goto out;
		if ((r = stune_stats_compute(ref->kiops, ref->n, &cmp.ref)) < 0 ||
		    (r = stune_stats_compare(&cmp.ref, &set.stats, &cmp.cmp)) < 0) {
			error_msg("--compare %s: %s: reference has no usable runs", ro.compare, ref->path);
			goto out;
		}
		cmp.ref_label = ref->phase ? ref->phase : ref->path;
		cmp.ref_source = ref->path;
	}
	if (ro.phase) {
		r = save(&ro, &set, &saved);
		if (r < 0) {
			error_msg("--state-dir %s: saving the result set: %s", ro.state_dir, strerror(-r));
			goto out;
		}
		fprintf(stderr, "scsitune: result set saved to %s\n", saved);
	}
	if (ro.upload) {
		_cleanup_free_ char *spooled = NULL;
		r = spool_set(&ro, &set, now_ms, &spooled);
		if (r < 0) {
			error_msg("--state-dir %s: spooling the upload: %s", ro.state_dir, strerror(-r));
			goto out;
		}
		if (g->verbose)
			fprintf(stderr, "scsitune: upload spooled to %s\n", spooled);
	}

	o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		goto out;
	}
	render_report(o, &set, ro.compare ? &cmp : NULL);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		goto out;
	}
	ret = ro.upload ? flush_spool(g, &ro, auth) : EXIT_OK;
out:
	runs_free(set.runs, n);
	return ret;
}
