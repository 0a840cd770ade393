#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `scsitune report -o json` validates against schema/report.schema.json, the
# schema rejects every broken copy of each document (check-schema.py --mutants),
# and it names the same keys as cli/report/render.c (--keys; "read"/"write" come
# from stune_fio_dir_name() and "p50"/"p99"/"p99_9" from pct_key(), not literals).
# Documents: the committed fio outputs as files (one, several, every fio
# version; --phase, the saved set, --compare with a phase and with a file),
# and --run with the installed fio on a regular file: unbound, bound with
# --node 0, --job-file, and under --sysroot fixture trees (HBA known, numa_node
# unknown, no HBA) with apply's journal: profile in effect, drifted, and a
# profile file that can no longer be read (verify_state null); --host-facts
# (files with the tree's provenance) with a profile applied and without an HBA.
# Usage: check-report-schema.sh SCSITUNE SRCDIR
# Exit: 0 ok, 1 failure (a missing python3-jsonschema or fio is a failure too).
set -uo pipefail
bin=$(realpath "${1:?usage: check-report-schema.sh SCSITUNE SRCDIR}")
src=$(realpath "${2:?usage: check-report-schema.sh SCSITUNE SRCDIR}")
py=${PYTHON3:-python3}
fio_fx=$src/tests/report/fio fx=$src/tests/fixtures
check=("$py" "$src/tests/docs/check-schema.py" "$src/schema/report.schema.json")
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-report-schema.XXXXXX")
trap 'rm -rf "$work"' EXIT
export SCSITUNE_CONFIG=$work/no-such-scsitune.conf
status=0
fail() { echo "FAIL: $*"; status=1; }

"${check[@]}" --keys "$src/cli/report/render.c" --key read --key write --key p50 --key p99 --key p99_9 || fail "schema and report/render.c name different keys"

# doc NAME WANT_RC ARGS...: scsitune ARGS > NAME.json, exit WANT_RC.
doc() {
	local name=$1 want=$2 rc=0
	shift 2
	"$bin" -o json "$@" >"$work/$name.json" 2>"$work/$name.err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, want $want"; sed 's/^/  stderr: /' "$work/$name.err" | head -5
		rm -f "$work/$name.json"
	fi
}

# --- Files given on the command line.
# Four different jobs (numjobs, job mix) and fio versions: a set only with --allow-mixed.
set4=(--allow-mixed "$fio_fx"/fio-3.33-randread-2jobs-json.json "$fio_fx"/fio-3.33-randread-2jobs-jsonplus.json
	"$fio_fx"/fio-3.33-randread-1job-jsonplus.json "$fio_fx"/fio-3.33-global-mixed-json.json)
doc files-one 0 report "$fio_fx"/fio-3.33-randread-1job-jsonplus.json
doc files-set4 0 report "${set4[@]}"
doc files-old 0 report --allow-mixed --group 0 "$fio_fx"/fio-2.1.4-5groups-json.json "$fio_fx"/fio-2.17-randread-randwrite-2groups-json.json \
	"$fio_fx"/fio-3.1-randread-1job-json.json
st=$work/state
doc files-phase 0 report --phase baseline --state-dir "$st" "${set4[@]}"
saved=$(find "$st/reports/baseline" -name '*.json' | head -1)
[ -n "$saved" ] && cp "$saved" "$work/files-saved.json" || fail "no saved result set"
doc compare-phase 0 report --allow-mixed --phase tuned --compare baseline --state-dir "$st" \
	"$fio_fx"/fio-3.33-randread-2jobs-jsonplus.json "$fio_fx"/fio-3.33-randread-1job-jsonplus.json
doc compare-file 0 report --compare "$work/files-saved.json" --state-dir "$st" "$fio_fx"/fio-3.1-randread-1job-json.json
doc files-group 0 report --group 1 "$fio_fx"/fio-3.33-stonewall-2groups-json.json
doc compare-not-comparable 0 report --compare baseline --state-dir "$st" "$fio_fx"/fio-3.33-global-mixed-json.json

# --- --run with the installed fio, on a regular file (never a host device).
if ! fio=$(command -v fio); then
	fail "fio is not installed (scripts/install-deps --test): the --run documents are not checked"
else
	data=$work/data
	dd if=/dev/zero of="$data" bs=1M count=16 status=none
	mkdir -p "$work/dev" && ln "$data" "$work/dev/sdf" && ln "$data" "$work/dev/sda"
	short=(--fio "$fio" --runtime 1 --numjobs 1 --iodepth 1)
	doc run-unbound 0 report --run "${short[@]}" --runs 2 --device "$data" --state-dir "$work/st1"
	doc run-node0 0 report --run "${short[@]}" --runs 1 --device "$data" --node 0 --phase smoke --state-dir "$work/st1"
	printf '[j]\nfilename=%s\nrw=read\nbs=4k\nruntime=1\ntime_based\nsize=1M\n' "$data" >"$work/job.fio"
	doc run-jobfile 0 report --run --fio "$fio" --runs 1 --job-file "$work/job.fio" --state-dir "$work/st1"
	for t in dual-socket-mpi3mr numa-unknown no-hba; do
		mkdir -p "$work/fx/$t" && tar -xJf "$fx/$t.tar.xz" -C "$work/fx/$t" || fail "extract $t"
	done
	ds=(--sysroot "$work/fx/dual-socket-mpi3mr")
	doc run-sysroot-none 0 "${ds[@]}" report --run "${short[@]}" --runs 1 --device "$work/dev/sdf" --state-dir "$work/st2"
	cp -r "$src/profiles" "$work/profiles"
	"$bin" "${ds[@]}" apply --profile numa --profile-dir "$work/profiles" --state-dir "$work/st2" >/dev/null 2>"$work/apply.err" ||
		fail "apply on the tree: $(cat "$work/apply.err")"
	doc run-sysroot-applied 0 "${ds[@]}" report --run "${short[@]}" --runs 1 --device "$work/dev/sdf" --state-dir "$work/st2"
	doc host-facts-applied 0 "${ds[@]}" report --host-facts --state-dir "$work/st2" "${set4[@]}"
	ra=$("$py" -c 'import json, sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["setting"] == "queue/read_ahead_kb" and e["state"] == "applied":
        print(e["path"]); break' "$work/st2/journal.json")
	if [ -n "$ra" ]; then
		echo 4096 >"$work/fx/dual-socket-mpi3mr/$ra"
		doc run-sysroot-drifted 0 "${ds[@]}" report --run "${short[@]}" --runs 1 --device "$work/dev/sdf" --state-dir "$work/st2"
	else
		fail "no applied queue/read_ahead_kb in the journal"
	fi
	rm -rf "$work/profiles"
	doc run-sysroot-noprofile 0 "${ds[@]}" report --run "${short[@]}" --runs 1 --device "$work/dev/sdf" --state-dir "$work/st2"
	doc run-numa-unknown 0 --sysroot "$work/fx/numa-unknown" report --run "${short[@]}" --runs 1 --device "$work/dev/sda" \
		--state-dir "$work/st3"
	doc run-no-hba 0 --sysroot "$work/fx/no-hba" report --run "${short[@]}" --runs 1 --device "$work/dev/sda" \
		--state-dir "$work/st3"
	doc host-facts-no-hba 0 --sysroot "$work/fx/no-hba" report --host-facts --phase tuned --state-dir "$work/st3" \
		"$fio_fx"/fio-3.1-randread-1job-json.json
fi

docs=("$work"/*.json)
[ -e "${docs[0]}" ] || { echo "FAIL: no document to check"; exit 1; }
"${check[@]}" "${docs[@]}" || fail "documents do not match schema/report.schema.json"
"${check[@]}" --mutants "${docs[@]}" || fail "the schema accepts broken documents"
[ -n "${KEEP:-}" ] && cp "${docs[@]}" "$KEEP"/
[ "$status" -eq 0 ] && echo "ok: report -o json matches schema/report.schema.json (${#docs[@]} documents)"
exit "$status"
