/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "rows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
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

/* What a group of rows counts: their keys say ("irq:130" IRQs, "module:mpi3mr" modules, a disk's key disks). */
static const char *group_noun(const struct row_item *it)
{
	if (!strncmp(it->key, "irq:", 4))
		return "IRQs";
	if (!strncmp(it->key, "module:", 7))
		return "modules";
	return it->device && !strchr(it->key, ':') ? "disks" : "objects";
}

/* One printed row: the items [i, j) of one device and state, or (n > 1) n such rows alike. */
struct line {
	size_t i, j;
	char *text; /* the items' texts, ", "-joined */
	bool note;  /* an item has a note: never grouped */
	size_t n;   /* rows this line stands for (0: folded into an earlier line) */
	char label[32];
};

void rows_print(struct out *o, const struct rows *r, const char *first_column, bool group)
{
	if (out_is_json(o) || !r->n)
		return;
	struct line *lines = calloc(r->n, sizeof(*lines));
	size_t nl = 0;
	if (!lines)
		return;
	for (size_t i = 0; i < r->n;) {
		size_t j = i;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		bool note = false;
		for (; j < r->n && same_row(&r->v[j], &r->v[i]); j++) {
			if (f)
				fprintf(f, "%s%s", j == i ? "" : ", ", r->v[j].text);
			note |= r->v[j].note != NULL;
		}
		if (f)
			fclose(f);
		lines[nl++] = (struct line){.i = i, .j = j, .text = text, .note = note || !text, .n = 1};
		i = j;
	}
	/* Rows alike (same state and settings, no note) fold into the first, three or more of them. */
	for (size_t a = 0; group && a < nl; a++) {
		if (lines[a].n != 1 || lines[a].note)
			continue;
		size_t alike = 1;
		for (size_t b = a + 1; b < nl; b++)
			alike += lines[b].n == 1 && !lines[b].note &&
				 !strcmp(r->v[lines[b].i].state, r->v[lines[a].i].state) &&
				 !strcmp(lines[b].text, lines[a].text);
		if (alike < 3)
			continue;
		for (size_t b = a + 1; b < nl; b++)
			if (lines[b].n == 1 && !lines[b].note &&
			    !strcmp(r->v[lines[b].i].state, r->v[lines[a].i].state) &&
			    !strcmp(lines[b].text, lines[a].text))
				lines[b].n = 0;
		lines[a].n = alike;
		snprintf(lines[a].label, sizeof(lines[a].label), "%zu %s", alike, group_noun(&r->v[lines[a].i]));
	}

	int ws = (int)strlen(first_column), wd = (int)strlen("DEVICE"), wk = (int)strlen("KEY");
	for (size_t l = 0; l < nl; l++) {
		if (!lines[l].n)
			continue;
		const struct row_item *it = &r->v[lines[l].i];
		int n;
		if ((n = (int)strlen(it->state)) > ws)
			ws = n;
		if ((n = (int)strlen(lines[l].n > 1 ? lines[l].label : it->device ? it->device : "-")) > wd)
			wd = n;
		if ((n = (int)strlen(lines[l].n > 1 ? ROWS_GROUP_KEY : it->key)) > wk)
			wk = n;
	}
	char fs[16], fd[16], fk[16];
	snprintf(fs, sizeof(fs), "%%-%ds  ", ws);
	snprintf(fd, sizeof(fd), "%%-%ds  ", wd);
	snprintf(fk, sizeof(fk), "%%-%ds  ", wk);
	out_text(o, "\n%-*s  %-*s  %-*s  SETTINGS\n", ws, first_column, wd, "DEVICE", wk, "KEY");
	for (size_t l = 0; l < nl; l++) {
		if (!lines[l].n)
			continue;
		const struct row_item *it = &r->v[lines[l].i];
		out_str(o, NULL, fs, it->state);
		out_str(o, NULL, fd, lines[l].n > 1 ? lines[l].label : it->device ? it->device : "-");
		out_str(o, NULL, fk, lines[l].n > 1 ? ROWS_GROUP_KEY : it->key);
		out_text(o, WRAP_LIST);
		if (lines[l].text)
			out_str(o, NULL, "%s", lines[l].text);
		else /* out of memory for the joined text: item by item */
			for (size_t k = lines[l].i; k < lines[l].j; k++)
				out_str(o, NULL, k == lines[l].i ? "%s" : ", %s", r->v[k].text);
		out_text(o, "\n");
		for (size_t k = lines[l].i; k < lines[l].j; k++) {
			if (!r->v[k].note)
				continue;
			if (lines[l].j - lines[l].i > 1) { /* several settings on the row: say whose note */
				_cleanup_free_ char *what = strndup(r->v[k].text, strcspn(r->v[k].text, " "));
				out_str(o, NULL, "    note (%s): " WRAP_HANG, what);
			} else
				out_text(o, "    note: " WRAP_HANG);
			out_str(o, NULL, "%s\n", r->v[k].note);
		}
	}
	for (size_t l = 0; l < nl; l++)
		free(lines[l].text);
	free(lines);
}
