/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/bundle.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/strv.h"
#include "detect/modtrust.h"
#include "payload/archive-api.h"
#include "payload/modsig.h"

DEFINE_CLEANUP_FUNC(json_object, json_object_put)

/* --- the manifest ----------------------------------------------------------- */

static void pmodule_clear(struct stune_payload_module *m)
{
	free(m->name);
	free(m->file);
	free(m->build_id);
	free(m->srcversion);
	free(m->version);
	free(m->vermagic);
	stune_strv_free(m->patches);
	for (size_t i = 0; i < m->n_exports; i++)
		free(m->exports[i].symbol);
	free(m->exports);
}

void stune_manifest_free(struct stune_manifest *m)
{
	if (!m)
		return;
	free(m->payload_version);
	free(m->release);
	free(m->debian_package);
	free(m->debian_version);
	free(m->vermagic);
	free(m->created);
	for (size_t i = 0; i < m->n_modules; i++)
		pmodule_clear(&m->modules[i]);
	free(m->modules);
	for (size_t i = 0; i < m->n_patches; i++) {
		free(m->patches[i].id);
		free(m->patches[i].file);
		free(m->patches[i].lands_in);
	}
	free(m->patches);
	for (size_t i = 0; i < m->n_files; i++) {
		free(m->files[i].name);
		free(m->files[i].data);
	}
	free(m->files);
	if (m->kernel) {
		free(m->kernel->release);
		free(m->kernel->package);
		free(m->kernel->version);
		free(m->kernel->file);
		free(m->kernel->build_id);
		free(m->kernel->trusts_sha256);
		free(m->kernel->trusts_skid);
		stune_strv_free(m->kernel->patches);
		free(m->kernel);
	}
	if (m->signer) {
		free(m->signer->certificate);
		free(m->signer->kernel_name);
		free(m->signer->issuer_cn);
		free(m->signer->serial);
		free(m->signer->skid);
		free(m->signer);
	}
	free(m->json);
	free(m);
}

const struct stune_payload_file *stune_manifest_file(const struct stune_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->files[i].name, name))
			return &m->files[i];
	return NULL;
}

const struct stune_payload_module *stune_manifest_module(const struct stune_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_modules; i++)
		if (!strcmp(m->modules[i].name, name))
			return &m->modules[i];
	return NULL;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-' || c == '+';
}

/* One path component of safe characters, not "." or "..". */
static bool valid_component(const char *s, size_t n)
{
	if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i]))
			return false;
	return true;
}

/* a/b/c: relative, components as above, at most 4 deep. */
static bool valid_relname(const char *s)
{
	int depth = 0;
	if (!s || !*s || strlen(s) > 1024)
		return false;
	for (;;) {
		size_t n = strcspn(s, "/");
		if (!valid_component(s, n) || ++depth > 4)
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

static bool valid_hex(const char *s, size_t len)
{
	if (!s || strlen(s) != len)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

static bool valid_modname(const char *s)
{
	if (!s || !*s || strlen(s) > 55)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Printable text without control characters (it ends up in messages and paths' neighbours). */
static bool valid_text(const char *s)
{
	if (!s || strlen(s) > 512)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* A name from the bundle as one line for messages (control characters escaped). */
static void shown(const char *s, char *buf, size_t size)
{
	size_t o = 0;
	for (; s && *s && o + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int dupstr(char **dst, const char *s)
{
	return (*dst = strdup(s)) ? 0 : -ENOMEM;
}

static int parse_crc(const char *s, uint32_t *out)
{
	if (!s || strncmp(s, "0x", 2) || strlen(s) != 10)
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s + 2, &end, 16);
	if (errno || *end)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int symcrc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stune_symcrc *)a)->symbol, ((const struct stune_symcrc *)b)->symbol);
}

#define REQUIRE_STR(dst, obj, key, check, what)                                                                      \
	do {                                                                                                         \
		const char *_v = jstr(obj, key);                                                                     \
		if (!_v || !(check))                                                                                 \
			return stune_errf(err, -EBADMSG, "manifest.json: %s: missing or invalid \"%s\"", what, key); \
		if (dupstr(&(dst), _v) < 0)                                                                          \
			return -ENOMEM;                                                                              \
	} while (0)

static bool same_str(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static bool valid_sha256(const char *s)
{
	return strlen(s) == 64 && valid_hex(s, 64);
}

static bool valid_hexstr(const char *s);
static int optional_str(json_object *o, const char *key, bool (*ok)(const char *), char **dst);

/* The kernel's "signed" ({image: "boot/vmlinuz-RELEASE", image_signature: "sbsign", modules: N}) and
 * "trusts" ({certificate_sha256, skid}), both optional. */
static int parse_kernel_signing(json_object *o, struct stune_payload_kernel *k, char **err)
{
	json_object *v, *x;
	if (json_object_object_get_ex(o, "signed", &v) && !json_object_is_type(v, json_type_null)) {
		_cleanup_free_ char *img = stune_strdupf("boot/vmlinuz-%s", k->release);
		if (!img)
			return -ENOMEM;
		if (!json_object_is_type(v, json_type_object) || !same_str(jstr(v, "image"), img) ||
		    !same_str(jstr(v, "image_signature"), "sbsign") || !json_object_object_get_ex(v, "modules", &x) ||
		    !json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0 ||
		    json_object_get_int64(x) > 100000)
			return stune_errf(err, -EBADMSG,
					  "manifest.json: kernel: invalid \"signed\" (expected image %s, "
					  "image_signature sbsign, modules: a count)",
					  img);
		k->image_signed = true;
		k->signed_modules = (int)json_object_get_int64(x);
	}
	if (json_object_object_get_ex(o, "trusts", &v) && !json_object_is_type(v, json_type_null)) {
		int r = -EBADMSG;
		if (json_object_is_type(v, json_type_object) &&
		    (r = optional_str(v, "certificate_sha256", valid_sha256, &k->trusts_sha256)) >= 0 &&
		    (r = optional_str(v, "skid", valid_hexstr, &k->trusts_skid)) >= 0 && !k->trusts_sha256)
			r = -EBADMSG;
		if (r < 0)
			return r == -ENOMEM
				   ? r
				   : stune_errf(err, -EBADMSG,
						"manifest.json: kernel: invalid \"trusts\" (certificate_sha256, skid)");
	}
	return 0;
}

/* "kernel": the kernel image package (payload/build --kernel), optional. */
static int parse_kernel(json_object *o, struct stune_payload_kernel *k, char **err)
{
	const char *what = "kernel";
	if (!json_object_is_type(o, json_type_object))
		return stune_errf(err, -EBADMSG, "manifest.json: \"kernel\" is not an object");
	/* The release becomes a path component (boot/vmlinuz-RELEASE), the package an apt argument. */
	REQUIRE_STR(k->release, o, "release", valid_component(_v, strlen(_v)), what);
	REQUIRE_STR(k->package, o, "package", valid_component(_v, strlen(_v)), what);
	REQUIRE_STR(k->version, o, "version", valid_text(_v) && *_v && !strpbrk(_v, " /="), what);
	REQUIRE_STR(k->file, o, "file", valid_relname(_v) && strlen(_v) > 4 && !strcmp(_v + strlen(_v) - 4, ".deb"),
		    what);
	REQUIRE_STR(k->build_id, o, "build_id", valid_hex(_v, strlen(_v)) && strlen(_v) >= 2, what);
	if (strncmp(k->package, "linux-image-", 12) || strcmp(k->package + 12, k->release))
		return stune_errf(err, -EBADMSG, "manifest.json: kernel: \"package\" is not linux-image-%s",
				  k->release);
	json_object *v;
	size_t np = 0;
	if (json_object_object_get_ex(o, "patches", &v) && json_object_is_type(v, json_type_array))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *p = json_object_array_get_idx(v, i);
			if (!json_object_is_type(p, json_type_string) || !valid_text(json_object_get_string(p)))
				return stune_errf(err, -EBADMSG, "manifest.json: kernel: invalid \"patches\"");
			int r = stune_strv_push(&k->patches, &np, strdup(json_object_get_string(p)));
			if (r < 0)
				return r;
		}
	return parse_kernel_signing(o, k, err);
}

/* An optional string: absent or null gives NULL; else it must pass ok. */
static int optional_str(json_object *o, const char *key, bool (*ok)(const char *), char **dst)
{
	json_object *v;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string) || !ok(json_object_get_string(v)))
		return -EBADMSG;
	return dupstr(dst, json_object_get_string(v));
}

static bool valid_hexstr(const char *s)
{
	return *s && strlen(s) <= 128 && valid_hex(s, strlen(s));
}

/* "signer": who signed the modules (payload/sign), optional. */
static int parse_signer(json_object *o, struct stune_payload_signer *sg, char **err)
{
	const char *what = "signer";
	if (!json_object_is_type(o, json_type_object))
		return stune_errf(err, -EBADMSG, "manifest.json: \"signer\" is not an object");
	REQUIRE_STR(sg->certificate, o, "certificate", valid_relname(_v), what);
	REQUIRE_STR(sg->kernel_name, o, "kernel_name", valid_text(_v) && *_v, what);
	REQUIRE_STR(sg->serial, o, "serial", valid_hexstr(_v), what);
	int r;
	if ((r = optional_str(o, "issuer_cn", valid_text, &sg->issuer_cn)) < 0 ||
	    (r = optional_str(o, "skid", valid_hexstr, &sg->skid)) < 0)
		return r == -ENOMEM
			   ? r
			   : stune_errf(err, -EBADMSG, "manifest.json: signer: invalid \"issuer_cn\" or \"skid\"");
	return 0;
}

static int parse_module(json_object *o, struct stune_payload_module *m, char **err)
{
	const char *_name = jstr(o, "name");
	const char *what = _name && valid_modname(_name) ? _name : "a module";
	REQUIRE_STR(m->name, o, "name", valid_modname(_v), "a module");
	REQUIRE_STR(m->file, o, "file", valid_relname(_v), what);
	REQUIRE_STR(m->vermagic, o, "vermagic", valid_text(_v), what);
	REQUIRE_STR(m->version, o, "version", valid_text(_v), what);
	REQUIRE_STR(m->srcversion, o, "srcversion", valid_text(_v), what);
	REQUIRE_STR(m->build_id, o, "build_id", valid_hex(_v, strlen(_v)) && strlen(_v) >= 2, what);
	json_object *v;
	if (!json_object_object_get_ex(o, "signed", &v) || !json_object_is_type(v, json_type_boolean))
		return stune_errf(err, -EBADMSG, "manifest.json: %s: missing or invalid \"signed\"", what);
	m->is_signed = json_object_get_boolean(v);
	size_t np = 0;
	if (json_object_object_get_ex(o, "patches", &v) && json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *p = json_object_array_get_idx(v, i);
			if (!json_object_is_type(p, json_type_string) || !valid_text(json_object_get_string(p)))
				return stune_errf(err, -EBADMSG, "manifest.json: %s: invalid \"patches\"", what);
			int r = stune_strv_push(&m->patches, &np, strdup(json_object_get_string(p)));
			if (r < 0)
				return r;
		}
	}
	if (!json_object_object_get_ex(o, "exports", &v) || !json_object_is_type(v, json_type_object))
		return stune_errf(err, -EBADMSG, "manifest.json: %s: missing or invalid \"exports\"", what);
	size_t n = (size_t)json_object_object_length(v), k = 0;
	if (!(m->exports = calloc(n ? n : 1, sizeof(*m->exports))))
		return -ENOMEM;
	json_object_object_foreach(v, sym, crc)
	{
		uint32_t c;
		if (!json_object_is_type(crc, json_type_string) || parse_crc(json_object_get_string(crc), &c) < 0 ||
		    !*sym || strlen(sym) > 55 || !valid_text(sym)) {
			char shown_sym[64]; /* the manifest's bytes: control characters as \xNN */
			shown(sym, shown_sym, sizeof(shown_sym));
			return stune_errf(err, -EBADMSG, "manifest.json: %s: invalid export \"%s\"", what, shown_sym);
		}
		if (!(m->exports[k].symbol = strdup(sym)))
			return -ENOMEM;
		m->exports[k++].crc = c;
		m->n_exports = k;
	}
	if (k)
		qsort(m->exports, k, sizeof(*m->exports), symcrc_cmp);
	return 0;
}

/* "files": every file of the bundle but manifest.json, its size and SHA-256, each once. */
static int parse_files(json_object *root, struct stune_manifest *m, char **err)
{
	json_object *v;
	if (!json_object_object_get_ex(root, "files", &v) || !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0 || json_object_array_length(v) >= STUNE_BUNDLE_ENTRIES_MAX)
		return stune_errf(err, -EBADMSG, "manifest.json: missing or invalid \"files\"");
	size_t nf = json_object_array_length(v);
	if (!(m->files = calloc(nf, sizeof(*m->files))))
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++) {
		json_object *f = json_object_array_get_idx(v, i), *sz;
		struct stune_payload_file *pf = &m->files[i];
		m->n_files = i + 1;
		const char *name = jstr(f, "name"), *sha = jstr(f, "sha256");
		if (!name || !valid_relname(name) || !strcmp(name, "manifest.json"))
			return stune_errf(err, -EBADMSG,
					  "manifest.json: file %zu: invalid \"name\" (a relative path of "
					  "[A-Za-z0-9._+-] components, no \"..\")",
					  i + 1);
		if (!sha || !valid_hex(sha, 64))
			return stune_errf(err, -EBADMSG, "manifest.json: %s: invalid \"sha256\"", name);
		if (!json_object_object_get_ex(f, "size", &sz) || !json_object_is_type(sz, json_type_int) ||
		    json_object_get_int64(sz) < 0 || json_object_get_int64(sz) > STUNE_BUNDLE_ENTRY_MAX)
			return stune_errf(err, -EBADMSG, "manifest.json: %s: invalid \"size\"", name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(m->files[k].name, name))
				return stune_errf(err, -EBADMSG, "manifest.json: %s listed twice", name);
		if (dupstr(&pf->name, name) < 0)
			return -ENOMEM;
		memcpy(pf->sha256, sha, STUNE_SHA256_HEX);
		pf->size = (uint64_t)json_object_get_int64(sz);
	}
	return 0;
}

/* "modules": each one's file in "files", each once, all of the bundle's vermagic. */
static int parse_modules(json_object *root, struct stune_manifest *m, char **err)
{
	json_object *v;
	if (!json_object_object_get_ex(root, "modules", &v) || !json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) == 0 || json_object_array_length(v) > 16)
		return stune_errf(err, -EBADMSG, "manifest.json: missing or invalid \"modules\"");
	size_t nm = json_object_array_length(v);
	if (!(m->modules = calloc(nm, sizeof(*m->modules))))
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		m->n_modules = i + 1;
		int r = parse_module(json_object_array_get_idx(v, i), &m->modules[i], err);
		if (r < 0)
			return r;
		const struct stune_payload_module *pm = &m->modules[i];
		if (!stune_manifest_file(m, pm->file))
			return stune_errf(err, -EBADMSG, "manifest.json: module %s: its file %s is not in \"files\"",
					  pm->name, pm->file);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(m->modules[k].name, pm->name))
				return stune_errf(err, -EBADMSG, "manifest.json: module %s listed twice", pm->name);
		if (strcmp(pm->vermagic, m->vermagic))
			return stune_errf(err, -EBADMSG, "manifest.json: module %s: vermagic differs from the bundle's",
					  pm->name);
	}
	return 0;
}

/* "patches" (optional): at most 64, each one's id, file and lands_in optional. */
static int parse_patches(json_object *v, struct stune_manifest *m, char **err)
{
	size_t np = json_object_array_length(v);
	if (np > 64 || !(m->patches = calloc(np ? np : 1, sizeof(*m->patches))))
		return np > 64 ? stune_errf(err, -EBADMSG, "manifest.json: too many patches") : -ENOMEM;
	for (size_t i = 0; i < np; i++) {
		json_object *p = json_object_array_get_idx(v, i);
		struct stune_payload_patch *pp = &m->patches[i];
		m->n_patches = i + 1;
		const char *id = jstr(p, "id"), *file = jstr(p, "file"), *lands = jstr(p, "lands_in");
		if ((id && !valid_text(id)) || (file && !valid_relname(file)) || (lands && !valid_text(lands)))
			return stune_errf(err, -EBADMSG, "manifest.json: patch %zu: invalid", i + 1);
		if ((id && dupstr(&pp->id, id) < 0) || (file && dupstr(&pp->file, file) < 0) ||
		    (lands && dupstr(&pp->lands_in, lands) < 0))
			return -ENOMEM;
	}
	return 0;
}

/* A signed kernel package names the bundle's signer, and the certificate its kernel trusts is that one. */
static int check_kernel_signer(const struct stune_manifest *m, char **err)
{
	if (!m->kernel)
		return 0;
	if (m->kernel->image_signed && !m->signer)
		return stune_errf(err, -EBADMSG, "manifest.json: kernel: \"signed\", but the manifest names no signer");
	if (!m->signer || !m->kernel->trusts_sha256)
		return 0;
	const struct stune_payload_file *c = stune_manifest_file(m, m->signer->certificate);
	if (!c || strcmp(c->sha256, m->kernel->trusts_sha256))
		return stune_errf(err, -EBADMSG,
				  "manifest.json: kernel: it trusts certificate %.16s..., not the signer's %s",
				  m->kernel->trusts_sha256, m->signer->certificate);
	return 0;
}

int stune_manifest_parse(const char *json, size_t len, struct stune_manifest **out, char **err)
{
	_cleanup_(stune_manifest_freep) struct stune_manifest *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (len > STUNE_MANIFEST_MAX || memchr(json, '\0', len))
		return stune_errf(err, -EBADMSG, "manifest.json: not a JSON text");
	if (!(m->json = malloc(len + 1)))
		return -ENOMEM;
	memcpy(m->json, json, len);
	m->json[len] = '\0';
	m->json_len = len;
	_cleanup_(json_object_putp) json_object *root = NULL;
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, m->json, (int)len);
	bool complete = json_tokener_get_error(tok) == json_tokener_success && tok->char_offset == (int)len;
	json_tokener_free(tok);
	if (!root || !complete || !json_object_is_type(root, json_type_object))
		return stune_errf(err, -EBADMSG, "manifest.json: not a JSON object");
	const char *fmt = jstr(root, "format");
	if (!fmt || strcmp(fmt, STUNE_BUNDLE_FORMAT))
		return stune_errf(err, -EBADMSG,
				  "manifest.json: \"format\" is not \"%s\": not a scsitune payload bundle",
				  STUNE_BUNDLE_FORMAT);
	json_object *v;
	if (!json_object_object_get_ex(root, "format_version", &v) || !json_object_is_type(v, json_type_int))
		return stune_errf(err, -EBADMSG, "manifest.json: missing \"format_version\"");
	m->format_version = json_object_get_int(v);
	if (m->format_version != STUNE_BUNDLE_FORMAT_VERSION)
		return stune_errf(err, -EBADMSG, "manifest.json: format_version %d (this scsitune reads %d)",
				  m->format_version, STUNE_BUNDLE_FORMAT_VERSION);
	REQUIRE_STR(m->payload_version, root, "payload_version", valid_text(_v) && *_v, "bundle");
	/* The release becomes a path component (lib/modules/RELEASE). */
	REQUIRE_STR(m->release, root, "release", valid_component(_v, strlen(_v)), "bundle");
	REQUIRE_STR(m->debian_package, root, "debian_package", valid_component(_v, strlen(_v)), "bundle");
	/* The host's check reads linux-image-RELEASE from dpkg; messages and the journal name this one: the same. */
	if (strncmp(m->debian_package, "linux-image-", 12) || strcmp(m->debian_package + 12, m->release))
		return stune_errf(err, -EBADMSG,
				  "manifest.json: \"debian_package\" %s is not linux-image-%s (the package of its "
				  "\"release\")",
				  m->debian_package, m->release);
	REQUIRE_STR(m->debian_version, root, "debian_version", valid_text(_v) && *_v, "bundle");
	REQUIRE_STR(m->vermagic, root, "vermagic", valid_text(_v) && *_v, "bundle");
	REQUIRE_STR(m->created, root, "created", valid_text(_v), "bundle");

	int r;
	if ((r = parse_files(root, m, err)) < 0 || (r = parse_modules(root, m, err)) < 0)
		return r;
	if (json_object_object_get_ex(root, "kernel", &v)) {
		if (!(m->kernel = calloc(1, sizeof(*m->kernel))))
			return -ENOMEM;
		if ((r = parse_kernel(v, m->kernel, err)) < 0)
			return r;
		if (!stune_manifest_file(m, m->kernel->file))
			return stune_errf(err, -EBADMSG, "manifest.json: kernel: its file %s is not in \"files\"",
					  m->kernel->file);
		if (!strcmp(m->kernel->release, m->release))
			return stune_errf(
			    err, -EBADMSG,
			    "manifest.json: kernel: release %s is the modules' release (the package would "
			    "replace the kernel they are for)",
			    m->release);
	}
	if (json_object_object_get_ex(root, "signer", &v) && !json_object_is_type(v, json_type_null)) {
		if (!(m->signer = calloc(1, sizeof(*m->signer))))
			return -ENOMEM;
		if ((r = parse_signer(v, m->signer, err)) < 0)
			return r;
		if (!stune_manifest_file(m, m->signer->certificate))
			return stune_errf(err, -EBADMSG,
					  "manifest.json: signer: its certificate %s is not in \"files\"",
					  m->signer->certificate);
		for (size_t i = 0; i < m->n_modules; i++)
			if (!m->modules[i].is_signed)
				return stune_errf(err, -EBADMSG,
						  "manifest.json: %s is not signed, but the manifest names a signer",
						  m->modules[i].name);
	}
	if ((r = check_kernel_signer(m, err)) < 0)
		return r;
	if (json_object_object_get_ex(root, "patches", &v) && json_object_is_type(v, json_type_array) &&
	    (r = parse_patches(v, m, err)) < 0)
		return r;
	*out = steal_pointer(&m);
	return 0;
}

/* --- the signer's certificate against the modules' signatures ------------------------ */

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* One module's appended signature names certificate c: by SKID (sign-file -k) or by issuer and serial. */
static int signature_names(const struct stune_cert *c, const char *file, const uint8_t *data, size_t len, char **err)
{
	struct stune_modsig s = {0};
	_cleanup_free_ char *why = NULL;
	int r = stune_modsig_read(data, len, &s, &why);
	if (r < 0) {
		r = r == -ENOMEM ? r : stune_errf(err, r, "%s: its signature cannot be read: %s", file, why ? why : "");
		stune_modsig_clear(&s);
		return r;
	}
	bool ok =
	    s.present && (s.skid ? same(s.skid, c->skid) : same(s.signer, c->issuer_cn) && same(s.serial, c->serial));
	if (!ok)
		r = stune_errf(err, -EBADMSG, "%s: %s%s%s (key id %s), not by the signer's certificate (%s, serial %s)",
			       file, s.present ? "signed by '" : "not signed",
			       s.present ? (s.signer ? s.signer : "key identifier") : "", s.present ? "'" : "",
			       s.key_id ? s.key_id : "none", c->kernel_name ? c->kernel_name : "no name", c->serial);
	stune_modsig_clear(&s);
	return r;
}

/* The signer's certificate (DER) says what the manifest's signer says. */
static int signer_cert(const struct stune_payload_signer *sg, const uint8_t *der, size_t len, struct stune_cert *c,
		       char **err)
{
	int r = stune_cert_from_der(der, len, true, c);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return stune_errf(err, r, "%s: not one DER X.509 certificate", sg->certificate);
	const char *what = !same(c->kernel_name, sg->kernel_name) ? "kernel_name"
			   : !same(c->issuer_cn, sg->issuer_cn)	  ? "issuer_cn"
			   : !same(c->serial, sg->serial)	  ? "serial"
			   : !same(c->skid, sg->skid)		  ? "skid"
								  : NULL;
	if (what) {
		stune_cert_clear(c);
		return stune_errf(err, -EBADMSG, "%s: its %s differs from what the manifest's signer says",
				  sg->certificate, what);
	}
	return 0;
}

/* A read bundle's signer: the certificate, then every module's signature. */
static int check_signer(const struct stune_manifest *m, char **err)
{
	if (!m->signer)
		return 0;
	const struct stune_payload_file *cf = stune_manifest_file(m, m->signer->certificate);
	struct stune_cert c = {0};
	int r = signer_cert(m->signer, cf->data, cf->size, &c, err);
	for (size_t i = 0; r == 0 && i < m->n_modules; i++) {
		const struct stune_payload_file *pf = stune_manifest_file(m, m->modules[i].file);
		r = signature_names(&c, m->modules[i].file, pf->data, pf->size, err);
	}
	stune_cert_clear(&c);
	return r;
}

/* --- reading a bundle ----------------------------------------------------------- */

static void archive_read_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

static const char *filetype_name(mode_t t)
{
	switch (t) {
	case AE_IFLNK:
		return "a symbolic link";
	case AE_IFCHR:
		return "a character device node";
	case AE_IFBLK:
		return "a block device node";
	case AE_IFDIR:
		return "a directory";
	case AE_IFIFO:
		return "a FIFO";
	case AE_IFSOCK:
		return "a socket";
	}
	return "not a regular file";
}

static int read_entry_data(struct archive *a, uint64_t cap, uint8_t **data, size_t *len)
{
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n = 0, size = 0;
	for (;;) {
		const void *blk;
		size_t bl;
		la_int64_t off;
		int r = archive_read_data_block(a, &blk, &bl, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return -EBADMSG;
		if (off < 0 || (uint64_t)off + bl > cap)
			return -EFBIG;
		size_t end = (size_t)off + bl;
		if (end > size) {
			size_t ns = size ? size : 65536;
			while (ns < end)
				ns *= 2;
			uint8_t *nb = realloc(buf, ns);
			if (!nb)
				return -ENOMEM;
			memset(nb + size, 0, ns - size); /* sparse holes read as zeros */
			buf = nb;
			size = ns;
		}
		memcpy(buf + off, blk, bl);
		if (end > n)
			n = end;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	*data = steal_pointer(&buf);
	*len = n;
	return 0;
}

/*
 * One entry's header (entry nentries of the archive, after total bytes): a
 * regular file with a plain relative name pn, within the size caps. name is
 * pn as messages show it.
 */
static int check_entry_header(struct archive_entry *e, const char *pn, const char *name, size_t nentries,
			      uint64_t total, uint64_t *ret_esize, uint64_t *ret_cap, char **err)
{
	if (!pn || !*pn)
		return stune_errf(err, -EBADMSG, "entry %zu has no name", nentries);
	if (archive_entry_hardlink(e))
		return stune_errf(err, -EBADMSG, "entry '%s' is a hard link: refused", name);
	if (archive_entry_filetype(e) != AE_IFREG)
		return stune_errf(err, -EBADMSG, "entry '%s' is %s: refused (only regular files)", name,
				  filetype_name(archive_entry_filetype(e)));
	if (pn[0] == '/')
		return stune_errf(err, -EBADMSG, "entry '%s' has an absolute name: refused", name);
	for (const char *s = pn; *s;) {
		size_t n = strcspn(s, "/");
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return stune_errf(err, -EBADMSG, "entry '%s' has a '..' component: refused", name);
		s += n;
		if (*s)
			s++;
	}
	if (!valid_relname(pn))
		return stune_errf(err, -EBADMSG, "entry '%s': not a plain relative name: refused", name);
	if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0)
		return stune_errf(err, -EBADMSG, "entry '%s' has no size", name);
	uint64_t esize = (uint64_t)archive_entry_size(e);
	uint64_t cap = nentries == 1 ? STUNE_MANIFEST_MAX : STUNE_BUNDLE_ENTRY_MAX;
	if (esize > cap || total + esize > STUNE_BUNDLE_TOTAL_MAX)
		return stune_errf(err, -EFBIG,
				  "entry '%s' is %llu bytes: over the size cap (%llu bytes per %s, %u MiB in all)",
				  name, (unsigned long long)esize, (unsigned long long)cap,
				  nentries == 1 ? "manifest" : "file", STUNE_BUNDLE_TOTAL_MAX >> 20);
	*ret_esize = esize;
	*ret_cap = cap;
	return 0;
}

/* The first entry: manifest.json, parsed. */
static int read_manifest_entry(struct archive *a, const char *pn, const char *name, struct stune_manifest **ret_m,
			       size_t *ret_len, char **err)
{
	if (strcmp(pn, "manifest.json"))
		return stune_errf(err, -EBADMSG, "the first entry is '%s', not manifest.json", name);
	_cleanup_free_ uint8_t *mj = NULL;
	size_t ml = 0;
	int r;
	if ((r = read_entry_data(a, STUNE_MANIFEST_MAX, &mj, &ml)) < 0)
		return stune_errf(err, r == -EFBIG ? -EFBIG : -EBADMSG, "manifest.json: %s",
				  r == -EFBIG ? "over the size cap" : "damaged or truncated");
	if ((r = stune_manifest_parse((const char *)mj, ml, ret_m, err)) < 0)
		return r;
	*ret_len = ml;
	return 0;
}

/* Any later entry: a file the manifest names, once, of the size and SHA-256 it says; its data into m. */
static int read_file_entry(struct archive *a, struct stune_manifest *m, const char *pn, const char *name,
			   uint64_t esize, uint64_t cap, uint64_t *total, char **err)
{
	if (!strcmp(pn, "manifest.json"))
		return stune_errf(err, -EBADMSG, "entry 'manifest.json' appears twice: refused");
	struct stune_payload_file *pf = (struct stune_payload_file *)stune_manifest_file(m, pn);
	if (!pf)
		return stune_errf(err, -EBADMSG, "entry '%s' is not named in the manifest: refused", name);
	if (pf->data)
		return stune_errf(err, -EBADMSG, "entry '%s' appears twice: refused", name);
	size_t dl = 0;
	int r = read_entry_data(a, esize < cap ? esize : cap, &pf->data, &dl);
	if (r < 0)
		return stune_errf(err,
				  r == -ENOMEM	? -ENOMEM
				  : r == -EFBIG ? -EFBIG
						: -EBADMSG,
				  "entry '%s': %s", name,
				  r == -EFBIG ? "more data than its header says" : "damaged or truncated");
	*total += dl;
	if (dl != pf->size) {
		free(pf->data);
		pf->data = NULL;
		return stune_errf(err, -EBADMSG, "%s: %zu bytes, the manifest says %llu", name, dl,
				  (unsigned long long)pf->size);
	}
	char sha[STUNE_SHA256_HEX];
	stune_sha256_hex(pf->data, dl, sha);
	if (strcmp(sha, pf->sha256))
		return stune_errf(err, -EBADMSG, "%s: SHA-256 %s, the manifest says %s", name, sha, pf->sha256);
	return 0;
}

/* Each module says the same as the manifest. */
static int check_modules(const struct stune_manifest *m, char **err)
{
	int r;
	for (size_t i = 0; i < m->n_modules; i++) {
		const struct stune_payload_module *pm = &m->modules[i];
		const struct stune_payload_file *pf = stune_manifest_file(m, pm->file);
		_cleanup_(stune_ko_freep) struct stune_ko *ko = NULL;
		_cleanup_free_ char *why = NULL;
		if ((r = stune_ko_read(pf->data, pf->size, &ko, &why)) < 0)
			return stune_errf(err, r, "%s: %s", pm->file, why ? why : strerror(-r));
		const char *what = NULL;
		if (strcmp(ko->name, pm->name))
			what = "name";
		else if (strcmp(ko->vermagic, pm->vermagic))
			what = "vermagic";
		else if (!ko->srcversion || strcmp(ko->srcversion, pm->srcversion))
			what = "srcversion";
		else if (!ko->version || strcmp(ko->version, pm->version))
			what = "version";
		else if (!ko->build_id || strcmp(ko->build_id, pm->build_id))
			what = "build_id";
		else if (ko->is_signed != pm->is_signed)
			what = "signed";
		else if (ko->n_exports != pm->n_exports)
			what = "exports";
		for (size_t k = 0; !what && k < ko->n_exports; k++)
			if (strcmp(ko->exports[k].symbol, pm->exports[k].symbol) ||
			    ko->exports[k].crc != pm->exports[k].crc)
				what = "exports";
		if (what)
			return stune_errf(err, -EBADMSG, "%s: its %s differs from what the manifest says", pm->file,
					  what);
	}
	return 0;
}

int stune_bundle_read(const void *data, size_t len, struct stune_manifest **out, char **err)
{
	int r = stune_archive_load(err);
	if (r < 0)
		return r;
	_cleanup_(archive_read_freep) struct archive *a = archive_read_new();
	_cleanup_(stune_manifest_freep) struct stune_manifest *m = NULL;
	struct archive_entry *e;
	char name[300];
	uint64_t total = 0;
	size_t nentries = 0;

	if (!a)
		return -ENOMEM;
	if (len > STUNE_BUNDLE_MAX)
		return stune_errf(err, -EFBIG, "larger than %u MiB", STUNE_BUNDLE_MAX >> 20);
	/* Only what pack writes: tar (ustar/pax), zstd or uncompressed. */
	archive_read_support_filter_zstd(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_memory(a, data, len) != ARCHIVE_OK)
		return stune_errf(err, -EBADMSG, "not a zstd-compressed tar archive (%s)", archive_error_string(a));
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return stune_errf(err, -EBADMSG, "damaged or truncated archive after %zu entries (%s)",
					  nentries,
					  archive_error_string(a) ? archive_error_string(a) : "libarchive error");
		if (++nentries > STUNE_BUNDLE_ENTRIES_MAX)
			return stune_errf(err, -EBADMSG, "more than %d entries", STUNE_BUNDLE_ENTRIES_MAX);
		const char *pn = archive_entry_pathname(e);
		shown(pn, name, sizeof(name));
		uint64_t esize = 0, cap = 0;
		if ((r = check_entry_header(e, pn, name, nentries, total, &esize, &cap, err)) < 0)
			return r;
		if (nentries == 1) {
			size_t ml = 0;
			if ((r = read_manifest_entry(a, pn, name, &m, &ml, err)) < 0)
				return r;
			total += ml;
			continue;
		}
		if ((r = read_file_entry(a, m, pn, name, esize, cap, &total, err)) < 0)
			return r;
	}
	if (!m)
		return stune_errf(err, -EBADMSG, "empty archive: no manifest.json");
	for (size_t i = 0; i < m->n_files; i++)
		if (!m->files[i].data)
			return stune_errf(err, -EBADMSG, "%s: named in the manifest, missing from the archive",
					  m->files[i].name);
	if ((r = check_modules(m, err)) < 0 || (r = check_signer(m, err)) < 0)
		return r;
	*out = steal_pointer(&m);
	return 0;
}

/* --- pack ----------------------------------------------------------------------- */

struct membuf {
	uint8_t *p;
	size_t n, cap;
};

static la_ssize_t mem_write(struct archive *a, void *data, const void *buf, size_t len)
{
	(void)a;
	struct membuf *m = data;
	if (m->n + len > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1 << 20;
		while (nc < m->n + len)
			nc *= 2;
		uint8_t *np = realloc(m->p, nc);
		if (!np)
			return -1;
		m->p = np;
		m->cap = nc;
	}
	memcpy(m->p + m->n, buf, len);
	m->n += len;
	return (la_ssize_t)len;
}

static void archive_write_freep(struct archive **a)
{
	if (*a)
		archive_write_free(*a);
	*a = NULL;
}

static int add_entry(struct archive *a, const char *name, const void *data, size_t len, long long mtime)
{
	struct archive_entry *e = archive_entry_new();
	if (!e)
		return -ENOMEM;
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, (time_t)mtime, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_uname(e, "root");
	archive_entry_set_gname(e, "root");
	int r = archive_write_header(a, e);
	archive_entry_free(e);
	if (r != ARCHIVE_OK || (len && archive_write_data(a, data, len) != (la_ssize_t)len))
		return -EIO;
	return 0;
}

static json_object *jstring(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* payload/build's manifest.json as pack reads it: its strings and objects belong to the JSON object read. */
struct build_manifest {
	const char *release, *debian_version, *payload_version;
	json_object *files, *modules, *patches;
};

static int read_build_manifest(const char *bpath, json_object **ret_b, struct build_manifest *ret_bm, char **err)
{
	_cleanup_free_ uint8_t *bm = NULL;
	size_t bml = 0;
	int r;
	if ((r = stune_read_host_file(bpath, STUNE_MANIFEST_MAX, &bm, &bml)) < 0)
		return stune_errf(err, r, "%s: %s", bpath,
				  r == -ENOENT ? "no such file (not a payload/build output directory)" : strerror(-r));
	_cleanup_free_ char *btext = strndup((const char *)bm, bml);
	if (!btext)
		return -ENOMEM;
	_cleanup_(json_object_putp) json_object *b = json_tokener_parse(btext);
	if (!b || !json_object_is_type(b, json_type_object))
		return stune_errf(err, -EBADMSG, "%s: not a JSON object", bpath);
	const char *release = jstr(b, "release"), *debver = jstr(b, "debian_version"),
		   *pver = jstr(b, "payload_version");
	json_object *bfiles, *bmods, *bpatches = NULL;
	if (!release || !valid_component(release, strlen(release)) || !debver || !valid_text(debver) || !pver ||
	    !valid_text(pver) || !json_object_object_get_ex(b, "files", &bfiles) ||
	    !json_object_is_type(bfiles, json_type_object) || !json_object_object_get_ex(b, "modules", &bmods) ||
	    !json_object_is_type(bmods, json_type_array))
		return stune_errf(err, -EBADMSG,
				  "%s: not a payload/build manifest (release, debian_version, payload_version, files, "
				  "modules)",
				  bpath);
	json_object_object_get_ex(b, "patches", &bpatches);
	*ret_bm = (struct build_manifest){
	    .release = release,
	    .debian_version = debver,
	    .payload_version = pver,
	    .files = bfiles,
	    .modules = bmods,
	    .patches = bpatches,
	};
	*ret_b = steal_pointer(&b);
	return 0;
}

/* The bundle manifest's first fields: what the bundle is, for which release, when made. */
static int pack_header(json_object *out, const struct build_manifest *bm, long long created)
{
	char ts[32];
	time_t t = (time_t)created;
	struct tm tm;
	if (!gmtime_r(&t, &tm)) /* a SOURCE_DATE_EPOCH past what struct tm holds */
		return -EOVERFLOW;
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	_cleanup_free_ char *pkg = NULL;
	if (asprintf(&pkg, "linux-image-%s", bm->release) < 0)
		return -ENOMEM;
	json_object_object_add(out, "format", json_object_new_string(STUNE_BUNDLE_FORMAT));
	json_object_object_add(out, "format_version", json_object_new_int(STUNE_BUNDLE_FORMAT_VERSION));
	json_object_object_add(out, "payload_version", json_object_new_string(bm->payload_version));
	json_object_object_add(out, "release", json_object_new_string(bm->release));
	json_object_object_add(out, "debian_package", json_object_new_string(pkg));
	json_object_object_add(out, "debian_version", json_object_new_string(bm->debian_version));
	json_object_object_add(out, "created", json_object_new_string(ts));
	return 0;
}

/* A file of the bundle, read from payload/build's output directory. */
struct pack_file {
	char *name;
	uint8_t *data;
	size_t len;
};

/* What pack gathers on its way from payload/build's output directory to the bundle. */
struct pack {
	const char *dir;   /* payload/build's output directory */
	const char *bpath; /* its manifest.json, for messages */
	struct pack_file *files;
	size_t nfiles;
	char *vermagic;			       /* the first module's (every module's) */
	json_object *jfiles, *jmods, *jkernel; /* the bundle manifest's parts, until added to it */
};

static void pack_done(struct pack *pk)
{
	free(pk->vermagic);
	for (size_t i = 0; i < pk->nfiles; i++) {
		free(pk->files[i].name);
		free(pk->files[i].data);
	}
	free(pk->files);
	json_object_put(pk->jfiles);
	json_object_put(pk->jmods);
	json_object_put(pk->jkernel);
}

/* One file of the output directory into the bundle, checked against the SHA-256 the build manifest gives. */
static int pack_read_file(struct pack *pk, const char *name, const char *sha256, char **err)
{
	_cleanup_free_ char *p = NULL;
	struct pack_file *nf = realloc(pk->files, (pk->nfiles + 1) * sizeof(*nf));
	if (!nf || asprintf(&p, "%s/%s", pk->dir, name) < 0) {
		if (nf)
			pk->files = nf;
		return -ENOMEM;
	}
	pk->files = nf;
	pk->files[pk->nfiles] = (struct pack_file){.name = strdup(name)};
	struct pack_file *f = &pk->files[pk->nfiles++];
	if (!f->name)
		return -ENOMEM;
	int r = stune_read_host_file(p, STUNE_BUNDLE_ENTRY_MAX, &f->data, &f->len);
	if (r < 0)
		return stune_errf(err, r, "%s: %s", p, strerror(-r));
	char sha[STUNE_SHA256_HEX];
	stune_sha256_hex(f->data, f->len, sha);
	if (strcmp(sha, sha256))
		return stune_errf(err, -EBADMSG, "%s: SHA-256 differs from %s (changed since payload/build wrote it)",
				  p, pk->bpath);
	return 0;
}

/* Files: every file the build manifest lists, checked against its SHA-256. */
static int pack_files(struct pack *pk, json_object *bfiles, char **err)
{
	json_object_object_foreach(bfiles, fname, fsha)
	{
		if (!valid_relname(fname) || !json_object_is_type(fsha, json_type_string) ||
		    !valid_hex(json_object_get_string(fsha), 64))
			return stune_errf(err, -EBADMSG, "%s: invalid entry \"%.60s\" in files", pk->bpath, fname);
		if (pk->nfiles + 2 >= STUNE_BUNDLE_ENTRIES_MAX)
			return stune_errf(err, -EBADMSG, "%s: too many files", pk->bpath);
		int r = pack_read_file(pk, fname, json_object_get_string(fsha), err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The kernel package (payload/build --kernel): its file joins the others, its facts the manifest. */
static int pack_kernel(struct pack *pk, json_object *bkernel, char **err)
{
	const char *kfile = jstr(bkernel, "file"), *ksha = jstr(bkernel, "sha256");
	if (!kfile || !valid_relname(kfile) || !ksha || !valid_hex(ksha, 64))
		return stune_errf(err, -EBADMSG, "%s: kernel: no \"file\" or \"sha256\"", pk->bpath);
	int r = pack_read_file(pk, kfile, ksha, err);
	if (r < 0)
		return r;
	if (!(pk->jkernel = json_object_new_object()))
		return -ENOMEM;
	static const char *const keys[] = {"release", "package", "version", "file", "build_id"};
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		json_object_object_add(pk->jkernel, keys[i], jstring(jstr(bkernel, keys[i])));
	json_object *kp;
	if (json_object_object_get_ex(bkernel, "patches", &kp))
		json_object_object_add(pk->jkernel, "patches", json_object_get(kp));
	json_object *cfg = jstring(jstr(bkernel, "config"));
	if (cfg)
		json_object_object_add(pk->jkernel, "config", cfg);
	/* payload/sign's "signed" and payload/build --sign-cert's "trusts": their known keys only (the bundle's
	 * reader checks them, and the trusted certificate against the signer's). */
	json_object *sg, *tr, *n;
	if (json_object_object_get_ex(bkernel, "signed", &sg) && json_object_is_type(sg, json_type_object)) {
		json_object *o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		json_object_object_add(o, "image", jstring(jstr(sg, "image")));
		json_object_object_add(o, "image_signature", jstring(jstr(sg, "image_signature")));
		if (json_object_object_get_ex(sg, "modules", &n))
			json_object_object_add(o, "modules", json_object_get(n));
		json_object_object_add(pk->jkernel, "signed", o);
	}
	if (json_object_object_get_ex(bkernel, "trusts", &tr) && json_object_is_type(tr, json_type_object)) {
		json_object *o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		json_object_object_add(o, "certificate_sha256", jstring(jstr(tr, "certificate_sha256")));
		json_object_object_add(o, "skid", jstring(jstr(tr, "skid")));
		json_object_object_add(pk->jkernel, "trusts", o);
	}
	return 0;
}

/* The files in name order (the bundle is reproducible), listed with their size and SHA-256. */
static void pack_list_files(struct pack *pk)
{
	struct pack_file *files = pk->files;
	for (size_t i = 1; i < pk->nfiles; i++)
		for (size_t k = i; k > 0 && strcmp(files[k - 1].name, files[k].name) > 0; k--) {
			struct pack_file tmp = files[k];
			files[k] = files[k - 1];
			files[k - 1] = tmp;
		}
	for (size_t i = 0; i < pk->nfiles; i++) {
		json_object *f = json_object_new_object();
		char sha[STUNE_SHA256_HEX];
		stune_sha256_hex(files[i].data, files[i].len, sha);
		json_object_object_add(f, "name", json_object_new_string(files[i].name));
		json_object_object_add(f, "size", json_object_new_int64((int64_t)files[i].len));
		json_object_object_add(f, "sha256", json_object_new_string(sha));
		json_object_array_add(pk->jfiles, f);
	}
}

/* A module's entry in the bundle manifest: its facts as libelf read them, its patches as payload/build says. */
static json_object *module_json(json_object *bmod, const char *mname, const char *mfile, const struct stune_ko *ko)
{
	json_object *jm = json_object_new_object(), *ex = json_object_new_object(), *jp = json_object_new_array(),
		    *pids;
	json_object_object_add(jm, "name", json_object_new_string(mname));
	json_object_object_add(jm, "file", json_object_new_string(mfile));
	json_object_object_add(jm, "vermagic", json_object_new_string(ko->vermagic));
	json_object_object_add(jm, "version", json_object_new_string(ko->version));
	json_object_object_add(jm, "srcversion", json_object_new_string(ko->srcversion));
	json_object_object_add(jm, "build_id", json_object_new_string(ko->build_id));
	json_object_object_add(jm, "signed", json_object_new_boolean(ko->is_signed));
	if (json_object_object_get_ex(bmod, "patches", &pids) && json_object_is_type(pids, json_type_array))
		for (size_t k = 0; k < json_object_array_length(pids); k++)
			json_object_array_add(jp, json_object_get(json_object_array_get_idx(pids, k)));
	json_object_object_add(jm, "patches", jp);
	for (size_t k = 0; k < ko->n_exports; k++) {
		char crc[16];
		snprintf(crc, sizeof(crc), "0x%08x", ko->exports[k].crc);
		json_object_object_add(ex, ko->exports[k].symbol, json_object_new_string(crc));
	}
	json_object_object_add(jm, "exports", ex);
	return jm;
}

/* Modules: their facts as libelf reads them. */
static int pack_modules(struct pack *pk, json_object *bmods, const char *release, char **err)
{
	for (size_t i = 0; i < json_object_array_length(bmods); i++) {
		json_object *bmod = json_object_array_get_idx(bmods, i);
		const char *mname = jstr(bmod, "module"), *mfile = jstr(bmod, "file");
		struct pack_file *fe = NULL;
		for (size_t k = 0; mfile && k < pk->nfiles; k++)
			if (!strcmp(pk->files[k].name, mfile))
				fe = &pk->files[k];
		if (!mname || !valid_modname(mname) || !fe)
			return stune_errf(err, -EBADMSG, "%s: module %zu: no name or its file is not in files",
					  pk->bpath, i + 1);
		_cleanup_(stune_ko_freep) struct stune_ko *ko = NULL;
		_cleanup_free_ char *why = NULL;
		int r;
		if ((r = stune_ko_read(fe->data, fe->len, &ko, &why)) < 0)
			return stune_errf(err, r, "%s/%s: %s", pk->dir, mfile, why ? why : strerror(-r));
		size_t rl = strlen(release);
		const char *problem = strcmp(ko->name, mname) ? "its modinfo name differs"
				      : strncmp(ko->vermagic, release, rl) || ko->vermagic[rl] != ' '
					  ? "its vermagic is not for the release"
				      : !ko->version	   ? "no version marker (MODULE_VERSION)"
				      : !ko->srcversion	   ? "no srcversion"
				      : !ko->build_id	   ? "no GNU build-id note"
				      : ko->n_exports == 0 ? "no exported symbol CRCs (built without modversions?)"
				      : pk->vermagic && strcmp(pk->vermagic, ko->vermagic)
					  ? "its vermagic differs from the other modules'"
					  : NULL;
		if (problem)
			return stune_errf(err, -EBADMSG, "%s/%s: %s", pk->dir, mfile, problem);
		if (!pk->vermagic && !(pk->vermagic = strdup(ko->vermagic)))
			return -ENOMEM;
		json_object_array_add(pk->jmods, module_json(bmod, mname, mfile, ko));
	}
	return 0;
}

/* payload/sign's "signer": its certificate (one of the files) read here, its claims checked against it, every
 * module's signature checked to name it; the bundle's "signer" is made from the certificate, not the claims. */
static int pack_signer(struct pack *pk, json_object *bsigner, json_object **ret, char **err)
{
	struct stune_payload_signer sg = {0};
	_cleanup_free_ char *perr = NULL;
	int r = parse_signer(bsigner, &sg, &perr);
	const struct pack_file *cf = NULL;
	for (size_t k = 0; r == 0 && k < pk->nfiles; k++)
		if (!strcmp(pk->files[k].name, sg.certificate))
			cf = &pk->files[k];
	struct stune_cert c = {0};
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		r = stune_errf(err, r, "%s: %s", pk->bpath, perr ? perr + strlen("manifest.json: ") : "invalid signer");
		goto out;
	}
	if (!cf) {
		r = stune_errf(err, -EBADMSG, "%s: signer: its certificate %s is not in files", pk->bpath,
			       sg.certificate);
		goto out;
	}
	if ((r = signer_cert(&sg, cf->data, cf->len, &c, err)) < 0)
		goto out;
	for (size_t k = 0; r == 0 && k < pk->nfiles; k++) {
		size_t nl = strlen(pk->files[k].name);
		if (nl > 3 && !strcmp(pk->files[k].name + nl - 3, ".ko"))
			r = signature_names(&c, pk->files[k].name, pk->files[k].data, pk->files[k].len, err);
	}
	if (r < 0)
		goto out;
	json_object *j = json_object_new_object();
	if (!j) {
		r = -ENOMEM;
		goto out;
	}
	json_object_object_add(j, "certificate", json_object_new_string(sg.certificate));
	json_object_object_add(j, "kernel_name", jstring(c.kernel_name));
	json_object_object_add(j, "issuer_cn", jstring(c.issuer_cn));
	json_object_object_add(j, "serial", jstring(c.serial));
	json_object_object_add(j, "skid", jstring(c.skid));
	*ret = j;
out:
	stune_cert_clear(&c);
	free(sg.certificate);
	free(sg.kernel_name);
	free(sg.issuer_cn);
	free(sg.serial);
	free(sg.skid);
	return r;
}

/* The build manifest's patches as the bundle manifest lists them. */
static json_object *patches_json(json_object *bpatches)
{
	json_object *jp = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(bpatches); i++) {
		json_object *p = json_object_array_get_idx(bpatches, i), *np = json_object_new_object();
		json_object_object_add(np, "id", jstring(jstr(p, "id")));
		json_object_object_add(np, "file", jstring(jstr(p, "file")));
		json_object_object_add(np, "lands_in", jstring(jstr(p, "lands_in")));
		json_object_array_add(jp, np);
	}
	return jp;
}

/* The archive: manifest.json, then the files, as pax tar in zstd, into memory. */
static int pack_archive(const char *mtext, const struct pack_file *files, size_t nfiles, long long created,
			uint8_t **ret_data, size_t *ret_len, char **err)
{
	struct membuf mb = {0};
	{
		_cleanup_(archive_write_freep) struct archive *a = archive_write_new();
		int r;
		/* bytes_in_last_block 1: no zero padding after the zstd frame (zstd -t would call it garbage). */
		if (!a || archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
		    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
		    archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
		    archive_write_open(a, &mb, NULL, mem_write, NULL) != ARCHIVE_OK) {
			r = stune_errf(err, -EIO, "libarchive: %s", a ? archive_error_string(a) : "out of memory");
			/* the archive first: freeing it may flush into mb */
			archive_write_freep(&a);
			free(mb.p);
			return r;
		}
		r = add_entry(a, "manifest.json", mtext, strlen(mtext), created);
		for (size_t i = 0; r == 0 && i < nfiles; i++)
			r = add_entry(a, files[i].name, files[i].data, files[i].len, created);
		if (r < 0 || archive_write_close(a) != ARCHIVE_OK) {
			r = stune_errf(err, -EIO, "libarchive: %s", archive_error_string(a));
			archive_write_freep(&a); /* before mb: freeing it may flush into mb */
			free(mb.p);
			return r;
		}
	}
	*ret_data = mb.p;
	*ret_len = mb.n;
	return 0;
}

int stune_bundle_pack(const char *dir, long long created, uint8_t **data, size_t *len, struct stune_manifest **manifest,
		      char **err)
{
	_cleanup_free_ char *bpath = NULL, *mtext = NULL;
	_cleanup_(stune_manifest_freep) struct stune_manifest *m = NULL;
	_cleanup_(json_object_putp) json_object *b = NULL;
	struct build_manifest bm = {0};
	int r;

	if ((r = stune_archive_load(err)) < 0)
		return r;
	if (asprintf(&bpath, "%s/manifest.json", dir) < 0)
		return -ENOMEM;
	if ((r = read_build_manifest(bpath, &b, &bm, err)) < 0)
		return r;

	_cleanup_(pack_done) struct pack pk = {
	    .dir = dir,
	    .bpath = bpath,
	    .jfiles = json_object_new_array(),
	    .jmods = json_object_new_array(),
	};
	_cleanup_(json_object_putp) json_object *out = json_object_new_object();
	if (!out || !pk.jfiles || !pk.jmods)
		return -ENOMEM;
	if ((r = pack_header(out, &bm, created)) < 0)
		return r;
	if ((r = pack_files(&pk, bm.files, err)) < 0)
		return r;
	json_object *bkernel = NULL;
	if (json_object_object_get_ex(b, "kernel", &bkernel) && (r = pack_kernel(&pk, bkernel, err)) < 0)
		return r;
	pack_list_files(&pk);
	if ((r = pack_modules(&pk, bm.modules, bm.release, err)) < 0)
		return r;
	if (!pk.vermagic)
		return stune_errf(err, -EBADMSG, "%s: no modules", bpath);

	json_object_object_add(out, "vermagic", json_object_new_string(pk.vermagic));
	json_object_object_add(out, "modules", steal_pointer(&pk.jmods));
	if (bm.patches && json_object_is_type(bm.patches, json_type_array))
		json_object_object_add(out, "patches", patches_json(bm.patches));
	json_object_object_add(out, "files", steal_pointer(&pk.jfiles));
	if (pk.jkernel)
		json_object_object_add(out, "kernel", steal_pointer(&pk.jkernel));
	json_object *bsigner = NULL, *jsigner = NULL;
	if (json_object_object_get_ex(b, "signer", &bsigner) && !json_object_is_type(bsigner, json_type_null)) {
		if ((r = pack_signer(&pk, bsigner, &jsigner, err)) < 0)
			return r;
		json_object_object_add(out, "signer", jsigner);
	}
	const char *text = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
								   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (asprintf(&mtext, "%s\n", text) < 0)
		return -ENOMEM;
	/* Parse what we wrote: the same checks install will make. */
	if ((r = stune_manifest_parse(mtext, strlen(mtext), &m, err)) < 0)
		return r;

	if ((r = pack_archive(mtext, pk.files, pk.nfiles, created, data, len, err)) < 0)
		return r;
	if (manifest)
		*manifest = steal_pointer(&m);
	return 0;
}
