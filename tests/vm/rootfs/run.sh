#!/bin/bash
# run.sh -- boot the vm tier's real Debian root file system (build-image.sh)
# under QEMU/TCG, through GRUB, systemd and udev, and run a scenario across
# reboots; then check its results on this side.
#
#   run.sh [--shell | --serve] SCSITUNE_BINARY SCENARIO OUTDIR
#
# The guest: the NUMA shape of run-vm.sh (4 vCPUs in two nodes, cpus 0-1 /
# 2-3, 512 MiB each; a pxb expander bridge on node 1, bus 0x20, carrying
# virtio-scsi-pci with num_queues=4 at guest 0000:21:02.0). On that
# virtio-scsi HBA: the root disk (scsi0-0-0-0, a copy-on-write qcow2 overlay
# of the image in OUTDIR, rotational as QEMU reports by default) and a 64 MiB
# data disk (scsi0-0-1-0, serial vmdata0, rotation_rate=1: non-rotational).
# virtio-9p-pci shares OUTDIR/share as tag "vm": in/ what this script
# passes in, out/ what the guest writes. The image's vm-stage.service runs
#   sh /vm/in/stage.sh BOOT /vm/out
# at every boot, where stage.sh is tests/vm/scenarios/SCENARIO.stage.sh; a
# stage asks for another boot by writing "reboot" to $OUT/next, and the
# guest reboots itself (systemctl reboot: systemd's whole shutdown). QEMU
# runs with -no-reboot, so the guest's reset ends it, and this script starts
# it again on the same overlay: every boot is a cold start of the same
# machine with its own console log and time limit. (A warm reset in place
# under TCG once hung the second boot's initramfs in modprobe, soft lockups,
# on this loaded machine.) When the guest powers off after its last stage,
# tests/vm/scenarios/SCENARIO.check.py OUT SCSITUNE asserts on
# OUTDIR/share/out.
#
# What boots: the image has GRUB in its MBR, whose menu entry boots the files
# /vmlinuz and /initrd.img point to (Debian's linux-base keeps those links)
# with grub.cfg's command line. By default QEMU loads those same files
# itself (-kernel/-initrd/-append): the first boot the image's copies
# (build-image.sh), every later boot what vm-stage copied out of the guest
# just before it rebooted (OUT/next-boot/, kept as OUTDIR/kernel-N/): a
# kernel package or update-initramfs in the guest decides the next boot, as
# with GRUB, while SeaBIOS and GRUB reading them through int13 (20-40 s of
# TCG per boot on this loaded machine) are skipped. SCSITUNE_VM_BOOT=grub
# boots through the image's GRUB instead.
#
# SCSITUNE_VM_FIRMWARE=secureboot: UEFI with Secure Boot instead of SeaBIOS
# (tests/vm/README.md, "Scenario `secure-boot`"). A q35 machine with SMM,
# OVMF's Secure Boot build (OVMF_CODE_4M.secboot.fd, read-only) and this
# run's own copy of OVMF_VARS_4M.ms.fd (Microsoft's keys enrolled, Secure
# Boot on) as OUTDIR/vars.fd, kept across the run's boots as NVRAM is: what
# mokutil stages there (MokNew) shim finds at the next boot. Each boot
# starts from an EFI system partition made for it by esp.sh on its own disk
# (OUTDIR/kernel-N/esp.img, scsi-id 2, first in the boot order): Debian's
# signed shim, MokManager and GRUB, and the kernel, initrd and command line
# of that boot (the image's, then what the guest handed over, as above), so
# what the guest installed is what boots; shim verifies GRUB, GRUB has shim
# verify Debian's signed kernel, and the kernel locks down. The virtio-scsi
# HBA is on the root bus (no expander: NUMA locality is not what this
# scenario tests). A stage that asks for MokManager (lib.sh
# next_boot_mokmanager) gets, before its next boot, a boot in which
# mokmanager.py drives MokManager over the serial console with the password
# in SCSITUNE_VM_MOK_PASSWORD_FILE (OUTDIR/console-N-mokmanager.log,
# OUTDIR/mokmanager-N.log: each screen seen, each key sent).
# SCSITUNE_VM_OVMF_CODE and SCSITUNE_VM_OVMF_VARS name other firmware files.
#
# in/ holds: scsitune (the binary given), profiles/ (profiles/* and
# tests/vm/profiles/*), lib.sh (tests/vm/rootfs/lib.sh: helpers for stage
# scripts), stage.sh, and files/ with whatever SCSITUNE_VM_FILES names
# (space-separated paths; for scenarios that need more, e.g. a payload
# bundle). scsitune is not in the image: the stage installs it (lib.sh
# install_scsitune), so the image does not depend on the build.
#
# OUTDIR/console-N.log is boot N's serial console (kept, the tail printed on
# failure), OUTDIR/qemu.cmd the QEMU command line (of boot 1), OUTDIR/timing.txt the
# times, OUTDIR/build-image.log build-image.sh's messages (when it fails,
# this script says so with its reason: its first "error:" line).
# OUTDIR/image/ links to the image this run boots (hard links, taken under
# build-image.sh's lock): every boot's overlay stays on the same base even
# if another test rebuilds the shared image meanwhile. Nothing else is
# shared with another run.sh (OUTDIR is the run's own; with --serve the
# forwarded port is the caller's to choose): guests may run side by side. --shell: the serial console is this terminal, logged in as root,
# and no stage runs (run it by hand: sh /vm/in/stage.sh 1 /vm/out); Ctrl-A X
# quits QEMU.
#
# --serve: the guest is also a host on a network, for a driver on this side
# (tests/fleet/test-vm-host.sh: Ansible over SSH). QEMU gets a virtio-net NIC
# on its user network (the guest is 10.0.2.15, this machine's loopback is
# 10.0.2.2 to it; the image's systemd-networkd sets that) with the guest's
# port 22 forwarded from 127.0.0.1:$SCSITUNE_VM_SSH_PORT here. The scenario's
# stage starts sshd, then waits; besides the reboots a stage asks for, the
# guest may be rebooted from outside (an Ansible reboot task): the stage is
# stopped with the rest of the system, and a unit the stage enabled
# (vm-handover.service, in the image) hands over the next boot's
# kernel, initrd and command line at shutdown, so this script starts QEMU
# again on them (the boot is listed in OUTDIR/external-reboots). A stage that
# powers off ends the run, as in the other scenarios.
#
# Environment: SCSITUNE_VM_CACHE (see build-image.sh), SCSITUNE_VM_TIMEOUT
# (seconds for one boot with its stage and shutdown, default 600),
# SCSITUNE_VM_FILES, SCSITUNE_VM_BOOT (direct, the default, or grub),
# SCSITUNE_VM_CPU (QEMU's -cpu, default qemu64: a third less TCG time than
# max here; no scenario needs more), SCSITUNE_VM_ACCEL (QEMU's -accel,
# default tcg,thread=single: one host thread runs the four vCPUs in turn;
# on a busy machine multi-threaded TCG spent 60 % more CPU on the same boot,
# tests/vm/README.md "CPU per test"),
# SCSITUNE_VM_FIRMWARE (bios, the default, or secureboot; above),
# QEMU (default qemu-system-x86_64). Each QEMU runs under /usr/bin/time
# (when there): OUTDIR/qemu-time-N.txt "WALL USER SYS", in timing.txt.
# Exit status: 0 passed, 1 failed (also when QEMU or the image cannot be had:
# a tier that cannot run fails and says why), 64 usage.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
shell= serve=
case ${1:-} in
--shell) shell=1; shift ;;
--serve) serve=1; shift ;;
esac
[ $# -eq 3 ] || { echo "usage: run.sh [--shell | --serve] SCSITUNE SCENARIO OUTDIR" >&2; exit 64; }
if [ -n "$serve" ]; then
	case ${SCSITUNE_VM_SSH_PORT:-} in
	[1-9]*) ;;
	*) echo "run.sh: --serve needs SCSITUNE_VM_SSH_PORT (the port on 127.0.0.1 forwarded to the guest's 22)" >&2; exit 64 ;;
	esac
fi
scsitune=$(readlink -f -- "$1")
scenario=$2
out=$3
stage=$repo/tests/vm/scenarios/$scenario.stage.sh
[ -f "$stage" ] || { echo "run.sh: no scenario $scenario ($stage)" >&2; exit 64; }
[ -x "$scsitune" ] || { echo "run.sh: FAIL: $1 is not an executable" >&2; exit 1; }
qemu=${QEMU:-qemu-system-x86_64}
for p in "$qemu" qemu-img; do
	command -v "$p" >/dev/null || { echo "run.sh: FAIL: $p not found (apt-get install qemu-system-x86 qemu-utils; scripts/install-deps --test does)" >&2; exit 1; }
done
firmware=${SCSITUNE_VM_FIRMWARE:-bios}
ovmf_code=${SCSITUNE_VM_OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.secboot.fd}
ovmf_vars=${SCSITUNE_VM_OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.ms.fd}
case $firmware in
bios) ;;
secureboot)
	[ "${SCSITUNE_VM_BOOT:-direct}" = direct ] ||
		{ echo "run.sh: SCSITUNE_VM_BOOT=grub boots SeaBIOS's GRUB: not with SCSITUNE_VM_FIRMWARE=secureboot" >&2; exit 64; }
	for f in "$ovmf_code" "$ovmf_vars"; do
		[ -s "$f" ] || { echo "run.sh: FAIL: $f not found (apt-get install ovmf; scripts/install-deps --test does)" >&2; exit 1; }
	done ;;
*) echo "run.sh: SCSITUNE_VM_FIRMWARE=$firmware: bios or secureboot" >&2; exit 64 ;;
esac
now() { date +%s.%N; }
t0=$(now)

rm -rf "$out"
mkdir -p "$out/share/in/profiles" "$out/share/in/files" "$out/share/out"
out=$(cd "$out" && pwd -P)
res=$out/share/out
# The image: build-image.sh's messages kept in OUTDIR/build-image.log, and
# its reason repeated when it fails.
rc=0
"$here/build-image.sh" >"$out/build-image.out" 2>"$out/build-image.log" || rc=$?
cat "$out/build-image.log" >&2
if [ "$rc" -ne 0 ]; then
	why=$(grep -m 1 '^build-image.sh: error:' "$out/build-image.log" | sed 's/^build-image.sh: error: //') ||
		why=$(grep -v '^[[:space:]]*$' "$out/build-image.log" | tail -1) || why="it printed nothing on stderr"
	[ "$rc" -gt 128 ] && why="killed by signal $((rc - 128)); $why"
	echo "run.sh: $scenario: FAIL: build-image.sh exited with $rc: $why" >&2
	exit 1
fi
shared=$(tail -1 "$out/build-image.out")
[ -f "$shared/disk.raw" ] ||
	{ echo "run.sh: $scenario: FAIL: build-image.sh exited 0 but its image '$shared' has no disk.raw" >&2; exit 1; }
# This run's own link to the image, taken under build-image.sh's lock
# (shared: other run.sh may link at once; a build waits): the overlay's
# backing file and the first boot's kernel stay this image's for every boot
# of the run, even if another test rebuilds the image meanwhile (a rebuild
# replaces the directory; a hard link keeps the old disk). Where the cache
# is on another file system than OUTDIR the overlay names the shared file
# itself, as before (a rebuild during the run would then change its disk).
image=$out/image
mkdir -p "$image"
lockw=${SCSITUNE_VM_LOCK_WAIT:-1800}
if ! flock -s -w "$lockw" "${shared%/*}/lock" sh -c '
	set -e
	for f in release packages.txt vmlinuz initrd.img cmdline; do
		ln "$1/$f" "$2/$f" 2>/dev/null || cp "$1/$f" "$2/$f"
	done
	ln "$1/disk.raw" "$2/disk.raw" 2>/dev/null || ln -s "$1/disk.raw" "$2/disk.raw"
' sh "$shared" "$image"; then
	echo "run.sh: $scenario: FAIL: cannot link the image $shared into $image (or waited $lockw s for ${shared%/*}/lock)" >&2
	exit 1
fi
[ -L "$image/disk.raw" ] && echo "run.sh: $image/disk.raw is a symbolic link to $shared/disk.raw (another file system): a rebuild during this run would change its disk" >&2
t1=$(now)
cp "$scsitune" "$out/share/in/scsitune"
cp "$repo"/profiles/* "$out/share/in/profiles/"
[ -d "$repo/tests/vm/profiles" ] && cp "$repo"/tests/vm/profiles/* "$out/share/in/profiles/"
cp "$here/lib.sh" "$out/share/in/lib.sh"
cp "$stage" "$out/share/in/stage.sh"
for f in ${SCSITUNE_VM_FILES:-}; do
	cp -a "$f" "$out/share/in/files/" || { echo "run.sh: FAIL: SCSITUNE_VM_FILES: cannot copy $f" >&2; exit 1; }
done
[ -n "$shell" ] && touch "$out/share/in/shell"
cp "$image/release" "$image/packages.txt" "$out/"
# The scenario's own disk: copy-on-write over the image (which stays as built).
qemu-img create -q -f qcow2 -b "$image/disk.raw" -F raw "$out/root.qcow2"
truncate -s 64M "$out/data0.img"

# With -kernel QEMU's linuxboot ROM boots (it takes bootindex 0); for GRUB the root disk.
bootindex=
[ "${SCSITUNE_VM_BOOT:-direct}" = grub ] && bootindex=,bootindex=0
# The machine, its firmware and where the HBA sits: SeaBIOS's pc with the
# node-1 expander, or (secureboot) q35 with SMM and OVMF, the HBA on the root bus.
# shellcheck disable=SC2054 # commas are inside QEMU option values
if [ "$firmware" = bios ]; then
	bus=pci.0
	machine=(-machine pc,i8042=off,smbus=off)
	hba=(-device pxb,id=pxb1,bus=pci.0,bus_nr=32,numa_node=1 -device virtio-scsi-pci,id=vscsi0,bus=pxb1,addr=2,num_queues=4)
else
	bus=pcie.0
	cp "$ovmf_vars" "$out/vars.fd"
	machine=(-machine q35,smm=on -global driver=cfi.pflash01,property=secure,value=on -global ICH9-LPC.disable_s3=1
		-drive if=pflash,format=raw,unit=0,readonly=on,file="$ovmf_code"
		-drive if=pflash,format=raw,unit=1,file="$out/vars.fd")
	hba=(-device virtio-scsi-pci,id=vscsi0,bus=pcie.0,num_queues=4)
fi
# shellcheck disable=SC2054
args=(
	-accel "${SCSITUNE_VM_ACCEL:-tcg,thread=single}" -cpu "${SCSITUNE_VM_CPU:-qemu64}" "${machine[@]}" -m 1024 -smp 4,sockets=2,cores=2,threads=1
	-object memory-backend-ram,id=mem0,size=512M
	-object memory-backend-ram,id=mem1,size=512M
	-numa node,nodeid=0,cpus=0-1,memdev=mem0
	-numa node,nodeid=1,cpus=2-3,memdev=mem1
	-nodefaults -display none -no-reboot
	"${hba[@]}"
	-drive if=none,id=root0,file="$out/root.qcow2",format=qcow2,cache=unsafe
	-device scsi-hd,bus=vscsi0.0,scsi-id=0,lun=0,drive=root0,serial=vmroot"$bootindex"
	-drive if=none,id=data0,file="$out/data0.img",format=raw,cache=unsafe
	-device scsi-hd,bus=vscsi0.0,scsi-id=1,lun=0,drive=data0,serial=vmdata0,rotation_rate=1
	-fsdev local,id=fs0,path="$out/share",security_model=none
	-device "virtio-9p-pci,fsdev=fs0,mount_tag=vm,bus=$bus"
)
# --serve: the NIC on QEMU's user network, the guest's sshd on a loopback port here.
[ -n "$serve" ] && args+=(
	-netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$SCSITUNE_VM_SSH_PORT-:22"
	-device "virtio-net-pci,netdev=net0,bus=$bus"
)

# The kernel, initrd and command line of boot N (direct boot): the image's
# for boot 1, then what the guest handed over. QEMU loads them itself, or
# (secureboot) they go on a fresh EFI system partition that shim boots.
# boot_from KDIR: sets kernel=(...), the QEMU arguments that boot KDIR's files.
boot_from() {
	case $firmware/${SCSITUNE_VM_BOOT:-direct} in
	bios/direct) kernel=(-kernel "$1/vmlinuz" -initrd "$1/initrd.img" -append "$(cat "$1/cmdline")") ;;
	bios/grub) kernel=() ;;
	secureboot/direct)
		"$here/esp.sh" "$1" "$1/esp.img" || return 1
		# shellcheck disable=SC2054 # commas are inside QEMU option values
		kernel=(-drive if=none,id=esp0,file="$1/esp.img",format=raw,cache=unsafe
			-device scsi-hd,bus=vscsi0.0,scsi-id=2,lun=0,drive=esp0,serial=vmesp,bootindex=0) ;;
	*) echo "run.sh: SCSITUNE_VM_BOOT=$SCSITUNE_VM_BOOT: direct or grub" >&2; exit 64 ;;
	esac
}
kernel=()
kdir=$out/kernel-1
mkdir -p "$kdir"
cp "$image/vmlinuz" "$image/initrd.img" "$image/cmdline" "$kdir/"
boot_from "$kdir" || { echo "run.sh: $scenario: FAIL: boot 1: no EFI system partition (esp.sh's reason above)" >&2; exit 1; }
printf '%q ' "$qemu" "${args[@]}" "${kernel[@]}" >"$out/qemu.cmd"
echo >>"$out/qemu.cmd"
if [ -n "$shell" ]; then
	rc=0
	"$qemu" "${args[@]}" "${kernel[@]}" -serial mon:stdio || rc=$?
	exit "$rc"
fi
res_boots() { cat "$res/boots" 2>/dev/null || echo 0; }
fail() {
	echo "run.sh: $scenario: $*" >&2
	n=$(res_boots)
	c=$out/console-$((n + 1)).log
	[ -s "$c" ] || c=$out/console-$n.log
	if [ -f "$c" ]; then
		grep -n -m 5 -e 'Kernel panic' -e 'soft lockup' "$c" >&2 || true
		echo "---- last 40 lines of $c" >&2
		tail -n 40 "$c" >&2
	fi
	[ -s "$res/boot-$n.log" ] && { echo "---- $res/boot-$n.log (stage of boot $n)" >&2; tail -n 40 "$res/boot-$n.log" >&2; }
	[ -s "$out/qemu.log" ] && { echo "---- $out/qemu.log" >&2; cat "$out/qemu.log" >&2; }
	exit 1
}
# firmware_boot: the boot a stage asked for before its next one
# (next-firmware; run.sh's header): MokManager driven over the console.
firmware_boot() {
	local what
	what=$(cat "$res/next-firmware")
	rm -f "$res/next-firmware"
	[ "$firmware/$what" = secureboot/mokmanager ] ||
		fail "boot $boot: the stage asked for a '$what' boot before the next: only mokmanager, under SCSITUNE_VM_FIRMWARE=secureboot"
	[ -s "${SCSITUNE_VM_MOK_PASSWORD_FILE:-}" ] ||
		fail "boot $boot: the stage asked for MokManager: SCSITUNE_VM_MOK_PASSWORD_FILE must name the password it gave mokutil"
	local tb rc=0
	tb=$(now)
	timeout -k 10 "${SCSITUNE_VM_TIMEOUT:-600}" python3 "$here/mokmanager.py" --password-file "$SCSITUNE_VM_MOK_PASSWORD_FILE" \
		--console "$out/console-$boot-mokmanager.log" --log "$out/mokmanager-$boot.log" --qemu-log "$out/qemu.log" \
		--time "$out/qemu-time-$boot-mokmanager.txt" -- "$qemu" "${args[@]}" "${kernel[@]}" </dev/null || rc=$?
	echo "$boot-mokmanager $tb $(now)" >>"$out/firmware-boots.txt"
	if [ "$rc" -ne 0 ]; then
		tail -n 30 "$out/mokmanager-$boot.log" >&2
		fail "MokManager's boot after boot $boot: mokmanager.py exited with $rc (its reason above; the console in $out/console-$boot-mokmanager.log)"
	fi
}
# One QEMU per boot, as long as the guest's stages ask for the next one.
boot=0
: >"$out/qemu.log"
while :; do
	boot=$((boot + 1))
	[ "$boot" -le 9 ] || fail "more than 9 boots"
	tb=$(now)
	rc=0
	# QEMU's own CPU time (/usr/bin/time, when there: "WALL USER SYS")
	cputime=()
	[ -x /usr/bin/time ] && cputime=(/usr/bin/time -f '%e %U %S' -o "$out/qemu-time-$boot.txt")
	timeout -k 10 "${SCSITUNE_VM_TIMEOUT:-600}" "${cputime[@]}" "$qemu" "${args[@]}" "${kernel[@]}" \
		-serial file:"$out/console-$boot.log" </dev/null >>"$out/qemu.log" 2>&1 || rc=$?
	echo "$boot $tb $(now)" >>"$out/boots.txt"
	if [ "$rc" -ne 0 ] && [ -n "$serve" ] && grep -qi 'could not set up host forwarding rule' "$out/qemu.log"; then
		fail "boot $boot: QEMU could not forward 127.0.0.1:$SCSITUNE_VM_SSH_PORT to the guest's port 22: something else listens there (SCSITUNE_VM_SSH_PORT must stay free for the whole run, every boot binds it again)"
	fi
	[ "$rc" -eq 0 ] || fail "boot $boot: qemu exited with $rc (124: timed out after ${SCSITUNE_VM_TIMEOUT:-600} s)"
	[ "$(res_boots)" = "$boot" ] || fail "boot $boot: the guest stopped before its stage ran"
	if [ -n "$serve" ] && [ ! -e "$res/boot-$boot.rc" ] && [ ! -f "$res/finished" ] && [ -s "$res/next-boot/cmdline" ]; then
		# rebooted from outside while the stage waited (--serve)
		echo "$boot" >>"$out/external-reboots"
	else
		[ "$(cat "$res/boot-$boot.rc" 2>/dev/null)" = 0 ] || fail "boot $boot: the stage exited with $(cat "$res/boot-$boot.rc" 2>/dev/null || echo '(none)')"
		[ -f "$res/finished" ] && break
		[ "$(cat "$res/next" 2>/dev/null)" = reboot ] || fail "boot $boot: the guest went down without finishing or asking for a reboot"
	fi
	if [ -n "${kernel[*]}" ]; then
		kdir=$out/kernel-$((boot + 1))
		rm -rf "$kdir"
		mv "$res/next-boot" "$kdir" 2>/dev/null && [ -s "$kdir/vmlinuz" ] && [ -s "$kdir/initrd.img" ] && [ -s "$kdir/cmdline" ] ||
			fail "boot $boot: the guest handed over no kernel, initrd and command line (next-boot/)"
		boot_from "$kdir" || fail "boot $((boot + 1)): no EFI system partition (esp.sh's reason above)"
	fi
	[ ! -e "$res/next-firmware" ] || firmware_boot
done
t2=$(now)
read -r last lrc <"$res/finished"
[ "$last" = "$boot" ] && [ "$lrc" = 0 ] || fail "boot $boot: finished says '$last $lrc'"

check=0
if [ -f "$repo/tests/vm/scenarios/$scenario.check.py" ]; then
	python3 "$repo/tests/vm/scenarios/$scenario.check.py" "$res" "$scsitune" || check=$?
fi
t3=$(now)
{
	awk -v s="$scenario" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$last" 'BEGIN {
		printf "run.sh: %s: image %.1f s, %d boots + stages %.1f s, check %.1f s, total %.1f s\n", s, b - a, n, c - b, d - c, d - a }'
	# qcpu N: QEMU's user + system CPU of boot N (qemu-time-N.txt's last line)
	qcpu() { tail -1 "$out/qemu-time-$1.txt" 2>/dev/null | awk 'NF == 3 { printf ", QEMU CPU %.1f s", $2 + $3 }'; }
	while read -r n a b; do
		printf '  boot %s: %.1f s wall%s; %s; stage at %s-%s s uptime\n' "$n" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" \
			"$(qcpu "$n")" "$(head -1 "$res/boot-$n.analyze" 2>/dev/null | sed 's/^Startup finished in //')" \
			"$(awk '$1 == "ready" { print $2 }' "$res/boot-$n.uptime" 2>/dev/null)" \
			"$(awk '$1 == "done" { print $2 }' "$res/boot-$n.uptime" 2>/dev/null)"
	done <"$out/boots.txt"
	[ ! -f "$out/firmware-boots.txt" ] || while read -r n a b; do
		printf '  %s: %.1f s wall%s (firmware only)\n' "$n" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b - a }')" "$(qcpu "$n")"
	done <"$out/firmware-boots.txt"
} | tee "$out/timing.txt"
[ "$check" -eq 0 ] || fail "host-side check failed"
echo "run.sh: $scenario: passed"
