/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "payload/ko.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "payload/util.h"

static void symcrc_free(struct stune_symcrc *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].symbol);
	free(v);
}

void stune_ko_free(struct stune_ko *k)
{
	if (!k)
		return;
	free(k->name);
	free(k->vermagic);
	free(k->srcversion);
	free(k->version);
	free(k->patches);
	free(k->depends);
	free(k->build_id);
	symcrc_free(k->exports, k->n_exports);
	symcrc_free(k->imports, k->n_imports);
	free(k);
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

static int symcrc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stune_symcrc *)a)->symbol, ((const struct stune_symcrc *)b)->symbol);
}

const struct stune_symcrc *stune_symcrc_find(const struct stune_symcrc *v, size_t n, const char *symbol)
{
	struct stune_symcrc key = {.symbol = (char *)symbol};
	return n ? bsearch(&key, v, n, sizeof(key), symcrc_cmp) : NULL;
}

const struct stune_symcrc *stune_ko_export(const struct stune_ko *k, const char *symbol)
{
	return stune_symcrc_find(k->exports, k->n_exports, symbol);
}

const struct stune_symcrc *stune_ko_import(const struct stune_ko *k, const char *symbol)
{
	return stune_symcrc_find(k->imports, k->n_imports, symbol);
}

static int push(struct stune_symcrc **v, size_t *n, const char *sym, size_t len, uint32_t crc)
{
	struct stune_symcrc *nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n].symbol = strndup(sym, len)))
		return -ENOMEM;
	nv[(*n)++].crc = crc;
	return 0;
}

/* __versions: struct modversion_info { unsigned long crc; char name[64 - sizeof(unsigned long)]; }. */
static int read_versions(Elf_Data *d, struct stune_ko *k)
{
	const size_t rec = 64, namelen = 64 - 8;
	if (d->d_size % rec)
		return -EBADMSG;
	for (size_t off = 0; off < d->d_size; off += rec) {
		const char *p = (const char *)d->d_buf + off;
		uint64_t crc;
		memcpy(&crc, p, 8);
		const char *name = p + 8;
		size_t n = strnlen(name, namelen);
		if (n == namelen || n == 0) /* the kernel needs a NUL inside the record */
			return -EBADMSG;
		int r = push(&k->imports, &k->n_imports, name, n, (uint32_t)crc);
		if (r < 0)
			return r;
	}
	return 0;
}

static int set_field(char **dst, const char *v, size_t n)
{
	if (*dst) /* the first one wins (a module has each once) */
		return 0;
	return (*dst = strndup(v, n)) ? 0 : -ENOMEM;
}

static int read_modinfo(Elf_Data *d, struct stune_ko *k)
{
	const char *p = d->d_buf, *end = p + d->d_size;
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
	    {"name=", offsetof(struct stune_ko, name)},
	    {"vermagic=", offsetof(struct stune_ko, vermagic)},
	    {"srcversion=", offsetof(struct stune_ko, srcversion)},
	    {"version=", offsetof(struct stune_ko, version)},
	    {"scsitune_patches=", offsetof(struct stune_ko, patches)},
	    {"depends=", offsetof(struct stune_ko, depends)},
	};
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
		for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
			size_t kl = strlen(fields[i].key);
			if (n >= kl && !memcmp(p, fields[i].key, kl)) {
				int r = set_field((char **)((char *)k + fields[i].off), p + kl, n - kl);
				if (r < 0)
					return r;
			}
		}
		p += n + 1;
	}
	return 0;
}

static int read_build_id(Elf_Data *d, struct stune_ko *k)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) || nh.n_descsz == 0 || nh.n_descsz > 64)
			continue;
		free(k->build_id);
		if (!(k->build_id = malloc(2 * nh.n_descsz + 1)))
			return -ENOMEM;
		stune_hex((const uint8_t *)d->d_buf + desc_off, nh.n_descsz, k->build_id);
		return 0;
	}
	return 0;
}

/*
 * The sections: .modinfo, the build-id note and __versions read into k; the
 * symbol table only found (its exports are read once .modinfo says this is a module).
 */
static int read_sections(Elf *e, size_t shstrndx, struct stune_ko *k, Elf_Scn **ret_symtab, bool *ret_modinfo,
			 char **err)
{
	Elf_Scn *scn = NULL, *symtab = NULL;
	bool modinfo = false;
	int r;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			continue;
		}
		if (sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *d;
		if (!strcmp(name, ".modinfo") && (d = elf_getdata(scn, NULL))) {
			modinfo = true;
			if ((r = read_modinfo(d, k)) < 0)
				return r;
		} else if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.gnu.build-id") &&
			   (d = elf_getdata(scn, NULL))) {
			if ((r = read_build_id(d, k)) < 0)
				return r;
		} else if (!strcmp(name, "__versions") && (d = elf_getdata(scn, NULL)) && d->d_buf) {
			if ((r = read_versions(d, k)) == -EBADMSG) {
				if (err)
					*err = strdup("malformed __versions section");
				return r;
			}
			if (r < 0)
				return r;
		}
	}
	*ret_symtab = symtab;
	*ret_modinfo = modinfo;
	return 0;
}

/* Exports: __crc_SYM labels the 4-byte CRC inside __kcrctab(_gpl). */
static int read_exports(Elf *e, Elf_Scn *symtab, struct stune_ko *k, char **err)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(symtab, NULL);
	int r;
	if (!gelf_getshdr(symtab, &sh) || !d || sh.sh_entsize == 0)
		goto bad_symtab;
	size_t nsyms = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			goto bad_symtab;
		const char *sn = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!sn || strncmp(sn, "__crc_", 6) || !sn[6])
			continue;
		uint32_t crc;
		if (sym.st_shndx == SHN_ABS) {
			crc = (uint32_t)sym.st_value;
		} else {
			Elf_Scn *cs = elf_getscn(e, sym.st_shndx);
			Elf_Data *cd = cs ? elf_getdata(cs, NULL) : NULL;
			if (!cd || !cd->d_buf || sym.st_value + 4 > cd->d_size)
				goto bad_symtab;
			memcpy(&crc, (const char *)cd->d_buf + sym.st_value, 4); /* x86-64: little-endian */
		}
		if ((r = push(&k->exports, &k->n_exports, sn + 6, strlen(sn + 6), crc)) < 0)
			return r;
	}
	if (k->n_exports)
		qsort(k->exports, k->n_exports, sizeof(*k->exports), symcrc_cmp);
	return 0;
bad_symtab:
	if (err)
		*err = strdup("unreadable symbol table");
	return -EBADMSG;
}

int stune_ko_read(const void *data, size_t len, struct stune_ko **out, char **err)
{
	_cleanup_(stune_ko_freep) struct stune_ko *k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	size_t ml = strlen(STUNE_KO_SIG_MARKER);
	if (len > ml && !memcmp((const char *)data + len - ml, STUNE_KO_SIG_MARKER, ml))
		k->is_signed = true;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	_cleanup_(elf_endp) Elf *e = elf_memory((char *)data, len);
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0) {
		if (err)
			*err = strdup("not an ELF file");
		return -EBADMSG;
	}
	if (eh.e_type != ET_REL || eh.e_machine != EM_X86_64 || gelf_getclass(e) != ELFCLASS64) {
		if (err)
			*err = strdup("not a relocatable x86-64 ELF object (a kernel module is one)");
		return -EBADMSG;
	}
	Elf_Scn *symtab;
	bool modinfo;
	int r;
	if ((r = read_sections(e, shstrndx, k, &symtab, &modinfo, err)) < 0)
		return r;
	if (!modinfo || !k->name || !k->vermagic) {
		if (err)
			*err = strdup("no .modinfo with name= and vermagic=: not a kernel module");
		return -EBADMSG;
	}
	if (symtab && (r = read_exports(e, symtab, k, err)) < 0)
		return r;
	if (k->n_imports)
		qsort(k->imports, k->n_imports, sizeof(*k->imports), symcrc_cmp);
	*out = steal_pointer(&k);
	return 0;
}
