# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case faults of run-apply.sh (sourced in a subshell on a fresh tree): EINVAL,
# EIO and a write the kernel ignores (SCSITUNE_FAIL_WRITE) are reported, the
# rest applied, revert gives the tree back.
# 2. Faults: EINVAL and EIO on chosen writes are reported, the rest applied, revert restores.
run 1 "apply with rq_affinity EINVAL" env SCSITUNE_FAIL_WRITE=queue/rq_affinity:EINVAL \
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
jgrep -qE '^rejected .* rq_affinity [0-9] -> 2 \(EINVAL' || fail "EINVAL not reported as rejected"
grep -q '^applied ' "$work/out" || fail "other writes not applied after a rejected one"
run 2 "verify after a rejected write" st verify --profile-dir "$profiles" --state-dir "$state"
run 0 "revert after a rejected write" st revert --state-dir "$state"
same_tree "revert after EINVAL"
run 1 "apply with nomerges EIO" env SCSITUNE_FAIL_WRITE=queue/nomerges:EIO \
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state" -o json
python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
r=[c for c in d["changes"] if c["setting"]=="queue/nomerges" and c["result"]=="not-settable" and c["errno"]==5]
assert r and d["summary"]["failed"]==len(r), d["summary"]' "$work/out" || fail "EIO not reported as not-settable in JSON"
run 0 "revert after EIO" st revert --state-dir "$state"
same_tree "revert after EIO"

run 1 "apply with rq_affinity ignored" env SCSITUNE_FAIL_WRITE=queue/rq_affinity:ignore \
	"$bin" --sysroot "$work/root" apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
jgrep -qE "^ignored .* rq_affinity [0-9] -> 2 \(the kernel accepted the write but it is not in effect" || fail "a write accepted but not in effect is not reported as ignored"
python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); assert any(e["state"]=="ignored" for e in j["changes"])' "$state/journal.json" ||
	fail "journal has no ignored entry"
run 0 "revert after an ignored write" st revert --state-dir "$state"
same_tree "revert after ignored"
