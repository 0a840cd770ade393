/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune verify [--profile NAME]: build the plan again (the journal's
 * profile by default) and say, per setting, whether it is in effect.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/userfile.h"
#include "tune/journal.h"
#include "tune/verify.h"
#include "tune/plan.h"
#include "tune/profile.h"
#include "detect/topology.h"
#include "core/strv.h"
#include "rows.h"
#include "cli.h"
#include "commands.h"
#include "plan-view.h"
#include "statedir.h"
#include "wrap.h"

#define NB    WRAP_NBSP
#define VLIST " (-v" NB "lists" NB "them)"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

/* 2: profile-changed (state, summary, exit 5), the profile's digest and the applied one. */
#define STUNE_VERIFY_SCHEMA_VERSION 3

void help_verify(FILE *f)
{
	fputs("Usage: scsitune verify [--profile NAME|PATH] [options]\n"
	      "\nCheck that a tuning profile is in effect on this host: the plan is computed\n"
	      "again and each setting is reported in effect, drifted (expected and actual\n"
	      "value), not applicable, or not settable. Without --profile, the profile of\n"
	      "the last apply (from the journal) is checked; if its file changed since, the\n"
	      "settings that only the new file asks for are profile-changed, not drifted.\n"
	      "\nOptions:\n"
	      "  -p, --profile NAME|PATH  the profile (default: the journal's)\n"
	      "      --profile-dir DIR    where profile names are looked up (default: the\n"
	      "                           journal's, else " SCSITUNE_PROFILE_DIR ")\n"
	      "      --state-dir DIR      where the journal is (default " STUNE_STATE_DIR ",\n"
	      "                           inside the --sysroot tree when one is given)\n"
	      "      --persist            also check the files of apply --persist (the default\n"
	      "                           when the journal's apply used --persist)\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 every setting in effect, 1 error, 2 drift (the host changed),\n"
	      "5 the profile changed since apply (and the host did not), 64 usage.\n"
	      "See scsitune-verify(8).\n",
	      f);
}

/* The journal of the last apply (the profile verify checks when none is named). */
static int verify_journal(struct stune_ctx *ctx, const struct global_opts *g, const char *state_opt,
			  struct stune_journal **j)
{
	_cleanup_free_ char *state_dir = NULL;
	if (cli_state_dir(ctx, state_opt, &state_dir) != EXIT_OK)
		return -EPERM;
	int r;
	const char *jfile = "journal.json";
	r = stune_journal_load_named(state_dir, j, &jfile);
	if (r == -ENOENT) {
		/* apply writes one only when it changed something (there is nothing to undo otherwise). */
		error_msg("no journal in %s: no apply changed this host with this state directory", state_dir);
		_cleanup_free_ char *named =
		    cli_cmdline(g, "verify", "--state-dir", state_opt, "--profile", "NAME", NULL);
		hint_msg("to check a profile all the same: %s (scsitune profile list names them)",
			 named ? named : "scsitune verify --profile NAME");
		return r;
	}
	if (r < 0 || !(*j)->profile_path) {
		error_msg("%s/%s: %s", state_dir, jfile, r >= 0 ? "not a scsitune journal" : stune_journal_strerror(r));
		return r < 0 ? r : -EBADMSG;
	}
	if (cli_journal_check(state_dir, *j) != EXIT_OK)
		return -EXDEV;
	return 0;
}

/* --profile named: whether the state directory has an apply journal (for the hint to revert it). */
static bool journal_there(struct stune_ctx *ctx, const char *state_opt)
{
	_cleanup_free_ char *state_dir = NULL;
	struct stat st;
	if (cli_state_dir(ctx, state_opt, &state_dir) != EXIT_OK)
		return false;
	_cleanup_free_ char *path = stune_strdupf("%s/journal.json", state_dir);
	return path && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

struct verify_view {
	const struct stune_profile *p;
	const char *digest, *dir, *state_opt;
	const struct stune_journal *j; /* NULL: --profile named, no journal read */
	bool journal_there;	       /* --profile named: the state dir has an apply journal all the same */
	const struct stune_plan *plan;
	const enum stune_vstate *states;
	const struct stune_verify_summary *sum;
};

/* Text: what to run next when the host is not as the profile asks (each command as it is to be pasted). */
static void render_next_step(struct out *o, const struct global_opts *g, const struct verify_view *v)
{
	if (v->sum->drifted && !v->j) {
		/* Nothing of apply's is known: apply it; revert only where a journal is there to undo. */
		_cleanup_free_ char *again = cli_cmdline(g, "apply", "--profile", v->p->name, "--profile-dir", v->dir,
							 "--state-dir", v->state_opt, NULL);
		out_text(o, "To apply it (apply writes only what differs):\n");
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", again ? again : "scsitune apply");
		if (v->journal_there) {
			_cleanup_free_ char *undo = cli_cmdline(g, "revert", "--state-dir", v->state_opt, NULL);
			out_text(o, "To undo the apply that the state directory's journal has:\n");
			out_str(o, NULL, "  " WRAP_SHELL "%s\n", undo ? undo : "scsitune revert");
		}
	} else if (v->sum->drifted) {
		/* The next step, as for a changed profile: apply again (it writes only what differs), or undo. */
		_cleanup_free_ char *again = cli_cmdline(g, "apply", "--profile", v->p->name, "--profile-dir", v->dir,
							 "--state-dir", v->state_opt, NULL);
		_cleanup_free_ char *undo = cli_cmdline(g, "revert", "--state-dir", v->state_opt, NULL);
		out_text(o, "To set the drifted values again (apply writes only what differs), or to undo apply:\n");
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", again ? again : "scsitune apply");
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", undo ? undo : "scsitune revert");
	}
	if (v->sum->profile_changed_rows && !v->sum->drifted) {
		/* apply as the journal's was run, so that it finds the same profile and journal. */
		_cleanup_free_ char *again = cli_cmdline(g, "apply", "--profile", v->p->name, "--profile-dir", v->dir,
							 "--state-dir", v->state_opt, NULL);
		out_text(o, "To bring the host in line:\n");
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", again ? again : "scsitune apply");
	}
}

/* The profile to check; when it is the journal's and does not load, the hint: check another, or undo apply. */
static int verify_profile_load(const struct global_opts *g, const char *profile, const char *dir, const char *state_opt,
			       const struct stune_journal *j, struct stune_profile **p)
{
	_cleanup_free_ char *err = NULL;
	int r = stune_profile_load(profile, dir, p, &err);
	if (r >= 0)
		return 0;
	if (!j) {
		cli_profile_error(r, err, profile, dir);
		return r;
	}
	_cleanup_free_ char *named = cli_cmdline(g, "verify", "--state-dir", state_opt, "--profile", "NAME", NULL);
	_cleanup_free_ char *undo = cli_cmdline(g, "revert", "--state-dir", state_opt, NULL);
	error_msg("%s", err ? err : strerror(-r));
	hint_msg("the last apply used that profile; to check another: %s; to undo apply: %s",
		 named ? named : "scsitune verify --profile NAME", undo ? undo : "scsitune revert");
	return r;
}

/* The verdict, the rows that differ (-v: every row), and the JSON document. */
static void render_verify(struct out *o, const struct global_opts *g, const struct verify_view *v)
{
	const struct stune_verify_summary *sum = v->sum;
	/* --profile named: no journal says what apply wrote, so a difference is "not in effect", not drift. */
	const char *verdict = sum->drifted && !v->j	  ? "not-in-effect"
			      : sum->drifted		  ? "drifted"
			      : sum->profile_changed_rows ? "profile-changed"
							  : "in-effect";
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_VERIFY_SCHEMA_VERSION);
	render_profile_text(o, v->p, v->digest);
	out_obj_begin(o, "profile");
	out_str(o, "name", NULL, v->p->name);
	out_strv(o, "files", NULL, v->p->files);
	out_str(o, "digest", NULL, v->digest);
	out_str(o, "applied_digest", NULL, v->j ? v->j->digest : NULL);
	out_bool(o, "changed_since_apply", NULL, sum->profile_changed ? STUNE_YES : STUNE_NO);
	out_obj_end(o);
	out_str(o, "state", NULL, verdict);

	/* Text: the verdict with its counts, then a row per object that differs (-v: every row). */
	size_t differ = sum->drifted + sum->profile_changed_rows, total = sum->in_effect + differ;
	if (sum->profile_changed)
		out_str(o, NULL, "The profile changed since apply (applied: sha256 %.12s)\n", v->j->digest);
	if (sum->drifted && !v->j)
		out_text(o, "Verify: NOT IN EFFECT, %zu" NB "of" NB "%zu" NB "settings differ", sum->drifted, total);
	else if (sum->drifted)
		out_text(o, "Verify: DRIFTED, %zu" NB "of" NB "%zu" NB "settings", sum->drifted, total);
	else if (sum->profile_changed_rows)
		out_text(o,
			 "Verify: PROFILE CHANGED, %zu" NB "of" NB "%zu" NB "settings asked for since apply, "
			 "the host as apply left it",
			 sum->profile_changed_rows, total);
	else
		out_text(o, "Verify: in effect, %s%zu" NB "setting%s", total > 1 ? "all" NB : "", total,
			 total == 1 ? "" : "s");
	if (sum->drifted && sum->profile_changed_rows)
		out_text(o, ", %zu" NB "more asked for by the changed profile", sum->profile_changed_rows);
	out_text(o, "; %zu" NB "not" NB "settable, %zu" NB "not" NB "applicable%s\n", sum->not_settable,
		 sum->not_applicable,
		 g->verbose || sum->in_effect + sum->not_settable + sum->not_applicable == 0 ? "" : VLIST);
	render_next_step(o, g, v);
	struct rows rows = {0};
	for (size_t i = 0; i < v->plan->n_changes && !out_is_json(o); i++) {
		const struct stune_change *ch = &v->plan->changes[i];
		if (ch->state != STUNE_CHANGE && !g->verbose)
			continue;
		_cleanup_free_ char *dev = plan_row_device(ch);
		char *text;
		if (ch->state == STUNE_CHANGE) {
			char b1[32], b2[32];
			const char *cur = stune_change_display(ch, false, b1, sizeof(b1)),
				   *want = stune_change_display(ch, true, b2, sizeof(b2));
			text =
			    stune_strdupf("%s %s (%s %s)", rows_setting(ch->setting), cur ? cur : "-",
					  v->states[i] == STUNE_V_PROFILE_CHANGED ? "the profile now asks" : "expected",
					  want ? want : "-");
		} else
			text = plan_row_text(ch, false);
		/* (no journal read: a setting that differs is not said to have drifted) */
		const char *state =
		    v->states[i] == STUNE_V_DRIFTED && !v->j ? "differs" : stune_vstate_name(v->states[i]);
		if (rows_add(&rows, state, dev, ch->object, text,
			     ch->state == STUNE_NOT_SETTABLE || ch->state == STUNE_NOT_APPLICABLE ? ch->note : NULL) <
		    0)
			break;
	}
	rows_print(o, &rows, "STATE", !g->verbose);
	rows_free(&rows);

	out_arr_begin(o, "settings");
	for (size_t i = 0; i < v->plan->n_changes; i++) {
		const struct stune_change *ch = &v->plan->changes[i];
		out_obj_begin(o, NULL);
		out_str(o, "object", NULL, ch->object);
		out_str(o, "device", NULL, ch->device);
		out_str(o, "setting", NULL, ch->setting);
		out_rootpath(o, "path", NULL, ch->path);
		out_str(o, "state", NULL, stune_vstate_name(v->states[i]));
		out_str(o, "expected", NULL, ch->desired);
		out_str(o, "actual", NULL, ch->current);
		out_str(o, "note", NULL, ch->note);
		out_obj_end(o);
	}
	out_arr_end(o);
	out_obj_begin(o, "summary");
	out_int(o, "in_effect", NULL, (long long)sum->in_effect);
	out_int(o, "drifted", NULL, (long long)sum->drifted);
	out_int(o, "profile_changed", NULL, (long long)sum->profile_changed_rows);
	out_int(o, "not_settable", NULL, (long long)sum->not_settable);
	out_int(o, "not_applicable", NULL, (long long)sum->not_applicable);
	out_obj_end(o);
	out_obj_end(o);
}

int cmd_verify(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_PROFILE_DIR = 0x100, OPT_STATE_DIR, OPT_PERSIST };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"profile", required_argument, NULL, 'p'},
						 {"profile-dir", required_argument, NULL, OPT_PROFILE_DIR},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {"persist", no_argument, NULL, OPT_PERSIST},
						 {NULL, 0, NULL, 0}};
	const char *profile = NULL, *dir = NULL, *state_opt = NULL;
	bool persist = false;
	int c, r;

	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS "p:", longopts, "verify")) != -1) {
		switch (c) {
		case 'h':
			help_verify(stdout);
			return EXIT_OK;
		case OPT_PERSIST:
			persist = true;
			continue;
		case 'p':
		case OPT_PROFILE_DIR:
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("verify", "verify: empty argument");
				return EXIT_USAGE;
			}
			*(c == 'p' ? &profile : c == OPT_STATE_DIR ? &state_opt : &dir) = optarg;
			continue;
		}
		int ec = command_opt(g, "verify", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("verify", argc, argv))
		return EXIT_USAGE;

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	/* The lock shared before the host is read (the journal, the model): never a half-applied host. */
	_cleanup_close_ int lock = -1;
	if (cli_lock_shared(ctx, state_opt, &lock) != EXIT_OK)
		return EXIT_ERROR;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	if (!profile && verify_journal(ctx, g, state_opt, &j) < 0)
		return EXIT_ERROR;
	if (!profile) {
		profile = j->profile_path;
		if (!dir)
			dir = j->profile_dir;
	}
	if (!dir)
		dir = SCSITUNE_PROFILE_DIR;
	_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
	if (verify_profile_load(g, profile, dir, state_opt, j, &p) < 0)
		return EXIT_ERROR;
	_cleanup_free_ char *digest = NULL;
	if (stune_profile_digest(p, &digest) < 0)
		digest = NULL;
	/* The journal's profile is named as apply was given it (not by the path it resolved to). */
	if (j && j->profile) {
		char *name = strdup(j->profile);
		if (!name) {
			error_msg("out of memory");
			return EXIT_ERROR;
		}
		free(p->name);
		p->name = name;
	}

	/* The files of apply --persist too: asked for, or the journal's apply made them. */
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	_cleanup_(stune_plan_freep) struct stune_plan *plan = NULL;
	if (cli_plan(ctx, p, dir, persist || (j && j->persist), &t, &plan) < 0)
		return EXIT_ERROR;
	struct stune_verify_summary sum = {.profile_changed = j && j->digest && digest && strcmp(digest, j->digest)};
	_cleanup_free_ enum stune_vstate *states = calloc(plan->n_changes ? plan->n_changes : 1, sizeof(*states));
	if (!states || stune_verify_classify(plan, j, &sum, states) < 0) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	render_verify(o, g,
		      &(struct verify_view){p, digest, dir, state_opt, j, !j && journal_there(ctx, state_opt), plan,
					    states, &sum});
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return sum.drifted ? EXIT_DRIFT : sum.profile_changed_rows ? EXIT_PROFILE_CHANGED : EXIT_OK;
}
