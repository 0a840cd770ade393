#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fuzz corpora, seeded from the real files in tests/: CORPUS/NAME/ for each
# harness (kept between runs: what a run finds interesting stays), and
# CORPUS/tree, a fixture tree for the profile harness's plans and the sysfs
# harness's seeds.
# Usage: make-seeds.sh SOURCE_DIR CORPUS_DIR
set -euo pipefail
src=$1 corpus=$2
here=$src/tests/fuzz
mkdir -p "$corpus"
for t in fio profile interrupts cpulist udevdb config journal spool resultset lineproto irqbalance query manifest minisign bundle sysfs; do
	mkdir -p "$corpus/$t"
	[ -d "$here/seeds/$t" ] && cp "$here/seeds/$t"/* "$corpus/$t/"
	[ -d "$here/regress/$t" ] && cp "$here/regress/$t"/* "$corpus/$t/" 2>/dev/null || true
done
cp "$src"/tests/report/fio/*.json "$corpus/fio/"
for f in "$src"/tests/report/fio/*.json; do
	{ printf 'host-a\0006.1.0-57-amd64\000base\000eHBA 9600-24i\0008.9.1.0\000scsitune-0.1\000numa\000cda3\000in-effect\00020261201T100000Z\000\000'; cat "$f"; } >"$corpus/lineproto/$(basename "$f")"
done
for f in "$src"/profiles/* "$src"/tests/plan/bad/* "$src"/tests/profiles/*; do
	cp "$f" "$corpus/profile/$(basename "$(dirname "$f")")-$(basename "$f")"
done
# A profile that includes another by name and by path.
{ printf 'include = b\n[queue]\nnomerges = 1\n\n%%%%\n'; cat "$src/profiles/numa"; } >"$corpus/profile/include-by-name"
{ printf 'include = ./c\n\n%%%%\n\n%%%%\n'; cat "$src/profiles/numa"; } >"$corpus/profile/include-by-path"
cp "$src/etc/scsitune.conf" "$corpus/config/etc-scsitune.conf"
cp "$src/tests/apply/irqbalance.default" "$corpus/irqbalance/"
# From every fixture tree: /proc/interrupts, cpulists and masks, udev database files.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for a in "$src"/tests/fixtures/*.tar.xz; do
	n=$(basename "$a" .tar.xz)
	mkdir "$work/$n"
	tar -xJf "$a" -C "$work/$n" --wildcards --no-anchored proc/interrupts 'run/udev/data/*' '*cpulist' cpu_list \
		possible online 'smp_affinity*' 'effective_affinity*' 2>/dev/null || true # a pattern no file of the tree matches
	[ -f "$work/$n/proc/interrupts" ] && cp "$work/$n/proc/interrupts" "$corpus/interrupts/$n"
	i=0
	while IFS= read -r f; do
		cp "$f" "$corpus/cpulist/$n-$i"
		i=$((i + 1))
	done < <(find "$work/$n/sys" "$work/$n/proc/irq" -type f \( -name '*cpulist' -o -name 'cpu_list' -o -name online \
		-o -name possible -o -name 'smp_affinity*' -o -name effective_affinity \) 2>/dev/null | sort | head -30)
	i=0
	while IFS= read -r f; do
		cp "$f" "$corpus/udevdb/$n-$i"
		i=$((i + 1))
	done < <(find "$work/$n/run/udev/data" -type f 2>/dev/null | sort | head -40)
done
# The tree for the profile harness's plans (kept: it is read only).
if [ ! -e "$corpus/tree/.complete" ]; then
	rm -rf "$corpus/tree"
	mkdir "$corpus/tree"
	tar -xJf "$src/tests/fixtures/dual-socket-mpi3mr.tar.xz" -C "$corpus/tree"
	touch "$corpus/tree/.complete"
fi
# fuzz-sysfs: the files it overwrites, with their real content (a record: the
# file's index in sysfs-files.txt, two bytes big endian, then the content):
# one file of each name (numa_node, queue/scheduler, smp_affinity_list, ...),
# so that the seeding stays short (a run of the harness reads the tree).
i=0
declare -A seen
while IFS= read -r f; do
	case $f in '' | '#'*) continue ;; esac
	d=${f%/*} b=${f##*/}
	d=${d##*/}
	k=${d//[0-9]/}/${b//[0-9]/} # no process per line: 460 of them took minutes on a loaded machine
	if [ -z "${seen[$k]:-}" ]; then
		seen[$k]=1
		printf -v idx '\\x%02x\\x%02x' $((i >> 8)) $((i & 255))
		{
			printf '%b' "$idx"
			cat "$corpus/tree/$f"
		} >"$corpus/sysfs/real-$i"
	fi
	i=$((i + 1))
done <"$here/sysfs-files.txt"
for t in "$corpus"/*/; do
	[ "$(basename "$t")" = tree ] || printf '%s: %s seeds\n' "$(basename "$t")" "$(find "$t" -type f | wc -l)"
done
