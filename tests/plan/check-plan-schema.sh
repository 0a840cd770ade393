#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The plan goldens validate against schema/plan.schema.json, the schema rejects
# every broken copy of them, and it names the same keys as cli/tune/apply.c and cli/shared/plan-view.c.
# Usage: check-plan-schema.sh SRCDIR PLAN.json...
set -uo pipefail
src=$1
shift
check=("${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/plan.schema.json")
"${check[@]}" --keys "$src/cli/tune/apply.c" "$src/cli/shared/plan-view.c" && "${check[@]}" "$@" && "${check[@]}" --mutants "$@"
