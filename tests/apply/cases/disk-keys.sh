# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case disk-keys of run-apply.sh (sourced in a subshell on a fresh tree):
# revert finds a disk by its key, not its name at apply: renamed since apply, a
# key no disk has (not written, kept in the journal), the disk back, a key two
# disks share.
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
