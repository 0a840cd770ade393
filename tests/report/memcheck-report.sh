#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# report under valgrind: ingest (text, JSON, json+ merges), save, compare, --html, and
# the error paths (truncated, not fio, failed job, unwritable state dir,
# unknown phase, --html paths). Any valgrind error or leak fails; exit codes are checked too.
# Usage: memcheck-report.sh VALGRIND SCSITUNE FIO_FIXTURES
set -uo pipefail
valgrind=$1 bin=$2 fx=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-memcheck-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
all=("$fx"/fio-3.33-randread-2jobs-json.json "$fx"/fio-3.33-randread-2jobs-jsonplus.json
	"$fx"/fio-3.33-randread-1job-jsonplus.json "$fx"/fio-3.33-global-mixed-json.json)
head -c 3000 "${all[0]}" >"$work/truncated.json"
printf '{"a": 1}\n' >"$work/other.json"
touch "$work/file"
n=0
run() { # WANT_RC ARGS...
	local want=$1 rc=0
	shift
	n=$((n + 1))
	"$valgrind" -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
		--errors-for-leak-kinds=definite,indirect,possible "$bin" "$@" >/dev/null 2>"$work/vg" || rc=$?
	if [ "$rc" -ne "$want" ] || grep -q '^==[0-9]*==' "$work/vg"; then
		echo "FAIL: report $*: exit $rc (want $want)"; cat "$work/vg"; fails=$((fails + 1))
	fi
}
# The four fixtures are four jobs: refused as a set, kept with --allow-mixed.
run 1 report "${all[@]}"
run 0 report --allow-mixed "${all[@]}"
run 0 report -o json --allow-mixed --phase base --state-dir "$work/st" "${all[@]}"
run 0 report --allow-mixed --phase tuned --state-dir "$work/st" --compare base "${all[1]}" "${all[2]}"
run 0 report -o json --state-dir "$work/st" --compare tuned "${all[0]}"
run 0 report --allow-mixed --state-dir "$work/st" --compare tuned --html "$work/r.html" "${all[@]}"
run 1 report --html "$work/nodir/r.html" "${all[0]}"
run 1 report --html "$work/$(printf 'h%.0s' $(seq 1 250))" "${all[0]}"
run 1 report "$work/truncated.json" "$work/other.json" "$work/missing.json"
run 1 report "$fx/fio-3.33-enospc-stdout-json.json"
run 1 report --phase x --state-dir "$work/file/st" "${all[0]}"
run 1 report --state-dir "$work/st" --compare nope "${all[0]}"
run 1 report --compare "${all[0]}" "${all[0]}"
run 64 report --phase ../x "${all[0]}"
run 0 report --allow-mixed --group 0 "$fx/fio-2.1.4-5groups-json.json" "$fx/fio-2.17-randread-randwrite-2groups-json.json" \
	"$fx/fio-3.1-randread-1job-json.json"
# fio groups refused, one kept; the same run twice refused; --compare across jobs (warnings).
run 1 report "$fx/fio-3.33-stonewall-2groups-json.json"
run 0 report --group 1 "$fx/fio-3.33-stonewall-2groups-json.json"
run 1 report "${all[0]}" "${all[0]}"
run 0 report --allow-mixed --state-dir "$work/st" --compare base "$fx/fio-3.1-randread-1job-json.json" "$fx/fio-3.33-global-mixed-json.json"
# Upload paths without a server: port 1 refuses at once (3 tries, 1 s and 2 s apart).
printf '[upload]\nurl = http://127.0.0.1:1/write\nbogus = 1\n' >"$work/bad.conf"
printf 'user:pw\n' >"$work/open.auth"
chmod 644 "$work/open.auth"
run 3 report --phase up --state-dir "$work/st" --upload http://127.0.0.1:1/write "${all[0]}"
run 1 report --flush --state-dir "$work/st" --config "$work/bad.conf"
run 1 report --phase up --state-dir "$work/st" --upload http://127.0.0.1:1/write --auth-file "$work/open.auth" "${all[0]}"
# The default settings file through the root layer (a --sysroot tree's), with timeout=.
mkdir -p "$work/tree/sys" "$work/tree/etc/scsitune"
printf '[upload]\nurl = http://127.0.0.1:1/write\ntimeout = 1\n' >"$work/tree/etc/scsitune/scsitune.conf"
SCSITUNE_CONFIG='' run 3 --sysroot "$work/tree" report --flush --state-dir "$work/st"
# report --run on a regular file (fio itself is not run under valgrind: it is exec()ed).
if command -v fio >/dev/null; then
	dd if=/dev/zero of="$work/data" bs=1M count=16 status=none
	printf '#!/bin/sh\n[ "$1" = --version ] && { echo fio-3.33; exit 0; }\necho "fio: broken" >&2\nexit 1\n' >"$work/fio-fail"
	chmod +x "$work/fio-fail"
	r=(report --run --device "$work/data" --runtime 1 --runs 1 --numjobs 1 --iodepth 1 --state-dir "$work/st")
	run 0 -v -o json "${r[@]}" --node 0 --phase run
	run 0 "${r[@]}"
	run 1 "${r[@]}" --fio "$work/fio-fail"
	run 1 "${r[@]}" --node 4000
	run 1 report --run --device "$work/nope" --state-dir "$work/st"
	run 64 "${r[@]}" --rw randwrite
	# verify_state: a tree with the numa profile applied (apply itself not under valgrind).
	mkdir -p "$work/ds" && tar -xJf "$fx/../../fixtures/dual-socket-mpi3mr.tar.xz" -C "$work/ds"
	"$bin" --sysroot "$work/ds" apply --profile numa --profile-dir "$fx/../../../profiles" --state-dir "$work/st-ap" \
		>/dev/null 2>&1 || { echo "FAIL: apply on the tree"; fails=$((fails + 1)); }
	run 0 -o json --sysroot "$work/ds" report --run --device "$work/data" --runtime 1 --runs 1 --numjobs 1 \
		--iodepth 1 --state-dir "$work/st-ap"
fi
[ "$fails" -eq 0 ] && echo "ok: report valgrind-clean in $n runs"
exit $((fails > 0))
