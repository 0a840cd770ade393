/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/state.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/strv.h"
#include "payload/host.h"
#include "payload/initrd.h"
#include "payload/install.h"
#include "payload/kmod.h"
#include "payload/modsig.h"

static const char *const link_names[_STUNE_LINK_MAX] = {
    [STUNE_LINK_OK] = "ok",	    [STUNE_LINK_PENDING] = "reboot-pending", [STUNE_LINK_DRIFT] = "drift",
    [STUNE_LINK_ABSENT] = "absent", [STUNE_LINK_SKIPPED] = "not-checked",    [STUNE_LINK_ERROR] = "error",
};
static const char *const verdict_names[_STUNE_PAYLOAD_MAX] = {
    [STUNE_PAYLOAD_LOADED] = "loaded",	     [STUNE_PAYLOAD_REBOOT_PENDING] = "reboot-pending",
    [STUNE_PAYLOAD_DRIFT] = "drift",	     [STUNE_PAYLOAD_NOT_INSTALLED] = "not-installed",
    [STUNE_PAYLOAD_INSTALLED] = "installed", [STUNE_PAYLOAD_UNKNOWN] = "unknown",
};

const char *stune_link_state_name(enum stune_link_state s)
{
	return s < _STUNE_LINK_MAX ? link_names[s] : "?";
}

const char *stune_payload_verdict_name(enum stune_payload_verdict v)
{
	return v < _STUNE_PAYLOAD_MAX ? verdict_names[v] : "?";
}

void stune_payload_status_free(struct stune_payload_status *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->links[i].link);
		free(s->links[i].module);
		free(s->links[i].expected);
		free(s->links[i].actual);
		free(s->links[i].note);
	}
	free(s->links);
	free(s->release);
	free(s->payload_version);
	free(s->source);
	free(s);
}

static int add(struct stune_payload_status *st, const char *link, const char *module, const char *expected,
	       const char *actual, enum stune_link_state state, const char *fmt, ...) _printf_(7, 8);
static int add(struct stune_payload_status *st, const char *link, const char *module, const char *expected,
	       const char *actual, enum stune_link_state state, const char *fmt, ...)
{
	struct stune_payload_link *n = realloc(st->links, (st->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	st->links = n;
	struct stune_payload_link *l = &n[st->n++];
	memset(l, 0, sizeof(*l));
	l->state = state;
	if (!(l->link = strdup(link)) || (module && !(l->module = strdup(module))) ||
	    (expected && !(l->expected = strdup(expected))) || (actual && !(l->actual = strdup(actual))))
		return -ENOMEM;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		int k = vasprintf(&l->note, fmt, ap);
		va_end(ap);
		if (k < 0) {
			l->note = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* The GNU build-id among ELF notes as the kernel shows them (namesz, descsz, type, name, desc, each
 * 4-aligned): sys/module/M/notes/.note.gnu.build-id holds one, sys/kernel/notes all of vmlinux's. */
static int notes_build_id(const uint8_t *d, size_t n, char **out)
{
	for (size_t off = 0; off + 12 <= n;) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, d + off, 4);
		memcpy(&descsz, d + off + 4, 4);
		memcpy(&type, d + off + 8, 4);
		size_t name = off + 12, desc = name + (((size_t)namesz + 3) & ~(size_t)3),
		       next = desc + (((size_t)descsz + 3) & ~(size_t)3);
		if (namesz > n || descsz > n || next > n || desc + descsz > n)
			return -EBADMSG;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && !memcmp(d + name, "GNU", 4) && descsz > 0 &&
		    descsz <= 64) {
			if (!(*out = malloc(2 * (size_t)descsz + 1)))
				return -ENOMEM;
			stune_hex(d + desc, descsz, *out);
			return 0;
		}
		off = next;
	}
	return -EBADMSG;
}

static int read_build_id(struct stune_ctx *ctx, const char *notes, char **out)
{
	_cleanup_free_ uint8_t *d = NULL;
	size_t n = 0;
	int r = stune_read_root_file(ctx->root, notes, 65536, &d, &n);
	return r < 0 ? r : notes_build_id(d, n, out);
}

static int read_module_build_id(struct stune_ctx *ctx, const char *module, char **out)
{
	_cleanup_free_ char *p = stune_strdupf("sys/module/%s/notes/.note.gnu.build-id", module);
	return p ? read_build_id(ctx, p, out) : -ENOMEM;
}

static bool conf_has_override(const char *text, const char *module, const char *release)
{
	_cleanup_free_ char *want = stune_strdupf("override %s %s %s", module, release, STUNE_PAYLOAD_SUBDIR);
	if (!want || !text)
		return false;
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (n == strlen(want) && !strncmp(p, want, n))
			return true;
		p += n + (p[n] ? 1 : 0);
	}
	return false;
}

/* iocounterbits of every SCSI device (sys/bus/scsi/devices/H:C:T:L), read on a few threads: on a
 * host with 4,096 disks the path walks of the opens are most of payload verify. */
struct iocb_job {
	const struct stune_root *root;
	char **names;
	char **values; /* NULL where unreadable */
};

static void iocb_read(void *arg, size_t i)
{
	struct iocb_job *j = arg;
	stune_root_batch(j->root, true);
	if (stune_root_readf(j->root, &j->values[i], "sys/bus/scsi/devices/%s/iocounterbits", j->names[i]) < 0)
		j->values[i] = NULL;
	stune_root_batch(j->root, false);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int count_iocounterbits(struct stune_ctx *ctx, size_t *n64, size_t *nother, size_t *ndev, char **other)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t n = 0;
	*n64 = *nother = *ndev = 0;
	int r = stune_root_opendir(ctx->root, "sys/bus/scsi/devices", &d);
	if (r < 0)
		return r;
	struct dirent *de;
	while ((de = readdir(d)))
		/* devices are H:C:T:L; hosts and targets (hostN, targetH:C:T) have no iocounterbits */
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' &&
		    (r = stune_strv_push(&names, &n, strdup(de->d_name))) < 0)
			return r;
	if (!n)
		return 0;
	_cleanup_free_ char **values = calloc(n, sizeof(*values));
	if (!values)
		return -ENOMEM;
	/* in name order, so the first "other" one named is the same on every run */
	qsort(names, n, sizeof(*names), name_cmp);
	struct iocb_job job = {.root = ctx->root, .names = names, .values = values};
	stune_parallel_for(ctx, n, 256, iocb_read, &job);
	*ndev = n;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *v = values[i];
		if (!v)
			continue;
		if (!strcmp(v, "64"))
			(*n64)++;
		else {
			(*nother)++;
			if (!*other && !(*other = stune_strdupf("%s says %.8s", names[i], v)))
				r = -ENOMEM;
		}
	}
	return r;
}

static bool has_patch(const struct stune_payload_module *pm, const char *id)
{
	for (char **p = pm->patches; p && *p; p++)
		if (!strcmp(*p, id))
			return true;
	return false;
}

/* A loaded.* link that is ours or not: when not, bad says how (reboot pending, or drift). */
struct loaded_bad {
	enum stune_link_state state;
	const char *note;
};

static int add_loaded(struct stune_payload_status *st, const char *link, const struct stune_payload_module *pm,
		      const char *want, const char *got, bool ok, const char *ok_note, const struct loaded_bad *bad)
{
	return add(st, link, pm->name, want, got, ok ? STUNE_LINK_OK : bad->state, "%s", ok ? ok_note : bad->note);
}

/* loaded.signer (a signed module of ours is loaded): the bundle's signer against the keyrings the module
 * verifier searches, as the running kernel holds them (the taint row says whether it verified it). */
static int link_signer(struct stune_payload_status *st, const struct stune_manifest *m,
		       const struct stune_payload_module *pm, const struct stune_payload_host *h)
{
	const char *want = "a signer the kernel trusts for modules";
	if (!m->signer)
		return add(st, "loaded.signer", pm->name, want, NULL, STUNE_LINK_SKIPPED,
			   "signed, but the bundle records no signer (not signed with payload/sign)");
	struct stune_modsig s = {.present = true};
	struct stune_sig_verdict v;
	if ((m->signer->issuer_cn && !(s.signer = strdup(m->signer->issuer_cn))) ||
	    !(s.serial = strdup(m->signer->serial)) || (m->signer->skid && !(s.skid = strdup(m->signer->skid)))) {
		stune_modsig_clear(&s);
		return -ENOMEM;
	}
	stune_modsig_trust(h->trust, &s, &v);
	stune_modsig_clear(&s);
	const char *name = m->signer->kernel_name, *kr = v.keyring ? v.keyring->name : "no keyring known";
	_cleanup_free_ char *got =
	    stune_strdupf("%s%s%s", stune_sig_trust_name(v.trust), v.keyring ? ": " : "", v.keyring ? kr : "");
	if (!got)
		return -ENOMEM;
	switch (v.trust) {
	case STUNE_SIG_TRUSTED:
		return add(st, "loaded.signer", pm->name, want, got, STUNE_LINK_OK,
			   "'%s' (serial %s) in %s, which the module verifier searches", name, m->signer->serial, kr);
	case STUNE_SIG_TRUSTED_BY_NAME:
		return add(st, "loaded.signer", pm->name, want, got, STUNE_LINK_OK,
			   "a key named '%s' in %s, which the module verifier searches (by name only)", name, kr);
	case STUNE_SIG_UNKNOWN:
		return add(st, "loaded.signer", pm->name, want, got, STUNE_LINK_SKIPPED, "'%s': not known: %s", name,
			   !h->trust		     ? "the keyrings were not read"
			   : h->trust->keys_error    ? h->trust->keys_error
			   : h->trust->members_error ? h->trust->members_error
						     : "which keyring holds the key is not known");
	case STUNE_SIG_UNTRUSTED:
	case STUNE_SIG_ABSENT:
		break;
	}
	return add(st, "loaded.signer", pm->name, want, got, STUNE_LINK_DRIFT,
		   "'%s' (serial %s) is %s: the kernel did not verify the module's signature; enrol the signer as a "
		   "Machine Owner Key (scsitune payload enroll BUNDLE --password-file FILE)",
		   name, m->signer->serial,
		   v.trust == STUNE_SIG_UNTRUSTED ? "only in a keyring the kernel does not use for modules"
						  : "in no keyring the kernel holds");
}

/* The module in memory: /sys/module/M (version, srcversion, build-id, taint) and, for patch C, the
 * SCSI devices' counter width. file_ok: our file is on disk; resolves_ours: modprobe finds it. */
static int link_loaded(struct stune_ctx *ctx, struct stune_payload_status *st, const struct stune_manifest *m,
		       const struct stune_payload_host *h, const struct stune_payload_module *pm, unsigned flags,
		       bool file_ok, bool resolves_ours)
{
	int r;
	if (!h->running)
		return add(st, "loaded", pm->name, pm->srcversion, NULL, STUNE_LINK_PENDING,
			   "kernel %s is not running (running %s): reboot into it", h->release,
			   h->running_release ? h->running_release : "unknown");
	_cleanup_free_ char *init = NULL, *ver = NULL, *src = NULL, *taint = NULL, *bid = NULL;
	if (stune_root_readf(ctx->root, &init, "sys/module/%s/initstate", pm->name) < 0)
		return add(st, "loaded", pm->name, pm->srcversion, NULL,
			   resolves_ours ? (file_ok ? STUNE_LINK_OK : STUNE_LINK_DRIFT) : STUNE_LINK_DRIFT,
			   file_ok && resolves_ours ? "not loaded: the next modprobe loads ours" : "not loaded");
	st->modules_loaded++;
	(void)stune_root_readf(ctx->root, &ver, "sys/module/%s/version", pm->name);
	(void)stune_root_readf(ctx->root, &src, "sys/module/%s/srcversion", pm->name);
	(void)stune_root_readf(ctx->root, &taint, "sys/module/%s/taint", pm->name);
	int bk = read_module_build_id(ctx, pm->name, &bid);
	if (bk == -ENOMEM)
		return bk;
	bool vok = ver && !strcmp(ver, pm->version), sok = src && !strcmp(src, pm->srcversion);
	bool bok = bk == 0 && !strcmp(bid, pm->build_id), ours = vok && sok && (bk < 0 || bok);
	/* stock loaded: pending when ours is on disk to be loaded next boot, else drift */
	const struct loaded_bad bad = {file_ok ? STUNE_LINK_PENDING : STUNE_LINK_DRIFT,
				       file_ok ? "the stock module is in memory: reboot (or reload when not in use)"
					       : "another module is loaded"};
	if ((r = add_loaded(st, "loaded.version", pm, pm->version, ver, vok, "/sys/module/M/version", &bad)) < 0)
		return r;
	if ((r = add_loaded(st, "loaded.srcversion", pm, pm->srcversion, src, sok, "/sys/module/M/srcversion", &bad)))
		return r;
	if (bk < 0)
		r = add(st, "loaded.build-id", pm->name, pm->build_id, NULL, STUNE_LINK_SKIPPED,
			"/sys/module/%s/notes/.note.gnu.build-id: %s", pm->name, strerror(-bk));
	else
		r = add_loaded(st, "loaded.build-id", pm, pm->build_id, bid, bok,
			       "/sys/module/M/notes/.note.gnu.build-id", &bad);
	if (r < 0)
		return r;
	/* taint: out-of-tree (O); E when the kernel could not verify a signature: an unsigned module, or a
	 * signed one whose key it does not hold (then it loaded only because signatures are not enforced) */
	const char *want_taint = pm->is_signed ? "O" : "OE";
	bool has_e = taint && strchr(taint, 'E');
	bool tok = taint && strchr(taint, 'O') && (pm->is_signed ? !has_e : has_e);
	if ((r = add(st, "loaded.taint", pm->name, want_taint, taint ? taint : "",
		     tok    ? STUNE_LINK_OK
		     : ours ? STUNE_LINK_DRIFT
			    : bad.state,
		     "%s",
		     tok			      ? "out-of-tree module loaded"
		     : ours && pm->is_signed && has_e ? "ours is loaded, tainted E: the kernel did not verify its "
							"signature (its key is not one the kernel trusts)"
		     : ours			      ? "ours is loaded but the taint letters differ"
						      : "no O: an in-tree module is loaded")) < 0)
		return r;
	if (pm->is_signed && ours && (r = link_signer(st, m, pm, h)) < 0)
		return r;

	if ((flags & STUNE_PAYLOAD_STATUS_DEVICES) && has_patch(pm, "C")) {
		size_t n64 = 0, nother = 0, ndev = 0;
		_cleanup_free_ char *other = NULL;
		int dk = count_iocounterbits(ctx, &n64, &nother, &ndev, &other);
		_cleanup_free_ char *act = stune_strdupf("%zu of %zu devices say 64", n64, ndev);
		if (!act)
			return -ENOMEM;
		if (dk < 0 || ndev == 0)
			r = add(st, "iocounterbits", pm->name, "64", NULL, STUNE_LINK_SKIPPED, "no SCSI devices");
		else if (nother == 0)
			r = add(st, "iocounterbits", pm->name, "64", act, STUNE_LINK_OK,
				"patch C's 64-bit counters on every SCSI device");
		else
			r = add(st, "iocounterbits", pm->name, "64", act, ours ? STUNE_LINK_DRIFT : bad.state,
				"%s (the stock scsi_mod counts in 32 bits)", other ? other : "");
		if (r < 0)
			return r;
	}
	return 0;
}

/* The bundle's kernel package: installed (dpkg), and when it runs, its build-id (sys/kernel/notes).
 * asked: verify is about that kernel's release (--release R), so its not running is pending. */
static int link_kernel(struct stune_ctx *ctx, struct stune_payload_status *st, const struct stune_payload_kernel *k,
		       const char *running, bool asked, bool *installed_ok)
{
	_cleanup_free_ char *status = NULL, *ver = NULL, *want = stune_strdupf("%s %s", k->package, k->version);
	_cleanup_free_ char *got = NULL, *link = NULL, *bid = NULL;
	int r;
	if (!want)
		return -ENOMEM;
	if (stune_root_read(ctx->root, STUNE_DPKG_STATUS, &status) == 0)
		ver = stune_dpkg_status_version(status, k->package);
	if (ver && !(got = stune_strdupf("%s %s", k->package, ver)))
		return -ENOMEM;
	*installed_ok = ver && !strcmp(ver, k->version);
	bool runs = running && !strcmp(running, k->release);
	if (!ver)
		r = add(st, "kernel.package", NULL, want, NULL, runs ? STUNE_LINK_DRIFT : STUNE_LINK_ABSENT,
			"not installed (dpkg's status file)%s", runs ? ", yet its release is running" : "");
	else
		r = add(st, "kernel.package", NULL, want, got, *installed_ok ? STUNE_LINK_OK : STUNE_LINK_DRIFT, "%s",
			*installed_ok ? "installed (dpkg)" : "another version is installed");
	if (r < 0)
		return r;
	if (runs) {
		int k2 = read_build_id(ctx, "sys/kernel/notes", &bid);
		if (k2 == -ENOMEM)
			return k2;
		if (k2 < 0)
			return add(st, "kernel.running", NULL, k->build_id, NULL, STUNE_LINK_ERROR,
				   "%s runs, but /sys/kernel/notes has no build-id: %s", k->release, strerror(-k2));
		bool same = !strcmp(bid, k->build_id);
		return add(st, "kernel.running", NULL, k->build_id, bid, same ? STUNE_LINK_OK : STUNE_LINK_DRIFT,
			   same ? "%s runs: its build-id (/sys/kernel/notes) is the bundle's"
				: "%s runs, another build of it: its build-id (/sys/kernel/notes) differs",
			   k->release);
	}
	if (!ver)
		return 0;
	(void)stune_root_readlink(ctx->root, "vmlinuz", &link);
	const char *base = link ? stune_path_basename(link) : NULL;
	bool is_default = base && !strncmp(base, "vmlinuz-", 8) && !strcmp(base + 8, k->release);
	return add(st, "kernel.running", NULL, k->build_id, NULL,
		   is_default || asked ? STUNE_LINK_PENDING : STUNE_LINK_SKIPPED,
		   is_default ? "running %s; /vmlinuz points at %s: reboot into it"
			      : "not running (running %s); /vmlinuz points at %s (payload install --set-default "
				"moves it)",
		   running ? running : "unknown", link ? link : "nothing");
}

/* The installed manifest whose kernel package is release: lib/modules/ * /updates/scsitune/manifest.json
 * (the running kernel is the payload's own, its modules' release is another). 0, or -ENOENT. */
static int find_kernel_manifest(struct stune_ctx *ctx, const char *release, uint8_t **mj, size_t *mjl,
				struct stune_manifest **m, char **mpath)
{
	_cleanup_(closedirp) DIR *d = NULL;
	if (stune_root_opendir(ctx->root, "lib/modules", &d) < 0)
		return -ENOENT;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *p =
		    stune_strdupf("lib/modules/%s/%s/manifest.json", e->d_name, STUNE_PAYLOAD_SUBDIR);
		_cleanup_free_ uint8_t *data = NULL;
		_cleanup_(stune_manifest_freep) struct stune_manifest *cand = NULL;
		_cleanup_free_ char *why = NULL;
		size_t len = 0;
		if (!p)
			return -ENOMEM;
		if (stune_read_root_file(ctx->root, p, STUNE_MANIFEST_MAX, &data, &len) < 0 ||
		    stune_manifest_parse((const char *)data, len, &cand, &why) < 0 || !cand->kernel ||
		    strcmp(cand->kernel->release, release))
			continue;
		*mj = steal_pointer(&data);
		*mjl = len;
		*m = steal_pointer(&cand);
		*mpath = steal_pointer(&p);
		return 0;
	}
	return -ENOENT;
}

/* The verdict from the links: any_file_ok: a module file of ours is on disk. */
static void judge(struct stune_payload_status *st, bool any_file_ok)
{
	bool error = false, drift = false, pending = false;
	for (size_t i = 0; i < st->n; i++) {
		error |= st->links[i].state == STUNE_LINK_ERROR;
		drift |= st->links[i].state == STUNE_LINK_DRIFT;
		pending |= st->links[i].state == STUNE_LINK_PENDING;
	}
	st->verdict = error		       ? STUNE_PAYLOAD_UNKNOWN
		      : !any_file_ok && !drift ? STUNE_PAYLOAD_NOT_INSTALLED
		      : drift		       ? STUNE_PAYLOAD_DRIFT
		      : pending		       ? STUNE_PAYLOAD_REBOOT_PENDING
					       : STUNE_PAYLOAD_LOADED;
	/* Every link fine, but none of its modules in memory: installed, not "loaded". */
	if (st->verdict == STUNE_PAYLOAD_LOADED && !st->modules_loaded)
		st->verdict = STUNE_PAYLOAD_INSTALLED;
	if (!any_file_ok && !error) {
		/* nothing of ours on disk: not installed, however the rest reads */
		bool absent = true;
		for (size_t i = 0; i < st->n; i++)
			if (!strcmp(st->links[i].link, "file") && st->links[i].state != STUNE_LINK_ABSENT)
				absent = false;
		st->verdict = absent ? STUNE_PAYLOAD_NOT_INSTALLED : STUNE_PAYLOAD_DRIFT;
	}
}

/* The installed manifest as read, and whether the running kernel is the payload's own (kernel mode). */
struct installed {
	char *mpath; /* lib/modules/R/updates/scsitune/manifest.json, or kernel mode's */
	uint8_t *mj; /* its bytes */
	size_t mjl;
	struct stune_manifest *m; /* parsed */
	char *why;		  /* why it does not parse */
	int mr;			  /* 0, or why it is not read or not parsed */
	char *now;		  /* the running release, when the caller did not read it */
	const char *running_release;
	bool kernel_mode;
};

static void installed_clear(struct installed *in)
{
	free(in->mpath);
	free(in->mj);
	stune_manifest_free(in->m);
	free(in->why);
	free(in->now);
}

/* The installed manifest (what install left next to the modules in dir); running: the release read
 * already, else NULL. */
static int read_installed(struct stune_ctx *ctx, const struct stune_manifest *given, const char *release,
			  const char *dir, const char *running, struct installed *in)
{
	if (!(in->mpath = stune_strdupf("%s/manifest.json", dir)))
		return -ENOMEM;
	in->mr = stune_read_root_file(ctx->root, in->mpath, STUNE_MANIFEST_MAX, &in->mj, &in->mjl);
	if (in->mr == 0 && (in->mr = stune_manifest_parse((const char *)in->mj, in->mjl, &in->m, &in->why)) < 0 &&
	    in->mr != -EBADMSG)
		return in->mr;
	/* Running the payload's own kernel: its manifest is with the modules of another release. */
	if (!running)
		(void)stune_attr_str(ctx, &in->now, STUNE_ATTR_OPTIONAL, "proc/sys/kernel/osrelease");
	in->running_release = running ? running : in->now;
	if (!given && in->mr == -ENOENT) {
		_cleanup_free_ char *kpath = NULL;
		int fr = find_kernel_manifest(ctx, release, &in->mj, &in->mjl, &in->m, &kpath);
		if (fr == -ENOMEM)
			return fr;
		if (fr == 0) {
			in->mr = 0;
			in->kernel_mode = true;
			free(in->mpath);
			in->mpath = steal_pointer(&kpath);
		}
	} else if (given && given->kernel && in->running_release &&
		   !strcmp(in->running_release, given->kernel->release))
		in->kernel_mode = true;
	return 0;
}

/* The links of a bundle given: read, and its manifest the one installed or not. */
static int link_bundle(struct stune_payload_status *st, const struct stune_manifest *given, const char *release,
		       const char *bundle_note, const struct installed *in)
{
	int r;
	if ((r = add(st, "bundle", NULL, NULL, NULL, STUNE_LINK_OK, "%s", bundle_note ? bundle_note : "read")) < 0)
		return r;
	char a[STUNE_SHA256_HEX], b[STUNE_SHA256_HEX];
	stune_sha256_hex(given->json, given->json_len, a);
	if (in->mj && in->mr == 0)
		stune_sha256_hex(in->mj, in->mjl, b);
	if (in->mr == -ENOENT)
		r = add(st, "installed", NULL, a, NULL, STUNE_LINK_ABSENT, "no payload installed for %s (/%s)", release,
			in->mpath);
	else if (in->mr < 0)
		r = add(st, "installed", NULL, a, NULL, STUNE_LINK_DRIFT, "/%s: %s", in->mpath,
			in->why ? in->why : strerror(-in->mr));
	else if (strcmp(a, b))
		r = add(st, "installed", NULL, a, b, STUNE_LINK_DRIFT,
			"another payload is installed (payload %s): its manifest differs from the bundle's",
			in->m->payload_version);
	else
		r = add(st, "installed", NULL, a, b, STUNE_LINK_OK, "the bundle's manifest is %s/manifest.json",
			STUNE_PAYLOAD_SUBDIR);
	if (r < 0)
		return r;
	st->source = stune_strdupf("bundle");
	return 0;
}

/* The link of the installed manifest, without a bundle: 1 when there is none or it is unreadable, the
 * state then complete (not installed, or unknown). */
static int link_installed(struct stune_payload_status *st, const char *release, const struct installed *in)
{
	int r;
	if (in->mr == -ENOENT) {
		st->verdict = STUNE_PAYLOAD_NOT_INSTALLED;
		if ((r = add(st, "installed", NULL, NULL, NULL, STUNE_LINK_ABSENT,
			     "no payload installed for %s (no /%s)", release, in->mpath)) < 0)
			return r;
		return 1;
	}
	if (in->mr < 0) {
		st->verdict = STUNE_PAYLOAD_UNKNOWN;
		if ((r = add(st, "installed", NULL, NULL, NULL, STUNE_LINK_ERROR, "/%s: %s", in->mpath,
			     in->why ? in->why : strerror(-in->mr))) < 0)
			return r;
		return 1;
	}
	char a[STUNE_SHA256_HEX];
	stune_sha256_hex(in->mj, in->mjl, a);
	if ((r = add(st, "installed", NULL, NULL, a, STUNE_LINK_OK,
		     "%s/manifest.json (its bundle's signature was checked at install)", STUNE_PAYLOAD_SUBDIR)) < 0)
		return r;
	st->source = stune_strdupf("/%s", in->mpath);
	return 0;
}

/* The kernel package: the same uname -r can be another build (a Debian point release). */
static int link_debian(struct stune_payload_status *st, const struct stune_manifest *m,
		       const struct stune_payload_host *h)
{
	const char *inst = h->installed_debian_version, *run = h->running_debian_version;
	if (inst && strcmp(inst, m->debian_version))
		return add(st, "debian", NULL, m->debian_version, inst, STUNE_LINK_DRIFT,
			   "%s %s is installed, the payload was built against %s: a Debian point release with the same "
			   "uname -r; the stock modules changed, build and install a payload for %s",
			   m->debian_package, inst, m->debian_version, inst);
	if (run && strcmp(run, m->debian_version))
		return add(st, "debian", NULL, m->debian_version, run, inst ? STUNE_LINK_PENDING : STUNE_LINK_DRIFT,
			   inst ? "the running kernel is Debian %s; %s installed is the payload's: reboot into it"
				: "the running kernel is Debian %s, the payload was built against another (%s)",
			   run, inst ? inst : m->debian_version);
	if (!inst && !run)
		return add(st, "debian", NULL, m->debian_version, NULL, STUNE_LINK_SKIPPED,
			   "neither dpkg's status file nor proc/version names the package version");
	return add(st, "debian", NULL, m->debian_version, inst ? inst : run, STUNE_LINK_OK, "%s%s",
		   inst ? "installed" : "running", inst && run ? " and running" : "");
}

/* The host's files every module's links are checked against, read once. */
struct host_files {
	char *conf;		  /* the depmod.d file */
	int cr;			  /* 0, or why conf is not read */
	char *initrd_path;	  /* boot/initrd.img-R */
	struct stune_initrd *ird; /* its modules (with STUNE_PAYLOAD_STATUS_INITRD) */
	char *initrd_err;
	int ir; /* 0, or why ird is not read (-ENOENT without STUNE_PAYLOAD_STATUS_INITRD) */
};

static void host_files_clear(struct host_files *hf)
{
	free(hf->conf);
	free(hf->initrd_path);
	stune_initrd_free(hf->ird);
	free(hf->initrd_err);
}

static int read_host_files(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			   unsigned flags, struct host_files *hf)
{
	int r;
	hf->cr = stune_root_read(ctx->root, STUNE_DEPMOD_CONF, &hf->conf);
	hf->ir = -ENOENT;
	if (!(hf->initrd_path = stune_strdupf("boot/initrd.img-%s", h->release)))
		return -ENOMEM;
	if (!(flags & STUNE_PAYLOAD_STATUS_INITRD))
		return 0;
	_cleanup_(stune_strv_freep) char **names = NULL;
	size_t nn = 0;
	for (size_t i = 0; i < m->n_modules; i++)
		if ((r = stune_strv_push(&names, &nn, strdup(m->modules[i].name))) < 0)
			return r;
	_cleanup_free_ uint8_t *data = NULL;
	size_t len = 0;
	hf->ir = stune_read_root_file(ctx->root, hf->initrd_path, STUNE_INITRD_MAX, &data, &len);
	if (hf->ir == 0)
		hf->ir = stune_initrd_read(data, len, h->release, names, &hf->ird, &hf->initrd_err);
	if (hf->ir == -ENOMEM)
		return hf->ir;
	return 0;
}

/* The module's file on disk (dir/M.ko, rel below lib/modules/R): the bundle's or not. */
static int link_file(struct stune_ctx *ctx, struct stune_payload_status *st, const struct stune_payload_module *pm,
		     const struct stune_payload_file *pf, const char *dir, const char *rel, bool *file_ok)
{
	_cleanup_free_ char *fpath = stune_strdupf("%s/%s.ko", dir, pm->name);
	if (!fpath)
		return -ENOMEM;
	char sha[STUNE_SHA256_HEX];
	int k = stune_sha256_root_file(ctx->root, fpath, sha);
	*file_ok = k == 0 && !strcmp(sha, pf->sha256);
	if (k == -ENOENT)
		return add(st, "file", pm->name, pf->sha256, NULL, STUNE_LINK_ABSENT, "no /%s", fpath);
	if (k < 0)
		return add(st, "file", pm->name, pf->sha256, NULL, STUNE_LINK_ERROR, "/%s: %s", fpath, strerror(-k));
	return add(st, "file", pm->name, pf->sha256, sha, *file_ok ? STUNE_LINK_OK : STUNE_LINK_DRIFT, "%s%s", rel,
		   *file_ok ? "" : ": not the bundle's file");
}

/* depmod.d: the override line that puts our directory first for the module. */
static int link_depmod(struct stune_payload_status *st, const struct stune_payload_module *pm, const char *release,
		       const struct host_files *hf)
{
	_cleanup_free_ char *want = stune_strdupf("override %s %s %s", pm->name, release, STUNE_PAYLOAD_SUBDIR);
	if (!want)
		return -ENOMEM;
	if (hf->cr == -ENOENT)
		return add(st, "depmod.d", pm->name, want, NULL, STUNE_LINK_ABSENT, "no /%s", STUNE_DEPMOD_CONF);
	if (hf->cr < 0)
		return add(st, "depmod.d", pm->name, want, NULL, STUNE_LINK_ERROR, "/%s: %s", STUNE_DEPMOD_CONF,
			   strerror(-hf->cr));
	return add(st, "depmod.d", pm->name, want, conf_has_override(hf->conf, pm->name, release) ? want : NULL,
		   conf_has_override(hf->conf, pm->name, release) ? STUNE_LINK_OK : STUNE_LINK_DRIFT, "/%s",
		   STUNE_DEPMOD_CONF);
}

/* modprobe: the file libkmod resolves the module to is ours (rel). */
static int link_modprobe(struct stune_ctx *ctx, struct stune_payload_status *st, const struct stune_payload_module *pm,
			 const char *release, const char *rel, bool *resolves_ours)
{
	_cleanup_free_ char *got = NULL;
	int k = stune_kmod_resolve(ctx, release, pm->name, &got);
	*resolves_ours = k == 0 && !strcmp(got, rel);
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return add(st, "modprobe", pm->name, rel, NULL, k == -ENOENT ? STUNE_LINK_DRIFT : STUNE_LINK_ERROR,
			   "modprobe %s: %s", pm->name,
			   k == -ENOENT ? "no module by that name in the depmod index" : strerror(-k));
	return add(st, "modprobe", pm->name, rel, got, *resolves_ours ? STUNE_LINK_OK : STUNE_LINK_DRIFT,
		   *resolves_ours ? "libkmod, lib/modules/%s" : "modprobe loads another file: depmod -a %s", release);
}

/* initrd: the copy of the module the next boot loads, if the initrd holds one. */
static int link_initrd(struct stune_payload_status *st, const struct stune_payload_module *pm,
		       const struct stune_payload_file *pf, const char *release, const struct host_files *hf)
{
	if (hf->ir == -ENOENT)
		return add(st, "initrd", pm->name, pf->sha256, NULL, STUNE_LINK_SKIPPED, "no /%s", hf->initrd_path);
	if (hf->ir < 0)
		return add(st, "initrd", pm->name, pf->sha256, NULL, STUNE_LINK_ERROR, "/%s: %s", hf->initrd_path,
			   hf->initrd_err ? hf->initrd_err : strerror(-hf->ir));
	const struct stune_initrd *ird = hf->ird;
	_cleanup_free_ char *res = stune_initrd_resolve(ird, pm->name);
	const struct stune_initrd_file *f = res ? stune_initrd_file(ird, pm->name, res) : NULL;
	for (size_t q = 0; !f && q < ird->n; q++)
		if (!strcmp(ird->files[q].module, pm->name))
			f = &ird->files[q];
	if (!f)
		return add(st, "initrd", pm->name, pf->sha256, NULL, STUNE_LINK_OK,
			   "not in /%s: loaded from /lib/modules", hf->initrd_path);
	if (!strcmp(f->sha256, pf->sha256))
		return add(st, "initrd", pm->name, pf->sha256, f->sha256, STUNE_LINK_OK, "/%s: %s", hf->initrd_path,
			   f->path);
	return add(st, "initrd", pm->name, pf->sha256, f->sha256, STUNE_LINK_DRIFT,
		   "/%s holds another %s.ko (%s): the next boot loads it; update-initramfs -u -k %s", hf->initrd_path,
		   pm->name, f->path, release);
}

/* One module's links, in order: file, depmod.d, modprobe, initrd, loaded. file_ok: its file is ours. */
static int link_module(struct stune_ctx *ctx, struct stune_payload_status *st, const struct stune_manifest *m,
		       const struct stune_payload_module *pm, const struct stune_payload_host *h, unsigned flags,
		       const char *dir, const struct host_files *hf, bool *file_ok)
{
	const struct stune_payload_file *pf = stune_manifest_file(m, pm->file);
	_cleanup_free_ char *rel = stune_strdupf("%s/%s.ko", STUNE_PAYLOAD_SUBDIR, pm->name);
	bool resolves_ours = true;
	int r;
	if (!rel)
		return -ENOMEM;
	if ((r = link_file(ctx, st, pm, pf, dir, rel, file_ok)) < 0)
		return r;
	if ((r = link_depmod(st, pm, h->release, hf)) < 0)
		return r;
	if ((flags & STUNE_PAYLOAD_STATUS_MODPROBE) &&
	    (r = link_modprobe(ctx, st, pm, h->release, rel, &resolves_ours)) < 0)
		return r;
	if ((flags & STUNE_PAYLOAD_STATUS_INITRD) && (r = link_initrd(st, pm, pf, h->release, hf)) < 0)
		return r;
	return link_loaded(ctx, st, m, h, pm, flags, *file_ok, resolves_ours);
}

int stune_payload_state(struct stune_ctx *ctx, const struct stune_manifest *given, const char *release, unsigned flags,
			const char *bundle_note, struct stune_payload_status **out)
{
	_cleanup_(stune_payload_status_freep) struct stune_payload_status *st = calloc(1, sizeof(*st));
	_cleanup_(stune_payload_host_freep) struct stune_payload_host *h = NULL;
	_cleanup_(installed_clear) struct installed in = {0};
	_cleanup_(host_files_clear) struct host_files hf = {0};
	int r;
	_cleanup_free_ char *running = NULL;
	if (!st)
		return -ENOMEM;
	if (given)
		release = given->release;
	else if (!release && stune_attr_str(ctx, &running, STUNE_ATTR_OPTIONAL, "proc/sys/kernel/osrelease") == 0)
		release = running;
	if (!release) { /* no release given and none running: nothing to say */
		st->verdict = STUNE_PAYLOAD_UNKNOWN;
		if ((r = add(st, "release", NULL, NULL, NULL, STUNE_LINK_ERROR,
			     "no kernel release: proc/sys/kernel/osrelease unreadable")) < 0)
			return r;
		*out = steal_pointer(&st);
		return 0;
	}
	if (!(st->release = strdup(release)))
		return -ENOMEM;
	_cleanup_free_ char *dir = stune_strdupf("lib/modules/%s/%s", release, STUNE_PAYLOAD_SUBDIR);
	if (!dir)
		return -ENOMEM;

	if ((r = read_installed(ctx, given, release, dir, running, &in)) < 0)
		return r;
	const struct stune_manifest *m = given ? given : in.m;
	if ((r = given ? link_bundle(st, given, release, bundle_note, &in) : link_installed(st, release, &in)) < 0)
		return r;
	if (r > 0) { /* nothing installed to follow further */
		*out = steal_pointer(&st);
		return 0;
	}
	if (!st->source || !(st->payload_version = strdup(m->payload_version)))
		return -ENOMEM;
	/* The host's facts only now: a host without a payload costs detect no more reads. */
	if ((r = stune_payload_host_read(ctx, release, &h)) < 0)
		return r;
	/* The keyrings only for signed modules (loaded.signer). */
	for (size_t i = 0; i < m->n_modules && !h->trust; i++)
		if (m->modules[i].is_signed && (r = stune_payload_host_read_trust(ctx, h)) < 0)
			return r;

	bool any_file_ok = false, kernel_ok = false;
	if (m->kernel && (r = link_kernel(ctx, st, m->kernel, in.running_release, in.kernel_mode, &kernel_ok)) < 0)
		return r;
	if (in.kernel_mode) {
		/* The modules are for Debian's kernel of m->release; the one running is built with the patches. */
		if ((r = add(st, "modules", NULL, m->release, NULL, STUNE_LINK_SKIPPED,
			     "the bundle's modules are for %s; %s is the payload's own kernel (the patches built in)",
			     m->release, m->kernel->release)) < 0)
			return r;
		st->modules_loaded += kernel_ok; /* the patches run, built into the payload's kernel */
		judge(st, kernel_ok);
		*out = steal_pointer(&st);
		return 0;
	}

	if ((r = link_debian(st, m, h)) < 0)
		return r;
	if ((r = read_host_files(ctx, m, h, flags, &hf)) < 0)
		return r;
	for (size_t i = 0; i < m->n_modules; i++) {
		bool file_ok = false;
		if ((r = link_module(ctx, st, m, &m->modules[i], h, flags, dir, &hf, &file_ok)) < 0)
			return r;
		any_file_ok |= file_ok;
	}

	judge(st, any_file_ok);
	*out = steal_pointer(&st);
	return 0;
}
