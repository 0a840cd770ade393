/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UTF-8 validity of text that came from outside (a fio job file's names). */
#pragma once

#include <stddef.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s, of the avail bytes
 * there; 0 when it is not one (a stray or truncated byte, an overlong form,
 * a surrogate, beyond U+10FFFF). */
size_t stune_utf8_seq(const unsigned char *s, size_t avail);
/* The len bytes at s as a NUL-terminated copy in which every byte that is not
 * part of a well-formed sequence is U+FFFD; *replaced (may be NULL) counts
 * them. A NUL byte ends the copy (as strndup). NULL: out of memory. */
char *stune_utf8_dup_valid(const char *s, size_t len, size_t *replaced);
