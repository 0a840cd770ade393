#!/bin/bash
# bench-profile.sh -- where the time of detect, apply, verify, revert and
# report goes, in figures that a loaded machine does not blur: syscalls by
# kind (strace -c -f, exact), user instructions (callgrind), CPU time
# (user + sys, median), and optionally the kernel/user profile (perf record
# -e cpu-clock -g: no hardware counters in a VM). By hand, not in CI; the
# figures explain the floors in tests/bench/README.md (per bench, "Why ...").
#
#   tests/bench/bench-profile.sh --root TREE [--runs N] [--only LIST] [--callgrind] [--perf]
#                                [--files N] [--jobs N] [--out DIR]
# TREE: a bench tree (bench-tree.sh make LINK [--disks N]). LIST: any of
# detect,lsscsi,apply,floor,verify,revert,report (default all but report).
# SCSITUNE names the binary (default ./build/scsitune); --out keeps the raw
# strace/callgrind/perf files. Exit 1 when a command fails.
set -euo pipefail
export LC_ALL=C

runs=5 only=detect,lsscsi,apply,floor,verify,revert given_root='' cg='' pf='' files=100 jobs=16 out=''
while [ $# -gt 0 ]; do
	case $1 in
	--root) given_root=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	--callgrind) cg=1; shift ;;
	--perf) pf=1; shift ;;
	--files) files=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "bench-profile.sh: unknown argument $1" >&2; exit 64 ;;
	esac
done
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/bench
scsitune=${SCSITUNE:-$top/build/scsitune}
die() { echo "bench-profile.sh: FAIL: $*" >&2; exit 1; }
[ -x "$scsitune" ] || die "no scsitune binary at $scsitune"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (package time)"
command -v strace >/dev/null || die "strace is not installed"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-profile.XXXXXX")
[ -z "$out" ] || mkdir -p "$out"
keep() { [ -z "$out" ] || cp "$@" "$out/"; }
want() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }

root=''
if [ -n "$given_root" ]; then
	root=$(readlink -f "$given_root")
	[ -d "$root/sys/block" ] || die "--root $given_root: not a bench tree"
fi
cleanup() {
	[ -z "$root" ] || rm -f "$root/etc/default/irqbalance"
	rm -rf "$work"
}
trap cleanup EXIT
if want detect || want lsscsi || want apply || want verify || want revert || want floor; then
	[ -n "$root" ] || die "--root TREE is needed for $only"
	[ ! -e "$root/etc/default/irqbalance" ] || die "$root/etc/default/irqbalance exists (a run left behind?)"
	mkdir -p "$root/etc/default"
	cp "$top/tests/apply/irqbalance.default" "$root/etc/default/irqbalance"
	disks=$(find "$root/sys/block" -maxdepth 1 -name 'sd*' | wc -l)
fi
state=$work/state
profile=(--profile-dir "$top/profiles" --profile "$here/bench-all-disks")

# One figure line per command: NAME UNITS UNIT-NAME CMD...
declare -a lines
measure() {
	local name=$1 units=$2 unit=$3
	shift 3
	local i rc
	# CPU and wall: median of $runs; the command's own setup/teardown in $pre/$post.
	: >"$work/t"
	for ((i = 0; i < runs; i++)); do
		[ -z "${pre:-}" ] || eval "$pre"
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$work/t1" "$@" >/dev/null 2>"$work/err" || rc=$?
		[ "$rc" -eq "${want_rc:-0}" ] || die "$name exited $rc: $(head -3 "$work/err")"
		cat "$work/t1" >>"$work/t"
		[ -z "${post:-}" ] || eval "$post"
	done
	read -r wall cpu rss < <(python3 -c 'import statistics,sys
t = [l.split() for l in open(sys.argv[1]) if l.strip() and l[0].isdigit()]
print(statistics.median(float(x[0]) * 1000 for x in t), statistics.median((float(x[1]) + float(x[2])) * 1000 for x in t),
      max(int(x[3]) for x in t))' "$work/t")
	# Syscalls.
	[ -z "${pre:-}" ] || eval "$pre"
	strace -f -c -o "$work/strace.$name" "$@" >/dev/null 2>&1 || true
	[ -z "${post:-}" ] || eval "$post"
	keep "$work/strace.$name"
	local calls
	calls=$(awk '$NF == "total" { print $(NF-2) }' "$work/strace.$name")
	local topsc
	topsc=$(awk 'NR > 2 && $1 !~ /^-/ && $NF != "total" { n = ($5 ~ /^[0-9]+$/) ? $4 : $4; print $NF "=" $4 }' \
		"$work/strace.$name" | head -6 | tr '\n' ' ' || true)
	# User instructions (one thread: the same work, counted once).
	local ir=-
	if [ -n "$cg" ]; then
		[ -z "${pre:-}" ] || eval "$pre"
		SCSITUNE_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$work/cg.$name" "$@" >/dev/null 2>"$work/cg.err" || true
		[ -z "${post:-}" ] || eval "$post"
		ir=$(awk '/^summary:/ { print $2 }' "$work/cg.$name")
		keep "$work/cg.$name"
	fi
	if [ -n "$pf" ]; then
		[ -z "${pre:-}" ] || eval "$pre"
		perf record -q -e cpu-clock -g -o "$work/perf.$name" "$@" >/dev/null 2>&1 || true
		[ -z "${post:-}" ] || eval "$post"
		perf report -i "$work/perf.$name" --no-children --sort dso --stdio -g none 2>/dev/null |
			grep '%' | head -4 | awk '{ printf "%s %s  ", $1, $2 }' >"$work/perf.$name.dso" || true
		perf report -i "$work/perf.$name" --no-children --sort sym --stdio -g none 2>/dev/null |
			grep '%' | head -12 | awk '{ printf "%s %s, ", $1, $3 }' >"$work/perf.$name.sym" || true
		keep "$work/perf.$name"
	fi
	lines+=("$(printf '%-8s %7s %-8s %9.0f %9.0f %8.1f %9s %7.1f %10s %9s  %s' "$name" "$units" "$unit" \
		"$wall" "$cpu" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" "$calls" \
		"$(awk -v c="$calls" -v u="$units" 'BEGIN { print c / u }')" "$ir" \
		"$(awk -v i="$ir" -v u="$units" 'BEGIN { if (i == "-") print "-"; else printf "%.0f", i / u }')" "$topsc")")
	if [ -n "$pf" ]; then
		lines+=("         perf dso: $(cat "$work/perf.$name.dso")")
		lines+=("         perf sym: $(cat "$work/perf.$name.sym")")
	fi
	pre='' post='' want_rc=0
}

st() { "$scsitune" --sysroot "$root" "$@"; }
if want detect; then
	measure detect "$disks" disk "$scsitune" --sysroot "$root" detect -o json
fi
if want lsscsi; then
	measure lsscsi "$disks" disk lsscsi -k -y "$root/sys"
fi
if want apply || want verify || want revert || want floor; then
	st apply "${profile[@]}" --dry-run -o json >"$work/plan.json" || die "apply --dry-run failed"
	n_change=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["change"])' "$work/plan.json")
	if want apply; then
		post='st revert --state-dir "$state" >/dev/null'
		measure apply "$n_change" setting "$scsitune" --sysroot "$root" apply "${profile[@]}" --state-dir "$state"
	fi
	if want verify; then
		st apply "${profile[@]}" --state-dir "$state" >/dev/null || die "apply failed"
		measure verify "$n_change" setting "$scsitune" --sysroot "$root" verify --state-dir "$state"
		st revert --state-dir "$state" >/dev/null || die "revert failed"
	fi
	if want revert; then
		pre='st apply "${profile[@]}" --state-dir "$state" >/dev/null'
		measure revert "$n_change" setting "$scsitune" --sysroot "$root" revert --state-dir "$state"
	fi
	writer=${BENCH_WRITER:-$top/build/tests/bench-writer}
	if want floor; then
		[ -x "$writer" ] || die "no $writer (cmake --build build)"
		# The writer changes the files' text (a scheduler list becomes one word): kept and put back.
		python3 - "$work/plan.json" "$root" "$work/saved.json" <<'PY'
import json, sys
plan, root, saved = sys.argv[1:]
paths = [c["path"] for c in json.load(open(plan))["changes"]
         if c["state"] == "change" and c["path"].startswith(("/sys/", "/proc/"))]
json.dump({p: open(root + p).read() for p in paths}, open(saved, "w"))
PY
		post='python3 -c "import json,sys
for p, v in json.load(open(sys.argv[2])).items(): open(sys.argv[1] + p, \"w\").write(v)" "$root" "$work/saved.json"'
		measure floor "$n_change" setting "$writer" "$work/plan.json" "$root"
	fi
fi
if want report; then
	python3 "$here/make-fio-runs.py" "$top/tests/report/fio/fio-3.33-randread-2jobs-jsonplus.json" "$work/runs" \
		"$files" "$jobs" "$work/expected.tsv"
	mapfile -t run_files < <(cut -f1 "$work/expected.tsv")
	export SCSITUNE_CONFIG=$work/no-such-scsitune.conf
	measure report "$files" file "$scsitune" report -o json "${run_files[@]}"
	cat >"$work/figures.jq" <<'JQ'
[input_filename, ([.jobs[] | .read.iops + .write.iops] | add), ([.jobs[] | .read.bw + .write.bw] | add),
 (([.jobs[] | .read.clat_ns.N * .read.clat_ns.mean] | add) / ([.jobs[] | .read.clat_ns.N] | add))] | @tsv
JQ
	measure jq "$files" file jq -r -f "$work/figures.jq" "${run_files[@]}"
fi

echo "bench-profile: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $runs runs (median); $scsitune"
printf '%-8s %7s %-8s %9s %9s %8s %9s %7s %10s %9s  %s\n' what units unit "wall ms" "cpu ms" "RSS MB" syscalls "/unit" "user Ir" "Ir/unit" "top syscalls"
printf '%s\n' "${lines[@]}"
