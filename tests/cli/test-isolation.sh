#!/bin/bash
# isolation tier: under --sysroot, detect reads nothing of this machine.
# strace records every path the process touches; anything outside the tree
# (other than the binary, the directories above the tree that realpath walks,
# the loader's cache and shared libraries) fails. Runs on the normal build
# only: the sanitizer runtimes read /proc/self themselves.
# Usage: test-isolation.sh SCSITUNE FIXTURE_DIR
set -uo pipefail
bin=$1 fixtures=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-isolation.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
tree=$work/root
mkdir "$tree"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$tree"

checks=$((checks + 1))
if ! command -v strace >/dev/null; then
	echo "FAIL no host reads: strace is not installed"; fails=$((fails + 1))
else
	rc=0
	strace -f -qq -s 4096 -e trace=%file -o "$work/strace" "$bin" --sysroot "$tree" detect -o json >/dev/null 2>&1 || rc=$?
	n=$(grep -c 'openat2(' "$work/strace" || true)
	if [ "$rc" -ne 0 ] || [ "$n" -lt 100 ]; then
		echo "FAIL no host reads: detect exited $rc with $n openat2 calls traced (want 0 and >= 100)"
		fails=$((fails + 1))
	fi
	# Allowed: the sysroot and the directories above it (realpath of the
	# prefix), the binary, the loader's cache and the shared libraries.
	allowed=$(d=$tree; while [ "$d" != / ]; do printf '%s\n' "$d"; d=$(dirname "$d"); done)
	grep -Eo '"/[^"]*"' "$work/strace" | tr -d '"' | grep -v "^$tree/" | grep -vxF "$bin" |
		grep -vxF -e / -e "$allowed" |
		grep -Ev '^/etc/ld\.so\.(cache|preload)$|^/(usr/)?lib/x86_64-linux-gnu/|^/lib64/' >"$work/escaped" || true
	if [ -s "$work/escaped" ]; then
		echo "FAIL no host reads: paths outside the sysroot:"; head "$work/escaped"; fails=$((fails + 1))
	else
		echo "ok   no host reads under --sysroot ($(wc -l <"$work/strace") file syscalls traced)"
	fi
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
