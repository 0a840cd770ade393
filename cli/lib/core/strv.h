/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NULL-terminated string vectors and formatted strings, shared by the engine. */
#pragma once

#include <stddef.h>

#include "core/macro.h"

void stune_strv_free(char **v);
DEFINE_CLEANUP_FUNC(char *, stune_strv_free)
/* Append s (taken over; NULL means a failed allocation) to *v of *n items.
 * *v is NULL, a one-slot vector, or one grown by this function: the
 * capacity doubles, so n pushes cost O(n). */
int stune_strv_push(char ***v, size_t *n, char *s);
/* asprintf that returns the string, NULL when out of memory. */
char *stune_strdupf(const char *fmt, ...) _printf_(1, 2);
/*
 * The engine's one way to say why: *err = the formatted message (an earlier
 * message freed; NULL when out of memory, then the caller says strerror(-r);
 * nothing when err is NULL); returns r: `return stune_errf(err, -EINVAL, ...)`.
 * *err must be NULL or a message on entry.
 */
int stune_errf(char **err, int r, const char *fmt, ...) _printf_(3, 4);
/* Text of something from outside (a file name, a comment) with its control
 * characters as \\xNN, a tab as one space (as stune_utf8_escape, which every
 * line to the terminal then goes through); NULL for NULL or out of memory.
 * Caller frees. */
char *stune_ctrl_escape(const char *s);
