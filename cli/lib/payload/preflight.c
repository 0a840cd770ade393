/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/preflight.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "payload/ko.h"
#include "payload/modsig.h"
#include "payload/mok.h"
#include "payload/sandbox.h"

void stune_preflight_free(struct stune_preflight *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct stune_payload_check *c = &p->rows[i];
		free(c->check);
		free(c->module);
		free(c->expected);
		free(c->actual);
		free(c->why);
		free(c->hint);
	}
	free(p->rows);
	free(p);
}

static int row(struct stune_preflight *p, const char *check, const char *module, const char *expected,
	       const char *actual, bool passed, const char *fmt, ...) _printf_(7, 8);
static int row(struct stune_preflight *p, const char *check, const char *module, const char *expected,
	       const char *actual, bool passed, const char *fmt, ...)
{
	struct stune_payload_check *n = realloc(p->rows, (p->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->rows = n;
	struct stune_payload_check *c = &n[p->n++];
	memset(c, 0, sizeof(*c));
	c->passed = passed;
	if (!passed)
		p->passed = false;
	if (!(c->check = strdup(check)) || (module && !(c->module = strdup(module))) ||
	    (expected && !(c->expected = strdup(expected))) || (actual && !(c->actual = strdup(actual))))
		return -ENOMEM;
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		int k = vasprintf(&c->why, fmt, ap);
		va_end(ap);
		if (k < 0) {
			c->why = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* The stock copy of each of our modules, read (NULL where missing). */
struct stock {
	char *path;
	struct stune_ko *ko;
};

static int read_ko(struct stune_ctx *ctx, const char *path, struct stune_ko **ko, char **why)
{
	_cleanup_free_ uint8_t *data = NULL;
	size_t len = 0;
	int r = stune_read_root_file(ctx->root, path, STUNE_BUNDLE_ENTRY_MAX, &data, &len);
	if (r < 0) {
		*why = stune_strdupf("%s", strerror(-r));
		return r;
	}
	return stune_ko_read(data, len, ko, why);
}

/* Whether the kernel would refuse a module it cannot verify, and the setting that makes it (NULL: it would not). */
static const char *enforced_by(const struct stune_payload_host *h)
{
	bool lockdown = h->lockdown && strcmp(h->lockdown, "none");
	return h->sig_enforce == STUNE_YES   ? "module.sig_enforce is on"
	       : lockdown		     ? "kernel lockdown is on"
	       : h->secure_boot == STUNE_YES ? "Secure Boot is on (Debian's kernel then locks down)"
					     : NULL;
}

static int check_signatures(struct stune_preflight *p, const struct stune_manifest *m,
			    const struct stune_payload_host *h)
{
	_cleanup_free_ char *state = NULL, *unsigned_list = NULL;
	const char *by = enforced_by(h);
	bool enforcing = by != NULL;
	size_t n_unsigned = 0;
	for (size_t i = 0; i < m->n_modules; i++) {
		if (m->modules[i].is_signed)
			continue;
		char *nl = stune_strdupf("%s%s%s.ko", unsigned_list ? unsigned_list : "", unsigned_list ? ", " : "",
					 m->modules[i].name);
		if (!nl)
			return -ENOMEM;
		free(unsigned_list);
		unsigned_list = nl;
		n_unsigned++;
	}
	state = stune_strdupf("sig_enforce=%s lockdown=%s secureboot=%s",
			      h->sig_enforce == STUNE_YES  ? "Y"
			      : h->sig_enforce == STUNE_NO ? "N"
							   : "unknown",
			      h->lockdown ? h->lockdown : "unknown",
			      h->secure_boot == STUNE_YES  ? "on"
			      : h->secure_boot == STUNE_NO ? "off"
							   : "unknown");
	if (!state)
		return -ENOMEM;
	const char *actual = n_unsigned == 0		  ? "all modules signed"
			     : n_unsigned == m->n_modules ? "unsigned"
							  : "partly signed";
	if (enforcing && n_unsigned) {
		return row(
		    p, "signatures", NULL, state, actual, false,
		    "%s and %s %s unsigned: the kernel would refuse to load %s (\"Key was rejected by service\" "
		    "or \"Lockdown: unsigned module loading is restricted\"). The way out: sign the modules with a "
		    "key enrolled as a Machine Owner Key (payload/sign --key MOK.priv --cert MOK.der over "
		    "payload/build's output), pack and sign the bundle again, then enrol its signer once per host "
		    "(scsitune payload enroll BUNDLE --password-file FILE, the confirmation at the console, a reboot)",
		    by, unsigned_list, n_unsigned > 1 ? "are" : "is", n_unsigned > 1 ? "them" : "it");
	}
	if (enforcing)
		return row(p, "signatures", NULL, state, actual, true,
			   "signatures are enforced and the modules are signed: whether the kernel trusts each signer, "
			   "below");
	return row(p, "signatures", NULL, state, actual, true,
		   n_unsigned ? "not enforced: unsigned modules load, tainting the kernel (E)%s" : "not enforced%s",
		   h->running ? "" : " (the running kernel's settings; the target kernel is not running)");
}

#define MOK_HINT                                                                                                \
	"enrol the certificate that signed the modules as a Machine Owner Key: scsitune payload enroll BUNDLE " \
	"--password-file FILE (a bundle signed by payload/sign carries it; else mokutil --import CERT.der), "   \
	"reboot and confirm it at the console (MokManager); or sign the modules with a key the kernel trusts "  \
	"(payload/sign), then pack and sign the bundle again (scsitune-payload(8), SECURE BOOT)"

/* Why the trust of a signer is not known (a note). */
static const char *unknown_why(const struct stune_module_trust *t)
{
	if (!t)
		return "the keyrings were not read";
	if (t->keys_error)
		return t->keys_error;
	if (!t->verifier)
		return "proc/keys lists neither .secondary_trusted_keys nor .builtin_trusted_keys";
	return t->members_error ? t->members_error : "which keyring holds the key is not known";
}

/* One signed module's signer against the keyrings (s read). */
static int trust_row(struct stune_preflight *p, const struct stune_payload_module *pm,
		     const struct stune_payload_host *h, const struct stune_modsig *s, bool via_signer)
{
	struct stune_sig_verdict v;
	stune_modsig_trust(h->trust, s, &v);
	const char *by = enforced_by(h), *kr = v.keyring ? v.keyring->name : "no keyring known",
		   *running = h->running ? "" : " (the running kernel's keyrings: the target kernel is not running)";
	_cleanup_free_ char *signer = stune_strdupf("'%s' (key id %s)", s->signer ? s->signer : "key identifier",
						    s->key_id ? s->key_id : "?"),
			    *actual = stune_strdupf("%s%s%s", stune_sig_trust_name(v.trust), v.keyring ? ": " : "",
						    v.keyring ? kr : "");
	if (!signer || !actual)
		return -ENOMEM;
	const char *expected = "signer in a keyring the kernel trusts for modules";
	switch (v.trust) {
	case STUNE_SIG_TRUSTED:
		return row(p, "trust", pm->name, expected, actual, true,
			   "signed by %s: the key '%s' of %s, which the module verifier searches (from %s)%s%s", signer,
			   v.key->name, kr, h->trust->verifier,
			   v.by_cert	? "; matched by issuer and serial through the firmware's certificate"
			   : via_signer ? "; matched by the key identifier of the bundle's signer certificate"
					: "",
			   running);
	case STUNE_SIG_TRUSTED_BY_NAME:
		return row(
		    p, "trust", pm->name, expected, actual, true,
		    "signed by %s: %s, which the module verifier searches, holds a key of that name (%s), but its "
		    "serial is shown nowhere (no certificate of it in MokListRT or db): by name only, try one "
		    "host first%s",
		    signer, kr, v.key->id, running);
	case STUNE_SIG_UNKNOWN:
		return row(p, "trust", pm->name, expected, actual, true,
			   "signed by %s; whether the kernel trusts it is not known: %s%s", signer,
			   unknown_why(h->trust), running);
	case STUNE_SIG_UNTRUSTED:
	case STUNE_SIG_ABSENT:
		break;
	}
	_cleanup_free_ char *where =
	    v.trust == STUNE_SIG_UNTRUSTED
		? stune_strdupf("its key is in %s only, which the kernel does not use for modules%s", kr,
				v.keyring && !strcmp(kr, ".platform") ? " (UEFI db keys verify kexec images)" : "")
	    : v.other
		? stune_strdupf("no keyring the kernel holds has that key (%s holds a key named '%s' whose "
				"certificate has another serial: a new key of the same name, not enrolled?)",
				stune_kkey_keyring(h->trust, v.other) ? stune_kkey_keyring(h->trust, v.other)->name
								      : "a keyring",
				v.other->name)
		: stune_strdupf("no keyring the kernel holds has that key");
	if (!where)
		return -ENOMEM;
	if (!by)
		return row(
		    p, "trust", pm->name, expected, actual, true,
		    "signed by %s: %s; signatures are not enforced, so the kernel loads it and taints itself (E)%s",
		    signer, where, running);
	int r = row(p, "trust", pm->name, expected, actual, false,
		    "%s.ko is signed by %s and %s; %s, so the kernel would refuse to load it (\"Key was rejected by "
		    "service\")%s",
		    pm->name, signer, where, by, running);
	if (r == 0 && !(p->rows[p->n - 1].hint = strdup(MOK_HINT)))
		r = -ENOMEM;
	return r;
}

/* trust: each signed module's signer. */
static int check_trust(struct stune_preflight *p, const struct stune_manifest *m, const struct stune_payload_host *h)
{
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		const struct stune_payload_file *f = stune_manifest_file(m, pm->file);
		struct stune_modsig s = {0};
		_cleanup_free_ char *err = NULL;
		if (!pm->is_signed || !f || !f->data)
			continue;
		int r = stune_modsig_read(f->data, f->size, &s, &err);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			r = row(p, "trust", pm->name, "a signature the kernel can read", "unreadable", !enforced_by(h),
				"%s.ko's signature cannot be read (%s)%s", pm->name, err ? err : strerror(-r),
				enforced_by(h) ? ": the kernel would refuse to load it" : "");
		else {
			/* The bundle's signer (its certificate checked against every module's signature when the
			 * bundle was read) gives the key identifier proc/keys shows: an exact match without the
			 * firmware's copy of the certificate. */
			bool via = !s.skid && m->signer && m->signer->skid;
			if (via && !(s.skid = strdup(m->signer->skid)))
				r = -ENOMEM;
			else
				r = trust_row(p, pm, h, &s, via);
		}
		stune_modsig_clear(&s);
		if (r < 0)
			return r;
	}
	return 0;
}

/* release: the bundle's kernel is installed (1 when not: nothing else can be checked). */
static int check_release(struct stune_preflight *p, const struct stune_manifest *m, const struct stune_payload_host *h)
{
	int r;
	if (!h->modules_dir) {
		if ((r = row(p, "release", NULL, m->release, h->running_release, false,
			     "kernel %s is not installed on this host (no /lib/modules/%s; running %s): the bundle is "
			     "for that release only",
			     m->release, m->release, h->running_release ? h->running_release : "unknown")) < 0)
			return r;
		return 1;
	}
	return row(p, "release", NULL, m->release, m->release, true,
		   h->running ? "the running kernel"
			      : "installed, not the running kernel (%s): a reboot into it is needed",
		   h->running_release ? h->running_release : "unknown");
}

/* debian package version */
static int check_debian(struct stune_preflight *p, const struct stune_manifest *m, const struct stune_payload_host *h)
{
	const char *actual = h->installed_debian_version ? h->installed_debian_version : h->running_debian_version;
	if (!actual)
		return row(p, "debian", NULL, m->debian_version, NULL, false,
			   "cannot tell which %s is installed: dpkg's status file does not list it%s",
			   m->debian_package, h->running ? " and proc/version names no Debian version" : "");
	if (strcmp(actual, m->debian_version))
		return row(p, "debian", NULL, m->debian_version, actual, false,
			   "%s %s is %s, the bundle was built against %s: the same uname -r, but the kernel package "
			   "changed (a Debian point release): build and pack a payload for %s",
			   m->debian_package, actual, h->installed_debian_version ? "installed" : "running",
			   m->debian_version, actual);
	if (h->running && h->running_debian_version && strcmp(h->running_debian_version, m->debian_version))
		return row(p, "debian", NULL, m->debian_version, actual, true,
			   "installed; the running kernel is %s (upgraded since boot): a reboot is needed anyway",
			   h->running_debian_version);
	return row(p, "debian", NULL, m->debian_version, actual, true, NULL);
}

/* vermagic, reading the stock copies on the way (stock[i] for m->modules[i]; names: the modules'). */
static int check_vermagic(struct stune_ctx *ctx, struct stune_preflight *p, const struct stune_manifest *m,
			  struct stock *stock, char ***names)
{
	size_t nn = 0;
	int r = 0;
	for (size_t i = 0; r >= 0 && i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		_cleanup_free_ char *why = NULL;
		if ((r = stune_strv_push(names, &nn, strdup(pm->name))) < 0)
			break;
		int k = stune_stock_module_path(ctx, m->release, pm->name, &stock[i].path);
		if (k == 0)
			k = read_ko(ctx, stock[i].path, &stock[i].ko, &why);
		if (k < 0) {
			r = row(p, "vermagic", pm->name, pm->vermagic, NULL, false,
				k == -ENOENT && !stock[i].path ? "kernel %s has no %s.ko of its own (modules.order): "
								 "nothing for the payload to replace"
							       : "the kernel package's %s.ko cannot be read: %s",
				k == -ENOENT && !stock[i].path ? m->release : pm->name,
				k == -ENOENT && !stock[i].path ? pm->name : (why ? why : strerror(-k)));
			continue;
		}
		bool same = !strcmp(stock[i].ko->vermagic, pm->vermagic);
		r = row(p, "vermagic", pm->name, pm->vermagic, stock[i].ko->vermagic, same,
			same ? NULL
			     : "the kernel's own %s.ko has another vermagic: the module was built for another kernel "
			       "configuration",
			pm->name);
	}
	return r;
}

/* KABI of one module: the imports of its stock dependents (deps) against our exports, and our exports
 * against the stock copy's (ko). */
static int check_kabi_module(struct stune_ctx *ctx, struct stune_preflight *p, const struct stune_payload_module *pm,
			     const struct stune_ko *ko, char **deps)
{
	int r = 0;
	size_t checked = 0, bad = 0, users = 0;
	_cleanup_free_ char *first = NULL;
	for (char **d = deps; *d && r >= 0; d++) {
		_cleanup_(stune_ko_freep) struct stune_ko *dk = NULL;
		_cleanup_free_ char *why = NULL;
		if (read_ko(ctx, *d, &dk, &why) < 0) {
			r = row(p, "kabi", pm->name, NULL, NULL, false, "%s: %s: its imports cannot be checked", *d,
				why ? why : "unreadable");
			break;
		}
		bool uses = false;
		for (size_t s = 0; s < dk->n_imports; s++) {
			const struct stune_symcrc *imp = &dk->imports[s];
			if (!stune_ko_export(ko, imp->symbol))
				continue; /* not a symbol of this module */
			uses = true;
			checked++;
			const struct stune_symcrc *ours = stune_symcrc_find(pm->exports, pm->n_exports, imp->symbol);
			if (ours && ours->crc == imp->crc)
				continue;
			bad++;
			if (!first)
				first = ours ? stune_strdupf("%s imports %s with CRC 0x%08x, our %s exports 0x%08x",
							     stune_path_basename(*d), imp->symbol, imp->crc, pm->name,
							     ours->crc)
					     : stune_strdupf("%s imports %s, which our %s does not export",
							     stune_path_basename(*d), imp->symbol, pm->name);
		}
		users += uses;
	}
	if (r < 0)
		return r;
	p->dependents += users;
	p->imports += checked;
	_cleanup_free_ char *exp = stune_strdupf("%zu imports by %zu stock modules", checked, users);
	_cleanup_free_ char *act =
	    stune_strdupf("%zu of %zu imports by %zu stock modules equal", checked - bad, checked, users);
	size_t same_exports = 0;
	for (size_t s = 0; s < ko->n_exports; s++) {
		const struct stune_symcrc *o = &ko->exports[s],
					  *ours = stune_symcrc_find(pm->exports, pm->n_exports, o->symbol);
		same_exports += ours && ours->crc == o->crc;
	}
	if (bad)
		return row(p, "kabi", pm->name, exp, act, false,
			   "%zu of %zu symbol CRCs differ (first: %s): the stock modules would refuse to load on top "
			   "of it (\"disagrees about version of symbol\"); %zu of %zu exports equal the kernel's own "
			   "%s.ko",
			   bad, checked, first ? first : "?", same_exports, ko->n_exports, pm->name);
	return row(p, "kabi", pm->name, exp, act, true, "%zu of %zu exports equal the kernel's own %s.ko", same_exports,
		   ko->n_exports, pm->name);
}

/* KABI: what the stock modules that depend on ours import. */
static int check_kabi(struct stune_ctx *ctx, struct stune_preflight *p, const struct stune_manifest *m,
		      const struct stock *stock, char **names)
{
	_cleanup_(stune_strv_freep) char **deps = NULL;
	int r = 0;
	int k = stune_module_dependents(ctx, m->release, names, &deps);
	if (k < 0 && k != -ENOENT)
		r = k;
	else if (k == -ENOENT)
		r = row(p, "kabi", NULL, NULL, NULL, false,
			"lib/modules/%s/modules.dep is missing: run depmod -a %s, then install again", m->release,
			m->release);
	for (size_t i = 0; r >= 0 && deps && i < m->n_modules; i++)
		if (stock[i].ko)
			r = check_kabi_module(ctx, p, &m->modules[i], stock[i].ko, deps);
	return r;
}

/* tree (--sysroot only): no symlink leads out of the tree on the way to what install changes; depmod's root can be
 * made. 1 when refused. */
static int check_tree(struct stune_ctx *ctx, struct stune_preflight *p, const struct stune_manifest *m)
{
	if (stune_root_is_live(ctx->root))
		return 0;
	_cleanup_free_ char *why = NULL;
	int r = stune_payload_tree_check(ctx, m->release, &why);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		const char *actual = r == -EXDEV   ? "a symlink out of it"
				     : r == -EPERM ? "depmod's root not made"
						   : "not resolved";
		return row(p, "tree", NULL, "inside the tree", actual, false, "%s", why ? why : strerror(-r)) < 0
			   ? -ENOMEM
			   : 1;
	}
	return row(p, "tree", NULL, "inside the tree", "inside the tree", true, NULL);
}

/* target: nothing there that scsitune did not record */
static int check_target(struct stune_ctx *ctx, struct stune_preflight *p, const struct stune_manifest *m)
{
	_cleanup_free_ char *dir = stune_strdupf("lib/modules/%s/%s", m->release, STUNE_PAYLOAD_SUBDIR);
	if (!dir)
		return -ENOMEM;
	bool dir_there = stune_root_exists(ctx->root, dir),
	     conf_there = stune_root_exists(ctx->root, "etc/depmod.d/scsitune.conf");
	if (dir_there || conf_there)
		return row(p, "target", NULL, "absent", dir_there ? dir : "etc/depmod.d/scsitune.conf", false,
			   "/%s is there and no payload journal records it: remove it by hand (or with payload remove "
			   "--state-dir of the install that made it), then install again",
			   dir_there ? dir : "etc/depmod.d/scsitune.conf");
	return row(p, "target", NULL, "absent", "absent", true, NULL);
}

/* Whether shim boots an image c signed: c in MokListRT or db, or its key in .machine or .platform. */
static bool shim_trusts(const struct stune_module_trust *t, const struct stune_cert *c)
{
	const char *id = c->skid ? c->skid : c->serial;
	for (size_t i = 0; i < t->n_certs; i++) {
		const struct stune_cert *f = &t->certs[i];
		if (f->source && (!strcmp(f->source, "MokListRT") || !strcmp(f->source, "db")) &&
		    (c->skid ? f->skid && !strcmp(f->skid, c->skid) : f->serial && !strcmp(f->serial, c->serial)))
			return true;
	}
	for (size_t i = 0; id && i < t->n_keys; i++) {
		const struct stune_kkey *k = &t->keys[i];
		if (k->id && !strcmp(k->id, id) && k->id_is_serial == !c->skid &&
		    (k->keyrings & (1u << STUNE_KEYRING_MACHINE | 1u << STUNE_KEYRING_PLATFORM)))
			return true;
	}
	return false;
}

#define BOOT_EXPECTED "an image shim boots under Secure Boot"

int stune_payload_preflight_boot(const struct stune_manifest *m, const struct stune_payload_host *h,
				 struct stune_preflight *p)
{
	if (!m->kernel || h->secure_boot != STUNE_YES)
		return 0;
	const struct stune_payload_kernel *k = m->kernel;
	const struct stune_payload_file *f = m->signer ? stune_manifest_file(m, m->signer->certificate) : NULL;
	const char *hint = NULL;
	int r;
	if (!k->image_signed || !f || !f->data) {
		r = row(p, "boot", k->package, BOOT_EXPECTED, "unsigned", false,
			"%s's image is unsigned: Secure Boot is on, so shim would refuse to boot it, and Debian's GRUB "
			"makes the newest kernel the default: the next boot would stop at \"bad shim signature\"",
			k->package);
		hint = "sign the --kernel build with payload/sign (payload/README.md, \"Secure Boot\"), pack and sign "
		       "the bundle again; or install with --no-kernel";
	} else {
		struct stune_cert c = {0};
		if ((r = stune_cert_from_der(f->data, f->size, true, &c)) < 0)
			return r == -ENOMEM ? r
					    : row(p, "boot", k->package, BOOT_EXPECTED, "unreadable signer", false,
						  "the bundle's signer certificate %s cannot be read", f->name);
		struct stune_mok_standing s;
		stune_mok_standing(h->trust, &c, &s);
		bool ok = h->trust && shim_trusts(h->trust, &c);
		const char *name = c.kernel_name ? c.kernel_name : m->signer->kernel_name;
		if (ok)
			r = row(p, "boot", k->package, BOOT_EXPECTED, "signer enrolled", true,
				"its image is signed by %s, which shim trusts (MOK list or db)", name);
		else
			r = row(p, "boot", k->package, BOOT_EXPECTED,
				s.state == STUNE_MOK_PENDING ? "signer pending" : "signer not enrolled", false,
				"%s's image is signed by %s, %s: shim would refuse to boot it, and Debian's GRUB makes "
				"the newest kernel the default",
				k->package, name,
				s.state == STUNE_MOK_PENDING ? "whose enrolment waits for the console at the next boot"
				: h->trust && h->trust->certs_error ? "and the firmware's lists could not be read"
								    : "which is in neither shim's MOK list nor db");
		hint = s.state == STUNE_MOK_PENDING
			   ? "reboot and confirm the enrolment at the console (MokManager), then install"
			   : MOK_HINT;
		stune_cert_clear(&c);
		if (ok)
			hint = NULL;
	}
	if (r == 0 && hint && !(p->rows[p->n - 1].hint = strdup(hint)))
		r = -ENOMEM;
	return r;
}

int stune_payload_preflight(struct stune_ctx *ctx, const struct stune_manifest *m, const struct stune_payload_host *h,
			    struct stune_preflight **out)
{
	_cleanup_(stune_preflight_freep) struct stune_preflight *p = calloc(1, sizeof(*p));
	int r;
	if (!p)
		return -ENOMEM;
	p->passed = true;

	if ((r = check_tree(ctx, p, m)) != 0) {
		if (r < 0)
			return r;
		*out = steal_pointer(&p);
		return 0; /* nothing is read through such a tree */
	}
	if ((r = check_release(p, m, h)) < 0)
		return r;
	if (r > 0) {
		*out = steal_pointer(&p);
		return 0; /* nothing else can be checked */
	}
	if ((r = check_debian(p, m, h)) < 0)
		return r;

	/* vermagic and the stock copies, then KABI against the stock copies */
	struct stock *stock = calloc(m->n_modules, sizeof(*stock));
	_cleanup_(stune_strv_freep) char **names = NULL;
	if (!stock)
		return -ENOMEM;
	r = check_vermagic(ctx, p, m, stock, &names);
	if (r >= 0)
		r = check_kabi(ctx, p, m, stock, names);
	for (size_t i = 0; i < m->n_modules; i++) {
		free(stock[i].path);
		stune_ko_free(stock[i].ko);
	}
	free(stock);
	if (r < 0)
		return r;

	if ((r = check_signatures(p, m, h)) < 0 || (r = check_trust(p, m, h)) < 0)
		return r;
	if ((r = check_target(ctx, p, m)) < 0)
		return r;
	*out = steal_pointer(&p);
	return 0;
}
