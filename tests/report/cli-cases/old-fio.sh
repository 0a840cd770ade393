# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case old-fio of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): real outputs of fio 2.1.4, 2.17 and 3.1 with --group 0:
# accepted, the other fio versions warned, a text golden, saved under the
# earliest start.
# --- Real outputs of older fio (fio/SOURCES.md): 2.1.4 (no timestamp, no total_ios),
# 2.17 (usec, KiB), 3.1 (ns, no clat N): their first fio group (2.1.4 and 2.17
# ran several, one after the other), text golden, saved under the earliest start
# time that a run gives (2.1.4 gives none). Three fio versions and other jobs:
# accepted, each run that differs from the first said on stderr and in the text.
# Three fio versions: a set only with --allow-mixed.
old=(--allow-mixed fio-2.1.4-5groups-json.json fio-2.17-randread-randwrite-2groups-json.json fio-3.1-randread-1job-json.json)
os=$work/old-state
(cd "$fixtures" && "$bin" report --group 0 --phase old --state-dir "$os" "${old[@]}") >"$work/o.out" 2>"$work/o.err"
rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ "$(grep -vc '^scsitune: result set saved to ' "$work/o.err")" -eq 2 ] &&
	grep -qx "scsitune: warning: runs not comparable: run 2 (fio-2.17-randread-randwrite-2groups-json.json) against run 1 (fio-2.1.4-5groups-json.json): fio version fio-2.1.4 vs fio-2.17" "$work/o.err" &&
	grep -qx "scsitune: warning: runs not comparable: run 3 (fio-3.1-randread-1job-json.json) against run 1 (fio-2.1.4-5groups-json.json): fio version fio-2.1.4 vs fio-3.1" "$work/o.err" &&
	pass "older fio outputs, --group 0: exit 0, the other fio versions said" ||
	fail "older fio outputs: exit $rc: $(head -3 "$work/o.err")"
golden old-fio.txt "$work/o.out"
checks=$((checks + 1))
[ -f "$os/reports/old/20170928T004552Z.json" ] && pass "older fio outputs: saved as the 2.17 run's start" ||
	fail "older fio outputs: not saved: $(find "$os" -type f)"
