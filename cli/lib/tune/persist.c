/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tune/persist.h"
#include "tune/internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/root.h"
#include "core/strv.h"

/* A growing string: appends cost their own length, not the whole text's (4,096 rules). */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void sbuf_free(struct sbuf *b)
{
	free(b->s);
}

_printf_(2, 3) static int addf(struct sbuf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return 0;
		}
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns)
			return -ENOMEM;
		b->s = ns;
		b->cap = cap;
	}
}

/* The text without its last newline (the writer adds one); NULL when empty. */
static char *sbuf_take(struct sbuf *b)
{
	if (!b->len)
		return NULL;
	if (b->s[b->len - 1] == '\n')
		b->s[--b->len] = '\0';
	return steal_pointer(&b->s);
}

/* A value udev and modprobe take as is: no quote, backslash, space or newline. */
static bool plain(const char *v)
{
	return v && *v && !strpbrk(v, "\"\\ \t\n'");
}

/* The profile's file name: the same whether it was named or given as a path (verify loads the path). */
static const char *profile_name(const struct stune_plan *plan)
{
	if (!plan->profile || !plan->profile->path)
		return "?";
	const char *b = strrchr(plan->profile->path, '/');
	return b ? b + 1 : plan->profile->path;
}

static int disk_match(const struct stune_disk *d, char **out)
{
	const char *src = d->key_source ? d->key_source : "";
	if (!strcmp(src, "ID_WWN_WITH_EXTENSION") || !strcmp(src, "ID_WWN"))
		*out = plain(d->wwn) ? stune_strdupf("ENV{%s}==\"%s\"", src, d->wwn) : NULL;
	else if (!strcmp(src, "ID_PATH"))
		*out = plain(d->id_path) ? stune_strdupf("ENV{ID_PATH}==\"%s\"", d->id_path) : NULL;
	else
		*out = plain(d->hctl) ? stune_strdupf("KERNELS==\"%s\"", d->hctl) : NULL;
	return 0;
}

/* One disk's rule: its stable key (the plan's object) and the rule line. */
struct rule {
	const char *key;
	char *line;
};

static int rule_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rule *)a)->key, ((const struct rule *)b)->key);
}

struct rules {
	struct rule *v;
	size_t n;
};

static void rules_free(struct rules *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].line);
	free(r->v);
}

int stune_persist_udev_rules(const struct stune_plan *plan, const struct stune_topology *t, char **out)
{
	_cleanup_(sbuf_free) struct sbuf text = {0};
	_cleanup_(rules_free) struct rules rules = {0};
	int r;
	*out = NULL;
	for (size_t i = 0; i < plan->n_changes;) {
		const struct stune_change *c = &plan->changes[i];
		if (c->kind != STUNE_OBJ_DISK || c->index >= t->n_disks) {
			i++;
			continue;
		}
		/* The rows of one disk are consecutive, scheduler first. */
		_cleanup_(sbuf_free) struct sbuf attrs = {0};
		_cleanup_free_ char *match = NULL;
		size_t j = i;
		for (; j < plan->n_changes && plan->changes[j].kind == STUNE_OBJ_DISK &&
		       plan->changes[j].index == c->index;
		     j++) {
			const struct stune_change *x = &plan->changes[j];
			if ((x->state != STUNE_CHANGE && x->state != STUNE_ALREADY) || !plain(x->desired) ||
			    strncmp(x->setting, "queue/", 6))
				continue;
			if ((r = addf(&attrs, ", ATTR{%s}=\"%s\"", x->setting, x->desired)) < 0)
				return r;
		}
		const struct stune_disk *d = &t->disks[c->index];
		if (attrs.len && (r = disk_match(d, &match)) == 0 && match) {
			struct rule *v = realloc(rules.v, (rules.n + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			rules.v = v;
			/* Named by the stable key only: the kernel's sdX names (and the plan's order, which
			 * follows them) change between boots, and verify compares the file's text. */
			v[rules.n].key = c->object;
			if (!(v[rules.n].line = stune_strdupf("# %s\nACTION==\"add|change\", SUBSYSTEM==\"block\", "
							      "ENV{DEVTYPE}==\"disk\", %s%s\n",
							      c->object, match, attrs.s)))
				return -ENOMEM;
			rules.n++;
		}
		i = j;
	}
	if (!rules.n)
		return 0;
	qsort(rules.v, rules.n, sizeof(*rules.v), rule_cmp);
	if ((r = addf(&text,
		      "# Written by scsitune apply --persist (profile %s): the disks' queue "
		      "settings\n# on every add and change event. scsitune revert "
		      "removes this file.\n",
		      profile_name(plan))) < 0)
		return r;
	for (size_t k = 0; k < rules.n; k++)
		if ((r = addf(&text, "%s", rules.v[k].line)) < 0)
			return r;
	*out = sbuf_take(&text);
	return 0;
}

int stune_persist_modprobe(const struct stune_plan *plan, char **out)
{
	_cleanup_(sbuf_free) struct sbuf text = {0};
	int r;
	*out = NULL;
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		/* Not settable at runtime (the driver is in use): modprobe.d's job. */
		if (c->kind != STUNE_OBJ_MODULE || c->state != STUNE_NOT_SETTABLE || !plain(c->desired) ||
		    strncmp(c->object, "module:", 7) || strncmp(c->setting, "parameters/", 11))
			continue;
		if (!text.len && (r = addf(&text,
					   "# Written by scsitune apply --persist (profile %s). Load-time driver "
					   "parameters: they\n# take effect when the driver loads; a driver loaded "
					   "from the initramfs\n# needs update-initramfs -u. scsitune revert removes "
					   "this file.\n",
					   profile_name(plan))) < 0)
			return r;
		if ((r = addf(&text, "options %s %s=%s\n", c->object + 7, c->setting + 11, c->desired)) < 0)
			return r;
	}
	*out = sbuf_take(&text);
	return 0;
}

int stune_persist_unit(const char *bin, const char *profile, const char *profile_dir, char **out)
{
	if (strpbrk(bin, "\"\\\n") || strpbrk(profile, "\"\\\n") || strpbrk(profile_dir, "\"\\\n"))
		return -EINVAL;
	*out = stune_strdupf("# Written by scsitune apply --persist; scsitune revert removes it.\n"
			     "# IRQ numbers change between boots: the plan is made again on the booted host.\n"
			     "[Unit]\n"
			     "Description=scsitune: apply tuning profile %s at boot\n"
			     "Documentation=man:scsitune-apply(8)\n"
			     "Wants=systemd-udev-settle.service\n"
			     "After=systemd-udev-settle.service local-fs.target\n"
			     "Before=irqbalance.service\n"
			     "\n"
			     "[Service]\n"
			     "Type=oneshot\n"
			     "RemainAfterExit=yes\n"
			     "ExecStart=\"%s\" apply --profile \"%s\" --profile-dir \"%s\" --state-dir %s\n"
			     "\n"
			     "[Install]\n"
			     "WantedBy=multi-user.target",
			     profile, bin, profile, profile_dir, STUNE_PERSIST_BOOT_STATE);
	return *out ? 0 : -ENOMEM;
}

/* One persist row: desired (NULL: nothing to persist, no row), its directory must exist. */
static int persist_row(struct stune_ctx *ctx, struct stune_plan *plan, const char *object, const char *path, bool link,
		       const char *desired, const char *note)
{
	if (!desired)
		return 0;
	const char *setting = link ? "symlink" : "file";
	_cleanup_free_ char *dir = NULL, *cur = NULL, *why = NULL;
	int r = stune_path_dirname(path, &dir);
	if (r < 0)
		return r;
	if (!stune_root_exists(ctx->root, dir)) {
		if (!(why = stune_strdupf("no /%s here: not created", dir)))
			return -ENOMEM;
		return stune_plan_add_row(plan, STUNE_OBJ_PERSIST, object, setting, path, NULL, desired,
					  STUNE_NOT_APPLICABLE, why);
	}
	r = link ? stune_root_readlink(ctx->root, path, &cur) : stune_root_read(ctx->root, path, &cur);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		cur = NULL; /* absent (or unreadable: apply says so when it records it) */
	enum stune_change_state st = cur && !strcmp(cur, desired) ? STUNE_ALREADY : STUNE_CHANGE;
	return stune_plan_add_row(plan, STUNE_OBJ_PERSIST, object, setting, path, cur, desired, st, note);
}

int stune_persist_plan(struct stune_ctx *ctx, struct stune_plan *plan, const struct stune_topology *t, const char *bin,
		       const char *profile, const char *profile_dir)
{
	_cleanup_free_ char *rules = NULL, *unit = NULL, *modprobe = NULL;
	int r;
	if ((r = stune_persist_udev_rules(plan, t, &rules)) < 0 || (r = stune_persist_modprobe(plan, &modprobe)) < 0 ||
	    (r = stune_persist_unit(bin, profile, profile_dir, &unit)) < 0)
		return r;
	if ((r = persist_row(ctx, plan, "persist:udev-rules", STUNE_PERSIST_RULES, false, rules,
			     "udev applies the disks' queue settings on every add and change event (hotplug, "
			     "rescan, revalidate)")) < 0 ||
	    (r = persist_row(ctx, plan, "persist:boot-unit", STUNE_PERSIST_UNIT, false, unit,
			     "a oneshot unit runs this apply again at boot (IRQ numbers change between boots); its "
			     "journal goes to " STUNE_PERSIST_BOOT_STATE)) < 0 ||
	    (r = persist_row(ctx, plan, "persist:boot-unit-enable", STUNE_PERSIST_WANTS, true, STUNE_PERSIST_UNIT_AT,
			     "enabled as systemctl enable would (multi-user.target.wants)")) < 0 ||
	    (r = persist_row(ctx, plan, "persist:modprobe", STUNE_PERSIST_MODPROBE, false, modprobe,
			     "load-time driver parameters: take effect when the driver loads; a driver in the "
			     "initramfs (the boot disk's HBA) needs update-initramfs -u")) < 0)
		return r;
	return 0;
}
