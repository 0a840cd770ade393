/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One call per field emits both formats (iproute2's print_* style): in JSON
 * mode the value goes into a json-c tree under its snake_case key, in text
 * mode the text format (if any) is printed with the value in place of "%s".
 * Unknown values are JSON null and "-" in text.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/cpuset.h"
#include "core/macro.h"
#include "core/utf8.h"
#include "detect/topology.h"

enum out_format { OUT_TEXT, OUT_JSON };

struct out;

struct out *out_new(enum out_format fmt, FILE *f);
/* JSON: print the tree. Returns 0, or -errno if writing failed. */
int out_finish(struct out *o);
void out_free(struct out *o);
DEFINE_CLEANUP_FUNC(struct out, out_free)
bool out_is_json(const struct out *o);
/* Text mode: keep the text and print it wrapped to width columns (shared/wrap.h) at out_finish. */
void out_set_wrap(struct out *o, size_t width);

/* key NULL inside arrays. */
void out_obj_begin(struct out *o, const char *key);
void out_obj_end(struct out *o);
void out_arr_begin(struct out *o, const char *key);
void out_arr_end(struct out *o);

/* Text-only output; nothing in JSON. */
void out_text(struct out *o, const char *fmt, ...) _printf_(2, 3);

void out_str(struct out *o, const char *key, const char *tfmt, const char *v);
/* A root-relative path ("sys/block/sda/...") as the host inside the root sees it: the same with a leading slash. */
/* A string whose text form differs (tfmt gets shown, JSON gets v). */
void out_str_shown(struct out *o, const char *key, const char *tfmt, const char *v, const char *shown);
void out_rootpath(struct out *o, const char *key, const char *tfmt, const char *rel);
void out_int(struct out *o, const char *key, const char *tfmt, long long v);
void out_num(struct out *o, const char *key, const char *tfmt, struct stune_num v);
/* JSON number, text "0x%0*x". */
void out_hex(struct out *o, const char *key, const char *tfmt, struct stune_num v, int width);
/* JSON bytes, text human-readable (1.5 GiB). */
void out_size(struct out *o, const char *key, const char *tfmt, struct stune_num v);
/* JSON true/false/null; text yes/no/-. */
void out_bool(struct out *o, const char *key, const char *tfmt, enum stune_tristate v);
/* JSON array of CPU ids (null if invalid), text "0-3,8". */
void out_cpus(struct out *o, const char *key, const char *tfmt, const struct stune_cpuset *s);
/* JSON array of strings. Text: space separated. */
void out_strv(struct out *o, const char *key, const char *tfmt, char *const *v);
/*
 * Terminal safety: every string from outside (server bodies, file contents,
 * sysfs and udev strings, fio job names, profile values, a key's trusted
 * comment, manifest strings) reaches the user's terminal through here:
 * core/utf8.h's stune_utf8_escape (control characters and bytes that are not
 * UTF-8 as \xNN, \n, \r; bidirectional controls as \uXXXX; a tab as one
 * space). OUT_ESC_KEEP_NL keeps newlines, tabs and the markers of
 * shared/wrap.h (0x1d-0x1f, consumed by wrap_text: never printed) for whole
 * texts, whose format has them; without it the result is one line.
 * Text values (out_str and the rest) and out_text() are escaped; JSON is
 * json-c's escaping. NULL only without memory.
 */
/* OUT_ESC_KEEP_WRAP keeps the wrap layer's markers (wrap.h: 0x1d-0x1f), which
 * out_text's literal formats carry and the wrapping consumes before output. */
enum { OUT_ESC_KEEP_NL = STUNE_ESC_KEEP_NL, OUT_ESC_KEEP_WRAP = STUNE_ESC_KEEP_WRAP };
char *out_escape(const char *s, unsigned flags);
/* vfprintf, then out_escape of the result onto f. */
void out_vfprintf_escaped(FILE *f, unsigned flags, const char *fmt, va_list ap) _printf_(3, 0);

/*
 * JSON number rounded to 3 decimals (null if NaN); text "%.*f" with
 * thousands separators (6,255.0), "-" if NaN.
 */
void out_dbl(struct out *o, const char *key, const char *tfmt, double v, int decimals);
/* The text out_dbl prints, into buf. */
void out_fmt_dbl(char *buf, size_t size, double v, int decimals);
/* The number out_dbl puts in JSON (3 decimals, trailing zeros dropped), into buf;
 * "null" and false when v is not finite. The HTML report (render-report-html.c)
 * shows these digits, so that its numbers are the JSON's. */
bool out_fmt_json_dbl(char *buf, size_t size, double v);
/* Each run's KIOPS, the raw data that statistics are computed from again (a
 * saved set read back by --compare, the fleet view's runs): in JSON with 12
 * significant digits (what VictoriaMetrics keeps of a sample), not 3
 * decimals, so that no reader recomputes spread or CoV from values rounded
 * to whole IOPS (a host of a few hundred IOPS moved by tenths of a point);
 * in text as out_dbl. */
void out_dbl_exact(struct out *o, const char *key, const char *tfmt, double v, int decimals);
/* The number out_dbl_exact puts in JSON, into buf; false (and "null") when v is not finite. */
bool out_fmt_json_exact(char *buf, size_t size, double v);
