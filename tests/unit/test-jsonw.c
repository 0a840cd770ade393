/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The streaming JSON writer prints what json-c prints: generated trees
 * (nested objects and arrays, empty ones, every byte 1-255 in strings and
 * keys, numbers, booleans, nulls), each written by json-c and by walking it
 * with stune_jsonw, compared byte for byte under the four flag sets the
 * program uses or could use.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "tap.h"

static unsigned long long rnd_state = 20261130;
static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(rnd_state >> 33) % n;
}

static char *rnd_string(void)
{
	size_t n = rnd(12);
	char *s = malloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned k = rnd(4);
		s[i] = k == 0	? (char)(1 + rnd(255))
		       : k == 1 ? "\"\\/\b\f\n\r\t\x01\x1f\x7f"[rnd(11)]
				: (char)('a' + rnd(26));
	}
	s[n] = '\0';
	return s;
}

static json_object *gen(int depth)
{
	unsigned k = rnd(depth > 3 ? 6 : 8);
	switch (k) {
	case 0: {
		char *s = rnd_string();
		json_object *o = json_object_new_string(s);
		free(s);
		return o;
	}
	case 1:
		return json_object_new_int64((int64_t)rnd(2000000) - 1000000 + (rnd(2) ? INT64_C(1) << 40 : 0));
	case 2:
		return json_object_new_boolean(rnd(2));
	case 3:
		return NULL;
	case 4:
		return json_object_new_double_s(0.5, rnd(2) ? "1.25" : "-3");
	case 5:
		return json_object_new_int(0);
	case 6: {
		json_object *o = json_object_new_object();
		unsigned n = rnd(5);
		for (unsigned i = 0; i < n; i++) {
			char *s = rnd_string();
			char key[64];
			snprintf(key, sizeof(key), "%u%s", i, s); /* unique keys, as the writer's callers give them */
			free(s);
			json_object_object_add(o, key, gen(depth + 1));
		}
		return o;
	}
	default: {
		json_object *a = json_object_new_array();
		unsigned n = rnd(5);
		for (unsigned i = 0; i < n; i++)
			json_object_array_add(a, gen(depth + 1));
		return a;
	}
	}
}

static void walk(struct stune_jsonw *w, const char *key, json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null:
		stune_jsonw_null(w, key);
		break;
	case json_type_boolean:
		stune_jsonw_bool(w, key, json_object_get_boolean(o));
		break;
	case json_type_int:
		stune_jsonw_int(w, key, json_object_get_int64(o));
		break;
	case json_type_double:
		stune_jsonw_raw(w, key, json_object_to_json_string(o));
		break;
	case json_type_string:
		stune_jsonw_str(w, key, json_object_get_string(o));
		break;
	case json_type_object: {
		stune_jsonw_obj_begin(w, key);
		json_object_object_foreach(o, k, v) walk(w, k, v);
		stune_jsonw_end(w);
		break;
	}
	case json_type_array:
		stune_jsonw_arr_begin(w, key);
		for (size_t i = 0; i < json_object_array_length(o); i++)
			walk(w, NULL, json_object_array_get_idx(o, i));
		stune_jsonw_end(w);
		break;
	}
}

int main(void)
{
	static const struct {
		int jc;
		unsigned w;
	} flags[] = {
	    {JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
	     STUNE_JSONW_PRETTY | STUNE_JSONW_SPACED},					    /* cli/shared/out.c */
	    {JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE, STUNE_JSONW_PRETTY}, /* journal.json */
	    {JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, 0},		    /* journal.log */
	    {JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE, STUNE_JSONW_SPACED},
	};
	int mismatches = 0;
	for (int t = 0; t < 400; t++) {
		json_object *root = rnd(4) ? json_object_new_object() : json_object_new_array();
		for (unsigned i = 0, n = rnd(6); i < n; i++) {
			char key[16];
			snprintf(key, sizeof(key), "k%u", i);
			if (json_object_is_type(root, json_type_object))
				json_object_object_add(root, key, gen(1));
			else
				json_object_array_add(root, gen(1));
		}
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			const char *want = json_object_to_json_string_ext(root, flags[f].jc);
			char *got = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&got, &len);
			struct stune_jsonw w;
			stune_jsonw_init(&w, m, flags[f].w);
			walk(&w, NULL, root);
			CHECK(w.depth == 0);
			fclose(m);
			if (strcmp(got, want) != 0 && mismatches++ < 3)
				fprintf(stderr, "flags %zu, tree %d:\njson-c: %s\njsonw:  %s\n", f, t, want, got);
			CHECK(strcmp(got, want) == 0);
			free(got);
		}
		json_object_put(root);
	}

	TEST("Every byte 1-255 alone, as value and as key");
	for (int c = 1; c < 256; c++) {
		char s[2] = {(char)c, '\0'};
		json_object *o = json_object_new_object();
		json_object_object_add(o, s, json_object_new_string(s));
		const char *want = json_object_to_json_string_ext(o, flags[0].jc);
		char *got = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&got, &len);
		struct stune_jsonw w;
		stune_jsonw_init(&w, m, flags[0].w);
		stune_jsonw_obj_begin(&w, NULL);
		stune_jsonw_str(&w, s, s);
		stune_jsonw_end_all(&w);
		fclose(m);
		CHECK_STR(got, want);
		free(got);
		json_object_put(o);
	}
	TAP_END();
}
