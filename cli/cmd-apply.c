/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune apply --profile NAME [--dry-run]: load the profile, gather the host
 * model, build the plan; --dry-run prints it (text or JSON), otherwise the
 * CHANGE rows are written (lib/apply.c) under the lock, with the journal
 * that revert reads, and the outcome of each row is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/apply.h"
#include "tune/journal.h"
#include "tune/persist.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "detect/scan.h"
#include "scsitune.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

#define STUNE_PLAN_SCHEMA_VERSION 1

void help_apply(FILE *f)
{
	fputs("Usage: scsitune apply --profile NAME|PATH [--dry-run] [options]\n"
	      "\nCompute the plan for a tuning profile on this host: for every object (disk,\n"
	      "IRQ, driver, irqbalance) and setting, the current value, the desired value,\n"
	      "the state (change, already, not-settable, not-applicable) and the profile line\n"
	      "that asks for it. --dry-run prints the plan and changes nothing. Without it,\n"
	      "apply writes the changes in plan order, reads each back, and records the old\n"
	      "values in the journal first (STATE_DIR/journal.json) so that 'scsitune revert'\n"
	      "can undo them. Managed IRQs and other not-settable rows are never written.\n"
	      "\nOptions:\n"
	      "  -p, --profile NAME|PATH  the profile: a name in the profile directory, or a\n"
	      "                           path (anything with a '/')\n"
	      "  -n, --dry-run            print the plan, change nothing\n"
	      "      --profile-dir DIR    where profile names (and include= names) are looked\n"
	      "                           up (default " SCSITUNE_PROFILE_DIR ")\n"
	      "      --state-dir DIR      journal and lock directory (default " STUNE_STATE_DIR ",\n"
	      "                           inside the --sysroot tree when one is given)\n"
	      "      --persist            also make it last: a udev rule for the disks, a boot\n"
	      "                           unit that applies the profile again (IRQs), modprobe.d\n"
	      "                           for driver parameters; revert removes them\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 plan printed or every change applied, 1 error (bad profile,\n"
	      "unreadable host, a write failed, was refused or ignored, another apply is\n"
	      "running), 64 usage.\n"
	      "See scsitune-apply(8) and scsitune-profile(5).\n",
	      f);
}

static int persist_plan(struct stune_ctx *ctx, const struct stune_topology *t, struct stune_plan *plan,
			const struct stune_profile *p, const char *profile_dir)
{
	/* The boot unit names the profile and its directory by absolute path. A
	 * profile directory that does not exist gave no include= either: the
	 * profile's own directory stands in for it. */
	_cleanup_free_ char *prof = realpath(p->path, NULL), *dir = realpath(profile_dir, NULL);
	if (!prof) {
		error_msg("--persist: %s: %s", p->path, strerror(errno));
		return -errno;
	}
	if (!dir && !(dir = strndup(prof, (size_t)(strrchr(prof, '/') - prof))))
		return -ENOMEM;
	int r = stune_persist_plan(ctx, plan, t, SCSITUNE_BIN_PATH, prof, *dir ? dir : "/");
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

static const char *class_label(enum stune_pclass c)
{
	return stune_pclass_name(c);
}

static void render_plan(struct out *o, const struct stune_plan *plan)
{
	const struct stune_profile *p = plan->profile;
	size_t counts[4];
	stune_plan_count(plan, counts);

	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PLAN_SCHEMA_VERSION);
	out_obj_begin(o, "profile");
	out_str(o, "name", "Profile %s", p->name);
	out_strv(o, "files", NULL, p->files);
	/* The digest apply will journal: a fleet can compare plans before they are applied. */
	_cleanup_free_ char *digest = NULL;
	if (stune_profile_digest(p, &digest) < 0)
		digest = NULL;
	out_str(o, "digest", NULL, digest);
	out_obj_end(o);
	out_bool(o, "dry_run", NULL, STUNE_YES);
	out_obj_begin(o, "summary");
	out_int(o, "change", ": %s to change", (long long)counts[STUNE_CHANGE]);
	out_int(o, "already", ", %s already right", (long long)counts[STUNE_ALREADY]);
	out_int(o, "not_settable", ", %s not settable", (long long)counts[STUNE_NOT_SETTABLE]);
	out_int(o, "not_applicable", ", %s not applicable", (long long)counts[STUNE_NOT_APPLICABLE]);
	out_text(o, " (dry run: nothing written)\n");
	out_obj_end(o);

	/* Column widths for text. */
	size_t w[5] = {strlen("OBJECT"), strlen("DEVICE"), strlen("SETTING"), strlen("CURRENT"), strlen("DESIRED")};
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		char b1[32], b2[32];
		const char *cols[5] = {c->object, c->device, c->setting, stune_change_display(c, false, b1, sizeof(b1)),
				       stune_change_display(c, true, b2, sizeof(b2))};
		for (int k = 0; k < 5; k++) {
			size_t n = cols[k] && *cols[k] ? strlen(cols[k]) : 1;
			if (n > w[k])
				w[k] = n;
		}
	}
	char f[5][16];
	for (int k = 0; k < 5; k++)
		snprintf(f[k], sizeof(f[k]), "%%-%zus  ", w[k]);
	if (plan->n_changes)
		out_text(o, "\n%-*s  %-*s  %-*s  %-*s  %-*s  %-14s  %s\n", (int)w[0], "OBJECT", (int)w[1], "DEVICE",
			 (int)w[2], "SETTING", (int)w[3], "CURRENT", (int)w[4], "DESIRED", "STATE", "SOURCE");

	out_arr_begin(o, "changes");
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		char source[512] = "";
		if (c->source)
			snprintf(source, sizeof(source), "%s:%u", c->source->file, c->source->line);
		out_obj_begin(o, NULL);
		out_str(o, "class", NULL, c->kind == STUNE_OBJ_PERSIST ? "persist" : class_label(c->cls));
		out_str(o, "object", f[0], c->object);
		out_str(o, "device", f[1], c->device);
		out_str(o, "setting", f[2], c->setting);
		out_rootpath(o, "path", NULL, c->path);
		char b1[32], b2[32];
		out_str_shown(o, "current", f[3], c->current, stune_change_display(c, false, b1, sizeof(b1)));
		out_str_shown(o, "desired", f[4], c->desired, stune_change_display(c, true, b2, sizeof(b2)));
		out_str(o, "state", "%-14s  ", stune_change_state_name(c->state));
		out_str(o, "source", "%s\n", c->source ? source : NULL);
		out_str(o, "why", NULL, c->source ? c->source->why : NULL);
		out_str(o, "note", c->note ? "    note: %s\n" : NULL, c->note);
		out_obj_end(o);
	}
	out_arr_end(o);

	/* Text: each profile line that the plan uses, once, with its comment (the
	 * lines shown so far are few, one per profile value: linear in rows). */
	if (!out_is_json(o)) {
		bool header = false;
		_cleanup_free_ const struct stune_pvalue **shown = calloc(plan->n_changes + 1, sizeof(*shown));
		size_t n_shown = 0;
		for (size_t i = 0; i < plan->n_changes && shown; i++) {
			const struct stune_pvalue *v = plan->changes[i].source;
			bool seen = false;
			for (size_t j = 0; j < n_shown && !seen; j++)
				seen = shown[j] == v;
			if (!v || seen)
				continue;
			shown[n_shown++] = v;
			if (!header)
				out_text(o, "\nWhy (from the profile):\n");
			header = true;
			out_text(o, "  %s:%u  %s = %s%s%s\n", v->file, v->line, v->key, v->value, v->why ? ": " : "",
				 v->why ? v->why : "");
		}
	}
	out_obj_end(o);
}

int cmd_apply(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_PROFILE_DIR = 0x100, OPT_STATE_DIR, OPT_PERSIST };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"profile", required_argument, NULL, 'p'},
						 {"dry-run", no_argument, NULL, 'n'},
						 {"profile-dir", required_argument, NULL, OPT_PROFILE_DIR},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"persist", no_argument, NULL, OPT_PERSIST},
						 {NULL, 0, NULL, 0}};
	const char *profile = NULL, *dir = SCSITUNE_PROFILE_DIR, *state_opt = NULL;
	bool dry_run = false, persist = false;
	int c;

	while ((c = getopt_long(argc, argv, GLOBAL_SHORTOPTS "p:n", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			help_apply(stdout);
			return EXIT_OK;
		case 'p':
			if (!*optarg) {
				usage_error("apply", "apply: --profile: empty name");
				return EXIT_USAGE;
			}
			profile = optarg;
			continue;
		case 'n':
			dry_run = true;
			continue;
		case OPT_PROFILE_DIR:
			if (!*optarg) {
				usage_error("apply", "apply: --profile-dir: empty directory name");
				return EXIT_USAGE;
			}
			dir = optarg;
			continue;
		case OPT_PERSIST:
			persist = true;
			continue;
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("apply", "apply: --state-dir: empty directory name");
				return EXIT_USAGE;
			}
			state_opt = optarg;
			continue;
		}
		int ec = command_opt(g, "apply", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("apply", argc, argv))
		return EXIT_USAGE;
	if (!profile) {
		usage_error("apply", "apply: --profile NAME is required");
		return EXIT_USAGE;
	}
	_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
	_cleanup_free_ char *err = NULL;
	int r = stune_profile_load(profile, dir, &p, &err);
	if (r < 0) {
		error_msg("%s", err ? err : strerror(-r));
		return EXIT_ERROR;
	}

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	_cleanup_(stune_plan_freep) struct stune_plan *plan = NULL;
	if (cli_plan(ctx, p, dir, persist, &t, &plan) < 0)
		return EXIT_ERROR;
	if (!dry_run)
		return apply_write(g, ctx, t, plan, dir, state_opt, persist);
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	render_plan(o, plan);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
