/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scsitune profile list | active: the profiles a profile directory holds (as
 * tuned-adm list), each loaded and said to load or not, with its summary, and
 * the one the last apply left (the journal's, as tuned-adm active): read-only,
 * no lock, nothing written.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/root.h"
#include "core/strv.h"
#include "core/userfile.h"
#include "core/utctime.h"
#include "tune/journal.h"
#include "tune/profile.h"
#include "cli.h"
#include "commands.h"
#include "modes.h"
#include "plan-view.h"
#include "statedir.h"
#include "wrap.h"

#ifndef SCSITUNE_PROFILE_DIR
#define SCSITUNE_PROFILE_DIR "/usr/local/share/scsitune/profiles"
#endif

#define STUNE_PROFILE_LIST_SCHEMA_VERSION 1
#define PROFILE_HEAD_MAX_BYTES		  (1u << 20)
#define PROFILES_MAX			  4096 /* entries of a profile directory looked at */

enum { OPT_PROFILE_DIR = 0x100, OPT_STATE_DIR };
enum { M_LIST, M_ACTIVE, N_MODES };
static const struct mode_def profile_modes[N_MODES] = {
    [M_LIST] = {"profile list", 0, 0, "profile list: takes no argument"},
    [M_ACTIVE] = {"profile active", 0, 0, "profile active: takes no argument"},
};
static const struct mode_opt profile_opts_table[] = {
    {"profile-dir", required_argument, OPT_PROFILE_DIR, MODE(M_LIST)},
    {"state-dir", required_argument, OPT_STATE_DIR, MODE(M_LIST) | MODE(M_ACTIVE)},
};
static const struct mode_table profile_table = {"profile", profile_modes, N_MODES, profile_opts_table,
						ELEMENTSOF(profile_opts_table)};

void help_profile(FILE *f)
{
	fputs("Usage: scsitune profile list [--profile-dir DIR] [--state-dir DIR]\n"
	      "       scsitune profile active [--state-dir DIR]\n"
	      "\nThe tuning profiles there are, and the one in effect (read-only):\n"
	      "  list    every profile in the profile directory, whether it loads, its\n"
	      "          summary (the first sentence of its header comment); the one the\n"
	      "          last apply used is marked *\n"
	      "  active  the profile of the last apply (from its journal): name, file,\n"
	      "          digest, when, whether apply persisted it, and whether the file\n"
	      "          changed since;\n"
	      "          scsitune verify checks that its settings are in effect\n"
	      "\nOptions:\n"
	      "      --profile-dir DIR  where profiles are (default\n"
	      "                         " SCSITUNE_PROFILE_DIR ")\n"
	      "      --state-dir DIR    where apply's journal is (default " STUNE_STATE_DIR ",\n"
	      "                         inside the --sysroot tree when one is given)\n\n",
	      f);
	mode_help(f, &profile_table);
	fputc('\n', f);
	print_global_options(f);
	fputs("\nExit status: 0 (also when no profile was applied: profile active says so),\n"
	      "1 error (an unreadable profile directory or journal), 64 usage.\n"
	      "See scsitune-profile(8).\n",
	      f);
}

/*
 * A profile's summary: the first sentence of its header comment, after the
 * "# scsitune profile: NAME" line ("High-IOPS random I/O on NUMA hosts with
 * SAS HBAs (mpi3mr in particular)"). NULL when the file has none.
 */
static char *summary_of(const char *text)
{
	_cleanup_free_ char *para = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&para, &len);
	if (!f)
		return NULL;
	bool started = false;
	for (const char *l = text; l && *l == '#';) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *c = l + 1;
		size_t cn = n - 1;
		while (cn && *c == ' ')
			c++, cn--;
		bool header = !strncmp(c, "scsitune profile:", strlen("scsitune profile:"));
		if (!cn || header) {
			if (started)
				break;
		} else {
			fprintf(f, "%s%.*s", started ? " " : "", (int)cn, c);
			started = true;
		}
		l = e ? e + 1 : NULL;
	}
	if (fclose(f) != 0 || !started)
		return NULL;
	/* The first sentence: up to ". " or ": " (the end of a clause that introduces a list). */
	for (char *p = para; *p; p++)
		if ((*p == '.' || *p == ':') && (p[1] == ' ' || !p[1])) {
			*p = '\0';
			break;
		}
	return steal_pointer(&para);
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The last apply's journal: 0 (*j NULL when none), or -errno after the message. */
static int active_journal(struct stune_ctx *ctx, const char *state_opt, char **state_dir, struct stune_journal **j)
{
	if (cli_state_dir(ctx, state_opt, state_dir) != EXIT_OK)
		return -EPERM;
	int r;
	const char *jfile = "journal.json";
	r = stune_journal_load_named(*state_dir, j, &jfile);
	if (r == -ENOENT) {
		*j = NULL;
		return 0;
	}
	if (r < 0)
		error_msg("%s/%s: %s", *state_dir, jfile, stune_journal_strerror(r));
	return r;
}

/* "2026-12-04 18:55 UTC" into buf, or "-". */
static const char *when(char *buf, size_t len, long long t)
{
	struct stune_utc u;
	if (t <= 0 || stune_utc_from_epoch(t, &u) < 0)
		return "-";
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d UTC", u.year, u.month, u.day, u.hour, u.min);
	return buf;
}

/* The journal's profile loaded again from where apply took it: its digest now, or NULL (*why says). */
static char *digest_now(const struct stune_journal *j, char **why)
{
	_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
	_cleanup_free_ char *err = NULL;
	char *d = NULL;
	int r = stune_profile_load(j->profile_path, j->profile_dir, &p, &err);
	if (r < 0) {
		*why = err ? steal_pointer(&err) : strdup(strerror(-r));
		return NULL;
	}
	if (stune_profile_digest(p, &d) < 0)
		*why = strdup("out of memory");
	return d;
}

/* The "active" object (null when nothing was applied) and its text. */
static void render_active(struct out *o, const struct stune_journal *j, const char *state_dir, bool text)
{
	if (!j) {
		out_str(o, "active", NULL, NULL);
		if (text)
			out_str(o, NULL, "No profile applied (no journal in %s).\n", state_dir);
		return;
	}
	char buf[40];
	_cleanup_free_ char *why = NULL;
	_cleanup_free_ char *now = digest_now(j, &why);
	bool changed = now && j->digest && strcmp(now, j->digest);
	out_obj_begin(o, "active");
	/* A profile applied by path is named by it: shown once. */
	bool by_path = j->profile && j->profile_path && !strcmp(j->profile, j->profile_path);
	out_str(o, "name", text ? (by_path ? "Active:    %s\n" : "Active:    %s") : NULL, j->profile);
	out_str(o, "path", text && !by_path ? "  (%s)\n" : NULL, j->profile_path);
	out_str(o, "digest", text ? "           applied sha256 %.12s" : NULL, j->digest);
	out_int(o, "applied_unix", NULL, j->started);
	if (text)
		out_str(o, NULL, ", %s", when(buf, sizeof(buf), j->started));
	out_bool(o, "persist", NULL, j->persist ? STUNE_YES : STUNE_NO);
	if (text && j->persist)
		out_text(o, ", --persist");
	out_str(o, "journal", NULL, state_dir);
	out_str(o, "digest_now", NULL, now);
	out_str(o, "file_state", NULL, !now ? "unreadable" : changed ? "changed" : "same");
	if (text) {
		if (!now)
			out_str(o, NULL, "\n           the file does not load now: %s", why);
		else if (changed)
			out_str(o, NULL, "\n           the file changed since (sha256 %.12s now)", now);
		out_text(o, "\n           scsitune verify: are its settings in effect?\n");
	}
	out_obj_end(o);
}

static int profile_list(struct stune_ctx *ctx, struct out *o, const char *dir, const char *state_opt)
{
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	if (active_journal(ctx, state_opt, &state_dir, &j) < 0)
		return EXIT_ERROR;
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, name_cmp);
	if (n < 0) {
		int e = errno;
		error_msg("profile directory %s: %s%s", dir, strerror(e),
			  e == ENOENT ? " (install scsitune: cmake --install build; from a source tree: --profile-dir "
					"profiles)"
				      : "");
		return EXIT_ERROR;
	}
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PROFILE_LIST_SCHEMA_VERSION);
	out_str(o, "profile_dir", "Profiles in %s:\n", dir);
	out_arr_begin(o, "profiles");
	size_t shown = 0;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		_cleanup_free_ char *path = stune_strdupf("%s/%s", dir, name);
		struct stat st;
		if (name[0] == '.' || !path || i >= PROFILES_MAX || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		_cleanup_(stune_profile_freep) struct stune_profile *p = NULL;
		_cleanup_free_ char *err = NULL, *digest = NULL, *text = NULL, *summary = NULL;
		int r = stune_profile_load(name, dir, &p, &err);
		if (r == 0 && stune_profile_digest(p, &digest) < 0)
			digest = NULL;
		if (stune_read_user_file(path, PROFILE_HEAD_MAX_BYTES, STUNE_UF_TEXT, &text, NULL) == 0)
			summary = summary_of(text);
		/* The journal's profile file is this one (by name in this directory, or by a path to it). */
		struct stat jf, f;
		bool active = j && j->profile_path && stat(j->profile_path, &jf) == 0 && stat(path, &f) == 0 &&
			      jf.st_dev == f.st_dev && jf.st_ino == f.st_ino;
		out_obj_begin(o, NULL);
		out_str(o, "name", NULL, name);
		out_str(o, "path", NULL, path);
		out_bool(o, "loads", NULL, r == 0 ? STUNE_YES : STUNE_NO);
		out_str(o, "error", NULL, r == 0 ? NULL : err ? err : strerror(-r));
		out_str(o, "digest", NULL, digest);
		out_str(o, "summary", NULL, summary);
		out_bool(o, "active", NULL, active ? STUNE_YES : STUNE_NO);
		out_obj_end(o);
		shown++;
		if (out_is_json(o))
			continue;
		out_text(o, "%s ", active ? "*" : " ");
		out_str(o, NULL, "%-16s  " WRAP_HANG, name);
		if (r < 0)
			out_str(o, NULL, "does not load: %s\n", err ? err : strerror(-r));
		else
			out_str(o, NULL, "%s\n", summary ? summary : "(no summary in its header)");
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	out_arr_end(o);
	if (!shown)
		out_text(o, "  none\n");
	out_text(o, "\n");
	render_active(o, j, state_dir, !out_is_json(o));
	out_obj_end(o);
	return EXIT_OK;
}

static int profile_active(struct stune_ctx *ctx, struct out *o, const char *state_opt)
{
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_(stune_journal_freep) struct stune_journal *j = NULL;
	if (active_journal(ctx, state_opt, &state_dir, &j) < 0)
		return EXIT_ERROR;
	out_obj_begin(o, NULL);
	out_int(o, "schema_version", NULL, STUNE_PROFILE_LIST_SCHEMA_VERSION);
	render_active(o, j, state_dir, !out_is_json(o));
	out_obj_end(o);
	return EXIT_OK;
}

int cmd_profile(struct global_opts *g, int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			help_profile(stdout);
			return EXIT_OK;
		}
		usage_error("profile", "profile: which one? list or active");
		return EXIT_USAGE;
	}
	size_t mode = 0;
	while (mode < N_MODES && strcmp(argv[1], profile_modes[mode].name + strlen("profile ")))
		mode++;
	if (mode == N_MODES) {
		usage_error("profile", "profile: unknown subcommand '%s' (list, active)", argv[1]);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	const char *dir = SCSITUNE_PROFILE_DIR, *state_opt = NULL;
	_cleanup_free_ struct option *longopts = mode_longopts(&profile_table);
	uint64_t given = 0;
	int c, ec;
	if (!longopts) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	while ((c = cli_getopt(argc, argv, GLOBAL_SHORTOPTS, longopts, "profile")) != -1) {
		mode_given(&profile_table, c, &given);
		switch (c) {
		case 'h':
			help_profile(stdout);
			return EXIT_OK;
		case OPT_PROFILE_DIR:
		case OPT_STATE_DIR:
			if (!*optarg) {
				usage_error("profile", "profile: --%s: empty directory name",
					    c == OPT_PROFILE_DIR ? "profile-dir" : "state-dir");
				return EXIT_USAGE;
			}
			*(c == OPT_PROFILE_DIR ? &dir : &state_opt) = optarg;
			continue;
		}
		if ((ec = command_opt(g, "profile", c, optarg)))
			return ec;
	}
	if ((ec = mode_check(&profile_table, mode, given, argc - optind)) != CLI_GO_ON)
		return ec;

	_cleanup_(stune_ctx_freep) struct stune_ctx *ctx = cli_ctx_open(g);
	if (!ctx)
		return EXIT_ERROR;
	_cleanup_(out_freep) struct out *o = out_new(g->format, stdout);
	if (!o) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	out_set_wrap(o, WRAP_DEFAULT_COLS);
	ec = mode == M_LIST ? profile_list(ctx, o, dir, state_opt) : profile_active(ctx, o, state_opt);
	if (ec != EXIT_OK)
		return ec;
	int r = out_finish(o);
	if (r < 0) {
		error_msg("writing output: %s", strerror(-r));
		return EXIT_ERROR;
	}
	return EXIT_OK;
}
