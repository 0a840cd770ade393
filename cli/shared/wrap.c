/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrap.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

size_t wrap_width(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80 && s[i] != WRAP_LIST[0] && s[i] != WRAP_HANG[0] &&
		     s[i] != WRAP_SHELL[0];
	return n;
}

/* "Label:   " at the indent (a word or two, then ':' and spaces): the end of it, else 0. */
static size_t label_end(const char *s, size_t len, size_t indent)
{
	size_t p = indent, q = p;
	if (p >= len || !isalpha((unsigned char)s[p]))
		return 0;
	while (q < len && q - p < 24 && (isalnum((unsigned char)s[q]) || strchr(" /_-", s[q])))
		q++;
	if (q + 1 >= len || s[q] != ':' || s[q + 1] != ' ')
		return 0;
	for (q++; q < len && s[q] == ' ';)
		q++;
	return q;
}

static size_t lead_spaces(const char *s, size_t len)
{
	size_t n = 0;
	while (n < len && s[n] == ' ')
		n++;
	return n;
}

/* fwrite, with WRAP_NBSP as a space. */
static void put(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fputc(s[i] == WRAP_NBSP[0] ? ' ' : s[i], f);
}

static void spaces(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

/* One line (no '\n', anchor removed), its continuation indent known. */
static void wrap_line(FILE *f, const char *s, size_t len, size_t width, size_t cont, bool in_list, size_t from,
		      bool shell)
{
	size_t indent = lead_spaces(s, len);
	size_t lead = 0; /* columns printed before s on this output line */
	bool first = true;
	for (;;) {
		if (lead + wrap_width(s, len) <= width + (shell ? 2 : 0)) {
			put(f, s, len);
			fputc('\n', f);
			return;
		}
		/* The byte index up to which the line fits, and the candidate breaks before it. */
		size_t min = first ? (from > indent ? from : indent) : 0, col = lead, best_strong = 0, best_any = 0,
		       over = 0;
		size_t min_col = lead + (first ? indent : 0);
		/* A field boundary ("  ") wins over a plain space in the right half of the
		 * room, a list's boundary (", ") anywhere. */
		size_t room = width > min_col ? width - min_col : 0;
		size_t field_from = min_col + room / 2;
		bool quoted = false; /* a shell command never breaks inside '...' */
		for (size_t i = 0; i < len; i++) {
			if (((unsigned char)s[i] & 0xc0) != 0x80)
				col++;
			if (shell && s[i] == '\'')
				quoted = !quoted;
			if (s[i] != ' ' || i <= min || quoted)
				continue;
			if (col - 1 > width) { /* this space starts past the width */
				over = i;
				break;
			}
			/* A space not inside a run (so the text before it is a whole field). */
			if (s[i - 1] == ' ')
				continue;
			best_any = i;
			bool field = i + 1 < len && s[i + 1] == ' ', item = s[i - 1] == ',';
			if (((field && col - 1 >= field_from) || (item && in_list)) && !shell)
				best_strong = i;
		}
		size_t cut = best_strong ? best_strong : best_any ? best_any : over;
		if (!cut) { /* one word wider than the room: leave it whole */
			put(f, s, len);
			fputc('\n', f);
			return;
		}
		put(f, s, cut);
		fputs(shell ? " \\\n" : "\n", f);
		while (cut < len && s[cut] == ' ')
			cut++;
		s += cut;
		len -= cut;
		if (!len)
			return;
		/* A word too wide for the column goes on at a shallower indent, if one holds it. */
		size_t word = 0, next = cont;
		while (word < len && s[word] != ' ')
			word++;
		size_t ww = wrap_width(s, word);
		if (next + ww > width)
			next = indent + 4 + ww <= width ? indent + 4 : 4 + ww <= width ? 4 : 0;
		spaces(f, next);
		lead = next;
		first = false;
	}
}

void wrap_text(FILE *f, const char *text, size_t len, size_t width)
{
	char buf[4096];
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) : len;
		/* Copy without the markers, remembering the first one's column. */
		char *line = n < sizeof(buf) ? buf : NULL;
		size_t anchor = 0, anchor_at = 0, k = 0;
		bool has_anchor = false, list = false, shell = false;
		if (!line) { /* very long line: print as is, without anchors */
			for (size_t i = 0; i < n; i++)
				if (text[i] != WRAP_LIST[0] && text[i] != WRAP_HANG[0] && text[i] != WRAP_SHELL[0])
					fputc(text[i] == WRAP_NBSP[0] ? ' ' : text[i], f);
			fputc('\n', f);
		} else {
			for (size_t i = 0; i < n; i++) {
				if (text[i] == WRAP_SHELL[0]) {
					shell = true;
					continue;
				}
				if (text[i] == WRAP_LIST[0] || text[i] == WRAP_HANG[0]) {
					if (!has_anchor) {
						anchor = wrap_width(line, k);
						anchor_at = k;
						list = text[i] == WRAP_LIST[0];
					}
					has_anchor = true;
					continue;
				}
				line[k++] = text[i];
			}
			size_t indent = lead_spaces(line, k), cont;
			size_t lab = label_end(line, k, indent);
			if (has_anchor)
				cont = anchor <= width * 3 / 5 ? anchor : indent + 8;
			else if (lab)
				cont = wrap_width(line, lab) + 2;
			else
				cont = indent + 4;
			if (cont > width / 2 && !has_anchor)
				cont = indent + 4;
			/* Under a marker that holds, the first break comes after it (the list or prose starts there).
			 */
			bool holds = has_anchor && anchor <= width * 3 / 5;
			if (shell) /* a command: room for " \\", continued at the indent plus 4 */
				wrap_line(f, line, k, width - 2, indent + 4, false, 0, true);
			else
				wrap_line(f, line, k, width, cont, list && holds, holds ? anchor_at : 0, false);
		}
		if (!nl)
			return;
		text = nl + 1;
		len -= n + 1;
	}
}

void wrap_shell_word(FILE *f, const char *word)
{
	if (*word &&
	    strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-") == strlen(word)) {
		fputs(word, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = word; *p; p++)
		fputs(*p == '\'' ? "'\\''" : (char[]){*p, 0}, f);
	fputc('\'', f);
}
