/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harnesses for the parsers of outside input (tests/fuzz/README.md).
 * Each fuzz-NAME.c defines LLVMFuzzerTestOneInput; built with clang
 * -fsanitize=fuzzer (build-fuzz/) it is a fuzzer, linked with replay-main.c
 * (every build) it replays files: the committed reproducers in regress/NAME/
 * and the real inputs in tests/. A property a harness checks (a round trip,
 * a one-line error) is fuzz_check(): abort() with the reason.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A directory of this process's own (made on first use, removed at exit). */
const char *fuzz_dir(void);
/* dir/name (created with its parents), written with data; "" dir: fuzz_dir(). Aborts on failure. */
void fuzz_write(const char *dir, const char *name, const void *data, size_t len);
void fuzz_unlink(const char *dir, const char *name);
/* A NUL-terminated copy (aborts without memory). */
char *fuzz_str(const uint8_t *data, size_t size);
/* Split data at each sep into at most max parts; returns the count. */
size_t fuzz_split(const uint8_t *data, size_t size, const char *sep, const uint8_t **parts, size_t *lens, size_t max);
/* A property of the code under test: abort() with what was violated. */
#define fuzz_check(cond, ...)                                              \
	do {                                                               \
		if (!(cond))                                               \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A parser's refusal (r: -EINVAL, -EBADMSG or -ENODATA) says why (err not
 * empty). (One line on the terminal is the output layer's: out_escape.) */
void fuzz_check_message(int r, const char *err);
