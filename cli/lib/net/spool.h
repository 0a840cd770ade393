/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool that makes an upload lose nothing: every batch is written under
 * STATE_DIR/spool/ before the first attempt and deleted only after the
 * server answered 2xx (report/session.c drives it).
 */
#pragma once
#include <stddef.h>

/* The spool: STATE_DIR/spool/HASH.lp, named after the content (FNV-1a 64). */
int stune_spool_add(const char *state_dir, const char *body, size_t len, char **path);
/* Spool files, sorted by name; *n = 0 when the directory does not exist. */
int stune_spool_list(const char *state_dir, char ***paths, size_t *n);
void stune_spool_list_free(char **paths, size_t n);
int stune_spool_read(const char *path, char **body, size_t *len);
int stune_spool_remove(const char *path);
/* NULL when the batch read from path is what scsitune spooled there (its name
 * is the content's hash, whole lines); else why not. */
const char *stune_spool_check(const char *path, const char *body, size_t len);
/* Rename a batch that cannot be sent to PATH.corrupt (out of the spool's list, kept to look at). */
int stune_spool_set_aside(const char *path, char **aside);
