/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-writer PLAN.json ROOT: the floor of `scsitune apply` in bench-apply.sh.
 * The same kernel-attribute writes as apply, from the plan of
 * `scsitune apply --dry-run -o json` (rows in state "change" whose path is
 * under /sys or /proc), and nothing else: per setting open(O_WRONLY|O_TRUNC),
 * one write of "value\n", close. No reads, no journal, no checks, no
 * resolution inside the root (the paths are joined to ROOT as they are).
 * Prints the number of writes and the time of the write phase alone (the
 * process's wall time, plan parsing included, is what the bench compares).
 * Exit 1 when a write fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct write {
	char *path;
	char *value; /* with its newline */
	size_t len;
};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench-writer PLAN.json ROOT\n");
		return 64;
	}
	json_object *doc = json_object_from_file(argv[1]), *changes;
	if (!doc || !json_object_object_get_ex(doc, "changes", &changes) ||
	    !json_object_is_type(changes, json_type_array)) {
		fprintf(stderr, "bench-writer: %s: not a plan (apply --dry-run -o json)\n", argv[1]);
		return 1;
	}
	size_t n = json_object_array_length(changes), k = 0;
	struct write *w = calloc(n ? n : 1, sizeof(*w));
	if (!w)
		return 1;
	for (size_t i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(changes, i), *state, *path, *desired;
		if (!json_object_object_get_ex(c, "state", &state) || strcmp(json_object_get_string(state), "change") ||
		    !json_object_object_get_ex(c, "path", &path) ||
		    !json_object_object_get_ex(c, "desired", &desired) ||
		    !json_object_is_type(desired, json_type_string))
			continue;
		const char *p = json_object_get_string(path);
		if (strncmp(p, "/sys/", 5) && strncmp(p, "/proc/", 6))
			continue;
		if (asprintf(&w[k].path, "%s%s", argv[2], p) < 0 ||
		    asprintf(&w[k].value, "%s\n", json_object_get_string(desired)) < 0)
			return 1;
		w[k].len = strlen(w[k].value);
		k++;
	}
	json_object_put(doc);

	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (size_t i = 0; i < k; i++) {
		int fd = open(w[i].path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0 || write(fd, w[i].value, w[i].len) != (ssize_t)w[i].len) {
			fprintf(stderr, "bench-writer: %s: %s\n", w[i].path, strerror(errno));
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%zu writes, write phase %.1f ms\n", k,
	       (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	for (size_t i = 0; i < k; i++) {
		free(w[i].path);
		free(w[i].value);
	}
	free(w);
	return 0;
}
