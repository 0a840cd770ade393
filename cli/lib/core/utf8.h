/* SPDX-License-Identifier: GPL-2.0-or-later */
/* UTF-8 validity of text that came from outside (a fio job file's names), and
 * the escapes that make it safe on a terminal (the text renderer's). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length (1 to 4) of the well-formed UTF-8 sequence at s, of the avail bytes
 * there; 0 when it is not one (a stray or truncated byte, an overlong form,
 * a surrogate, beyond U+10FFFF). */
size_t stune_utf8_seq(const unsigned char *s, size_t avail);
/* The len bytes at s as a NUL-terminated copy in which every byte that is not
 * part of a well-formed sequence is U+FFFD; *replaced (may be NULL) counts
 * them. A NUL byte ends the copy (as strndup). NULL: out of memory. */
char *stune_utf8_dup_valid(const char *s, size_t len, size_t *replaced);
/* The code point of the well-formed sequence of n bytes at s (n from stune_utf8_seq). */
uint32_t stune_utf8_cp(const unsigned char *s, size_t n);
/* A bidirectional formatting control: U+202A..U+202E (embeddings and
 * overrides: U+202E reverses what follows), U+2066..U+2069 (isolates),
 * U+200E, U+200F (marks), U+061C (Arabic letter mark). On a terminal they
 * reorder the text around them ("Trojan Source"). */
bool stune_utf8_is_bidi_control(uint32_t cp);

/*
 * Terminal text of s, a string from outside (server bodies, file contents,
 * sysfs and udev strings, fio job names, a key's trusted comment, manifest
 * strings): control characters (C0, DEL, the C1 range U+0080..U+009F) and
 * bytes that are not UTF-8 become C-style escapes: \n \r, else \xNN per
 * byte (ESC [2J prints as \x1b[2J); a bidirectional control becomes \uXXXX
 * (U+202E prints as \u202e); a tab is one space (a tab stop means nothing
 * inside a line of a message or a table cell). A backslash is printed as is.
 * STUNE_ESC_KEEP_NL keeps newlines and tabs, and STUNE_ESC_KEEP_WRAP the
 * wrap markers 0x1d-0x1f, for whole texts whose format has them; without
 * them the result is one line. NULL only without memory. Caller frees.
 */
enum { STUNE_ESC_KEEP_NL = 1 << 0, STUNE_ESC_KEEP_WRAP = 1 << 1 };
char *stune_utf8_escape(const char *s, unsigned flags);
