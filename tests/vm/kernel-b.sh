#!/bin/bash
# kernel-b.sh -- boot the kernel `payload/build --kernel --stock-kernel` made
# with patch B and its control without B, side by side (one QEMU each, the
# vm tier's hardware), run scenario kernel-b in both and print their figures
# one above the other.
#
#   kernel-b.sh SCSITUNE_BINARY PAYLOAD_OUT OUTDIR
#
# PAYLOAD_OUT is payload/build's --out directory (manifest.json with "kernel"
# and "kernel_control", kernel/ and kernel-nob/ with the linux-image
# packages); the guests' results go to OUTDIR/b and OUTDIR/nob
# (run-vm.sh's layout: console.log, results/). Exit status: 0 both passed,
# 1 either failed (both run to the end), 64 usage.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
[ $# -eq 3 ] || { echo "usage: kernel-b.sh SCSITUNE PAYLOAD_OUT OUTDIR" >&2; exit 64; }
scsitune=$1 pout=$(readlink -f -- "$2") out=$3
manifest=$pout/manifest.json
[ -f "$manifest" ] || { echo "kernel-b.sh: FAIL: $manifest not found (payload/build --kernel --stock-kernel --out $2)" >&2; exit 1; }
deb() { # KEY
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["file"])' "$manifest" "$1" 2>/dev/null
}
b=$(deb kernel) nob=$(deb kernel_control) || true
if [ -z "$b" ] || [ -z "$nob" ]; then
	echo "kernel-b.sh: FAIL: $manifest lists no kernel and kernel_control (payload/build --kernel --stock-kernel)" >&2
	exit 1
fi
mkdir -p "$out"
pids=()
for v in b nob; do
	if [ $v = b ]; then k=$b; else k=$nob; fi
	# each run-vm.sh builds its environment in its own OUTDIR/env; the
	# shared cache (the unpacked kernels) is build-env.sh's, under its lock
	SCSITUNE_VM_KERNEL_DEB=$pout/$k SCSITUNE_VM_KERNEL_MANIFEST=$manifest \
		SCSITUNE_VM_TIMEOUT=${SCSITUNE_VM_TIMEOUT:-900} \
		"$here/run-vm.sh" "$scsitune" kernel-b "$out/$v" >"$out/$v.log" 2>&1 &
	pids+=($!)
done
rc=0
for i in 0 1; do wait "${pids[$i]}" || rc=1; done
for v in b nob; do
	echo "---- kernel $v ($out/$v.log)"
	cat "$out/$v.log"
done
echo "---- LUN 0 of a 32-tag shared host beside a light LUN 1 (share 16), and alone"
echo "---- (TCG: the IOPS are the emulator's, not hardware's)"
printf '%-22s %3s %9s %9s %9s %9s\n' release B inflight busy alone IOPS
cat "$out"/b/results/figures.txt "$out"/nob/results/figures.txt 2>/dev/null || true
# What the gate says about B from the per-LUN runs (both guests must have run).
if [ $rc -eq 0 ]; then
	echo "---- the fleet gate on B against its control (4 runs each: per-LUN IOPS, p99, fairness)"
	"$here/kernel-b-gate.sh" "$scsitune" "$out" || rc=1
fi
[ $rc -eq 0 ] && echo "kernel-b.sh: passed" || echo "kernel-b.sh: FAILED"
exit $rc
