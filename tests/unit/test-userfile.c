/* SPDX-License-Identifier: GPL-2.0-or-later */
/* core/userfile (files named by the user: regular files only, a size cap, no
 * blocking open) and core/utctime (UTC without the libc time zone code). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/macro.h"
#include "core/userfile.h"
#include "core/utctime.h"
#include "tap.h"

/* NAME in this case's directory (a static buffer: one at a time). */
static char *path_of(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", tap_tmpdir(), name);
	return buf;
}

static void put(const char *name, const void *data, size_t len)
{
	FILE *f = fopen(path_of(name), "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		abort();
}

static int read_cap(const char *path, size_t cap, unsigned flags, size_t *len)
{
	char *out = NULL;
	int r = stune_read_user_file(path, cap, flags, &out, len);
	free(out);
	return r;
}

CASE(read_text, "a text file is read whole, with its length")
{
	size_t len = 0;
	char *out = NULL;
	put("ok", "hello\n", 6);
	CHECK(stune_read_user_file(path_of("ok"), 16, STUNE_UF_TEXT, &out, &len) == 0);
	CHECK_STR(out, "hello\n");
	CHECK(len == 6);
	free(out);
}

CASE(cap, "the cap: exactly cap bytes are fine, one more is -EFBIG")
{
	size_t len = 0;
	put("ok", "hello\n", 6);
	CHECK(read_cap(path_of("ok"), 6, 0, &len) == 0);
	CHECK(read_cap(path_of("ok"), 5, 0, NULL) == -EFBIG);
	CHECK(read_cap(path_of("ok"), 0, 0, NULL) == -EFBIG);
}

CASE(large_and_empty, "a large file across several reads and reallocations, and an empty one")
{
	size_t len = 0;
	size_t big = 100000;
	char *data = malloc(big);
	CHECK(data);
	if (!data)
		return;
	memset(data, 'x', big);
	put("big", data, big);
	CHECK(read_cap(path_of("big"), big, STUNE_UF_TEXT, &len) == 0 && len == big);
	CHECK(read_cap(path_of("big"), big - 1, 0, NULL) == -EFBIG);
	free(data);
	put("empty", "", 0);
	CHECK(read_cap(path_of("empty"), 10, STUNE_UF_TEXT, &len) == 0 && len == 0);
}

CASE(nul_bytes, "NUL bytes: refused only for text")
{
	size_t len = 0;
	put("nul", "a\0b", 3);
	CHECK(read_cap(path_of("nul"), 10, STUNE_UF_TEXT, NULL) == -EILSEQ);
	CHECK(read_cap(path_of("nul"), 10, 0, &len) == 0 && len == 3);
}

CASE(not_regular, "not regular files: refused at once, never blocking")
{
	CHECK(mkfifo(path_of("fifo"), 0600) == 0);
	CHECK(read_cap(path_of("fifo"), 10, 0, NULL) == -STUNE_ENOTREG);
	CHECK(read_cap("/dev/zero", 10, 0, NULL) == -STUNE_ENOTREG);
	CHECK(read_cap("/dev/null", 10, 0, NULL) == -STUNE_ENOTREG);
	CHECK(read_cap(tap_tmpdir(), 10, 0, NULL) == -EISDIR);
	CHECK(read_cap(path_of("missing"), 10, 0, NULL) == -ENOENT);
}

CASE(fd_blocking, "the fd is blocking again after the check")
{
	int fd = -1;
	struct stat st;
	put("ok", "hello\n", 6);
	CHECK(stune_user_file_open(path_of("ok"), &fd, &st) == 0 && S_ISREG(st.st_mode));
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	if (fd >= 0)
		close(fd);
}

CASE(messages, "messages: not a regular file, the cap in MiB, KiB or bytes, else strerror")
{
	CHECK_STR(stune_user_file_strerror(-STUNE_ENOTREG, 0), "not a regular file");
	CHECK_STR(stune_user_file_strerror(-EFBIG, 1u << 20), "larger than 1 MiB");
	CHECK_STR(stune_user_file_strerror(-EFBIG, 64u << 10), "larger than 64 KiB");
	CHECK_STR(stune_user_file_strerror(-EFBIG, 100), "larger than 100 bytes");
	CHECK_STR(stune_user_file_strerror(-EISDIR, 0), strerror(EISDIR));
}

CASE(utc_gmtime, "UTC: equal to gmtime_r over the whole range, at the edges and at random; outside it -ERANGE")
{
	struct stune_utc u;
	int64_t edges[] = {0,		59, 86399, 86400, 951782400 /* 2000-02-29 */, 4107542400 /* 2100-03-01 */,
			   253402300799 /* 9999-12-31T23:59:59 */};
	unsigned seed = 15;
	int mismatches = 0;
	for (int i = 0; i < 200000; i++) {
		int64_t s =
		    i < (int)ELEMENTSOF(edges)
			? edges[i]
			: (int64_t)(((uint64_t)rand_r(&seed) << 31 ^ (uint64_t)rand_r(&seed)) % UINT64_C(253402300800));
		time_t t = (time_t)s;
		struct tm tm;
		if (stune_utc_from_epoch(s, &u) < 0 || !gmtime_r(&t, &tm) || u.year != tm.tm_year + 1900 ||
		    u.month != tm.tm_mon + 1 || u.day != tm.tm_mday || u.hour != tm.tm_hour || u.min != tm.tm_min ||
		    u.sec != tm.tm_sec)
			mismatches++;
	}
	CHECK(mismatches == 0);
	CHECK(stune_utc_from_epoch(-1, &u) == -ERANGE);
	CHECK(stune_utc_from_epoch(253402300800, &u) == -ERANGE);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
