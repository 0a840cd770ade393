#!/bin/bash
# run-vm.sh -- boot Debian's kernel under QEMU/TCG with NUMA-attached HBAs,
# run one scenario inside, and check its results on this side.
#
#   run-vm.sh [--shell | --shell-after] SCSITUNE_BINARY SCENARIO OUTDIR
#
# Builds the environment (build-env.sh), then boots
#   4 vCPUs in two NUMA nodes (cpus 0-1 / 2-3, 512 MiB each),
#   pxb expander bridge on node 1 (bus 0x20) carrying virtio-scsi-pci
#     (num_queues=4) with one 64 MiB disk,
#   megasas-gen2 on the root bus (numa_node -1) with one 64 MiB disk,
#   virtio-9p-pci sharing OUTDIR/results (mount tag "results"),
# and the guest's /init runs tests/vm/scenarios/SCENARIO.guest.sh, which
# writes into OUTDIR/results. Then tests/vm/scenarios/SCENARIO.check.py
# RESULTS SCSITUNE asserts on them, if it exists.
# OUTDIR/console.log is the serial console; it is kept, and its tail printed,
# on failure. --shell gives a shell on this terminal before the scenario
# (exit it to run the scenario and power off); --shell-after, after it.
# Ctrl-A X quits QEMU.
#
# OUTDIR/build-env.log holds build-env.sh's messages; when it fails, this
# script says so with its reason (its first "error:" line).
#
# Environment: SCSITUNE_VM_CACHE (see build-env.sh), SCSITUNE_VM_TIMEOUT
# (seconds for one boot, default 300), SCSITUNE_VM_APPEND (more kernel
# command line), SCSITUNE_VM_ENV (the environment directory, default
# OUTDIR/env: each guest its own, removed once QEMU is done with it unless
# SCSITUNE_VM_KEEP_ENV=1), SCSITUNE_VM_ACCEL (QEMU's -accel, default
# tcg,thread=single: see rootfs/run.sh), SCSITUNE_VM_CPU (QEMU's -cpu,
# default qemu64, as rootfs/run.sh: vm/report and vm/apply took 44 s of CPU
# against 55 with -cpu max, twice each; mitigations=off gained nothing),
# QEMU (default qemu-system-x86_64).
# Nothing here is shared with another run-vm.sh but build-env.sh's cache
# (downloads and unpacks made under its lock): guests may run side by side.
# Exit status: 0 passed, 1 failed (also when QEMU is missing: a tier that
# cannot run fails and says why), 64 usage.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd -P)
shell=
case ${1:-} in
--shell) shell=1; shift ;;
--shell-after) shell=after; shift ;;
esac
[ $# -eq 3 ] || { echo "usage: run-vm.sh [--shell|--shell-after] SCSITUNE SCENARIO OUTDIR" >&2; exit 64; }
scsitune=$(readlink -f -- "$1")
scenario=$2
out=$3
[ -f "$here/scenarios/$scenario.guest.sh" ] || { echo "run-vm.sh: no scenario $scenario" >&2; exit 64; }
qemu=${QEMU:-qemu-system-x86_64}
command -v "$qemu" >/dev/null || { echo "run-vm.sh: FAIL: $qemu not found (apt-get install qemu-system-x86; scripts/install-deps --test does)" >&2; exit 1; }
now() { date +%s.%N; }
t0=$(now)

rm -rf "$out"
mkdir -p "$out/results"
out=$(cd "$out" && pwd -P)
# The environment: this guest's own (OUTDIR/env), so that guests booted at
# the same time never share an initramfs; build-env.sh's messages kept in
# OUTDIR/build-env.log, and its reason repeated when it fails.
rc=0
SCSITUNE_VM_ENV=${SCSITUNE_VM_ENV:-$out/env} "$here/build-env.sh" "$scsitune" >"$out/build-env.out" 2>"$out/build-env.log" || rc=$?
cat "$out/build-env.log" >&2
if [ "$rc" -ne 0 ]; then
	why=$(grep -m 1 '^build-env.sh: error:' "$out/build-env.log" | sed 's/^build-env.sh: error: //') ||
		why=$(grep -v '^[[:space:]]*$' "$out/build-env.log" | tail -1) || why="it printed nothing on stderr"
	[ "$rc" -gt 128 ] && why="killed by signal $((rc - 128)); $why"
	echo "run-vm.sh: $scenario: FAIL: build-env.sh exited with $rc: $why" >&2
	exit 1
fi
envdir=$(tail -1 "$out/build-env.out")
[ -f "$envdir/vmlinuz" ] && [ -f "$envdir/initrd.cpio" ] ||
	{ echo "run-vm.sh: $scenario: FAIL: build-env.sh exited 0 but its environment '$envdir' has no vmlinuz and initrd.cpio" >&2; exit 1; }
t1=$(now)
truncate -s 64M "$out/virtio0.img" "$out/megasas0.img"

# norandmaps: no address space randomization in the guest. QEMU 7.2's TCG
# finds translated code by its virtual address too, so with randomized
# mappings each new process had its libraries translated again (vm/detect:
# 33 s of QEMU CPU with, 25 s without; tests/vm/README.md "Timings").
append="console=ttyS0 panic=-1 quiet norandmaps no_timer_check scsitune.scenario=$scenario${shell:+ scsitune.shell=$shell} ${SCSITUNE_VM_APPEND:-}"
# shellcheck disable=SC2054 # commas are inside QEMU option values
args=(
	-accel "${SCSITUNE_VM_ACCEL:-tcg,thread=single}" -cpu "${SCSITUNE_VM_CPU:-qemu64}" -machine pc -m 1024 -smp 4,sockets=2,cores=2,threads=1
	-object memory-backend-ram,id=mem0,size=512M
	-object memory-backend-ram,id=mem1,size=512M
	-numa node,nodeid=0,cpus=0-1,memdev=mem0
	-numa node,nodeid=1,cpus=2-3,memdev=mem1
	-nodefaults -display none -no-reboot
	-kernel "$envdir/vmlinuz" -initrd "$envdir/initrd.cpio" -append "$append"
	-device pxb,id=pxb1,bus=pci.0,bus_nr=32,numa_node=1
	-device virtio-scsi-pci,id=vscsi0,bus=pxb1,addr=2,num_queues=4
	-drive if=none,id=vd0,file="$out/virtio0.img",format=raw,cache=unsafe
	-device scsi-hd,bus=vscsi0.0,drive=vd0,serial=vmvirtio0
	-device megasas-gen2,id=mega0,bus=pci.0
	-drive if=none,id=md0,file="$out/megasas0.img",format=raw,cache=unsafe
	-device scsi-hd,bus=mega0.0,drive=md0,serial=vmmegasas0
	-fsdev local,id=fs0,path="$out/results",security_model=none
	-device virtio-9p-pci,fsdev=fs0,mount_tag=results,bus=pci.0
)
printf '%q ' "$qemu" "${args[@]}" >"$out/qemu.cmd"
echo >>"$out/qemu.cmd"

rc=0
if [ -n "$shell" ]; then
	"$qemu" "${args[@]}" -serial mon:stdio || rc=$?
else
	timeout -k 10 "${SCSITUNE_VM_TIMEOUT:-300}" "$qemu" "${args[@]}" \
		-serial file:"$out/console.log" </dev/null >"$out/qemu.log" 2>&1 || rc=$?
fi
t2=$(now)
# QEMU read the kernel and initramfs when it started: the environment (about
# 200 MB) goes, unless SCSITUNE_VM_KEEP_ENV=1 (build-env.sh makes it again).
[ -n "${SCSITUNE_VM_KEEP_ENV:-}" ] || [ "$envdir" != "$out/env" ] || rm -rf "$envdir"
fail() {
	echo "run-vm.sh: $scenario: $*" >&2
	if [ -f "$out/console.log" ]; then
		echo "---- last 40 lines of $out/console.log" >&2
		tail -n 40 "$out/console.log" >&2
	fi
	[ -s "$out/results/guest.log" ] && { echo "---- $out/results/guest.log" >&2; tail -n 40 "$out/results/guest.log" >&2; }
	[ -s "$out/qemu.log" ] && { echo "---- $out/qemu.log" >&2; cat "$out/qemu.log" >&2; }
	exit 1
}
[ "$rc" -eq 0 ] || fail "qemu exited with $rc (124: timed out after ${SCSITUNE_VM_TIMEOUT:-300} s)"
[ -f "$out/results/guest.rc" ] || fail "the guest wrote no guest.rc"
grc=$(cat "$out/results/guest.rc")
[ "$grc" = 0 ] || fail "the guest scenario exited with $grc"

check=0
if [ -f "$here/scenarios/$scenario.check.py" ]; then
	python3 "$here/scenarios/$scenario.check.py" "$out/results" "$scsitune" || check=$?
fi
t3=$(now)
awk -v s="$scenario" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
	printf "run-vm.sh: %s: env %.1f s, boot+scenario %.1f s, check %.1f s, total %.1f s\n", s, b - a, c - b, d - c, d - a }' |
	tee "$out/timing.txt"
[ -f "$out/results/timing.txt" ] && sed 's/^/  guest uptime at /' "$out/results/timing.txt"
[ "$check" -eq 0 ] || fail "host-side check failed"
echo "run-vm.sh: $scenario: passed"
