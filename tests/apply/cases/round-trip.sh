# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case round-trip of run-apply.sh (sourced in a subshell on a fresh tree):
# apply, verify 0 (and -o json), a hand change is drift (verify 2) that revert
# leaves alone (exit 1), as it does a recorded nr_requests changed by hand;
# revert --force gives the tree back byte-identical; no journal then.
# 1. Round trip: apply, verify (0), drift by hand, verify (2), revert.
run 0 "apply numa" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
grep -q '^applied ' "$work/out" || fail "apply printed no applied row"
grep -qxF "  scsitune --sysroot $work/root revert --state-dir $state" <(commands) ||
	fail "apply's undo hint does not repeat --sysroot and --state-dir: $(tail -3 "$work/out")"
# Each disk row names the device (sdX) beside its stable key, as the journal has them.
python3 - "$state/journal.json" "$work/out" <<'PY' || fail "apply: a disk row does not name its device beside its key: $(cat "$work/out")"
import json, re, sys
rows = [l.split() for l in open(sys.argv[2]) if re.match(r"^applied ", l)]
disks = {e["object"]: e["path"].split("/")[2] for e in json.load(open(sys.argv[1]))["changes"]
         if e["state"] == "applied" and e["path"].startswith("sys/block/")}
assert disks, "no disk applied"
for key, name in disks.items():
    assert ["applied", name, key] in [r[:3] for r in rows], (key, name)
PY
[ -f "$state/journal.json" ] || fail "no journal after apply"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["profile"]==sys.argv[2] and len(j["digest"])==64 and j["changes"]' \
	"$state/journal.json" "$profile" || fail "journal lacks profile, digest or changes"
"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --dry-run -o json >"$work/plan.json" 2>/dev/null
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["digest"]==json.load(open(sys.argv[2]))["profile"]["digest"]' \
	"$state/journal.json" "$work/plan.json" || fail "the dry-run digest is not the one apply journaled"
run 0 "verify after apply (profile and profile dir from the journal)" st verify --state-dir "$state"
run 0 "verify -o json" st verify --profile-dir "$profiles" --state-dir "$state" -o json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"]==3 and d["summary"]["drifted"]==0' \
	"$work/out" || fail "verify -o json: not one document with no drift"
read -r path object < <(journal_path queue/read_ahead_kb)
[ -n "${path:-}" ] || fail "no applied queue/read_ahead_kb in the journal"
echo 4096 >"$work/root/$path"
run 2 "verify after a hand change" st verify --profile-dir "$profiles" --state-dir "$state"
disk=$(cut -d/ -f3 <<<"$path")
jgrep -qE "^drifted +$disk +$object +read_ahead_kb 4096 \(expected [0-9]+\)" || fail "verify does not name the drifted setting beside its device $disk: $(cat "$work/out")"
# The next step is said: apply again (only what differs) or revert, with what finds this journal.
grep -qxF "  scsitune --sysroot $work/root apply --profile $profile --profile-dir $profiles --state-dir $state" \
	<(commands) && grep -qxF "  scsitune --sysroot $work/root revert --state-dir $state" <(commands) ||
	fail "verify on drift does not say what to run: $(head -12 "$work/out")"
# The nr_requests a scheduler switch resets is recorded, not written: a hand
# change to it after apply is someone else's too, as long as revert does not
# switch that disk's scheduler back (which resets it again): here someone
# also chose another scheduler for that disk, so revert leaves both alone.
read -r rpath robject < <(journal_path queue/nr_requests recorded)
if [ "$name" = dual-socket-mpi3mr ] && [ -z "${rpath:-}" ]; then fail "no recorded queue/nr_requests in the journal"; fi
if [ -n "${rpath:-}" ]; then
	echo 77 >"$work/root/$rpath"
	echo '[kyber] none mq-deadline' >"$work/root/${rpath%/nr_requests}/scheduler"
fi
run 1 "revert leaves the hand change alone" st revert --state-dir "$state"
jgrep -qE "^left alone +$disk +$object .*read_ahead_kb 4096 \(changed since apply" || fail "revert does not report the value changed since apply beside its device $disk"
if [ -n "${rpath:-}" ]; then
	jgrep -qE "^left alone .* $robject .*nr_requests 77 " || fail "revert overwrote a recorded nr_requests changed by hand"
	[ "$(cat "$work/root/$rpath")" = 77 ] || fail "recorded nr_requests changed by hand was written"
fi
[ -f "$state/journal.json" ] || fail "journal removed though a value was left alone"
# The hint repeats what revert needs to find this journal again (--sysroot, --state-dir).
grep -qxF "  scsitune --sysroot $work/root revert --state-dir $state --force" <(commands) ||
	fail "revert's hint does not repeat --sysroot and --state-dir: $(tail -3 "$work/out")"
run 0 "revert --force" st revert --force --state-dir "$state"
[ -f "$state/journal.json" ] && fail "journal not removed after a complete revert"
same_tree "round trip"
run 0 "revert without a journal" st revert --state-dir "$state"
run 1 "verify without a journal or --profile" st verify --state-dir "$state"
# A scheduler compared by meaning: someone set it back by hand to what it was, written bare ("mq-deadline"
# where the tree had "[mq-deadline] none"): revert finds it unchanged, not changed since apply.
run 0 "apply again" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
read -r spath sobject < <(journal_path queue/scheduler)
if [ -n "${spath:-}" ]; then
	was=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1]))["changes"]:
    if e["path"] == sys.argv[2]: print(e["old"]); break' "$state/journal.json" "$spath")
	sel=$(sed -n 's/.*\[\([^]]*\)\].*/\1/p' <<<"$was")
	[ -n "$sel" ] || fail "the scheduler's old value '$was' has no selected one"
	echo "$sel" >"$work/root/$spath"
	run 0 "revert with the scheduler set back by hand, bare" st -o json revert --state-dir "$state"
	python3 -c 'import json,sys
c = [c for c in json.load(open(sys.argv[1]))["changes"] if c["path"].endswith("/" + sys.argv[2].lstrip("/"))]
assert c and c[0]["result"] == "unchanged", c' "$work/out" "$spath" ||
		fail "revert did not find the bare '$sel' unchanged against '$was': $(head -c 600 "$work/out")"
	printf '%s\n' "$was" >"$work/root/$spath"
elif [ "$name" = dual-socket-mpi3mr ]; then
	fail "no applied queue/scheduler in the journal"
fi
