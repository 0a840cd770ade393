/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A streaming JSON writer: each value goes to the FILE as it is given, no
 * tree. The text is byte for byte what json-c 0.16's
 * json_object_to_json_string_ext() prints for the same tree with the same
 * flags (PRETTY: two-space indent and one member per line; SPACED: a space
 * after ':'; '/' never escaped), so outputs that were json-c trees keep their
 * bytes (tests/unit/test-jsonw.c compares the two on generated trees).
 * Unlike a json-c object, a key given twice is written twice: callers give
 * each key once. Write errors stay in the FILE (ferror).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define STUNE_JSONW_MAX_DEPTH 32

enum {
	STUNE_JSONW_PRETTY = 1 << 0, /* json-c JSON_C_TO_STRING_PRETTY */
	STUNE_JSONW_SPACED = 1 << 1, /* json-c JSON_C_TO_STRING_SPACED */
};

struct stune_jsonw {
	FILE *f;
	unsigned flags;
	int depth;			    /* open containers */
	bool had[STUNE_JSONW_MAX_DEPTH];    /* the container at each depth has a member already */
	bool is_obj[STUNE_JSONW_MAX_DEPTH]; /* an object (members have keys), else an array */
};

void stune_jsonw_init(struct stune_jsonw *w, FILE *f, unsigned flags);
/* key: the member's name inside an object; ignored inside an array and at the top. */
void stune_jsonw_obj_begin(struct stune_jsonw *w, const char *key);
void stune_jsonw_arr_begin(struct stune_jsonw *w, const char *key);
/* Closes the innermost container (object or array). */
void stune_jsonw_end(struct stune_jsonw *w);
/* Close every open container. */
void stune_jsonw_end_all(struct stune_jsonw *w);
/* v NULL: null. */
void stune_jsonw_str(struct stune_jsonw *w, const char *key, const char *v);
void stune_jsonw_int(struct stune_jsonw *w, const char *key, int64_t v);
void stune_jsonw_bool(struct stune_jsonw *w, const char *key, bool v);
void stune_jsonw_null(struct stune_jsonw *w, const char *key);
/* A value written as given (a number already formatted: json_object_new_double_s). */
void stune_jsonw_raw(struct stune_jsonw *w, const char *key, const char *text);
/* The string escaped as json-c escapes it, without the quotes. */
void stune_jsonw_escaped(FILE *f, const char *s);
