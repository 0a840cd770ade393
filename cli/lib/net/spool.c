/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool: every batch of line protocol is written under STATE_DIR/spool/
 * before its first send and deleted only after the server answered 2xx.
 */
#include "net/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/root.h"
#include "core/statefile.h"
#include "core/strv.h"
#include "core/trust.h"
#include "core/userfile.h"

/* A batch is a few hundred bytes per run. */
#define STUNE_SPOOL_MAX_BYTES (64u << 20)

static void fsync_dir(const char *dir)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
}

static uint64_t spool_hash(const char *body, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64 */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)body[i]) * 0x100000001b3ULL;
	return h;
}

int stune_spool_add(const char *state_dir, const char *body, size_t len, char **path)
{
	_cleanup_free_ char *dir = NULL;
	uint64_t h = spool_hash(body, len);
	int r;
	/* A symbolic link in place of the spool is never followed (-ELOOP): the batch would go where it points. */
	if ((r = stune_state_subdir(state_dir, "spool", 0750, true, NULL, &dir)) < 0)
		return r;
	char name[32];
	snprintf(name, sizeof(name), "%016" PRIx64 ".lp", h);
	return stune_write_atomic(dir, name, body, len, 0640, path);
}

static bool is_spool_name(const char *n)
{
	if (strlen(n) != 19 || strcmp(n + 16, ".lp") != 0)
		return false;
	for (int i = 0; i < 16; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return false;
	return true;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void stune_spool_list_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}

int stune_spool_list(const char *state_dir, char ***paths, size_t *n)
{
	_cleanup_free_ char *dir = NULL;
	*paths = NULL;
	*n = 0;
	int fd = -1, r = stune_state_subdir(state_dir, "spool", 0750, false, &fd, &dir);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		r = negative_errno();
		close(fd);
		return r;
	}
	char **v = NULL;
	size_t cnt = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!is_spool_name(de->d_name))
			continue;
		char **nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || asprintf(&nv[cnt], "%s/%s", dir, de->d_name) < 0) {
			stune_spool_list_free(nv ? nv : v, cnt);
			return -ENOMEM;
		}
		v = nv;
		cnt++;
	}
	if (cnt > 0)
		qsort(v, cnt, sizeof(*v), str_cmp);
	*paths = v;
	*n = cnt;
	return 0;
}

int stune_spool_read(const char *path, char **body, size_t *len)
{
	/* scsitune wrote it, but a disk, a crash or a hand can leave anything there. */
	return stune_read_user_file(path, STUNE_SPOOL_MAX_BYTES, STUNE_UF_TEXT | STUNE_UF_NOFOLLOW, body, len);
}

const char *stune_spool_check(const char *path, const char *body, size_t len)
{
	char name[32];
	snprintf(name, sizeof(name), "%016" PRIx64 ".lp", spool_hash(body, len));
	if (strcmp(stune_path_basename(path), name) != 0)
		return len == 0 ? "empty"
				: "its content is not what was spooled under this name (truncated or changed)";
	if (len == 0 || body[len - 1] != '\n')
		return "not whole lines of line protocol";
	return NULL;
}

int stune_spool_set_aside(const char *path, char **aside)
{
	if (asprintf(aside, "%s.corrupt", path) < 0) {
		*aside = NULL;
		return -ENOMEM;
	}
	if (rename(path, *aside) < 0) {
		int r = negative_errno();
		free(*aside);
		*aside = NULL;
		return r;
	}
	_cleanup_free_ char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	if (slash) {
		*slash = '\0';
		fsync_dir(dir);
	}
	return 0;
}

int stune_spool_remove(const char *path)
{
	if (unlink(path) < 0)
		return errno == ENOENT ? 0 : negative_errno(); /* a concurrent flush sent it too */
	_cleanup_free_ char *dir = strdup(path);
	if (!dir)
		return 0;
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		fsync_dir(dir);
	}
	return 0;
}
