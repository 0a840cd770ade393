/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal check macros for the unit tier: count failures, exit non-zero. */
#pragma once

#include <stdio.h>
#include <string.h>

static int tap_failures;
static int tap_checks;
static int tap_tests;
static const char *tap_test = "";

/* TEST("what the checks below prove"): a failure names it (and the file and
 * line); the tests are counted at the end. A statement, not a block: the
 * checks up to the next TEST belong to it. */
#define TEST(name) (tap_test = (name), tap_tests++, (void)0)

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

#define TAP_END()                                                           \
	do {                                                                \
		if (tap_tests)                                              \
			printf("%d tests, ", tap_tests);                    \
		printf("%d checks, %d failed\n", tap_checks, tap_failures); \
		return tap_failures ? 1 : 0;                                \
	} while (0)
