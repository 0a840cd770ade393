#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate `scsitune detect -o json` documents against schema/detect.schema.json.

Usage:
  check-schema.py SCHEMA JSON...            validate each JSON file ('-' reads stdin)
  check-schema.py SCHEMA --keys RENDERER.c [RENDERER.c]... [--key NAME]...
                                            the schema and the renderers name the same keys
  check-schema.py SCHEMA --mutants JSON...  the schema rejects broken copies of valid documents

The first form checks the schema itself (draft 2020-12 metaschema), then each
document; every error is printed with its JSON path. The second form catches
drift: a key emitted by cli/detect/render-topology.c that the schema lacks, or a
schema property no out_*() call emits (--key NAME: a key the renderer emits
through a variable, not a literal, e.g. a name from a lookup function). The third guards the schema against
being too lax: each document must be valid, and every copy of it with one key
removed, one unknown key added, or one value replaced by a value of another
JSON type must be invalid (the first element of each array is mutated).
Two kinds of key are not removed: an optional key, which no closed object
(additionalProperties false) of the schema requires and which one of the
documents given lacks at the same place (report's compare: a document
without --compare must be among them), and a key of a free-form map (a
schema property that is an object with no properties of its own, only an
additionalProperties schema: fio's options in the report), since any set of
them is valid.

Needs the jsonschema module (Debian: python3-jsonschema, installed by
scripts/install-deps --test). Exits 0 when all is well, 1 on any failure,
including a missing jsonschema module (a check that cannot run fails).
"""
import json
import os
import re
import sys


def import_jsonschema():
    try:
        import jsonschema  # noqa: F401
        return jsonschema
    except ImportError:
        pass
    # A pyenv or venv python3 first in PATH may lack the Debian module that
    # /usr/bin/python3 has: retry there once.
    system = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(system) and os.access(system, os.X_OK) \
            and not os.environ.get("CHECK_SCHEMA_REEXEC"):
        os.environ["CHECK_SCHEMA_REEXEC"] = "1"
        os.execv(system, [system] + sys.argv)
    print("check-schema: FAIL: the python3 jsonschema module is missing "
          "(apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(1)


def load(path):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"check-schema: {path}: {e}", file=sys.stderr)
        return None


def json_path(error):
    p = "$"
    for part in error.absolute_path:
        p += f"[{part}]" if isinstance(part, int) else f".{part}"
    return p


def schema_keys(node, out):
    """Every property name anywhere in the schema."""
    if isinstance(node, dict):
        for k, v in node.get("properties", {}).items():
            out.add(k)
            schema_keys(v, out)
        for k, v in node.items():
            if k != "properties":
                schema_keys(v, out)
    elif isinstance(node, list):
        for v in node:
            schema_keys(v, out)
    return out


# out_*(o, "key", ...) and a renderer's own helpers that take the key: render_*(o, "key", ...).
OUT_CALL = re.compile(r'\b(?:out_(?:str|str_shown|rootpath|int|num|hex|size|bool|cpus|strv|dbl|dbl_exact|obj_begin|arr_begin)'
                      r'|render_\w+)\(\s*o\s*,\s*"([a-z0-9_]+)"')


def check_keys(schema, renderers, extra=()):
    src = ""
    for r in renderers:
        try:
            with open(r, encoding="utf-8") as f:
                src += f.read()
        except OSError as e:
            print(f"check-schema: {r}: {e}", file=sys.stderr)
            return 1
    renderer = " + ".join(os.path.basename(r) for r in renderers)
    emitted = set(OUT_CALL.findall(src)) | set(extra)
    documented = schema_keys(schema, set())
    status = 0
    for k in sorted(emitted - documented):
        print(f"check-schema: {renderer} emits key '{k}', which the schema does not describe")
        status = 1
    for k in sorted(documented - emitted):
        print(f"check-schema: schema describes key '{k}', which {renderer} never emits")
        status = 1
    if status == 0:
        print(f"ok: {len(emitted)} keys, schema and {renderer} agree")
    return status


def free_maps(schema):
    """Property names whose value is a free-form map: type object, no properties, an additionalProperties schema."""
    defs = schema.get("$defs", {})

    def resolve(node):
        ref = node.get("$ref", "") if isinstance(node, dict) else ""
        return defs.get(ref[len("#/$defs/"):], node) if ref.startswith("#/$defs/") else node

    out = set()

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.get("properties", {}).items():
                r = resolve(v)
                if isinstance(r, dict) and r.get("type") == "object" and "properties" not in r \
                        and isinstance(r.get("additionalProperties"), dict):
                    out.add(k)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(schema)
    return out


def optional_keys(schema):
    """Property names that closed objects declare but none of them requires: present or not, both valid."""
    declared, required = set(), set()

    def walk(node):
        if isinstance(node, dict):
            if node.get("additionalProperties") is False:
                declared.update(node.get("properties", {}))
                required.update(node.get("required", []))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(schema)
    return declared - required


def shape_path(path):
    """A document path with every array index as '*'."""
    return tuple("*" if isinstance(p, int) else p for p in path)


def absent_keys(docs):
    """{shape path: keys that some object there has and another lacks}, over all the documents."""
    seen = {}

    def walk(node, path):
        if isinstance(node, dict):
            union, inter = seen.get(path, (set(), None))
            seen[path] = (union | set(node), set(node) if inter is None else inter & set(node))
            for k, v in node.items():
                walk(v, path + (k,))
        elif isinstance(node, list):
            for v in node:
                walk(v, path + ("*",))
    for doc in docs:
        walk(doc, ())
    return {p: union - inter for p, (union, inter) in seen.items()}


def mutants(doc, maps=frozenset(), optional=None):
    """(description, broken copy) pairs, one change each. Not removed: keys of the
    free-form maps named in maps, and optional.get(shape path) keys."""
    optional = optional or {}
    import copy

    def walk(node, path):
        if isinstance(node, dict):
            yield path, node
            for k, v in node.items():
                yield from walk(v, path + [k])
        elif isinstance(node, list) and node:
            yield from walk(node[0], path + [0])

    def other_type(v):
        if isinstance(v, bool):
            return "not-a-boolean"
        if isinstance(v, (int, float)):
            return "not-a-number"
        if isinstance(v, str):
            return 12345
        if v is None:
            return {"unexpected": "object"}
        return "not-a-container"  # list or dict

    def at(root, path):
        for p in path:
            root = root[p]
        return root

    for path, obj in list(walk(doc, [])):
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
        broken = copy.deepcopy(doc)
        at(broken, path)["unexpected_key"] = 1
        yield f"{where}: unknown key added", broken
        free = bool(path) and path[-1] in maps
        for k, v in obj.items():
            if not free and k not in optional.get(shape_path(path), ()):
                broken = copy.deepcopy(doc)
                del at(broken, path)[k]
                yield f"{where}.{k}: removed", broken
            broken = copy.deepcopy(doc)
            at(broken, path)[k] = other_type(v)
            yield f"{where}.{k}: {type(v).__name__} replaced by {type(other_type(v)).__name__}", broken
            if isinstance(v, list) and v and not isinstance(v[0], (dict, list)):
                broken = copy.deepcopy(doc)
                at(broken, path)[k][0] = other_type(v[0])
                yield f"{where}.{k}[0]: {type(v[0]).__name__} replaced by {type(other_type(v[0])).__name__}", broken


def check_mutants(validator, paths):
    status = 0
    maps = free_maps(validator.schema)
    docs = {path: load(path) for path in paths}
    not_required = optional_keys(validator.schema)
    optional = {p: keys & not_required for p, keys in absent_keys([d for d in docs.values() if d is not None]).items()}
    for path in paths:
        doc = docs[path]
        if doc is None:
            status = 1
            continue
        if not validator.is_valid(doc):
            print(f"check-schema: {path}: not valid to begin with")
            status = 1
            continue
        n = accepted = 0
        for what, broken in mutants(doc, maps, optional):
            n += 1
            if validator.is_valid(broken):
                accepted += 1
                print(f"check-schema: {path}: schema accepts a broken document: {what}")
        if accepted:
            status = 1
        else:
            print(f"ok: {path}: all {n} broken copies rejected")
    return status


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) < 3 else sys.stdout)
        return 0 if len(argv) >= 2 and argv[1] in ("-h", "--help") else 64
    schema = load(argv[1])
    if schema is None:
        return 1
    if argv[2] == "--keys":
        rest = argv[3:]
        files = rest[: rest.index("--key")] if "--key" in rest else rest
        extra = rest[len(files):]
        if not files or len(extra) % 2 or any(a != "--key" for a in extra[0::2]):
            print("check-schema: --keys takes renderer source files, then any --key NAME", file=sys.stderr)
            return 64
        return check_keys(schema, files, extra[1::2])

    jsonschema = import_jsonschema()
    cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"check-schema: {argv[1]}: not a valid draft 2020-12 schema: {e.message}", file=sys.stderr)
        return 1
    validator = cls(schema)
    if argv[2] == "--mutants":
        return check_mutants(validator, argv[3:])
    status = 0
    for path in argv[2:]:
        doc = load(path)
        if doc is None:
            status = 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        for e in errors:
            print(f"check-schema: {path}: {json_path(e)}: {e.message}")
        if errors:
            status = 1
        else:
            print(f"ok: {path} matches {os.path.basename(argv[1])}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
