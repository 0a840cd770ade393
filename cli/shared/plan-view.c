/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plan as apply, its dry run, verify and revert show it: read the host
 * and build the plan, the scope of HBAs, the profile line, a row's text. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/strv.h"
#include "tune/persist.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "detect/scan.h"
#include "cli.h"
#include "plan-view.h"
#include "rows.h"
#include "wrap.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The profiles a directory holds (its regular files, not hidden), ", "-joined; NULL when none or unreadable. */
static char *profiles_in(const char *dir)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, name_cmp);
	char *list = NULL;
	size_t size = 0;
	FILE *f = n >= 0 ? open_memstream(&list, &size) : NULL;
	bool any = false;
	for (int i = 0; i < n; i++) {
		struct stat st;
		_cleanup_free_ char *path = NULL;
		if (f && ents[i]->d_name[0] != '.' && asprintf(&path, "%s/%s", dir, ents[i]->d_name) >= 0 &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			fprintf(f, "%s%s", any ? ", " : "", ents[i]->d_name);
			any = true;
		}
		free(ents[i]);
	}
	free(ents);
	if (f && fclose(f) == 0 && any)
		return list;
	free(list);
	return NULL;
}

void cli_profile_error(int r, const char *err, const char *profile, const char *dir)
{
	struct stat st;
	if (r == -ENOENT && !strchr(profile, '/') && dir && stat(dir, &st) < 0) {
		error_msg("profile '%s' not found in %s: no such directory (install scsitune: cmake --install build; "
			  "from a source tree: --profile-dir profiles)",
			  profile, dir);
	} else if (r == -ENOENT && !strchr(profile, '/') && dir && err && strstr(err, "not found in")) {
		/* Say what there is, as tuned-adm list does. */
		_cleanup_free_ char *there = profiles_in(dir);
		error_msg("%s (%s%s)", err, there ? "profiles there: " : "no profile there", there ? there : "");
	} else if (r == -ENOENT && strchr(profile, '/') && err && !strncmp(err, "profile ", 8)) {
		/* (the file named itself, not one it includes: that line names the include) */
		/* A path that is not there: a name is looked up in the directory instead. */
		error_msg("%s", err ? err : strerror(-r));
		_cleanup_free_ char *there = dir ? profiles_in(dir) : NULL;
		if (there)
			hint_msg("a profile is a path to a file or a name in %s: %s", dir, there);
	} else {
		error_msg("%s", err ? err : strerror(-r));
	}
}

static int persist_plan(struct stune_ctx *ctx, const struct stune_topology *t, struct stune_plan *plan,
			const struct stune_profile *p, const char *profile_dir)
{
	/* The boot unit runs the installed scsitune with the profile as named: a
	 * name stays a name (the installed profile, upgraded with the package),
	 * with --profile-dir only when it is not the installed directory; a path
	 * becomes absolute. A profile directory that does not exist gave no
	 * include= either: the profile's own directory stands in for it. */
	bool named = !strchr(p->name, '/');
	_cleanup_free_ char *prof = realpath(p->path, NULL), *dir = realpath(profile_dir, NULL),
			    *installed = realpath(SCSITUNE_PROFILE_DIR, NULL);
	if (!prof) {
		error_msg("--persist: %s: %s", p->path, strerror(errno));
		return -errno;
	}
	if (!dir && !(dir = strndup(prof, (size_t)(strrchr(prof, '/') - prof))))
		return -ENOMEM;
	const char *dir_opt = *dir ? dir : "/";
	if (named && installed && !strcmp(dir, installed))
		dir_opt = NULL;
	int r = stune_persist_plan(ctx, plan, t, SCSITUNE_BIN_PATH, named ? p->name : prof, dir_opt);
	if (r < 0)
		error_msg("--persist: %s",
			  r == -EINVAL ? "the profile's path has a quote, backslash or newline" : strerror(-r));
	return r;
}

int cli_plan(struct stune_ctx *ctx, const struct stune_profile *p, const char *profile_dir, bool persist,
	     struct stune_topology **t, struct stune_plan **plan)
{
	/* Of the disks' tunables, the host is read for those the profile sets. */
	int r = stune_topology_scan_for_plan_attrs(ctx, stune_plan_disk_attrs(p), t);
	if (r < 0) {
		error_msg("reading the host failed: %s", strerror(-r));
		return r;
	}
	if ((r = stune_plan_build(*t, p, plan)) < 0) {
		error_msg("building the plan failed: %s", strerror(-r));
		return r;
	}
	return persist ? persist_plan(ctx, *t, *plan, p, profile_dir) : 0;
}

/* The HBA as people name it: its PCI address, else its sysfs path. */
const char *cli_hba_name(const struct stune_hba *h, char *buf, size_t len)
{
	if (h->pci_address)
		return h->pci_address;
	snprintf(buf, len, "/%s", h->sysfs_path ? h->sysfs_path : "?");
	return buf;
}

void render_scope(struct out *o, const struct stune_topology *t, const struct stune_plan *plan)
{
	size_t in = 0;
	for (size_t i = 0; i < plan->n_hbas; i++)
		in += plan->hbas[i].in_scope;
	out_text(o, "\nScope: %zu of %zu HBA%s\n", in, plan->n_hbas, plan->n_hbas == 1 ? "" : "s");
	out_arr_begin(o, "hbas");
	for (size_t i = 0; i < plan->n_hbas; i++) {
		const struct stune_plan_hba *s = &plan->hbas[i];
		const struct stune_hba *h = &t->hbas[s->index];
		char buf[512];
		out_obj_begin(o, NULL);
		out_text(o, "  %-4s", s->in_scope ? "in" : "out");
		out_str(o, "hba", " %s", cli_hba_name(h, buf, sizeof(buf)));
		out_str(o, "pci_address", NULL, h->pci_address);
		out_str(o, "driver", NULL, h->driver);
		out_str(o, "pci_driver", NULL, h->pci_driver);
		out_bool(o, "in_scope", NULL, s->in_scope ? STUNE_YES : STUNE_NO);
		out_text(o, "  " WRAP_HANG);
		out_str(o, "why", "%s\n", s->why);
		out_obj_end(o);
	}
	out_arr_end(o);
}

void render_profile_text(struct out *o, const struct stune_profile *p, const char *digest)
{
	if (out_is_json(o))
		return;
	out_str(o, NULL, "Profile %s", p->name);
	if (digest)
		out_str(o, NULL, "  sha256 %.12s", digest);
	for (size_t i = 1; i < p->n_files; i++) /* files[0] is the profile's own */
		out_str(o, NULL, i > 1 ? ", %s" : "  includes %s", p->files[i]);
	out_text(o, "\n");
}

char *plan_row_device(const struct stune_change *c)
{
	if (!c->device)
		return NULL;
	/* An IRQ's device is "NAME PCI_ADDRESS": the name says which vector (the scope names the HBA). */
	return c->kind == STUNE_OBJ_IRQ ? strndup(c->device, strcspn(c->device, " ")) : strdup(c->device);
}

char *plan_row_text(const struct stune_change *c, bool with_desired)
{
	char b1[32], b2[32];
	const char *cur = stune_change_display(c, false, b1, sizeof(b1)),
		   *want = stune_change_display(c, true, b2, sizeof(b2));
	if (!cur)
		cur = "-";
	else if (!*cur)
		cur = "\"\"";
	if (!with_desired)
		return stune_strdupf("%s %s", rows_setting(c->setting), cur);
	return stune_strdupf("%s %s -> %s", rows_setting(c->setting), cur, want ? want : "-");
}
