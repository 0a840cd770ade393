/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune revert [--force]: put back every value apply changed, from the
 * journal (lib/apply.c does the work).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/userfile.h"
#include "tune/apply.h"
#include "detect/irqbalance.h"
#include "detect/scan.h"
#include "tune/irqbalance.h"
#include "tune/journal.h"
#include "tune/persist.h"
#include "core/root.h"
#include "core/strv.h"
#include "rows.h"
#include "cli.h"
#include "commands.h"
#include "plan-view.h"
#include "statedir.h"
#include "wrap.h"

#define NB    WRAP_NBSP
#define VLIST " (-v" NB "lists" NB "them)"

#define STUNE_REVERT_SCHEMA_VERSION 1

/* A journal value for people: irqbalance's whole file becomes IRQBALANCE_ARGS="...",
 * another file its line count, nothing there "absent". */
static char *shown(const struct stune_jentry *e, const char *v)
{
	if (!v)
		return strdup(e->absent ? "absent" : "-");
	if (!strcmp(e->object, "irqbalance")) {
		_cleanup_free_ char *args = NULL;
		if (stune_irqbalance_args(v, &args) == 0)
			return stune_strdupf("%s=\"%s\"", STUNE_IRQBALANCE_VAR, args ? args : "");
		return strdup("(not a plain IRQBALANCE_ARGS)");
	}
	/* A raw scheduler file: its selected entry, as the plan shows it. */
	const char *lb = strchr(v, '['), *rb = lb ? strchr(lb, ']') : NULL;
	if (lb && rb && e->kind != STUNE_JK_FILE)
		return strndup(lb + 1, (size_t)(rb - lb - 1));
	if (e->kind == STUNE_JK_FILE) {
		size_t lines = 1;
		for (const char *p = v; *p; p++)
			lines += *p == '\n';
		return stune_strdupf("%zu line%s", lines, lines == 1 ? "" : "s");
	}
	return strdup(v);
}

void help_revert(FILE *f)
{
	fputs("Usage: scsitune revert [--force] [options]\n"
	      "\nPut back every value that 'scsitune apply' changed, newest first, from the\n"
	      "journal (STATE_DIR/journal.json). A value that someone else changed since\n"
	      "apply wrote it is reported and left alone, unless --force. When every value\n"
	      "is back, the journal is removed. Works after an apply that was interrupted.\n"
	      "\nOptions:\n"
	      "  -f, --force           restore values changed by someone else since apply too\n"
	      "      --state-dir DIR   where the journal is (default " STUNE_STATE_DIR ",\n"
	      "                        inside the --sysroot tree when one is given)\n\n",
	      f);
	print_global_options(f);
	fputs("\nExit status: 0 everything restored (or nothing to revert), 1 a value was left\n"
	      "alone or could not be restored, or an error, 64 usage.\n"
	      "See scsitune-revert(8).\n",
	      f);
}

/* No journal: nothing was applied (or the last revert completed). */
static int revert_nothing(struct out *o, const char *state_dir)
{
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_REVERT_SCHEMA_VERSION);
	out_str(o, "profile", NULL, NULL);
	out_bool(o, "complete", NULL, STUNE_YES);
	out_text(o, "No journal in %s: nothing to revert.\n", state_dir);
	out_arr_begin(o, "changes");
	out_arr_end(o);
	out_obj_end(o);
	return out_finish(o) < 0 ? EXIT_ERROR : EXIT_OK;
}

/* A disk's entry whose key no disk (or no single disk) has now: nothing was written. */
static bool not_here(const struct stune_revert_item *it)
{
	return it->outcome == STUNE_RV_GONE && (it->err == ENODEV || it->err == ENOTUNIQ);
}

/* The text row of one journal entry: what revert did with it. */
static int revert_row(struct rows *rows, const struct stune_jentry *e, const struct stune_revert_item *it)
{
	_cleanup_free_ char *cur = shown(e, it->current), *old = shown(e, e->old), *after = shown(e, e->after);
	/* A disk not here: the name in the path is another disk's now, or none. */
	_cleanup_free_ char *dev = not_here(it) ? NULL : rows_disk_of_path(e->path);
	const char *what = rows_setting(e->setting), *state = "failed";
	char *text = NULL;
	switch (it->outcome) {
	case STUNE_RV_RESTORED:
		state = "restored";
		text = it->was ? stune_strdupf("%s %s -> %s (%s at apply)", what, cur, old, it->was)
			       : stune_strdupf("%s %s -> %s", what, cur, old);
		break;
	case STUNE_RV_UNCHANGED:
		state = "unchanged";
		text = stune_strdupf("%s %s", what, old);
		break;
	case STUNE_RV_CHANGED:
		state = "left alone";
		text =
		    stune_strdupf("%s %s (changed since apply wrote %s; --force restores %s)", what, cur, after, old);
		break;
	case STUNE_RV_EARLIER_BOOT:
		state = "earlier boot";
		text = stune_strdupf("%s (pinned in an earlier boot: not written)", what);
		break;
	case STUNE_RV_GONE:
		if (not_here(it)) {
			state = "not here";
			text = stune_strdupf(it->err == ENODEV ? "%s (no disk has this key now)"
							       : "%s (several disks have this key now, none this name)",
					     what);
			break;
		}
		/* fall through */
	case STUNE_RV_FAILED:
	case _STUNE_RV_MAX:
		text = stune_strdupf("%s (%s)", what, strerror(it->err));
		break;
	}
	return rows_add(rows, state, dev, e->object, text, NULL);
}

/* What revert did, text and JSON (schema/revert.schema.json); rr: the
 * irqbalance restart's outcome (1: none); live: the running system. */
static void render_revert(struct out *o, const struct global_opts *g, bool live, const struct stune_journal *j,
			  const struct stune_revert_item *items, size_t n, bool complete, int rr, const char *state_dir,
			  const char *state_opt)
{
	size_t cnt[_STUNE_RV_MAX] = {0};
	size_t n_away = 0; /* entries of a disk not on the host now */
	for (size_t i = 0; i < n; i++) {
		cnt[items[i].outcome]++;
		n_away += not_here(&items[i]);
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_REVERT_SCHEMA_VERSION);
	out_str(o, "profile", "Profile %s", j->profile);
	if (!out_is_json(o) && j->digest)
		out_str(o, NULL, "  sha256 %.12s", j->digest);
	out_text(o, "\nRevert: %zu" NB "restored, %zu" NB "left" NB "alone, %zu" NB "failed, %zu" NB "unchanged%s",
		 cnt[STUNE_RV_RESTORED], cnt[STUNE_RV_CHANGED], cnt[STUNE_RV_FAILED] + cnt[STUNE_RV_GONE],
		 cnt[STUNE_RV_UNCHANGED], g->verbose || !cnt[STUNE_RV_UNCHANGED] ? "" : VLIST);
	if (cnt[STUNE_RV_EARLIER_BOOT])
		out_text(o, ", %zu" NB "of" NB "an" NB "earlier" NB "boot", cnt[STUNE_RV_EARLIER_BOOT]);
	out_text(o, "\n");
	struct rows rows = {0};
	out_arr_begin(o, "changes");
	for (size_t i = 0; i < n; i++) {
		const struct stune_revert_item *it = &items[i];
		const struct stune_jentry *e = &j->entries[it->entry];
		out_obj_begin(o, NULL);
		out_str(o, "object", NULL, e->object);
		out_str(o, "setting", NULL, e->setting);
		out_rootpath(o, "path", NULL, e->path);
		out_str(o, "old", NULL, e->old);
		out_str(o, "current", NULL, it->current);
		out_str(o, "result", NULL, stune_revert_outcome_name(it->outcome));
		out_num(o, "errno", NULL, it->err ? STUNE_NUM(it->err) : (struct stune_num){0});
		out_obj_end(o);
		if (out_is_json(o) || (it->outcome == STUNE_RV_UNCHANGED && !g->verbose))
			continue;
		if (revert_row(&rows, e, it) < 0)
			break;
	}
	out_arr_end(o);
	rows_print(o, &rows, "RESULT", !g->verbose);
	rows_free(&rows);
	if (rr != 1)
		out_text(o, "%s\n",
			 rr == 0 ? "irqbalance restarted (systemctl try-restart irqbalance.service): the bans are gone"
				 : "systemctl try-restart irqbalance.service failed: restart irqbalance by hand");
	/* apply --persist's boot unit pinned them again at this boot, with its own journal (live hosts only). */
	if (cnt[STUNE_RV_EARLIER_BOOT] && j->persist && live)
		out_text(o, "\nThe IRQs were pinned in an earlier boot. At this one the boot unit pinned them "
			    "again, journaled in " STUNE_PERSIST_BOOT_STATE "; to undo that too:\n  " WRAP_SHELL
			    "scsitune revert --state-dir " STUNE_PERSIST_BOOT_STATE "\n");
	out_bool(o, "complete", NULL, complete ? STUNE_YES : STUNE_NO);
	if (complete)
		out_text(o, "\nEvery value restored; journal removed.\n");
	else if (n_away && !cnt[STUNE_RV_CHANGED] && n_away == cnt[STUNE_RV_FAILED] + cnt[STUNE_RV_GONE])
		out_str(o, NULL,
			"\nThe entries of a disk not on this host stay in the journal (%s): revert again when it is "
			"back.\n",
			state_dir);
	else {
		/* The command that would restore the rest, with what it needs to find the journal. */
		_cleanup_free_ char *again = cli_cmdline(g, "revert", "--state-dir", state_opt, "--force", "", NULL);
		out_str(o, NULL,
			"\nNot everything was restored: the journal stays in %s. To restore the values changed "
			"since apply too:\n",
			state_dir);
		out_str(o, NULL, "  " WRAP_SHELL "%s\n", again ? again : "scsitune revert --force");
	}
	out_obj_end(o);
}

int cmd_revert(struct global_opts *g, int argc, char **argv)
{
	enum { OPT_STATE_DIR = 0x100 };
	static const struct option longopts[] = {GLOBAL_LONGOPTS,
						 {"force", no_argument, NULL, 'f'},
						 {"state-dir", required_argument, NULL, OPT_STATE_DIR},
						 {NULL, 0, NULL, 0}};
	const char *state_opt = NULL;
	bool force = false;
	int c, r;

	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS "f", longopts, "revert")) != -1) {
		switch (c) {
		case 'h':
			help_revert(stdout);
			return EXIT_OK;
		case 'f':
			force = true;
			continue;
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("revert", "revert: --state-dir: empty directory name");
				return EXIT_USAGE;
			}
			state_opt = optarg;
			continue;
		}
		int ec = command_opt(g, "revert", c, optarg);
		if (ec)
			return ec;
	}
	if (command_no_args("revert", argc, argv))
		return EXIT_USAGE;

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int lock = -1;
	if (cli_lock(ctx, state_opt, "revert", &state_dir, &lock) != EXIT_OK)
		return EXIT_ERROR;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	const char *jfile = "journal.json";
	r = stune_journal_load_named(state_dir, &j, &jfile);
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	if (r == -ENOENT)
		return revert_nothing(o, state_dir);
	if (r < 0) {
		error_msg("%s/%s: %s", state_dir, jfile, stune_journal_strerror(r));
		return EXIT_ERROR;
	}
	/* Only what apply could have written, before any of it is (its advice then never asks --force for more). */
	if (cli_journal_check(state_dir, j) != EXIT_OK)
		return EXIT_ERROR;
	/* The disks now: a disk's entries are restored on the disk with the key they name, whatever its name.
	 * When each journaled name still has its key (one disk at a time), the host is not scanned. */
	_cleanup_(stune_topology_freep) struct stune_topology *t = NULL;
	bool in_place = false;
	if ((r = stune_revert_disks_in_place(ctx, j, &in_place)) < 0 ||
	    (!in_place && (r = stune_topology_scan_for_plan_attrs(ctx, 0, &t)) < 0)) {
		error_msg("reading the host failed: %s", strerror(-r));
		return EXIT_ERROR;
	}
	struct stune_revert_item *items = NULL;
	size_t n = 0;
	bool complete = false;
	/* irqbalance reads its defaults only when it starts: the engine restarts a
	 * systemd-run one once its file is back (a no-op when it does not run). */
	bool under_systemd = stune_root_is_live(ctx->root) && stune_root_exists(ctx->root, "run/systemd/system");
	int rr = 1;
	bool live = stune_root_is_live(ctx->root);
	if ((r = stune_revert(ctx, t, j, state_dir, force, &items, &n, &complete, under_systemd ? &rr : NULL)) < 0) {
		error_msg("revert: %s", strerror(-r));
		return EXIT_ERROR;
	}
	render_revert(o, g, live, j, items, n, complete, rr, state_dir, state_opt);
	stune_revert_items_free(items, n);
	if ((r = out_finish(o)) < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return complete ? EXIT_OK : EXIT_ERROR;
}
