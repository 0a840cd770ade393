#!/usr/bin/env python3
"""The engine's rooms include only downward: core <- detect <- tune <- report
(payload sits between tune and report once it lands). Fails, naming the file
and line, when a room includes a higher one, when an engine file includes a
header by a path that does not say its room, when a header of one room is
private to it (gather.h, devices.h, internal.h) and another room includes it, or when the command
layer (cli/*.c) reaches into a room's private header.

usage: check-rooms.py SOURCE_DIR
"""
import os
import re
import sys

RANK = {"core": 0, "detect": 1, "tune": 2, "payload": 3, "report": 4}
# Headers only their own room may include.
PRIVATE = {"detect/gather.h", "detect/devices.h", "tune/internal.h", "report/internal.h"}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    src = sys.argv[1]
    lib = os.path.join(src, "cli", "lib")
    bad = []
    seen = 0
    rooms = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    for room in rooms:
        if room not in RANK:
            bad.append(f"cli/lib/{room}/: a room not in the order {sorted(RANK, key=RANK.get)}")
            continue
    loose = [f for f in os.listdir(lib) if f.endswith((".c", ".h"))]
    for f in loose:
        bad.append(f"cli/lib/{f}: an engine file outside every room")
    for room in rooms:
        if room not in RANK:
            continue
        d = os.path.join(lib, room)
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            rel = f"cli/lib/{room}/{f}"
            text = open(os.path.join(d, f), encoding="utf-8").read()
            for m in INC.finditer(text):
                seen += 1
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                if "/" not in inc:
                    bad.append(f"{rel}:{line}: #include \"{inc}\" does not say its room")
                    continue
                target = inc.split("/", 1)[0]
                if target not in RANK:
                    bad.append(f"{rel}:{line}: #include \"{inc}\": no room '{target}'")
                elif RANK[target] > RANK[room]:
                    bad.append(f"{rel}:{line}: {room} includes {inc}, a higher room ({target})")
                elif inc in PRIVATE and target != room:
                    bad.append(f"{rel}:{line}: {inc} is private to {target}/")
                elif not os.path.exists(os.path.join(lib, inc)):
                    bad.append(f"{rel}:{line}: {inc} does not exist")
    for f in sorted(os.listdir(os.path.join(src, "cli"))):
        if not f.endswith((".c", ".h")):
            continue
        text = open(os.path.join(src, "cli", f), encoding="utf-8").read()
        for m in INC.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if inc in PRIVATE:
                bad.append(f"cli/{f}:{line}: the command layer includes {inc}, private to its room")
            if inc.startswith("lib/"):
                bad.append(f"cli/{f}:{line}: #include \"{inc}\": say the room, not lib/")
    if seen == 0:
        bad.append("no #include found in cli/lib: wrong SOURCE_DIR?")
    for b in bad:
        print(f"check-rooms: {b}", file=sys.stderr)
    if bad:
        return 1
    print(f"check-rooms: {seen} includes in {len(rooms)} rooms, all downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
