/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text output in 80 columns: a line wider than the width is broken at a
 * field boundary and goes on under its anchor.
 *
 * Where a line breaks: between fields ("  ") in the right half of the room,
 * or after a list's ", ", else at the last space; a word longer than the room is left whole. Where it goes on (its
 * continuation indent):
 *   - at WRAP_LIST or WRAP_HANG, markers the renderer puts in the line (not
 *     printed): the column of a list's first item (a list breaks after its
 *     ", " wherever one fits), or of prose that hangs under its start;
 *   - else after a leading label ("Kernel:    ", "  IRQ locality: ") plus 2;
 *   - else the line's own indent plus 4.
 * A marker past 3/5 of the width is moved to the line's indent plus 8, so
 * that a list is not squeezed into a narrow last column; a word too wide
 * for the continuation column starts at the indent plus 4 (or 4, or 0). A
 * line marked WRAP_SHELL is a command for a shell: it breaks only at spaces,
 * each broken part ending in " \", and goes on at its indent plus 4.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#define WRAP_LIST "\x1f"
#define WRAP_HANG "\x1e"
#define WRAP_NBSP "\x1d" /* a space that is never a break ("32 not settable") */
/* At the start of a line that is a shell command: it breaks with " \" so it can be pasted whole. */
#define WRAP_SHELL	  "\x1c"
#define WRAP_DEFAULT_COLS 80

/* Write text (len bytes, lines ended by '\n') to f, each line wrapped to width columns. */
void wrap_text(FILE *f, const char *text, size_t len, size_t width);
/* Display width of s[0..len): UTF-8 code points, the markers not counted. */
size_t wrap_width(const char *s, size_t len);
/* word for a shell, to f: as is when plain, else in single quotes. */
void wrap_shell_word(FILE *f, const char *word);
