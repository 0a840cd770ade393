/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/macro.h"
#include "core/strv.h"
#include "wrap.h"

int rows_add(struct rows *r, const char *state, const char *device, const char *key, char *text, const char *note)
{
	if (!text)
		return -ENOMEM;
	if (stune_grow(&r->v, r->n, sizeof(*r->v)) < 0) {
		free(text);
		return -ENOMEM;
	}
	struct row_item *it = &r->v[r->n++];
	*it = (struct row_item){.state = state, .text = text};
	it->device = device ? strdup(device) : NULL;
	it->key = strdup(key ? key : "-");
	it->note = note ? strdup(note) : NULL;
	return it->key && (!device || it->device) && (!note || it->note) ? 0 : -ENOMEM;
}

void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].device);
		free(r->v[i].key);
		free(r->v[i].text);
		free(r->v[i].note);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

const char *rows_setting(const char *setting)
{
	const char *s = strrchr(setting, '/');
	return s ? s + 1 : setting;
}

char *rows_disk_of_path(const char *path)
{
	if (!path || strncmp(path, "sys/block/", 10))
		return NULL;
	const char *b = path + 10, *e = strchr(b, '/');
	return e ? strndup(b, (size_t)(e - b)) : NULL;
}

static bool same_row(const struct row_item *a, const struct row_item *b)
{
	return !strcmp(a->state, b->state) && !strcmp(a->key, b->key) &&
	       !strcmp(a->device ? a->device : "", b->device ? b->device : "");
}

void rows_print(struct out *o, const struct rows *r, const char *first_column)
{
	if (out_is_json(o) || !r->n)
		return;
	int ws = (int)strlen(first_column), wd = (int)strlen("DEVICE"), wk = (int)strlen("KEY");
	for (size_t i = 0; i < r->n; i++) {
		const struct row_item *it = &r->v[i];
		int n;
		if ((n = (int)strlen(it->state)) > ws)
			ws = n;
		if ((n = (int)strlen(it->device ? it->device : "-")) > wd)
			wd = n;
		if ((n = (int)strlen(it->key)) > wk)
			wk = n;
	}
	char fs[16], fd[16], fk[16];
	snprintf(fs, sizeof(fs), "%%-%ds  ", ws);
	snprintf(fd, sizeof(fd), "%%-%ds  ", wd);
	snprintf(fk, sizeof(fk), "%%-%ds  ", wk);
	out_text(o, "\n%-*s  %-*s  %-*s  SETTINGS\n", ws, first_column, wd, "DEVICE", wk, "KEY");
	for (size_t i = 0; i < r->n;) {
		const struct row_item *it = &r->v[i];
		out_str(o, NULL, fs, it->state);
		out_str(o, NULL, fd, it->device ? it->device : "-");
		out_str(o, NULL, fk, it->key);
		out_text(o, WRAP_LIST);
		size_t j = i;
		for (; j < r->n && same_row(&r->v[j], it); j++)
			out_str(o, NULL, j == i ? "%s" : ", %s", r->v[j].text);
		out_text(o, "\n");
		for (size_t k = i; k < j; k++) {
			if (!r->v[k].note)
				continue;
			if (j - i > 1) { /* several settings on the row: say whose note */
				_cleanup_free_ char *what = strndup(r->v[k].text, strcspn(r->v[k].text, " "));
				out_str(o, NULL, "    note (%s): " WRAP_HANG, what);
			} else
				out_text(o, "    note: " WRAP_HANG);
			out_str(o, NULL, "%s\n", r->v[k].note);
		}
		i = j;
	}
}
