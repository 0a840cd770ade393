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

/* The trees are the same in every case: each case starts the generator at the same seed. */
#define RND_SEED 20261130ULL

static unsigned rnd(unsigned long long *rs, unsigned n)
{
	*rs = *rs * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(*rs >> 33) % n;
}

static char *rnd_string(unsigned long long *rs)
{
	size_t n = rnd(rs, 12);
	char *s = malloc(n + 1);
	if (!s)
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned k = rnd(rs, 4);
		s[i] = k == 0	? (char)(1 + rnd(rs, 255))
		       : k == 1 ? "\"\\/\b\f\n\r\t\x01\x1f\x7f"[rnd(rs, 11)]
				: (char)('a' + rnd(rs, 26));
	}
	s[n] = '\0';
	return s;
}

static json_object *gen(unsigned long long *rs, int depth)
{
	unsigned k = rnd(rs, depth > 3 ? 6 : 8);
	switch (k) {
	case 0: {
		char *s = rnd_string(rs);
		json_object *o = json_object_new_string(s);
		free(s);
		return o;
	}
	case 1:
		return json_object_new_int64((int64_t)rnd(rs, 2000000) - 1000000 + (rnd(rs, 2) ? INT64_C(1) << 40 : 0));
	case 2:
		return json_object_new_boolean(rnd(rs, 2));
	case 3:
		return NULL;
	case 4:
		return json_object_new_double_s(0.5, rnd(rs, 2) ? "1.25" : "-3");
	case 5:
		return json_object_new_int(0);
	case 6: {
		json_object *o = json_object_new_object();
		unsigned n = rnd(rs, 5);
		for (unsigned i = 0; i < n; i++) {
			char *s = rnd_string(rs);
			char key[64];
			snprintf(key, sizeof(key), "%u%s", i, s); /* unique keys, as the writer's callers give them */
			free(s);
			json_object_object_add(o, key, gen(rs, depth + 1));
		}
		return o;
	}
	default: {
		json_object *a = json_object_new_array();
		unsigned n = rnd(rs, 5);
		for (unsigned i = 0; i < n; i++)
			json_object_array_add(a, gen(rs, depth + 1));
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

/* The flag sets: json-c's and the writer's spelling of each. */
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

/* 400 generated trees, each written by json-c and by walking it with the
 * writer under flag set f: the same bytes, and the writer back at depth 0. */
static void same_as_jsonc(size_t f)
{
	unsigned long long rs = RND_SEED;
	int mismatches = 0;
	for (int t = 0; t < 400; t++) {
		json_object *root = rnd(&rs, 4) ? json_object_new_object() : json_object_new_array();
		for (unsigned i = 0, n = rnd(&rs, 6); i < n; i++) {
			char key[16];
			snprintf(key, sizeof(key), "k%u", i);
			if (json_object_is_type(root, json_type_object))
				json_object_object_add(root, key, gen(&rs, 1));
			else
				json_object_array_add(root, gen(&rs, 1));
		}
		const char *want = json_object_to_json_string_ext(root, flags[f].jc);
		char *got = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&got, &len);
		if (!m) {
			CHECK(m != NULL);
			json_object_put(root);
			return;
		}
		struct stune_jsonw w;
		stune_jsonw_init(&w, m, flags[f].w);
		walk(&w, NULL, root);
		CHECK(w.depth == 0);
		fclose(m);
		if (strcmp(got, want) != 0 && mismatches++ < 3)
			fprintf(stderr, "flags %zu, tree %d:\njson-c: %s\njsonw:  %s\n", f, t, want, got);
		CHECK(strcmp(got, want) == 0);
		free(got);
		json_object_put(root);
	}
}

CASE(trees_pretty_spaced, "generated trees: the same bytes as json-c, pretty and spaced (cli/shared/out.c)")
{
	same_as_jsonc(0);
}

CASE(trees_pretty, "generated trees: the same bytes as json-c, pretty (journal.json)")
{
	same_as_jsonc(1);
}

CASE(trees_plain, "generated trees: the same bytes as json-c, plain (journal.log)")
{
	same_as_jsonc(2);
}

CASE(trees_spaced, "generated trees: the same bytes as json-c, spaced")
{
	same_as_jsonc(3);
}

CASE(every_byte, "every byte 1-255 alone, as value and as key, the same bytes as json-c")
{
	for (int c = 1; c < 256; c++) {
		char s[2] = {(char)c, '\0'};
		json_object *o = json_object_new_object();
		json_object_object_add(o, s, json_object_new_string(s));
		const char *want = json_object_to_json_string_ext(o, flags[0].jc);
		char *got = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&got, &len);
		if (!m) {
			CHECK(m != NULL);
			json_object_put(o);
			return;
		}
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
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
