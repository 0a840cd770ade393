#!/bin/bash
# bench-tree.sh make|remove LINK [--hbas N] [--disks N]
# The large host both benchmarks read (tests/fixtures/mkfixture.py bench: 4
# mpi3mr HBAs, 4,096 SAS disks, 64 CPUs on 2 nodes; ~1.5M inodes, ~3.5 GiB on
# tmpfs, 75 s to make on 2 cores), made once for bench-detect.sh and
# bench-apply.sh (--root LINK) as CTest fixture bench_tree, and by each of
# them when run alone. make: the tree goes to $BENCH_DIR when set, else to
# /dev/shm when it has room (else $TMPDIR or /tmp), and LINK points to it;
# remove: the tree and LINK go. As root the tree gets a tmpfs of its own
# (mounted on the directory made for it, in this mount namespace), and
# remove is an umount.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "bench-tree.sh: $*" >&2; exit 1; }
[ $# -ge 2 ] || { echo "usage: bench-tree.sh make|remove LINK [--hbas N] [--disks N]" >&2; exit 64; }
action=$1 link=$2
shift 2
case $action in
make)
	if [ -L "$link" ]; then "$0" remove "$link"; fi
	dir=${BENCH_DIR:-${TMPDIR:-/tmp}}
	# About 0.9 MB and 370 inodes per disk (4,096 disks: 3.5 GiB, 1.5M
	# inodes); /dev/shm when it has that and 1.5 GiB more left over.
	n=4096 args=("$@")
	for ((i = 0; i < ${#args[@]} - 1; i++)); do [ "${args[i]}" != --disks ] || n=${args[i + 1]}; done
	case $n in '' | *[!0-9]*) die "--disks $n: not a number" ;; esac
	if [ -z "${BENCH_DIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
		read -r free_kb free_inodes < <(df -k --output=avail,iavail /dev/shm 2>/dev/null | tail -1) || true
		if [ "${free_kb:-0}" -gt $((n * 920 + 1536 * 1024)) ] && [ "${free_inodes:-0}" -gt $((n * 400 + 100000)) ]; then
			dir=/dev/shm
		fi
	fi
	work=$(mktemp -d "$dir/scsitune-bench-tree.XXXXXX")
	# As root: a tmpfs of the tree's own (size and inodes for N disks), so
	# that remove is an umount, not an rm -rf of 1.5M inodes (144 s in a CI
	# run); where mount is refused, the directory as it is.
	if [ "$(id -u)" = 0 ] && [ -z "${BENCH_DIR:-}" ] &&
		mount -t tmpfs -o "size=$((n * 920 + 512 * 1024))k,nr_inodes=$((n * 400 + 100000)),mode=0755" \
			scsitune-bench-tree "$work" 2>/dev/null; then
		echo "bench tree: on a tmpfs of its own ($work)"
	fi
	t0=$(date +%s%N)
	python3 "$top/tests/fixtures/mkfixture.py" bench "$@" "$work/root" ||
		{ umount "$work" 2>/dev/null; rm -rf "$work"; die "mkfixture.py bench failed"; }
	t1=$(date +%s%N)
	mkdir -p "$(dirname "$link")"
	ln -sfn "$work/root" "$link"
	echo "bench tree: $work/root ($(du -sh "$work/root" | cut -f1), made in $(((t1 - t0) / 1000000)) ms); $link points to it"
	;;
remove)
	if [ -L "$link" ]; then
		t=$(readlink "$link")
		case $t in
		*/scsitune-bench-tree.*/root)
			# its own tmpfs (made as root): unmounted; else removed file by file
			if mountpoint -q "${t%/root}" && umount "${t%/root}"; then rmdir "${t%/root}"; else rm -rf "${t%/root}"; fi
			;;
		*) die "$link points to $t, not a bench tree: left alone" ;;
		esac
		rm -f "$link"
	fi
	;;
*) echo "bench-tree.sh: make or remove, not $action" >&2; exit 64 ;;
esac
