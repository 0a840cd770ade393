#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 80 columns: every line of the default text output (and of -v) of detect,
# apply --dry-run, apply, verify and revert, on every fixture tree, and of
# report (every real fio output, a set of them, a comparison), is at
# most 80 characters wide (UTF-8 code points). apply/verify/revert run on a
# copy of the tree with numa on every HBA (tests/profiles/numa-every-hba),
# verify both in effect and drifted, revert both partial and forced.
# Usage: test-width.sh SCSITUNE FIXTURES PROFILE_DIR
set -uo pipefail
bin=$1 fixtures=$2 profiles=$3
every=$(cd "$(dirname "$0")/../profiles" && pwd)/numa-every-hba
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-width.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0 lines=0 widest=0 runs=0
fail() { echo "FAIL: $*"; status=1; }

# check LABEL FILE: every line at most 80 columns.
check() {
	local label=$1 file=$2 n w
	n=$(wc -l <"$file")
	[ "$n" -gt 0 ] || { fail "$label: no output"; return; }
	lines=$((lines + n))
	runs=$((runs + 1))
	# (A line that is one word cannot be broken: a path longer than the terminal, on a line of its
	# own, a shell command's " \" after it or not. It is not counted: the tests' TMPDIR makes such
	# paths, 90 columns under /dev/shm.)
	w=$(LC_ALL=C.UTF-8 awk '{ t = $0; sub(/^ +/, "", t); sub(/ \\$/, "", t) } t ~ / / && length($0) > m { m = length($0) } END { print m + 0 }' "$file")
	[ "$w" -gt "$widest" ] && widest=$w
	if [ "$w" -gt 80 ]; then
		fail "$label: a line of $w columns"
		LC_ALL=C.UTF-8 awk '{ t = $0; sub(/^ +/, "", t); sub(/ \\$/, "", t) } t ~ / / && length($0) > 80 { printf "    %d: %s\n", length($0), $0 }' "$file" | head -5
	fi
}
# out LABEL EXPECTED_RC ARGS...: run scsitune, check its stdout.
out() {
	local label=$1 want=$2 rc=0
	shift 2
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	[ "$rc" -eq "$want" ] || { fail "$label: exit $rc, want $want: $(head -3 "$work/err")"; return; }
	check "$label" "$work/out"
}

for archive in "$fixtures"/*.tar.xz; do
	name=$(basename "$archive" .tar.xz)
	root=$work/$name
	mkdir "$root"
	tar -xJf "$archive" -C "$root"
	mkdir -p "$root/etc/default" "$root/etc/udev/rules.d" "$root/etc/systemd/system/multi-user.target.wants" "$root/etc/modprobe.d"
	install -m 0644 "$(dirname "$0")/../apply/irqbalance.default" "$root/etc/default/irqbalance"
	s=(--sysroot "$root")
	st=(--state-dir "$work/state-$name")
	for v in "" -v; do
		out "$name detect $v" 0 "${s[@]}" detect $v
		for p in numa kernel-default "$every"; do
			out "$name apply --dry-run $(basename "$p") $v" 0 "${s[@]}" apply --profile "$p" --profile-dir "$profiles" \
				--dry-run --persist $v
		done
	done
	[ "$name" = no-hba ] && continue
	# --persist's boot unit runs the installed scsitune (this build's $sbindir/scsitune): put it into the
	# tree, as on a host that has it, so that apply writes (and verify checks) the unit on every tree.
	if [ -z "${installed:-}" ]; then
		installed=$("$bin" "${s[@]}" apply --profile "$every" --profile-dir "$profiles" --dry-run --persist -o json |
			python3 -c 'import json,re,sys
u=[c for c in json.load(sys.stdin)["changes"] if c["object"]=="persist:boot-unit"][0]
print(re.search(r"ExecStart=\"([^\"]+)\"", u["desired"]).group(1))') || installed=/usr/sbin/scsitune
	fi
	mkdir -p "$root$(dirname "$installed")"
	install -m 0755 /dev/null "$root$installed"
	out "$name apply" 0 "${s[@]}" apply --profile "$every" --profile-dir "$profiles" --persist "${st[@]}"
	out "$name verify" 0 "${s[@]}" verify "${st[@]}"
	out "$name verify -v" 0 "${s[@]}" verify "${st[@]}" -v
	# Drift: every queue attribute apply wrote (but the scheduler), changed by hand.
	drift_rc=$(python3 - "$work/state-$name/journal.json" "$root" <<'PY'
import json, sys
n = 0
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["state"] == "applied" and e["path"].startswith("sys/block/") and e["setting"] != "queue/scheduler":
        open(sys.argv[2] + "/" + e["path"], "w").write("77\n")
        n += 1
print(2 if n else 0)
PY
)
	out "$name verify (drifted)" "$drift_rc" "${s[@]}" verify "${st[@]}"
	out "$name revert -v" "$([ "$drift_rc" = 2 ] && echo 1 || echo 0)" "${s[@]}" revert "${st[@]}" -v
	[ "$drift_rc" = 2 ] && out "$name revert --force" 0 "${s[@]}" revert --force "${st[@]}"
done
# report: every real fio output but the one whose job failed (the first group of
# those that ran several), all of them as one set (the not-comparable warning), and a comparison with a saved phase.
# The files are named as a user in that directory names them: a path is one word, and a
# word longer than the line is printed whole (a clone's absolute path would measure the clone).
cd "$(dirname "$0")/../report/fio" || exit 1
mapfile -t ok_runs < <(ls ./*.json | grep -v enospc) # (its failed job is an error: tests/report)
for f in "${ok_runs[@]}"; do
	out "report $f" 0 report --group 0 "$f"
done
out "report (every fio output)" 0 report --allow-mixed --group 0 --phase all --state-dir "$work/state-report" "${ok_runs[@]}"
out "report --compare" 0 report --allow-mixed --state-dir "$work/state-report" --compare all ./fio-3.33-randread-*.json
echo "measured: $runs outputs, $lines lines, widest $widest columns"
[ "$status" -eq 0 ] && echo "ok: every text line of detect, apply --dry-run, apply, verify, revert and report fits 80 columns"
exit "$status"
