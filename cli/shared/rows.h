/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The text rows of apply --dry-run, apply, verify and revert: one row per
 * device and state, its settings a list that wraps under its column,
 *
 *     STATE    DEVICE  KEY                     SETTINGS
 *     applied  sdb     wwn-0x5002538f42a1b2c3  scheduler mq-deadline -> none,
 *                                              rq_affinity 1 -> 2
 *
 * and a row's notes on their own lines below it. Consecutive items with the
 * same state and key make one row. Grouped (without -v), three or more rows
 * with the same state and settings and no note make one, where the first
 * was, its device "48 disks" and its key "(-v lists them)":
 *
 *     change   48 disks  (-v lists them)       scheduler mq-deadline -> none
 *
 * Text only: nothing in JSON.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "out.h"

struct row_item {
	const char *state; /* first column (static or owned by the caller) */
	char *device;	   /* for people: "sdb", an IRQ's name; NULL "-" */
	char *key;	   /* the stable key */
	char *text;	   /* "scheduler mq-deadline -> none" */
	char *note;	   /* a line below the row, or NULL */
};

struct rows {
	struct row_item *v;
	size_t n;
};

/* Copies device, key and note; takes text (may be NULL on -ENOMEM: the row is dropped). */
int rows_add(struct rows *r, const char *state, const char *device, const char *key, char *text, const char *note);
#define ROWS_GROUP_KEY "(-v lists them)"

/* The table under a header naming the first column (STATE, RESULT); nothing when empty; group: rows alike folded. */
void rows_print(struct out *o, const struct rows *r, const char *first_column, bool group);
void rows_free(struct rows *r);

/* A setting as the text names it: its last path component ("queue/scheduler" -> "scheduler"). */
const char *rows_setting(const char *setting);
/* A block device's name from a root-relative path "sys/block/NAME/..."; NULL otherwise (caller frees). */
char *rows_disk_of_path(const char *path);
