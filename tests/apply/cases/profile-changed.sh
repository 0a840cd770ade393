# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case profile-changed of run-apply.sh (sourced in a subshell on a fresh tree):
# the profile file edited after apply is profile-changed (verify 5), told apart
# from the host's drift (2).
# 1b. The profile file changed since apply: the settings only the new file asks
# for are profile-changed (exit 5), told apart from the host's drift (exit 2).
mkdir -p "$work/prof"
cp "$profiles"/* "$work/prof/"
pfile=$work/prof/$(basename "$profile")
[ -f "$pfile" ] || cp "$profile" "$pfile"
run 0 "apply (a copy of the profiles)" st apply --profile "$pfile" --profile-dir "$work/prof" --state-dir "$state"
run 0 "verify before the profile changes" st verify --state-dir "$state"
sed -i 's/^read_ahead_kb = 16$/read_ahead_kb = 64/' "$work/prof/numa"
run 5 "verify after the profile file changed" st verify --state-dir "$state"
jgrep -qE "^profile-changed +sd[a-z]+ +[^ ]+ +read_ahead_kb 16 \(the profile now asks 64\)" &&
	! grep -q '^drifted' "$work/out" && grep -q '^The profile changed since apply (applied: sha256 [0-9a-f]\{12\})$' "$work/out" ||
	fail "verify does not tell the changed profile apart: $(cat "$work/out")"
# (A path too long for its column goes on a line of its own: the first three lines, their breaks as spaces.)
head -3 "$work/out" | tr -s ' \n' '  ' | grep -qE "^Profile $pfile sha256 [0-9a-f]{12} " ||
	fail "verify does not name the profile as apply does: $(head -3 "$work/out")"
run 5 "verify -o json after the profile file changed" st verify --state-dir "$state" -o json
python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); s=d["summary"]
assert d["state"]=="profile-changed" and d["profile"]["changed_since_apply"] and s["drifted"]==0 and s["profile_changed"]>0, d["summary"]
assert {x["state"] for x in d["settings"] if x["setting"]=="queue/read_ahead_kb"}=={"profile-changed"}' "$work/out" ||
	fail "verify -o json: not profile-changed"
read -r npath nobject < <(journal_path queue/nomerges)
echo 1 >"$work/root/$npath"
run 2 "verify after the profile changed and the host drifted" st verify --state-dir "$state"
jgrep -qE "^drifted +sd[a-z]+ +$nobject +nomerges 1 \(expected 2\)" && grep -q '^profile-changed ' "$work/out" ||
	fail "verify does not show both the drift and the changed profile: $(cat "$work/out")"
run 0 "revert --force after the profile change" st revert --force --state-dir "$state"
same_tree "revert after the profile change"
rm -rf "$work/prof"
