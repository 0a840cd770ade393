/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report --html FILE, for the result set and the fleet view (html-file.c). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* --html FILE: its directory there and writable, FILE no directory; else the error is printed. */
bool report_html_check(const char *path);
/* --html FILE written atomically by fill(f, data); the error printed, or the file named on stderr. */
bool report_html_write(const char *path, int (*fill)(FILE *f, void *data), void *data);
