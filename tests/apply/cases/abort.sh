# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case abort of run-apply.sh (sourced in a subshell on a fresh tree): apply
# killed half way (SCSITUNE_TEST_ABORT_AFTER): journal and log replay to whole
# objects applied, the rest pending; revert gives the tree back.
# 3. Killed half way (abort() before write N+1, N = 5, or one less than the
# plan's writes on a small host): revert restores everything.
st apply --profile "$profile" --profile-dir "$profiles" --dry-run -o json >"$work/plan.json" || fail "apply --dry-run"
cut=$(python3 -c 'import json,sys; print(min(5, json.load(open(sys.argv[1]))["summary"]["change"] - 1))' "$work/plan.json")
run 134 "apply aborted after $cut writes" env SCSITUNE_TEST_ABORT_AFTER="$cut" \
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
# journal.json (fsync'd before the first write) names its outcome log; the
# log holds the outcomes of each object whose writes were done, an object's
# lines in one append, written when the next object's writes begin (irqbalance's
# defaults are written first, the IRQ pins after it reads the bans): so of the
# writes done, those of whole objects before the aborted write's object are
# logged applied, and the rest (written or not) pending, which revert restores.
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); c=j["changes"]; s=[e["state"] for e in c]
assert set(s) <= {"pending","recorded"}, s
# the writes, in order: the irqbalance defaults first (before the IRQ pins), then in journal order
P=sorted((i for i in range(len(c)) if s[i]=="pending"), key=lambda i: (c[i]["object"]!="irqbalance", i))
n=int(sys.argv[3])
assert len(P) > n, ("too few writes to cut short", len(P))
b=max(k for k in range(n+1) if k==0 or c[P[k]]["object"]!=c[P[k-1]]["object"])
log=open(sys.argv[2]).read().splitlines()
assert json.loads(log[0])=={"log":j["log"]}, (log[0], j.get("log"))
L=[json.loads(l)["i"] for l in log[1:]]
for l in log[1:]: s[json.loads(l)["i"]]=json.loads(l)["state"]
assert L==P[:b], ("logged", L, "want", P[:b])
assert s.count("applied")==b and "pending" in s, s' "$state/journal.json" "$state/journal.log" "$cut" ||
	fail "journal after the abort: not the whole objects before write $((cut + 1)) applied, the rest pending"
# A torn last line (power loss mid-append) is ignored, not an error.
printf '{"i":0,"sta' >>"$state/journal.log"
run 0 "revert after the abort" st revert --state-dir "$state"
[ ! -e "$state/journal.log" ] && [ ! -e "$state/journal.json" ] || fail "revert left the journal or its log"
same_tree "revert after abort"
