# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case seed-table of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): SPEC.md's seed table end to end: synthetic runs with the table's
# totals, the comparison's text golden and its JSON (37.3 % -> 9.1 %, +17.5 %).
st=$work/state
# --- SPEC.md's seed table end to end: synthetic single-job runs with those totals.
seed=$work/seed
mkdir -p "$seed"
mkrun() { # FILE KIOPS START_S
	printf '{"fio version": "fio-3.33", "timestamp": %s, "timestamp_ms": %s000, "time": "seed",\n' "$3" "$3" >"$1"
	printf ' "jobs": [{"jobname": "seed", "groupid": 0, "error": 0, "read": {"io_bytes": 0, "bw": %s, "iops": %s, "runtime": 60000}, "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0}}]}\n' \
		"$(($2 * 4000))" "$(($2 * 1000))" >>"$1"
}
i=0
for k in 4200 6700 6400 6500 6450 6460 6470 6480 6440 6450; do
	i=$((i + 1)); mkrun "$seed/base$i.json" "$k" $((1700000000 + i * 100))
done
i=0
for k in 7000 7700 7350 7300 7400; do
	i=$((i + 1)); mkrun "$seed/tuned$i.json" "$k" $((1700100000 + i * 100))
done
(cd "$seed" && "$bin" report --phase baseline --state-dir "$st" base*.json >/dev/null 2>&1) || fail "seed baseline: exit $?"
(cd "$seed" && "$bin" report --phase tuned --state-dir "$st" --compare baseline tuned*.json) >"$work/s.out" 2>/dev/null ||
	fail "seed tuned: exit $?"
sed -n '/^Comparison/,$p' "$work/s.out" >"$work/s.cmp"
golden seed-compare.txt "$work/s.cmp"
(cd "$seed" && "$bin" report -o json --state-dir "$st" --compare baseline tuned*.json) >"$work/s.json" 2>/dev/null
"$py" - "$work/s.json" <<'PY' || fail "seed table JSON"
import json, sys
c = json.load(open(sys.argv[1]))["compare"]
r, t = c["reference"], c["current"]
assert (r["avg_kiops"], r["min_kiops"], r["max_kiops"], r["spread_pct"]) == (6255, 4200, 6700, 37.313), r
assert (t["avg_kiops"], t["min_kiops"], t["max_kiops"], t["spread_pct"]) == (7350, 7000, 7700, 9.091), t
assert c["avg_change_pct"] == 17.506 and c["spread_change_points"] == -28.223, c
print("ok   seed table: 6,255 / 37.3 % -> 7,350 / 9.1 %, +17.5 % avg")
PY
checks=$((checks + 3))
# The baseline's 4,200 run is named an outlier (robust z), and so is its 6,700 run (the other
# eight sit within 100 KIOPS of each other); both kept in every statistic above.
(cd "$seed" && "$bin" report -o json base*.json) >"$work/b.json" 2>/dev/null
checks=$((checks + 1))
"$py" -c 'import json,sys
o=json.load(open(sys.argv[1]))["summary"]["outliers"]
assert [(x["file"], x["kiops"]) for x in o] == [("base1.json", 4200), ("base2.json", 6700)], o
assert o[0]["robust_z"] < -3.5 < 3.5 < o[1]["robust_z"], o' "$work/b.json" &&
	pass "seed baseline: the 4,200 and 6,700 runs named outliers, not dropped" || fail "seed baseline outliers: $(head -c 400 "$work/b.json")"
