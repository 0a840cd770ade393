#!/usr/bin/env python3
"""The engine's rooms include only the rooms below them (DEPS: a DAG, drawn
in docs/architecture.md), and each room's library (CMakeLists.txt,
stune_ROOM) links exactly the rooms its files include, so the link graph
follows the includes. Fails, naming the file and line, when a room includes
one it may not, when an engine file includes a header by a path that does
not say its room, when a header of one room is private to it (gather.h,
devices.h, internal.h) and another room includes it, when a library links a
room its files do not include or misses one they do, or when the command
layer reaches into a room's private header.

The front end (cli/ but cli/lib/) is main.c and folders: shared/ for what
the commands share, one folder per command (or family: tune/ is apply,
verify and revert). A front-end file includes headers of its own folder and
of shared/ by bare name, engine headers by room/name.h, nothing else: no
command includes another command's header (nor shared/ a command's), and no
"..". Functions a command folder defines are declared in its own headers or
are its cmd_X/help_X (shared/commands.h): nothing a folder defines is
declared in shared/. No import circle: A includes B's header and B A's
(through any chain).

usage: check-rooms.py SOURCE_DIR
"""
import os
import re
import sys

# What each room may include besides itself. stats is the statistics both
# report (a set's figures) and fleet (the gate) use; net is the HTTP client,
# the auth file, the spool and the line protocol; fleet is the query of the
# central service and the gate.
DEPS = {
    "core": set(),
    "stats": set(),
    "detect": {"core"},
    "tune": {"core", "detect"},
    "payload": {"core", "detect"},
    "net": {"core"},
    "report": {"core", "detect", "tune", "payload", "net", "stats"},
    "fleet": {"core", "net", "stats"},
    "prom": {"core"},
}
LINK = re.compile(r"target_link_libraries\(\s*stune_(\w+)\s+PUBLIC\s+([^)]*)\)", re.S)
# Headers only their own room may include.
PRIVATE = {"detect/gather.h", "detect/devices.h", "tune/internal.h", "report/internal.h"}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


C_DEF = re.compile(r"^(?!static\b)[A-Za-z_][^;(){}=]*?\b([A-Za-z_]\w*)\(", re.M)


def front_end(src):
    cli = os.path.join(src, "cli")
    bad = []
    folders = []
    for f in sorted(os.listdir(cli)):
        full = os.path.join(cli, f)
        if os.path.isdir(full):
            if f != "lib":
                folders.append(f)
        elif f != "main.c":
            bad.append(f"cli/{f}: the front end is main.c and folders (shared/ or a command's)")
    if "shared" not in folders:
        bad.append("cli/shared/: missing (what the commands share)")
    files = {}  # "folder/name" -> text ("main.c" for main.c)
    if os.path.exists(os.path.join(cli, "main.c")):
        files["main.c"] = open(os.path.join(cli, "main.c"), encoding="utf-8").read()
    for d in folders:
        for f in sorted(os.listdir(os.path.join(cli, d))):
            full = os.path.join(cli, d, f)
            if os.path.isdir(full):
                bad.append(f"cli/{d}/{f}/: a folder in a folder (one level: cli/FOLDER/FILE)")
            elif f.endswith((".c", ".h")):
                files[f"{d}/{f}"] = open(full, encoding="utf-8").read()
    lib = os.path.join(cli, "lib")
    edges = {}  # unit ("tune/apply") -> units its files include
    for rel, text in files.items():
        folder = rel.split("/")[0] if "/" in rel else None
        unit = rel.rsplit(".", 1)[0]
        edges.setdefault(unit, set())
        for m in INC.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = f"cli/{rel}:{line}"
            if ".." in inc.split("/"):
                bad.append(f"{where}: #include \"{inc}\": no \"..\" (own folder or shared/ by name, the engine by room)")
            elif inc.startswith("lib/"):
                bad.append(f"{where}: #include \"{inc}\": say the room, not lib/")
            elif "/" in inc:
                if inc in PRIVATE:
                    bad.append(f"{where}: the command layer includes {inc}, private to its room")
                elif inc.split("/", 1)[0] not in DEPS or not os.path.exists(os.path.join(lib, inc)):
                    bad.append(f"{where}: #include \"{inc}\": not an engine header (cli/lib/ROOM/NAME.h)")
            elif folder and folder != "shared" and f"{folder}/{inc}" in files:
                edges[unit].add(f"{folder}/{inc.rsplit('.', 1)[0]}")
            elif f"shared/{inc}" in files:
                edges[unit].add(f"shared/{inc.rsplit('.', 1)[0]}")
            else:
                owners = sorted(r.split("/")[0] for r in files if r.endswith("/" + inc))
                why = f"another command's header ({', '.join(o + '/' for o in owners)})" if owners else "no such front-end header"
                bad.append(f"{where}: #include \"{inc}\": {why}; a {'shared/' if folder == 'shared' else 'command'} file includes only its own folder's and shared/'s headers")
    # Import circles, through any chain of units.
    state, stack = {}, []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if v == u:
                continue
            if state.get(v) == 1:
                cyc = stack[stack.index(v):] + [v]
                bad.append("import circle: " + " -> ".join(cyc))
            elif not state.get(v):
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(edges):
        if not state.get(u):
            visit(u)
    # What a command folder defines is its own, or its cmd_X/help_X.
    shared_decl = "\n".join(t for r, t in files.items() if r.startswith("shared/") and r.endswith(".h"))
    commands_h = files.get("shared/commands.h", "")
    for rel, text in files.items():
        folder = rel.split("/")[0] if "/" in rel else None
        if not folder or folder == "shared" or not rel.endswith(".c"):
            continue
        own = "\n".join(t for r, t in files.items() if r.startswith(folder + "/") and r.endswith(".h"))
        for m in C_DEF.finditer(text):
            name = m.group(1)
            end = text.find("\n{", m.end())
            if end < 0 or ";" in text[m.end():end]:
                continue  # a declaration, not a definition
            line = text.count("\n", 0, m.start()) + 1
            decl = re.compile(r"\b" + re.escape(name) + r"\(")
            if decl.search(commands_h):
                continue
            if decl.search(shared_decl):
                bad.append(f"cli/{rel}:{line}: {name}() is declared in shared/ but defined in {folder}/: shared code lives in shared/")
            elif not decl.search(own):
                bad.append(f"cli/{rel}:{line}: {name}() is exported by {folder}/ but declared in none of its headers: static, or the folder's own header")
    if not files:
        bad.append("cli/: no front-end file found: wrong SOURCE_DIR?")
    return bad


def main():
    src = sys.argv[1]
    lib = os.path.join(src, "cli", "lib")
    bad = []
    seen = 0
    rooms = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    for room in rooms:
        if room not in DEPS:
            bad.append(f"cli/lib/{room}/: a room not in check-rooms.py's DEPS {sorted(DEPS)}")
    loose = [f for f in os.listdir(lib) if f.endswith((".c", ".h"))]
    for f in loose:
        bad.append(f"cli/lib/{f}: an engine file outside every room")
    included = {}  # room -> other rooms its files include
    for room in rooms:
        if room not in DEPS:
            continue
        included[room] = set()
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
                if target not in DEPS:
                    bad.append(f"{rel}:{line}: #include \"{inc}\": no room '{target}'")
                elif target != room and target not in DEPS[room]:
                    bad.append(f"{rel}:{line}: {room} includes {inc}: {room}/ may include only "
                               f"{', '.join(sorted(DEPS[room])) or 'itself'}")
                elif inc in PRIVATE and target != room:
                    bad.append(f"{rel}:{line}: {inc} is private to {target}/")
                elif not os.path.exists(os.path.join(lib, inc)):
                    bad.append(f"{rel}:{line}: {inc} does not exist")
                elif target != room:
                    included[room].add(target)
    # The libraries link what the rooms include, no more, no less.
    cm = os.path.join(src, "CMakeLists.txt")
    cmake = open(cm, encoding="utf-8").read() if os.path.exists(cm) else ""
    links = {}
    for m in LINK.finditer(re.sub(r"#[^\n]*", "", cmake)):
        links[m.group(1)] = set(re.findall(r"\bstune_(\w+)\b", m.group(2)))
    for room in sorted(included):
        if room not in links and not included[room]:
            continue  # links no room (may have no target_link_libraries at all)
        if room not in links:
            bad.append(f"CMakeLists.txt: stune_{room} links no room, but its files include "
                       f"{', '.join(sorted(included[room]))}")
            continue
        for extra in sorted(links[room] - included[room]):
            bad.append(f"CMakeLists.txt: stune_{room} links stune_{extra}, but no file of {room}/ includes {extra}/")
        for missing in sorted(included[room] - links[room]):
            bad.append(f"CMakeLists.txt: stune_{room} does not link stune_{missing}, which {room}/ includes")
    # DEPS itself is a DAG (a circle there would allow one in the includes).
    state = {}

    def visit(r, path):
        state[r] = 1
        for v in sorted(DEPS.get(r, ())):
            if state.get(v) == 1:
                bad.append("check-rooms.py DEPS has a circle: " + " -> ".join(path + [v]))
            elif not state.get(v):
                visit(v, path + [v])
        state[r] = 2

    for r in sorted(DEPS):
        if not state.get(r):
            visit(r, [r])
    bad += front_end(src)
    if seen == 0:
        bad.append("no #include found in cli/lib: wrong SOURCE_DIR?")
    for b in bad:
        print(f"check-rooms: {b}", file=sys.stderr)
    if bad:
        return 1
    print(f"check-rooms: {seen} includes in {len(rooms)} rooms, all downward, the libraries linking what they include; the front end in folders, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
