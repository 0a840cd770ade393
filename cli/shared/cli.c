/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every command shares: messages, the global options, getopt with "did
 * you mean", the command line of a hint, the engine context. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/scan.h"
#include "cli.h"
#include "wrap.h"

/* Every message is one line with its control characters escaped (out_escape):
 * file contents, server bodies and device strings end up in them. */
__attribute__((format(printf, 2, 0))) static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	out_vfprintf_escaped(stderr, 0, fmt, ap);
	fputc('\n', stderr);
}

void error_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("scsitune: ", fmt, ap);
	va_end(ap);
}

void note_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("scsitune: ", fmt, ap);
	va_end(ap);
}

void hint_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("scsitune: hint: ", fmt, ap);
	va_end(ap);
}

void usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fputs("scsitune: ", stderr);
	va_start(ap, fmt);
	out_vfprintf_escaped(stderr, 0, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'scsitune %s%s--help' for more information.\n", cmd ? cmd : "", cmd ? " " : "");
}

void print_global_options(FILE *f)
{
	fputs("Global options:\n"
	      "  -o, --output FORMAT   text (default) or json; json puts only the document on\n"
	      "                        stdout\n"
	      "      --sysroot DIR     read a captured tree (DIR/sys, DIR/proc,\n"
	      "                        DIR/run/udev/data) instead of the running system\n"
	      "  -v, --verbose         text: every row, not only changes and drift; more\n"
	      "                        messages on stderr\n"
	      "  -h, --help            show help and exit\n"
	      "  -V, --version         show the version and exit\n",
	      f);
}

int global_opt(struct global_opts *g, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		if (!strcmp(arg, "json"))
			g->format = OUT_JSON;
		else if (!strcmp(arg, "text"))
			g->format = OUT_TEXT;
		else {
			usage_error(NULL, "--output: unknown format '%s' (expected text or json)", arg);
			return EXIT_USAGE;
		}
		return CLI_GO_ON;
	case 'R':
		if (!*arg) {
			usage_error(NULL, "--sysroot: empty directory name");
			return EXIT_USAGE;
		}
		g->sysroot = arg;
		return CLI_GO_ON;
	case 'v':
		g->verbose++;
		return CLI_GO_ON;
	case 'V':
		printf("scsitune %s\n", SCSITUNE_VERSION);
		exit(EXIT_OK);
	}
	return CLI_NOT_MINE;
}

/* Edit distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];
	if (la >= ELEMENTSOF(row) || lb >= ELEMENTSOF(row))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The closest of names[n] to word (a prefix of one counts as close), or NULL. */
static const char *nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = SIZE_MAX, len = strlen(word);
	for (size_t i = 0; i < n; i++) {
		size_t d = len && !strncmp(names[i], word, len) ? 1 : distance(word, names[i]);
		if (d < bd)
			bd = d, best = names[i];
	}
	size_t limit = len / 3 > 2 ? len / 3 : 2;
	return bd <= limit ? best : NULL;
}

/* " (did you mean 'X'?)" into buf when one is near, else "". */
const char *did_you_mean(char *buf, size_t size, const char *prefix, const char *word, const char *const *names,
			 size_t n)
{
	const char *m = nearest(word, names, n);
	if (m)
		snprintf(buf, size, " (did you mean '%s%s'?)", prefix, m);
	else
		buf[0] = '\0';
	return buf;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, const char *cmd)
{
	const char *names[64];
	size_t n = 0;
	for (const struct option *o = longopts; o->name && n < ELEMENTSOF(names); o++)
		names[n++] = o->name;
	char mean[128];
	int idx = -1;
	opterr = 0; /* our own messages, with our name, not argv[0]'s path */
	int c = getopt_long(argc, argv, shortopts, longopts, &idx);
	if (c == -1)
		return c;
	const char *where = cmd ? cmd : "";
	const char *colon = cmd ? ": " : "";
	if (c == '?' || c == ':') {
		const char *tok = optind > 0 && optind <= argc ? argv[optind - 1] : "";
		if (!strncmp(tok, "--", 2)) {
			size_t len = strcspn(tok + 2, "=");
			const struct option *o = NULL;
			for (const struct option *x = longopts; x->name; x++)
				if (strlen(x->name) == len && !strncmp(x->name, tok + 2, len))
					o = x;
			_cleanup_free_ char *word = strndup(tok + 2, len);
			if (o && o->has_arg == required_argument && !tok[2 + len])
				usage_error(cmd, "%s%soption '--%s' needs an argument", where, colon, o->name);
			else if (o && o->has_arg == no_argument)
				usage_error(cmd, "%s%soption '--%s' takes no argument", where, colon, o->name);
			else
				usage_error(cmd, "%s%sunknown option '--%s'%s", where, colon, word ? word : tok + 2,
					    did_you_mean(mean, sizeof(mean), "--", word ? word : "", names, n));
		} else if (optopt && strchr(shortopts, optopt) && optopt != ':' && optopt != '+')
			usage_error(cmd, "%s%soption '-%c' needs an argument", where, colon, optopt);
		else if (optopt > ' ' && optopt < 0x7f)
			usage_error(cmd, "%s%sunknown option '-%c'", where, colon, optopt);
		else
			usage_error(cmd, "%s%sunknown option '%s'", where, colon, tok);
		return '?';
	}
	/* A long option must be given in full: getopt takes a unique prefix, scsitune guesses nothing. */
	if (idx >= 0) {
		const char *tok =
		    optarg && optind >= 2 && argv[optind - 1] == optarg ? argv[optind - 2] : argv[optind - 1];
		if (!strncmp(tok, "--", 2)) {
			size_t len = strcspn(tok + 2, "=");
			if (len != strlen(longopts[idx].name)) {
				_cleanup_free_ char *word = strndup(tok + 2, len);
				usage_error(cmd, "%s%sunknown option '--%s' (did you mean '--%s'?)", where, colon,
					    word ? word : "", longopts[idx].name);
				return '?';
			}
		}
	}
	return c;
}

int command_opt(struct global_opts *g, const char *cmd, int opt, const char *arg)
{
	if (opt == '?') /* cli_getopt said what was wrong */
		return EXIT_USAGE;
	int r = global_opt(g, opt, arg);
	if (r == CLI_GO_ON)
		return 0;
	if (r == CLI_NOT_MINE)
		fprintf(stderr, "Try 'scsitune %s --help' for more information.\n", cmd);
	return EXIT_USAGE;
}

char *cli_shell_quote(const char *word)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	if (!m)
		return NULL;
	wrap_shell_word(m, word);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *cli_cmdline(const struct global_opts *g, const char *cmd, ...)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	fputs("scsitune", m);
	if (g->sysroot) {
		fputs(" --sysroot ", m);
		wrap_shell_word(m, g->sysroot);
	}
	fprintf(m, " %s", cmd);
	va_list ap;
	va_start(ap, cmd);
	for (const char *opt; (opt = va_arg(ap, const char *));) {
		const char *val = va_arg(ap, const char *);
		if (!val)
			continue;
		fprintf(m, " %s", opt);
		if (*val) {
			fputc(' ', m);
			wrap_shell_word(m, val);
		}
	}
	va_end(ap);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int command_no_args(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	usage_error(cmd, "%s: unexpected argument '%s'", cmd, argv[optind]);
	return EXIT_USAGE;
}

static void log_stderr(void *data, enum stune_log_level level, const char *path, const char *msg)
{
	const struct global_opts *g = data;
	if (level > STUNE_LOG_NOTICE && g->verbose == 0)
		return;
	const char *tag = level <= STUNE_LOG_ERR ? "error: " : level <= STUNE_LOG_WARNING ? "warning: " : "";
	if (path)
		note_msg("%s%s: %s", tag, path, msg);
	else
		note_msg("%s%s", tag, msg);
}

/* The next step after a --sysroot that is not a tree: how one is made (scsitune(8), REPORTING BUGS). */
#define SYSROOT_NEXT                                                                                          \
	"a tree is made on the host, as root, by tests/fixtures/capture-host.sh NAME DIR of the source tree " \
	"(scsitune(8))"

struct stune_ctx *cli_ctx_open(const struct global_opts *g)
{
	struct stune_ctx *ctx = NULL;
	int r = stune_ctx_new(g->sysroot, &ctx);
	if (r < 0) {
		if (g->sysroot) {
			error_msg("--sysroot %s: %s", g->sysroot, strerror(-r));
			if (r == -ENOTDIR) { /* a capture's archive, most likely */
				_cleanup_free_ char *q = cli_shell_quote(g->sysroot);
				hint_msg(
				    "a --sysroot is a directory; an archive of one is extracted first: mkdir DIR && "
				    "tar -xf %s -C DIR",
				    q ? q : g->sysroot);
			} else
				hint_msg("%s", SYSROOT_NEXT);
		} else
			error_msg("cannot initialise: %s", strerror(-r));
		return NULL;
	}
	/* A directory without sys/ is a wrong path, not a host without devices. */
	if (g->sysroot && !stune_root_exists(ctx->root, "sys")) {
		error_msg("--sysroot %s: no sys/ directory: not a captured root tree", g->sysroot);
		hint_msg("%s", SYSROOT_NEXT);
		stune_ctx_free(ctx);
		return NULL;
	}
	/* SCSITUNE_THREADS bounds the scan's worker threads (e.g. 1 on a busy host). */
	const char *env = getenv("SCSITUNE_THREADS");
	if (env) {
		char *end;
		errno = 0;
		long n = strtol(env, &end, 10);
		if (errno || end == env || *end || n < 1 || n > STUNE_MAX_SCAN_THREADS) {
			error_msg("SCSITUNE_THREADS: '%s' is not a number from 1 to %d", env, STUNE_MAX_SCAN_THREADS);
			stune_ctx_free(ctx);
			return NULL;
		}
		ctx->scan_threads = (unsigned)n;
	}
	stune_ctx_set_log(ctx, log_stderr, (void *)g);
	return ctx;
}
