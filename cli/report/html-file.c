/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report --html FILE: checked before the work, written whole (a temporary
 * file in the same directory, renamed) after it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/statefile.h"
#include "cli.h"
#include "html-file.h"

/* --html FILE split into its directory and name. False after printing the error. */
static bool html_split(const char *path, char **dir, char **name)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		error_msg("--html %s: %s", path, strerror(EISDIR));
		return false;
	}
	*dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	*name = strdup(base);
	if (!*dir || !*name) {
		error_msg("out of memory");
		return false;
	}
	return true;
}

/* Before anything runs or is saved: the HTML file's directory is there and writable, FILE is no directory. */
bool report_html_check(const char *path)
{
	_cleanup_free_ char *dir = NULL, *name = NULL;
	struct stat st;
	if (!html_split(path, &dir, &name))
		return false;
	if (stat(dir, &st) < 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) || access(dir, W_OK) < 0) {
		int e = errno;
		error_msg("--html %s: %s: %s", path, dir, strerror(e));
		if (e == ENOENT) {
			_cleanup_free_ char *q = cli_shell_quote(dir);
			hint_msg("to make the directory: mkdir -p %s", q ? q : dir);
		}
		return false;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		error_msg("--html %s: %s", path, strerror(EISDIR));
		return false;
	}
	return true;
}

/* --html FILE: rendered into a temporary file next to it, fsynced, renamed over it. */
bool report_html_write(const char *path, int (*fill)(FILE *f, void *data), void *data)
{
	_cleanup_free_ char *dir = NULL, *name = NULL;
	if (!html_split(path, &dir, &name))
		return false;
	int r = stune_write_atomic_fn(dir, name, 0644, fill, data, NULL);
	if (r < 0) {
		error_msg("--html %s: %s", path, strerror(-r));
		return false;
	}
	fprintf(stderr, "scsitune: HTML report written to %s\n", path);
	return true;
}
