# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/schema (sourced by test-payload.sh).
# --- 8b. JSON schema ----------------------------------------------------------------------
# The documents: those the pack, signatures, round-trip, apply and kernel-sign cases write
# (schema-*.json, apply-payload.json), those cases run again here, in one
# tree, one after the other (--mutants takes a key for optional only where one
# of the documents given together lacks it: they are checked as one set).
. "$casedir/pack.sh"
. "$casedir/signatures.sh"
. "$casedir/round-trip.sh"
. "$casedir/apply.sh"
. "$casedir/kernel-sign.sh"
section "8. JSON schema"
docs=("$work"/schema-*.json)
check=("${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/payload.schema.json")
"${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/apply.schema.json" "$work/apply-payload.json" >"$work/schema.log" 2>&1 ||
	{ fail "apply --payload's document does not validate against schema/apply.schema.json"; tail -5 "$work/schema.log"; }
if "${check[@]}" --keys "$src/cli/payload/payload.c" "$src/cli/payload/enroll.c" "$src/cli/shared/payload-install.c" >"$work/schema.log" 2>&1 && "${check[@]}" "${docs[@]}" >>"$work/schema.log" 2>&1 &&
	"${check[@]}" --mutants "${docs[@]}" >>"$work/schema.log" 2>&1; then
	ok "JSON schema (${#docs[@]} documents)"
else
	fail "payload JSON schema:"
	tail -20 "$work/schema.log"
fi
