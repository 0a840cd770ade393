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
#include <sys/stat.h>
#include <time.h>

#include "tune/apply.h"
#include "tune/journal.h"
#include "tune/persist.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "detect/scan.h"
#include "core/strv.h"
#include "rows.h"
#include "payload-install.h"
#include "apply-run.h"
#include "cli.h"
#include "commands.h"
#include "plan-view.h"
#include "wrap.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

#define STUNE_PLAN_SCHEMA_VERSION 1
#define NB			  WRAP_NBSP
#define VLIST			  " (-v" NB "lists" NB "them)"

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
	      "      --state-dir DIR      journal and lock directory (default\n"
	      "                           " STUNE_STATE_DIR ", inside the --sysroot tree when\n"
	      "                           one is given)\n"
	      "      --persist            also make it last: a udev rule for the disks, a boot\n"
	      "                           unit that applies the profile again (IRQs),\n"
	      "                           modprobe.d for driver parameters; revert removes them\n"
	      "      --payload FILE       install this signed payload bundle first, under the\n"
	      "                           same lock (as 'scsitune payload install FILE'; its\n"
	      "                           signature is FILE.minisig); refused or failed: the\n"
	      "                           profile is not applied either\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 plan printed or every change applied, 1 error (bad profile,\n"
	      "unreadable host, a write failed, was refused or ignored, another apply is\n"
	      "running), 64 usage.\n"
	      "See scsitune-apply(8) and scsitune-profile(5).\n",
	      f);
}

static const char *class_label(enum stune_profile_section c)
{
	return stune_profile_section_name(c);
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many distinct objects have a row in state st: sorted names, O(P log P). */
static ssize_t objects_in_state(const struct stune_plan *plan, enum stune_change_state st)
{
	_cleanup_free_ const char **names = NULL;
	size_t m = 0;
	for (size_t i = 0; i < plan->n_changes; i++) {
		if (plan->changes[i].state != st)
			continue;
		if (stune_grow(&names, m, sizeof(*names)) < 0)
			return -ENOMEM;
		names[m++] = plan->changes[i].object;
	}
	if (m > 1)
		qsort(names, m, sizeof(*names), cmp_str_ptr);
	size_t n = 0;
	for (size_t i = 0; i < m; i++)
		n += i == 0 || strcmp(names[i - 1], names[i]) != 0;
	return (ssize_t)n;
}

/* nobj: the number of objects with a change (objects_in_state). */
/* Text: each profile line behind a row shown, once, with its comment (the why;
 * the lines shown so far are few, one per profile value: linear in rows). */
static void render_why(struct out *o, const struct stune_plan *plan, int verbose)
{
	bool header = false;
	_cleanup_free_ const struct stune_profile_value **shown = calloc(plan->n_changes + 1, sizeof(*shown));
	size_t n_shown = 0;
	for (size_t i = 0; i < plan->n_changes && shown; i++) {
		const struct stune_change *c = &plan->changes[i];
		const struct stune_profile_value *v = c->source;
		bool seen = false;
		for (size_t j = 0; j < n_shown && !seen; j++)
			seen = shown[j] == v;
		if (!v || seen || (!verbose && c->state != STUNE_CHANGE))
			continue;
		shown[n_shown++] = v;
		if (!header)
			out_text(o, "\nWhy (from the profile):\n");
		header = true;
		out_str(o, NULL, "  %s", v->file);
		out_text(o, ":%u  " WRAP_HANG, v->line);
		out_str(o, NULL, "%s", v->key);
		out_str(o, NULL, " = %s", v->value);
		out_str(o, NULL, v->why ? ": %s" : NULL, v->why);
		out_text(o, "\n");
	}
}

static void render_plan(struct out *o, const struct stune_topology *t, const struct stune_plan *plan, size_t nobj,
			int verbose)
{
	const struct stune_profile *p = plan->profile;
	size_t counts[4];
	stune_plan_count(plan, counts);

	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PLAN_SCHEMA_VERSION);
	/* The digest apply will journal: a fleet can compare plans before they are applied. */
	_cleanup_free_ char *digest = NULL;
	if (stune_profile_digest(p, &digest) < 0)
		digest = NULL;
	render_profile_text(o, p, digest);
	out_obj_begin(o, "profile");
	out_str(o, "name", NULL, p->name);
	out_strv(o, "files", NULL, p->files);
	out_str(o, "digest", NULL, digest);
	out_obj_end(o);
	out_bool(o, "dry_run", NULL, STUNE_YES);
	out_obj_begin(o, "summary");
	out_int(o, "change", counts[STUNE_CHANGE] ? "Plan: %s" NB "to" NB "change" : NULL,
		(long long)counts[STUNE_CHANGE]);
	if (counts[STUNE_CHANGE])
		out_text(o, " on %zu" NB "object%s", nobj, nobj == 1 ? "" : "s");
	else
		out_text(o, "Plan: nothing to change");
	out_int(o, "already", "; %s" NB "already" NB "right", (long long)counts[STUNE_ALREADY]);
	out_int(o, "not_settable", ", %s" NB "not" NB "settable", (long long)counts[STUNE_NOT_SETTABLE]);
	out_int(o, "not_applicable", ", %s" NB "not" NB "applicable", (long long)counts[STUNE_NOT_APPLICABLE]);
	if (!verbose && counts[STUNE_ALREADY] + counts[STUNE_NOT_SETTABLE] + counts[STUNE_NOT_APPLICABLE])
		out_text(o, VLIST);
	out_text(o, ". Dry" NB "run: nothing written.\n");
	out_obj_end(o);
	render_scope(o, t, plan);

	/* Text: one row per object and state; changes only unless -v. */
	struct rows rows = {0};
	for (size_t i = 0; i < plan->n_changes && !out_is_json(o); i++) {
		const struct stune_change *c = &plan->changes[i];
		if (c->state != STUNE_CHANGE && !verbose)
			continue;
		_cleanup_free_ char *dev = plan_row_device(c);
		if (rows_add(&rows, stune_change_state_name(c->state), dev, c->object,
			     plan_row_text(c, c->state == STUNE_CHANGE),
			     c->state == STUNE_CHANGE && !verbose ? NULL : c->note) < 0)
			break;
	}
	rows_print(o, &rows, "STATE", !verbose);
	rows_free(&rows);

	out_arr_begin(o, "changes");
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		char source[512] = "";
		if (c->source)
			snprintf(source, sizeof(source), "%s:%u", c->source->file, c->source->line);
		out_obj_begin(o, NULL);
		out_str(o, "class", NULL, c->kind == STUNE_OBJ_PERSIST ? "persist" : class_label(c->cls));
		out_str(o, "object", NULL, c->object);
		out_str(o, "device", NULL, c->device);
		out_str(o, "setting", NULL, c->setting);
		out_rootpath(o, "path", NULL, c->path);
		out_str(o, "current", NULL, c->current);
		out_str(o, "desired", NULL, c->desired);
		out_str(o, "state", NULL, stune_change_state_name(c->state));
		out_str(o, "source", NULL, c->source ? source : NULL);
		out_str(o, "why", NULL, c->source ? c->source->why : NULL);
		out_str(o, "note", NULL, c->note);
		out_obj_end(o);
	}
	out_arr_end(o);

	if (!out_is_json(o))
		render_why(o, plan, verbose);
	out_obj_end(o);
}

/* apply --dry-run: the plan, text or JSON (schema/plan.schema.json); an exit code. */
static int print_plan(const struct global_opts *g, const struct stune_topology *t, const struct stune_plan *plan)
{
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	ssize_t nobj = objects_in_state(plan, STUNE_CHANGE);
	if (nobj < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	render_plan(o, t, plan, (size_t)nobj, g->verbose);
	int r = out_finish(o);
	if (r < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

/*
 * Another profile's apply in the journal: applying this one over it would
 * leave what only that one set (verify would then check this profile alone
 * and say "in effect" on a host half in each). Refused: revert it first, as
 * tuned-adm switches profiles. The same profile (its file changed or not) is
 * applied again as always.
 */
static int apply_other_profile(const struct global_opts *g, const struct stune_journal *j,
			       const struct stune_profile *p, const char *state_dir, const char *state_opt)
{
	if (!j || !j->profile_path || !j->n)
		return EXIT_OK;
	_cleanup_free_ char *mine = realpath(p->path, NULL), *theirs = realpath(j->profile_path, NULL);
	if (!strcmp(mine ? mine : p->path, theirs ? theirs : j->profile_path))
		return EXIT_OK;
	/* Two files of one name (another directory): named by their paths. */
	bool same_name = j->profile && !strcmp(j->profile, p->name);
	const char *was = same_name || !j->profile ? j->profile_path : j->profile,
		   *now = same_name ? (mine ? mine : p->path) : p->name;
	error_msg("profile %s is applied (%s/journal.json): %s over it would leave the settings only %s made", was,
		  state_dir, now, was);
	_cleanup_free_ char *undo = cli_cmdline(g, "revert", "--state-dir", state_opt, NULL);
	hint_msg("to switch profiles, undo that apply first (back to the values before it): %s; then apply %s",
		 undo ? undo : "scsitune revert", p->name);
	return EXIT_ERROR;
}

/*
 * --persist asked for what cannot be written here (scsitune not installed for
 * the boot unit, no etc/udev/rules.d): apply refuses before its first write
 * (a --persist that persists part or nothing would look like it worked), its
 * dry run warns. 0 when every persist row can be written.
 */
static int persist_blocked(const struct stune_plan *plan, bool dry_run)
{
	size_t blocked = 0, rows = 0;
	const char *first = NULL;
	for (size_t i = 0; i < plan->n_changes; i++) {
		const struct stune_change *c = &plan->changes[i];
		if (c->kind != STUNE_OBJ_PERSIST)
			continue;
		rows++;
		if (c->state == STUNE_NOT_APPLICABLE) {
			if (!blocked++)
				first = c->note;
		}
	}
	if (!blocked)
		return 0;
	char more[96] = "";
	if (blocked > 1)
		snprintf(more, sizeof(more),
			 " (%zu of the %zu persist files cannot be written: apply --dry-run -v lists them)", blocked,
			 rows);
	if (dry_run)
		note_msg("warning: --persist: %s%s; apply --persist would refuse", first ? first : "not applicable",
			 more);
	else
		error_msg("--persist: %s%s; nothing written (without --persist, apply tunes this boot only)",
			  first ? first : "not applicable", more);
	return -EPERM;
}

int cmd_apply(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_PROFILE_DIR = 0x100, OPT_STATE_DIR, OPT_PERSIST, OPT_PAYLOAD };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"profile", required_argument, NULL, 'p'},
						 {"dry-run", no_argument, NULL, 'n'},
						 {"profile-dir", required_argument, NULL, OPT_PROFILE_DIR},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"persist", no_argument, NULL, OPT_PERSIST},
						 {"payload", required_argument, NULL, OPT_PAYLOAD},
						 {NULL, 0, NULL, 0}};
	const char *profile = NULL, *dir = SCSITUNE_PROFILE_DIR, *state_opt = NULL, *payload = NULL;
	bool dry_run = false, persist = false;
	int c;

	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS "p:n", longopts, "apply")) != -1) {
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
		case OPT_PAYLOAD:
			if (!*optarg) {
				usage_error("apply", "apply: --payload: empty file name");
				return EXIT_USAGE;
			}
			payload = optarg;
			continue;
		}
		int ec = command_opt(g, "apply", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("apply", argc, argv))
		return EXIT_USAGE;
	if (!profile) {
		usage_error("apply", "apply: --profile NAME|PATH is required (scsitune profile list names them)");
		return EXIT_USAGE;
	}
	_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
	_cleanup_free_ char *err = NULL;
	int r = stune_profile_load(profile, dir, &p, &err);
	if (r < 0) {
		cli_profile_error(r, err, profile, dir);
		return EXIT_ERROR;
	}

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	/* --payload: the bundle's signature and contents first, before anything else. */
	_cleanup_(stune_loaded_bundle_clear) struct stune_loaded_bundle b = {0};
	if (payload && payload_bundle_load(ctx, payload, NULL, NULL, &b) < 0)
		return EXIT_ERROR;
	/* The lock before the host is read (the journal, the model, the plan): never planned from the
	 * half-written values of another apply, revert or payload install. */
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	if (!dry_run && (apply_lock(ctx, state_opt, &state_dir, &lock, &j) != EXIT_OK ||
			 apply_other_profile(g, j, p, state_dir, state_opt) != EXIT_OK))
		return EXIT_ERROR;
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	_cleanup_(stune_plan_freep) struct stune_plan *plan = NULL;
	if (cli_plan(ctx, p, dir, persist, &t, &plan) < 0)
		return EXIT_ERROR;
	if (persist && persist_blocked(plan, dry_run) < 0 && !dry_run)
		return EXIT_ERROR;
	if (!dry_run)
		return apply_run(g, ctx, t, plan, dir, state_dir, state_opt, persist, payload ? &b : NULL, j);
	if (payload && payload_apply_install(g, ctx, &b, NULL, true) != EXIT_OK)
		return EXIT_ERROR;
	return print_plan(g, t, plan);
}
