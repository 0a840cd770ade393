#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# apply tier: apply / verify / revert round trip on a fixture tree extracted
# to a temporary directory (--sysroot), with the journal and lock in a
# separate --state-dir; fault injection (needs -DSCSITUNE_TEST_HOOKS=ON) and
# the lock. After every revert the tree must be byte-identical to the
# snapshot taken before the first apply.
# Usage: run-apply.sh SCSITUNE FIXTURE_ARCHIVE PROFILE_DIR [PROFILE]
# PROFILE: numa by default; a fixture without mpi3mr HBAs (which numa leaves
# alone) names tests/profiles/numa-every-hba.
set -uo pipefail
bin=$1 archive=$2 profiles=$3 profile=${4:-numa}
name=$(basename "$archive" .tar.xz)
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-apply-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/root"
tar -xJf "$archive" -C "$work/root"
# Debian 12's /etc/default/irqbalance (irqbalance 1.9.2-1, as shipped):
# apply adds the bans for the IRQs it pins, revert puts it back.
mkdir -p "$work/root/etc/default"
install -m 0640 "$(dirname "$0")/irqbalance.default" "$work/root/etc/default/irqbalance"
# The directories apply --persist writes into, as on a Debian host with udev and systemd.
mkdir -p "$work/root/etc/udev/rules.d" "$work/root/etc/modprobe.d" "$work/root/etc/systemd/system/multi-user.target.wants"
snap() { (cd "$work/root" && find . -printf '%y %m %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
before=$(snap)
# APPLY_MEMCHECK=1 (the memcheck label; not for sanitizer builds): every run under valgrind.
if [ "${APPLY_MEMCHECK:-}" = 1 ]; then
	printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect %s "$@"\n' \
		"$bin" >"$work/vg"
	chmod +x "$work/vg"
	bin=$work/vg
fi
state=$work/state
status=0
fail() { echo "FAIL $name: $*"; status=1; }
st() { "$bin" --sysroot "$work/root" "$@"; }
run() { # run EXPECTED_RC LABEL ARGS...: output in $work/out, $work/err
	local want=$1 label=$2 rc=0
	shift 2
	"$@" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$label: exit $rc, want $want"
		sed 's/^/    /' "$work/out" "$work/err" | tail -20
	fi
}
# The text rows with their wrapped continuation lines joined (a row's settings wrap under its column).
joined() { awk '/^ / { sub(/^ +/, " "); printf "%s", $0; next } NR > 1 { print "" } { printf "%s", $0 } END { print "" }' "$work/out"; }
# Command lines the output suggests, with their " \" continuations joined.
commands() { sed -e :a -e '/ \\$/{N; s/ \\\n */ /; ta' -e '}' "$work/out"; }
# grep ARGS over joined(), read from a file: a pipe into grep -q fails under pipefail when grep stops early.
jgrep() { joined >"$work/joined" && grep "$@" "$work/joined"; }
same_tree() { [ "$(snap)" = "$before" ] || { fail "$1: the tree is not byte-identical to the snapshot"; }; }
journal_path() { # first journal entry (state applied, or $2) for a setting
	python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
for e in j["changes"]:
    if e["setting"]==sys.argv[2] and e["state"]==sys.argv[3]: print(e["path"], e["object"]); break' "$state/journal.json" "$1" "${2:-applied}"
}

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
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"]==2 and d["summary"]["drifted"]==0' \
	"$work/out" || fail "verify -o json: not one document with no drift"
read -r path object < <(journal_path queue/read_ahead_kb)
[ -n "${path:-}" ] || fail "no applied queue/read_ahead_kb in the journal"
echo 4096 >"$work/root/$path"
run 2 "verify after a hand change" st verify --profile-dir "$profiles" --state-dir "$state"
disk=$(cut -d/ -f3 <<<"$path")
jgrep -qE "^drifted +$disk +$object +read_ahead_kb 4096 \(expected [0-9]+\)" || fail "verify does not name the drifted setting beside its device $disk: $(cat "$work/out")"
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
jgrep -qE "^Profile $pfile +sha256 [0-9a-f]{12}" || fail "verify does not name the profile as apply does: $(head -2 "$work/out")"
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

as_named_at_apply() { # NAME KEY: the journal says the disk with KEY was NAME at apply
	python3 - "$state/journal.json" "$1" "$2" <<'PY'
import json, sys
path, name, key = sys.argv[1:]
j = json.load(open(path))
for e in j["changes"]:
    if e["object"] == key and e["path"].startswith("sys/block/"):
        p = e["path"].split("/")
        p[2] = name
        e["path"] = "/".join(p)
json.dump(j, open(path, "w"))
PY
}
# 3b. Kernel names change across reboots and hotplug: revert finds a disk by
# the key its entries name, not by the name it had at apply. One disk's
# entries are rewritten as if it had been sdzz then: revert restores it under
# its name now and says so; entries of a key no disk has now are not written.
run 0 "apply before the renames" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
read -r path object < <(journal_path queue/read_ahead_kb)
if [ -n "${path:-}" ]; then
	disk=$(cut -d/ -f3 <<<"$path")
	as_named_at_apply sdzz "$object"
	run 0 "revert of a disk renamed since apply" st revert --state-dir "$state" -v
	jgrep -qE "^restored +$disk +$object +.* \(sdzz at apply\)" || fail "revert does not restore $object under its name now ($disk): $(cat "$work/out")"
	same_tree "revert of a disk renamed since apply"
	run 0 "apply before the gone disk" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	python3 - "$state/journal.json" "$object" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for e in j["changes"]:
    if e["object"] == sys.argv[2]:
        e["object"] = "wwn-0xdeadbeefdeadbeef"
json.dump(j, open(sys.argv[1], "w"))
PY
	cp "$work/root/$path" "$work/applied-value"
	run 1 "revert with a disk not on the host" st revert --state-dir "$state"
	jgrep -qE "^not here +- +wwn-0xdeadbeefdeadbeef +.*read_ahead_kb \\(no disk has this key now" && grep -q "^The entries of a disk not on this host stay in the journal" "$work/out" || fail "revert does not report the disk that is not here: $(cat "$work/out")"
	cmp -s "$work/root/$path" "$work/applied-value" || fail "revert wrote $path of another disk ($disk) for a key no disk has"
	python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); assert all(e["object"]=="wwn-0xdeadbeefdeadbeef" for e in j["changes"] if e["state"]!="reverted"), j' \
		"$state/journal.json" || fail "the journal kept after a disk is gone holds more than its entries"
	# The disk is back (its key again): the kept journal restores it.
	sed -i "s/wwn-0xdeadbeefdeadbeef/$object/g" "$state/journal.json"
	run 0 "revert once the disk is back" st revert --state-dir "$state"
	same_tree "revert once the disk is back"
	# Two disks with one key now (the paths of a multipath LUN): the disk named as
	# at apply is the one; when neither is, nothing is written for that key.
	# Another disk of the tree gets the key's WWN in udev's database.
	other=''
	for b in "$work"/root/sys/block/sd*; do
		b=${b##*/}
		[ "$b" != "$disk" ] && [ -f "$work/root/run/udev/data/b$(cat "$work/root/sys/block/$b/dev")" ] && { other=$b; break; }
	done
	give_wwn() { # UDEV_DB_FILE WWN: the disk's WWN in udev's database is WWN
		sed -i '/^E:ID_WWN/d' "$1"
		printf 'E:ID_WWN=%s\nE:ID_WWN_WITH_EXTENSION=%s\n' "$2" "$2" >>"$1"
	}
	if [ -n "$other" ] && [ "${object#wwn-}" != "$object" ]; then
		run 0 "apply before the shared key" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
		udevf=$work/root/run/udev/data/b$(cat "$work/root/sys/block/$other/dev")
		cp -p "$udevf" "$work/udev-saved"
		give_wwn "$udevf" "${object#wwn-}"
		cp "$state/journal.json" "$work/journal-saved"
		as_named_at_apply sdzz "$object"
		cp "$work/root/$path" "$work/applied-value"
		run 1 "revert with a key two disks have" st revert --state-dir "$state"
		jgrep -qE "^not here +- +$object +.*read_ahead_kb \\(several disks have this key now, none this name\\)" ||
			fail "revert with a shared key: no not-here row: $(cat "$work/out")"
		cmp -s "$work/root/$path" "$work/applied-value" || fail "revert wrote $path for a key two disks have"
		# The journal's own name again: that disk is the one, though another shares its key.
		cp -p "$work/udev-saved" "$udevf"
		give_wwn "$udevf" "${object#wwn-}"
		cp "$work/journal-saved" "$state/journal.json"
		run 0 "revert with a shared key and the name as at apply" st revert --state-dir "$state"
		cp -p "$work/udev-saved" "$udevf"
		same_tree "revert with a shared key and the name as at apply"
	else
		[ "$name" != dual-socket-mpi3mr ] || fail "dual-socket-mpi3mr: no second disk, or $object is not a WWN"
	fi
else
	fail "no applied queue/read_ahead_kb in the journal"
fi

# 3c. IRQ numbers are each boot's: an IRQ entry carries the boot it was
# written in (proc/sys/kernel/random/boot_id), and revert in another boot
# writes none of them (N may be another device's IRQ now); the disks' are restored.
bootf=$work/root/proc/sys/kernel/random/boot_id
[ ! -e "$(dirname "$bootf")" ] || fail "the fixture has proc/sys/kernel/random: this test would remove it"
mkdir "$(dirname "$bootf")"
echo 6f1c3e0a-0000-4000-8000-000000000001 >"$bootf"
(cd "$work/root" && tar -cf "$work/irq-before.tar" proc/irq)
run 0 "apply in boot 1" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
n_irq=$(python3 -c 'import json,sys
c=[e for e in json.load(open(sys.argv[1]))["changes"] if e["object"].startswith("irq:")]
assert all(e.get("boot_id")=="6f1c3e0a-0000-4000-8000-000000000001" for e in c), c
print(len(c))' "$state/journal.json") || fail "an IRQ entry of the journal lacks this boot's id"
[ "$name" != dual-socket-mpi3mr ] || [ "${n_irq:-0}" -gt 0 ] || fail "dual-socket-mpi3mr: apply pinned no IRQ"
(cd "$work/root" && tar -cf "$work/irq-applied.tar" proc/irq)
echo 6f1c3e0a-0000-4000-8000-000000000002 >"$bootf"
run 0 "revert in boot 2" st revert --state-dir "$state" -v -o json
python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["changes"]
irq=[e["result"] for e in c if e["object"].startswith("irq:")]
assert irq==["earlier-boot"]*int(sys.argv[2]), irq
assert any(e["result"]=="restored" and e["path"].startswith("/sys/block/") for e in c), c' \
	"$work/out" "${n_irq:-0}" || fail "revert in another boot: IRQ entries not earlier-boot, or no disk restored: $(head -c 600 "$work/out")"
(cd "$work/root" && tar -cf "$work/irq-after.tar" proc/irq)
cmp -s "$work/irq-applied.tar" "$work/irq-after.tar" || fail "revert in another boot wrote an IRQ of the earlier boot"
[ ! -e "$state/journal.json" ] || fail "revert in another boot kept the journal (the IRQ entries are done)"
# Back to the tree of the snapshot: the IRQs as before apply, no boot id.
(cd "$work/root" && tar -xf "$work/irq-before.tar")
rm -r "$(dirname "$bootf")"
same_tree "revert in another boot (IRQs put back by hand)"

# 4. The lock: a second apply while one holds it exits 1 with one line.
mkdir -p "$state"
rc=0
flock -n "$state/lock" -c "echo 4242 >'$state/lock'; '$bin' --sysroot '$work/root' apply --profile "$profile" --profile-dir '$profiles' --state-dir '$state'" \
	>"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "apply under a held lock: exit $rc, want 1"
[ "$(grep -v '^--[0-9]*--' "$work/err")" = "scsitune: another scsitune apply or revert is running (pid 4242)" ] || fail "lock message: $(cat "$work/err")"
same_tree "apply under a held lock"

# 5. irqbalance's defaults file: an active IRQBALANCE_ARGS line is extended in
# place; a hand edit after apply is left alone by revert; a value that is
# not plain (systemd does no expansion) is not touched.
ib=$work/root/etc/default/irqbalance
if grep -q '"object": "irqbalance"' < <(st apply --profile "$profile" --profile-dir "$profiles" --dry-run -o json); then
	printf '# site options\nIRQBALANCE_ARGS="--hintpolicy=ignore"\nIRQBALANCE_ONESHOT=\n' >"$ib"
	before=$(snap)
	run 0 "apply with IRQBALANCE_ARGS set" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	[ "$(grep -c '^IRQBALANCE_ARGS=' "$ib")" = 1 ] || fail "irqbalance: not exactly one active IRQBALANCE_ARGS line"
	grep -q '^IRQBALANCE_ARGS="--hintpolicy=ignore --banirq=[0-9]' "$ib" || fail "irqbalance: site options not kept, or no bans: $(cat "$ib")"
	grep -q '^IRQBALANCE_ONESHOT=$' "$ib" || fail "irqbalance: the other lines were not kept"
	run 0 "verify with the bans in place" st verify --state-dir "$state" -v
	jgrep -qE '^in-effect +- +irqbalance +IRQBALANCE_ARGS ' || fail "verify does not see the bans in effect"
	sed -i 's/--hintpolicy=ignore/--hintpolicy=exact/' "$ib"
	run 0 "verify after a hand edit that keeps the bans" st verify --state-dir "$state"
	run 1 "revert leaves an edited irqbalance file alone" st revert --state-dir "$state"
	jgrep -qE '^left alone +- +irqbalance +IRQBALANCE_ARGS .*changed since apply' || fail "revert did not leave the edited irqbalance file alone"
	run 0 "revert --force puts the irqbalance file back" st revert --force --state-dir "$state"
	same_tree "irqbalance file after revert --force"
	printf 'IRQBALANCE_ARGS="$EXTRA --foreground"\n' >"$ib"
	before=$(snap)
	run 0 "dry-run with a non-plain IRQBALANCE_ARGS" st apply --profile "$profile" --profile-dir "$profiles" --dry-run -v
	jgrep -q 'not a plain value' || fail "a non-plain IRQBALANCE_ARGS is not reported"
	run 0 "apply with a non-plain IRQBALANCE_ARGS" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	grep -q '^IRQBALANCE_ARGS="$EXTRA --foreground"$' "$ib" || fail "a non-plain IRQBALANCE_ARGS was rewritten"
	run 0 "revert" st revert --state-dir "$state"
	same_tree "non-plain irqbalance file"
elif [ "$name" = dual-socket-mpi3mr ]; then
	fail "no irqbalance row in the plan of a host whose mpi3mr admin IRQs are pinned"
fi

# 6. --persist: a udev rule per tuned disk, the boot unit and its enabling
# link, modprobe.d for driver parameters; verify checks them; a hand edit is
# drift and revert leaves it; revert --force removes everything.
rules=$work/root/etc/udev/rules.d/90-scsitune.rules
unit=$work/root/etc/systemd/system/scsitune-apply.service
wants=$work/root/etc/systemd/system/multi-user.target.wants/scsitune-apply.service
mp=$work/root/etc/modprobe.d/scsitune.conf
printf 'include = %s\n[module:mpi3mr]\npoll_queues = 2\n' "$profile" >"$work/persist-profile"
before=$(snap)
src=$(cd "$(dirname "$0")/../.." && pwd)
run 0 "apply --persist --dry-run -o json" st apply --profile "$work/persist-profile" --profile-dir "$profiles" --persist --dry-run -o json
cp "$work/out" "$work/persist-plan.json"
"${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/plan.schema.json" "$work/persist-plan.json" >/dev/null ||
	fail "persist: the dry-run plan does not validate against schema/plan.schema.json"
grep -q '"class": "persist"' "$work/persist-plan.json" || fail "persist: no persist rows in the dry-run plan"
# The boot unit runs the installed scsitune (this build's $sbindir/scsitune): not
# installed in the root, its two rows are not applicable and say so.
installed=$(python3 -c 'import json,re,sys
d=json.load(open(sys.argv[1]))
u=[c for c in d["changes"] if c["object"]=="persist:boot-unit"][0]
assert u["state"]=="not-applicable" and "is not installed here" in u["note"] and "cmake --install" in u["note"], u
e=[c for c in d["changes"] if c["object"]=="persist:boot-unit-enable"][0]
assert e["state"]=="not-applicable", e
print(re.search(r"ExecStart=\"([^\"]+)\"", u["desired"]).group(1))' "$work/persist-plan.json") ||
	fail "persist: a boot unit planned though scsitune is not installed in the root"
# Installed (in the tree, as on the host the tree is): the unit is planned.
mkdir -p "$work/root$(dirname "${installed:-/usr/sbin/scsitune}")"
install -m 0755 /dev/null "$work/root${installed:-/usr/sbin/scsitune}"
before=$(snap)
run 0 "apply --persist" st apply --profile "$work/persist-profile" --profile-dir "$profiles" --state-dir "$state" --persist
n_disk=$(python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
print(len({e["object"] for e in j["changes"] if e["path"].startswith("sys/block/")}))' "$state/journal.json")
if [ "$n_disk" -gt 0 ]; then
	[ "$(grep -c '^ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", .*ATTR{queue/scheduler}="none"' "$rules")" = "$n_disk" ] ||
		fail "persist: not one udev rule per tuned disk ($n_disk): $(cat "$rules" 2>&1)"
fi
grep -qxF "ExecStart=\"$installed\" apply --profile \"$work/persist-profile\" --profile-dir \"$(readlink -f "$profiles")\" --state-dir /run/scsitune" "$unit" ||
	fail "persist: the boot unit does not apply the same profile with the installed scsitune: $(grep ExecStart "$unit" 2>&1)"
grep -q '^After=systemd-udev-settle.service' "$unit" && grep -q '^# After systemd-udev-settle: ' "$unit" ||
	fail "persist: the unit does not say why it waits for systemd-udev-settle"
[ "$(readlink "$wants")" = /etc/systemd/system/scsitune-apply.service ] || fail "persist: the unit is not enabled"
if [ "$name" = dual-socket-mpi3mr ]; then
	grep -qx 'options mpi3mr poll_queues=2' "$mp" || fail "persist: modprobe.d lacks the mpi3mr option: $(cat "$mp" 2>&1)"
fi
run 0 "verify after apply --persist (persist rows from the journal)" st verify --state-dir "$state" -v
jgrep -qE '^in-effect +- +persist:boot-unit-enable +symlink ' || fail "verify does not check the persist files"
echo '# local' >>"$unit"
run 2 "verify after a hand edit of the boot unit" st verify --state-dir "$state"
jgrep -qE '^drifted +- +persist:boot-unit +file other content \(expected [0-9]+ lines\)' || fail "verify does not name the edited boot unit"
run 1 "revert leaves the edited boot unit" st revert --state-dir "$state"
[ -f "$unit" ] && [ ! -e "$rules" ] && [ ! -L "$wants" ] || fail "revert: the edited unit should stay, the rest go"
run 0 "revert --force removes the edited unit too" st revert --force --state-dir "$state"
same_tree "apply --persist round trip"
# A profile given by name keeps its name in the unit (the installed profile at
# boot, as upgraded); --profile-dir only because it is not the installed one.
run 0 "apply --persist --dry-run with a named profile" st apply --profile numa --profile-dir "$profiles" --persist --dry-run -o json
python3 -c 'import json,sys
u=[c for c in json.load(open(sys.argv[1]))["changes"] if c["object"]=="persist:boot-unit"][0]["desired"]
want="ExecStart=\"%s\" apply --profile \"numa\" --profile-dir \"%s\" --state-dir /run/scsitune" % (sys.argv[2], sys.argv[3])
assert want in u.splitlines(), u' "$work/out" "$installed" "$(readlink -f "$profiles")" ||
	fail "persist: a named profile is not named in the boot unit"
rm "$work/root$installed"
before=$(snap)
# No udev here (no /etc/udev/rules.d): that row is not applicable, nothing created.
rmdir "$work/root/etc/udev/rules.d"
run 0 "dry-run --persist without /etc/udev/rules.d" st apply --profile "$profile" --profile-dir "$profiles" --persist --dry-run -v
jgrep -qE '^not-applicable +- +persist:udev-rules +file absent .*note: no /etc/udev/rules.d here' ||
	[ "$n_disk" -eq 0 ] || fail "persist: a missing /etc/udev/rules.d is not reported"
mkdir "$work/root/etc/udev/rules.d"

[ "$status" -eq 0 ] && echo "ok $name: apply/verify/revert round trip, faults, abort and lock"
exit "$status"
