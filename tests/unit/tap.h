/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit tier's cases and checks.
 *
 *   CASE(name, "what the checks in it prove")
 *   {
 *           CHECK(...);
 *   }
 *   ...
 *   int main(int argc, char **argv) { return tap_main(argc, argv); }
 *
 * Each CASE is its own CTest test, unit/FILE/name (tests/unit/CMakeLists.txt
 * finds the names in the source; `unit/FILE/listed` checks the binary has
 * exactly those). The binary runs every case without arguments, one with
 * `--case NAME`, prints the names with `--list`; other arguments are left for
 * the cases in tap_args[] (a data directory, say). A failed check names the
 * case's claim, the file and the line; a case that checks nothing fails (a
 * test that cannot fail proves nothing); an unknown --case is exit 64.
 *
 * Cases run in the order they appear in the file, each on its own: what one
 * needs it makes (tap_tmpdir() is a fresh directory per case, removed
 * afterwards unless a check failed). tap_arg(i): the i-th other argument.
 */
#pragma once

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_failures;
static int tap_checks;
static const char *tap_test = "";

struct tap_case {
	const char *name, *claim;
	void (*fn)(void);
	int line;
};
#define TAP_MAX_CASES 128
static struct tap_case tap_cases[TAP_MAX_CASES] __attribute__((unused));
static size_t tap_n_cases;
static char **tap_args; /* the arguments that are not --case/--list, NULL-terminated */
static int tap_n_args;

static inline const char *tap_arg(int i)
{
	if (i >= tap_n_args) {
		fprintf(stderr, "tap: [%s] needs argument %d (see tests/unit/CMakeLists.txt)\n", tap_test, i + 1);
		exit(64);
	}
	return tap_args[i];
}

static inline void tap_register(const char *name, const char *claim, void (*fn)(void), int line)
{
	if (tap_n_cases == TAP_MAX_CASES) {
		fprintf(stderr, "tap: more than %d cases in one file\n", TAP_MAX_CASES);
		exit(70);
	}
	tap_cases[tap_n_cases++] = (struct tap_case){name, claim, fn, line};
}

#define CASE(name, claim)                                                  \
	static void tap_case_##name(void);                                 \
	__attribute__((constructor)) static void tap_register_##name(void) \
	{                                                                  \
		tap_register(#name, claim, tap_case_##name, __LINE__);     \
	}                                                                  \
	static void tap_case_##name(void)

#define CHECK(cond)                                                                                                  \
	do {                                                                                                         \
		tap_checks++;                                                                                        \
		if (!(cond)) {                                                                                       \
			tap_failures++;                                                                              \
			fprintf(stderr, "%s:%d: %s%s%scheck failed: %s\n", __FILE__, __LINE__, *tap_test ? "[" : "", \
				tap_test, *tap_test ? "] " : "", #cond);                                             \
		}                                                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                                                          \
	do {                                                                                                     \
		const char *_a = (a), *_b = (b);                                                                 \
		tap_checks++;                                                                                    \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                                                         \
			tap_failures++;                                                                          \
			fprintf(stderr, "%s:%d: %s%s%s'%s' != '%s'\n", __FILE__, __LINE__, *tap_test ? "[" : "", \
				tap_test, *tap_test ? "] " : "", _a ? _a : "(null)", _b ? _b : "(null)");        \
		}                                                                                                \
	} while (0)

/* A check the case makes by hand: counted, and when !ok a failure with the message. */
#define CHECK_MSG(ok, ...)                                                             \
	do {                                                                           \
		tap_checks++;                                                          \
		if (!(ok)) {                                                           \
			tap_failures++;                                                \
			fprintf(stderr, "%s:%d: [%s] ", __FILE__, __LINE__, tap_test); \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

static char tap_dir[64] __attribute__((unused));

/* A fresh directory for the running case (made on the first call), removed
 * after it unless a check failed (then its path is printed, to look at). */
static inline const char *tap_tmpdir(void)
{
	if (!tap_dir[0]) {
		snprintf(tap_dir, sizeof(tap_dir), "/tmp/stune-unit-XXXXXX");
		if (!mkdtemp(tap_dir)) {
			perror("tap: mkdtemp");
			exit(70);
		}
	}
	return tap_dir;
}

static inline int tap_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static inline int tap_case_cmp(const void *a, const void *b)
{
	return ((const struct tap_case *)a)->line - ((const struct tap_case *)b)->line;
}

static inline int tap_run(const struct tap_case *c)
{
	int failures = tap_failures, checks = tap_checks;
	tap_test = c->claim;
	c->fn();
	if (tap_checks == checks) {
		fprintf(stderr, "[%s] %s: the case checked nothing\n", c->claim, c->name);
		tap_failures++;
	}
	printf("%s %s: %s (%d checks)\n", tap_failures == failures ? "ok  " : "FAIL", c->name, c->claim,
	       tap_checks - checks);
	if (tap_dir[0]) {
		if (tap_failures == failures)
			(void)nftw(tap_dir, tap_rm, 16, FTW_DEPTH | FTW_PHYS);
		else
			fprintf(stderr, "[%s] its directory is kept: %s\n", c->claim, tap_dir);
		tap_dir[0] = 0;
	}
	return tap_failures == failures;
}

static inline int tap_main(int argc, char **argv)
{
	const char *only = NULL;
	int list = 0;
	tap_args = calloc((size_t)argc + 1, sizeof(*tap_args));
	if (!tap_args)
		return 70;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--list") == 0)
			list = 1;
		else
			tap_args[tap_n_args++] = argv[i];
	}
	qsort(tap_cases, tap_n_cases, sizeof(*tap_cases), tap_case_cmp);
	if (list) {
		for (size_t i = 0; i < tap_n_cases; i++)
			printf("%s\n", tap_cases[i].name);
		free(tap_args);
		return 0;
	}
	int ran = 0, passed = 0;
	for (size_t i = 0; i < tap_n_cases; i++) {
		if (only && strcmp(only, tap_cases[i].name) != 0)
			continue;
		ran++;
		passed += tap_run(&tap_cases[i]);
	}
	free(tap_args);
	if (only && !ran) {
		fprintf(stderr, "%s: no case '%s' (--list)\n", argv[0], only);
		return 64;
	}
	if (!ran) {
		fprintf(stderr, "%s: no case at all\n", argv[0]);
		return 1;
	}
	printf("%d of %d cases passed, %d checks, %d failed\n", passed, ran, tap_checks, tap_failures);
	return tap_failures ? 1 : 0;
}

/* The older form (one main(), TEST("claim") statements): until every file has cases. */
static int tap_tests __attribute__((unused));
#define TEST(name) (tap_test = (name), tap_tests++, (void)0)
#define TAP_END()                                                           \
	do {                                                                \
		if (tap_tests)                                              \
			printf("%d tests, ", tap_tests);                    \
		printf("%d checks, %d failed\n", tap_checks, tap_failures); \
		return tap_failures ? 1 : 0;                                \
	} while (0)
