#!/usr/bin/env python3
"""No function in cli/ (front end and engine) is over MAX lines, counted from
the line that names it to its closing brace (kernel style: the opening and
the closing brace of a function body at column 0). Prints each function
over the limit with its file, line and length, longest first, and fails.

usage: check-functions.py SOURCE_DIR [MAX]   (MAX: 100)
"""
import os
import re
import sys

NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def functions(text):
    """(name, first line, length) of each function definition in text."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            # the signature: back to the line after a blank line, a ';', a '}' or a
            # preprocessor line, the first line holding "name("
            j = i - 1
            while j >= 0 and lines[j].strip() and not lines[j].startswith(("#", "}")) \
                    and not lines[j].rstrip().endswith((";", "*/")):
                j -= 1
            start = j + 1
            name = None
            for k in range(start, i):
                m = NAME.search(lines[k])
                if m and not lines[k].lstrip().startswith(("/*", "*")):
                    name = m.group(1)
                    start = k
                    break
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            if name:
                out.append((name, start + 1, end - start + 1))
            i = end + 1
            continue
        i += 1
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 64
    src = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) == 3 else 100
    found, over = 0, []
    for d, _, files in os.walk(os.path.join(src, "cli")):
        for f in sorted(files):
            if not f.endswith(".c"):
                continue
            p = os.path.join(d, f)
            rel = os.path.relpath(p, src)
            for name, line, n in functions(open(p, encoding="utf-8").read()):
                found += 1
                if n > limit:
                    over.append((n, rel, line, name))
    if found == 0:
        print("check-functions: no function found under cli/: wrong SOURCE_DIR?", file=sys.stderr)
        return 1
    for n, rel, line, name in sorted(over, reverse=True):
        print(f"check-functions: {rel}:{line}: {name}() is {n} lines (at most {limit}: split it along the steps it names)",
              file=sys.stderr)
    if over:
        return 1
    print(f"check-functions: {found} functions under cli/, none over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
