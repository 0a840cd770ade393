#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The shipped profiles tune the mpi3mr HBAs only: on dual-socket-mpi3mr the
# boot disk sda (AHCI) and the AHCI and xHCI IRQs get no row, and the plan
# says per HBA whether it is in scope and why (text and JSON). A profile that
# includes numa and widens [hba] takes the other HBAs too.
# Usage: test-scope.sh SCSITUNE FIXTURES PROFILE_DIR
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-scope.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/root"
status=0
fail() { echo "FAIL: $*"; status=1; }

for profile in numa kernel-default; do
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --dry-run -o json \
		>"$work/plan.json" || fail "$profile: dry run exited $?"
	python3 - "$work/plan.json" "$profile" <<'PY' || fail "$profile: scope"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["changes"]
# sda is the AHCI boot disk, irq 129 the AHCI vector, 128 the xHCI one.
bad = [r for r in rows if r["device"] == "sda" or r["object"] in ("irq:129", "irq:128")
       or (r["device"] or "").endswith(("0000:00:17.0", "0000:00:14.0"))]
assert not bad, ("rows outside the mpi3mr HBAs", bad)
scope = {h["hba"]: h for h in d["hbas"]}
assert set(scope) == {"0000:00:17.0", "0000:17:00.0", "0000:00:14.0", "0000:b1:00.0"}, scope
for a in ("0000:17:00.0", "0000:b1:00.0"):
    assert scope[a]["in_scope"] and "mpi3mr" in scope[a]["why"], scope[a]
ahci = scope["0000:00:17.0"]
assert not ahci["in_scope"] and ahci["driver"] == "ahci", ahci
assert ahci["why"].startswith("driver ahci: not in match_driver = mpi3mr (%s:" % sys.argv[2]), ahci["why"]
assert any(r["device"] == "sdb" for r in rows), "the mpi3mr SSD sdb has no row"
PY
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --dry-run >"$work/plan.txt" ||
		fail "$profile: text dry run exited $?"
	grep -qE '^  out +0000:00:17\.0 +driver ahci: not in match_driver = mpi3mr' "$work/plan.txt" ||
		fail "$profile: the text plan does not say the AHCI HBA is out of scope: $(cat "$work/plan.txt")"
	grep -qE '(^| )sda( |$)' "$work/plan.txt" && fail "$profile: the text plan names sda"
done
# include = numa with a wider [hba]: the AHCI disk and IRQ are planned again.
printf 'include = numa\n[hba]\nmatch_driver = mpi3mr ahci\n' >"$work/wider"
"$bin" --sysroot "$work/root" apply --profile "$work/wider" --profile-dir "$profiles" --dry-run -o json >"$work/wide.json" ||
	fail "wider: exited $?"
python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
assert any(r["device"]=="sda" for r in d["changes"]) and any(r["object"]=="irq:129" for r in d["changes"])
assert [h["in_scope"] for h in d["hbas"]]==[True,True,False,True], d["hbas"]' "$work/wide.json" || fail "a wider [hba] does not take the AHCI HBA"
[ "$status" -eq 0 ] && echo "ok: the shipped profiles tune the mpi3mr HBAs only, and the plan says per HBA why"
exit "$status"
