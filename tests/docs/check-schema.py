#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Validate `scsitune detect -o json` documents against schema/detect.schema.json.

Usage:
  check-schema.py SCHEMA JSON...            validate each JSON file ('-' reads stdin)
  check-schema.py SCHEMA --keys RENDERER.c  the schema and the renderer name the same keys

The first form checks the schema itself (draft 2020-12 metaschema), then each
document; every error is printed with its JSON path. The second form catches
drift: a key emitted by cli/render-topology.c that the schema lacks, or a
schema property no out_*() call emits.

Needs the jsonschema module (Debian: python3-jsonschema, installed by
scripts/install-deps --test). Exits 0 when all is well, 1 on any failure,
77 (CTest's skip code) when jsonschema is missing.
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
    print("check-schema: SKIP: the python3 jsonschema module is missing "
          "(apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)


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


OUT_CALL = re.compile(r'\bout_(?:str|int|num|hex|size|bool|cpus|strv|obj_begin|arr_begin)\(\s*o\s*,\s*"([a-z0-9_]+)"')


def check_keys(schema, renderer):
    try:
        with open(renderer, encoding="utf-8") as f:
            src = f.read()
    except OSError as e:
        print(f"check-schema: {renderer}: {e}", file=sys.stderr)
        return 1
    emitted = set(OUT_CALL.findall(src))
    documented = schema_keys(schema, set())
    status = 0
    for k in sorted(emitted - documented):
        print(f"check-schema: {renderer} emits key '{k}', which the schema does not describe")
        status = 1
    for k in sorted(documented - emitted):
        print(f"check-schema: schema describes key '{k}', which {renderer} never emits")
        status = 1
    if status == 0:
        print(f"ok: {len(emitted)} keys, schema and {os.path.basename(renderer)} agree")
    return status


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) < 3 else sys.stdout)
        return 0 if len(argv) >= 2 and argv[1] in ("-h", "--help") else 64
    schema = load(argv[1])
    if schema is None:
        return 1
    if argv[2] == "--keys":
        if len(argv) != 4:
            print("check-schema: --keys takes one renderer source file", file=sys.stderr)
            return 64
        return check_keys(schema, argv[3])

    jsonschema = import_jsonschema()
    cls = jsonschema.Draft202012Validator
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        print(f"check-schema: {argv[1]}: not a valid draft 2020-12 schema: {e.message}", file=sys.stderr)
        return 1
    validator = cls(schema)
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
