/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Replays files through a harness without libFuzzer: every regular file
 * named, and every regular file in a directory named (not recursive). Used by
 * the fuzz-regress tests of every build: the committed reproducers in
 * tests/fuzz/regress/NAME/ and the real inputs in tests/ must pass the
 * harness's checks (and, in the ASan build, its sanitizers).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		perror(path);
		return -1;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 65536)))
			abort();
		size_t k = fread(buf + len, 1, cap - len, f);
		if (k == 0)
			break;
		len += k;
	}
	fclose(f);
	LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	size_t n = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= replay(argv[i]) < 0;
			n++;
			continue;
		}
		struct dirent **ents;
		int k = scandir(argv[i], &ents, NULL, alphasort);
		for (int j = 0; j < k; j++) {
			char *p;
			if (asprintf(&p, "%s/%s", argv[i], ents[j]->d_name) < 0)
				abort();
			if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && ents[j]->d_name[0] != '.') {
				bad |= replay(p) < 0;
				n++;
			}
			free(p);
			free(ents[j]);
		}
		free(ents);
	}
	printf("%s: %zu inputs replayed\n", argv[0], n);
	if (n == 0) {
		fprintf(stderr, "%s: no input to replay\n", argv[0]);
		return 1;
	}
	return bad;
}
