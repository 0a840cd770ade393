#!/usr/bin/env python3
"""docs/architecture.md matches the tree: every source path it names
(cli/..., ROOM/NAME.c of the engine, FOLDER/NAME.c of the front end) exists,
every engine and front-end .c file is named in it, and every engine room has
its row in the rooms table. Prints each mismatch and fails.

usage: check-architecture.py SOURCE_DIR
"""
import os
import re
import sys


def main():
    src = sys.argv[1]
    doc = open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8").read()
    lib = os.path.join(src, "cli", "lib")
    rooms = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    folders = sorted(d for d in os.listdir(os.path.join(src, "cli"))
                     if os.path.isdir(os.path.join(src, "cli", d)) and d != "lib")
    bad = []
    # Paths named: cli/... in full, or ROOM/NAME.[ch] / FOLDER/NAME.[ch] for a room or folder.
    for m in re.finditer(r"(?<![\w/.-])((?:cli/)?[a-z]+/[\w.-]+\.[ch])\b", doc):
        p = m.group(1)
        line = doc.count("\n", 0, m.start()) + 1
        head = p.split("/")[0]
        if p.startswith("cli/"):
            cands = [p]
        elif head in rooms or head in folders:
            cands = [f"cli/lib/{p}", f"cli/{p}"]
        else:
            continue  # tests/..., fleet/..., not a source path of cli/
        if not any(os.path.exists(os.path.join(src, c)) for c in cands):
            bad.append(f"docs/architecture.md:{line}: {p}: no such file")
    # Every .c file is named somewhere (by room/name, folder/name or its plain name).
    for base, names in [(lib, rooms), (os.path.join(src, "cli"), folders)]:
        for d in names:
            for f in sorted(os.listdir(os.path.join(base, d))):
                if f.endswith(".c") and f"{d}/{f}" not in doc and f"`{f}`" not in doc:
                    rel = os.path.relpath(os.path.join(base, d, f), src)
                    bad.append(f"docs/architecture.md: {rel} is not named (add it where its room or folder is described)")
    for r in rooms:
        if not re.search(r"^\| `" + re.escape(r) + r"/` \|", doc, re.M):
            bad.append(f"docs/architecture.md: the rooms table has no row for cli/lib/{r}/")
    for b in bad:
        print(f"check-architecture: {b}", file=sys.stderr)
    if bad:
        return 1
    print(f"check-architecture: {len(rooms)} rooms, {len(folders)} front-end folders, every path named exists and every file is named")
    return 0


if __name__ == "__main__":
    sys.exit(main())
