/* SPDX-License-Identifier: GPL-2.0-or-later */
/* irqbalance's defaults file: reading IRQBALANCE_ARGS, bans, editing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "detect/irqbalance.h"
#include "tap.h"

CASE(args_read, "IRQBALANCE_ARGS read: absent or commented out, quoted, exported, bare, empty; the last line wins")
{
	char *a = NULL;
	CHECK(stune_irqbalance_args("# nothing\n#IRQBALANCE_ARGS=\n", &a) == 0 && !a);
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=\"--a --b\"\n", &a) == 0);
	CHECK_STR(a, "--a --b");
	free(a);
	/* The last active line wins; export, single quotes and a bare value are read. */
	a = NULL;
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=--x\n  export IRQBALANCE_ARGS='--y'  \n", &a) == 0);
	CHECK_STR(a, "--y");
	free(a);
	a = NULL;
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=--z", &a) == 0);
	CHECK_STR(a, "--z");
	free(a);
	a = NULL;
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=\"\"\n", &a) == 0);
	CHECK_STR(a, "");
	free(a);
}

CASE(args_not_plain, "IRQBALANCE_ARGS not a plain value (expansions, unbalanced quotes) refused; ARGSX is another")
{
	char *a = NULL;
	/* Not a plain value: expansions, unbalanced quotes. IRQBALANCE_ARGSX is another variable. */
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=\"$EXTRA\"\n", &a) == -EINVAL);
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=\"--a\n", &a) == -EINVAL);
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGS=`x`\n", &a) == -EINVAL);
	free(a);
	a = NULL;
	CHECK(stune_irqbalance_args("IRQBALANCE_ARGSX=--q\n", &a) == 0 && !a);
	free(a);
}

CASE(bans, "a ban read in each spelling (--banirq=N, --banirq N, -i N), not a prefix or a missing value")
{
	CHECK(stune_irqbalance_bans("--banirq=40 --foreground", 40));
	CHECK(stune_irqbalance_bans("--foreground --banirq 41", 41));
	CHECK(stune_irqbalance_bans("-i 42", 42));
	CHECK(!stune_irqbalance_bans("--banirq=400", 40));
	CHECK(!stune_irqbalance_bans("--banirq=4", 40));
	CHECK(!stune_irqbalance_bans("--banirq", 40));
	CHECK(!stune_irqbalance_bans(NULL, 40));
}

CASE(banned_list, "the list of bans made once: the same answers as one at a time, sorted, each once")
{
	/* The list made once: the same answers as stune_irqbalance_bans, sorted, each once. */
	const char *args = "--banirq=40 --foreground -i 7 --banirq 41 --banirq=40 --banirq=x4 -i --banirq=99999999999 "
			   "--banirq=4294967295 --banirq=3";
	unsigned *v = NULL;
	size_t n = 0;
	CHECK(stune_irqbalance_banned(args, &v, &n) == 0);
	CHECK(n == 5 && v && v[0] == 3 && v[1] == 7 && v[2] == 40 && v[3] == 41 && v[4] == 4294967295u);
	for (unsigned irq = 0; irq < 100; irq++)
		CHECK(stune_irqbalance_banned_has(v, n, irq) == stune_irqbalance_bans(args, irq));
	CHECK(stune_irqbalance_banned_has(v, n, 4294967295u) == stune_irqbalance_bans(args, 4294967295u));
	free(v);
	v = NULL;
	CHECK(stune_irqbalance_banned(NULL, &v, &n) == 0 && !v && n == 0);
	CHECK(!stune_irqbalance_banned_has(NULL, 0, 3));
	CHECK(stune_irqbalance_banned("--foreground", &v, &n) == 0 && !v && n == 0);
	free(v);
}

CASE(edit_appends, "editing a file without an active line: a comment and the line appended, a newline before")
{
	char *out = NULL;
	/* Debian's file (commented out): a comment and the line appended. */
	CHECK(stune_irqbalance_edit("#IRQBALANCE_ARGS=\n", "--banirq=5", "by scsitune", &out) == 0);
	CHECK_STR(out, "#IRQBALANCE_ARGS=\n# by scsitune\nIRQBALANCE_ARGS=\"--banirq=5\"");
	free(out);
	/* No trailing newline: one is added before. */
	out = NULL;
	CHECK(stune_irqbalance_edit("A=1", "--banirq=5", "c", &out) == 0);
	CHECK_STR(out, "A=1\n# c\nIRQBALANCE_ARGS=\"--banirq=5\"");
	free(out);
}

CASE(edit_replaces, "editing an active line: replaced in place, the rest kept, read back the same")
{
	char *out = NULL;
	CHECK(stune_irqbalance_edit("A=1\nIRQBALANCE_ARGS=--x\nB=2", "--x --banirq=5", "c", &out) == 0);
	CHECK_STR(out, "A=1\n# c\nIRQBALANCE_ARGS=\"--x --banirq=5\"\nB=2");
	char *a = NULL;
	CHECK(out && stune_irqbalance_args(out, &a) == 0);
	CHECK_STR(a, "--x --banirq=5");
	free(a);
	free(out);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
