# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/hostile (sourced by test-payload.sh).
# --- 3. hostile bundles -----------------------------------------------------------
section "3. hostile bundles"
python3 "$(dirname "$0")/hostile.py" "$b" "$work/hostile" >"$work/hostile.list" || fail "hostile.py"
declare -A want=(
	[traversal]="entry '\.\./\.\./etc/cron\.d/evil' has a '\.\.' component: refused"
	[traversal-inner]="entry 'modules/\.\./\.\./\.\./etc/evil' has a '\.\.' component: refused"
	[absolute]="entry '/etc/cron\.d/evil' has an absolute name: refused"
	[symlink]="entry 'modules/scsi_mod\.ko' is a symbolic link: refused"
	[hardlink]="entry 'modules/scsi_mod\.ko' is a hard link: refused"
	[device]="entry 'modules/scsi_mod\.ko' is a character device node: refused"
	[fifo]="entry 'modules/scsi_mod\.ko' is a FIFO: refused"
	[directory]="entry 'modules/?' is a directory: refused"
	[size-bomb]="entry 'modules/scsi_mod\.ko' is 83886080 bytes: over the size cap"
	[duplicate]="entry 'modules/scsi_mod\.ko' appears twice: refused"
	[manifest-not-first]="the first entry is 'modules/scsi_mod\.ko', not manifest\.json"
	[not-in-manifest]="entry 'modules/extra\.ko' is not named in the manifest: refused"
	[missing-file]="patches/series: named in the manifest, missing from the archive"
	[hash-mismatch]="modules/scsi_mod\.ko: SHA-256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}"
	[module-mismatch]="modules/scsi_mod\.ko: its srcversion differs from what the manifest says"
	[module-swapped]="modules/scsi_mod\.ko: its name differs from what the manifest says"
	[release-path]="manifest\.json: bundle: missing or invalid \"release\""
	[debian-package]="manifest\.json: \"debian_package\" linux-image-6\.1\.0-99-other is not linux-image-[^ ]+ \(the package of its \"release\"\)"
	[not-json]="manifest\.json: not a JSON object"
	[kernel-not-in-files]="manifest\.json: kernel: its file kernel/linux-image-6\.1\.0-98-scsitune_1\.0_amd64\.deb is not in \"files\""
	[kernel-release-path]="manifest\.json: kernel: missing or invalid \"release\""
	[kernel-package]="manifest\.json: kernel: \"package\" is not linux-image-6\.1\.0-98-scsitune"
	[kernel-same-release]="manifest\.json: kernel: release .* is the modules' release"
	[kernel-version-option]="manifest\.json: kernel: missing or invalid \"version\""
	[signer-unsigned]="manifest\.json: scsi_mod is not signed, but the manifest names a signer"
	[truncated]="damaged or truncated"
	[not-an-archive]="not a zstd-compressed tar archive"
)
n=0
while read -r h; do
	n=$((n + 1))
	f=$work/hostile/$h.tar.zst
	sign a "$f"
	[ -n "${want[$h]:-}" ] || { fail "hostile $h: no expectation"; continue; }
	refused "hostile $h" "${want[$h]}" st payload install "$f" --state-dir "$state"
	one_line "hostile $h"
done <"$work/hostile.list"
[ "$n" -eq "${#want[@]}" ] || fail "hostile.py made $n bundles, ${#want[@]} expected"

# --- 3b. hostile journals (issue 29) ------------------------------------------------
# A payload journal planted in the state directory (writable by someone else) names
# only what install could have written, or payload remove refuses it before any step,
# with and without --force: one line naming journal.json, the step and why; the tree
# (every name, mode, size and time) and the journal untouched. The audit's
# reproducers: a kept-initrd step restoring a copy of /bin/sh as etc/rootsh with mode
# 06755, a file step whose SHA-256 matches another file, mkdir steps naming other
# directories; and the release, the kernel package, a boot link's old target, the
# depmod index and a step install never writes.
section "3b. hostile journals"
run 0 "install for the hostile journals" st payload install "$b" --state-dir "$state"
cp "$state/payload/journal.json" "$work/pj-good.json"
mkdir "$root/etc/scsitune-test-empty" "$root/var/lib/scsitune-test-empty"
printf 'x\n' >"$root/etc/hostname-of-the-tree"
shsha=$(sha256sum </bin/sh | cut -d' ' -f1)
plant_payload() { # plant HOW: the installed journal with one hostile change ($work/pj-want: the step's words)
	mkdir -p "$state/payload"
	"${PYTHON3:-python3}" - "$work/pj-good.json" "$1" "$shsha" "$(sha256sum <"$root/etc/hostname-of-the-tree" | cut -d' ' -f1)" \
		"$R" >"$state/payload/journal.json" 2>"$work/pj-want" <<-'PY'
			import json, sys
			j = json.load(open(sys.argv[1]))
			how, shsha, hsha, rel = sys.argv[2:6]
			steps = j["steps"]
			def add(step, **kw):
			    s = dict({"step": step, "state": "done", "path": None, "sha256": None, "old_sha256": None, "note": None}, **kw)
			    steps.append(s)
			    sys.stderr.write("steps[%d] (%s %s): " % (len(steps) - 1, step, s["path"] or "-"))
			if how == "kept-rootsh": add("initramfs", path="etc/rootsh", old_sha256=shsha, mode=0o6755)
			elif how == "initrd-setuid":
			    i = next(k for k, s in enumerate(steps) if s["step"] == "initramfs")
			    steps[i].update(state="done", old_sha256=shsha, mode=0o6755)
			    sys.stderr.write("steps[%d] (initramfs %s): " % (i, steps[i]["path"]))
			elif how == "file-elsewhere": add("file", path="etc/hostname-of-the-tree", sha256=hsha)
			elif how == "mkdir-elsewhere": add("mkdir", path="etc/scsitune-test-empty"); add("mkdir", path="var/lib/scsitune-test-empty")
			elif how == "kernel-package": add("kernel", path="boot/vmlinuz-" + rel, sha256=hsha, target="openssh-server=1:9.2p1-2")
			elif how == "boot-link": add("default", path="vmlinuz", target="boot/vmlinuz-" + rel, old_target="/tmp/evil")
			elif how == "stage": add("stage", path="etc")
			elif how == "release":
			    j["release"] = "../../etc"
			    sys.stderr.write('release "../../etc": ')
			elif how == "index":
			    j["depmod_index_before"]["etc/shadow"] = hsha
			    sys.stderr.write('depmod_index_before "etc/shadow": ')
			json.dump(j, sys.stdout, indent=2)
		PY
}
for how in kept-rootsh initrd-setuid file-elsewhere mkdir-elsewhere kernel-package boot-link stage release index; do
	plant_payload "$how"
	[ "$how" != kept-rootsh ] && [ "$how" != initrd-setuid ] || cp /bin/sh "$state/payload/kept-initrd"
	# the first hostile step the check meets: mkdir-elsewhere plants two, the first is named
	want=$(grep -o '^[^:]*:' "$work/pj-want" | head -1)
	for force in "" --force; do
		before=$(stamp)
		jsum=$(sha256sum "$state/payload/journal.json")
		# shellcheck disable=SC2086 # $force: empty or the option
		if run 1 "hostile journal $how: remove $force" st payload remove $force --state-dir "$state"; then
			grep -qF "$state/payload/journal.json: $want" "$work/err" && grep -q ': refused before any change$' "$work/err" &&
				ok "hostile journal $how: remove $force refused" ||
				fail "hostile journal $how: remove $force: not one line naming '$want': $(head -c 300 "$work/err")"
			one_line "hostile journal $how: remove $force"
		fi
		[ "$(stamp)" = "$before" ] || fail "hostile journal $how: remove $force changed the tree"
		[ "$(sha256sum "$state/payload/journal.json")" = "$jsum" ] || fail "hostile journal $how: remove $force changed the journal"
		! grep -q -- '--force' "$work/out" "$work/err" || fail "hostile journal $how: remove $force advises --force"
	done
	# The same journal marked as a remove that stopped half way: install, which finishes such a
	# remove before installing, refuses it the same way.
	"${PYTHON3:-python3}" -c 'import json,sys
j = json.load(open(sys.argv[1])); j["remove_started"] = 1700000000
json.dump(j, open(sys.argv[1], "w"), indent=2)' "$state/payload/journal.json"
	before=$(stamp)
	jsum=$(sha256sum "$state/payload/journal.json")
	if run 1 "hostile journal $how, remove started: install" st payload install "$b" --state-dir "$state"; then
		grep -qF "$state/payload/journal.json: $want" "$work/err" && grep -q ': refused before any change$' "$work/err" &&
			ok "hostile journal $how, remove started: install refused" ||
			fail "hostile journal $how, remove started: install: not one line naming '$want': $(head -c 300 "$work/err")"
	fi
	[ "$(stamp)" = "$before" ] || fail "hostile journal $how, remove started: install changed the tree"
	[ "$(sha256sum "$state/payload/journal.json")" = "$jsum" ] || fail "hostile journal $how, remove started: install changed the journal"
	rm -f "$state/payload/kept-initrd"
done
[ ! -e "$root/etc/rootsh" ] || fail "hostile journals: etc/rootsh was made ($(stat -c %A "$root/etc/rootsh"))"
[ -f "$root/etc/hostname-of-the-tree" ] && [ -d "$root/etc/scsitune-test-empty" ] && [ -d "$root/var/lib/scsitune-test-empty" ] &&
	ok "hostile journals: no set-uid file made, another file and other directories kept" ||
	fail "hostile journals: a file or directory install never made was removed"
rmdir "$root/etc/scsitune-test-empty" "$root/var/lib/scsitune-test-empty"
rm "$root/etc/hostname-of-the-tree"
cp "$work/pj-good.json" "$state/payload/journal.json"
run 0 "the installed journal put back: remove" st payload remove --state-dir "$state"
[ "$(snap)" = "$fresh" ] && ok "the installed journal put back: remove gives the tree back" ||
	fail "the installed journal put back: the tree differs after remove"
# --- 3c. a hostile state directory (issue 29) -------------------------------------
section "3c. hostile state directory"
# planted LABEL PATTERN: install and remove, with what was planted in $state/payload, refuse it at
# once (under timeout 10: a FIFO or /dev/zero must not be waited on or read forever): exit 1, one
# line naming the journal, the tree untouched.
planted() {
	local label=$1 pat=$2 cmd before
	for cmd in install remove; do
		local args=(payload remove --state-dir "$state")
		[ "$cmd" = install ] && args=(payload install "$b" --state-dir "$state")
		before=$(stamp)
		if run 1 "$label: $cmd" timeout -k 2 60 "$bin" --sysroot "$root" "${args[@]}"; then
			err_has "$label: $cmd" "^scsitune: $state/payload/journal\.json: $pat$" && one_line "$label: $cmd" &&
				ok "$label: $cmd"
		fi
		[ "$(stamp)" = "$before" ] || fail "$label: $cmd changed the tree"
	done
}
rm -rf "$state"
mkdir -p "$state/payload"
mkfifo "$state/payload/journal.json"
planted "payload journal a FIFO" "not a regular file"
rm -f "$state/payload/journal.json" && ln -s /dev/zero "$state/payload/journal.json"
planted "payload journal a link to /dev/zero" "a symbolic link: refused"
rm -f "$state/payload/journal.json" && truncate -s 300M "$state/payload/journal.json"
planted "payload journal of 300 MB" "larger than 16 MiB"
# STATE/payload a link to a directory with a journal in it: never followed.
rm -rf "$state/payload" && mkdir -p "$work/elsewhere"
printf '{"version": 1, "release": "%s", "complete": false, "steps": []}\n' "$R" >"$work/elsewhere/journal.json"
ln -s "$work/elsewhere" "$state/payload"
planted "STATE/payload a symbolic link" "a symbolic link: refused"
rm -rf "$state" "$work/elsewhere"
# A state directory another user could write, or one above it: refused before anything is
# made or read, naming the directory and the fix; nothing written there.
untrusted() { # LABEL DIR BAD WHY: install and remove with --state-dir DIR
	local label=$1 sd=$2 bad=$3 why=$4 cmd before listing
	for cmd in install remove; do
		local args=(payload remove --state-dir "$sd")
		[ "$cmd" = install ] && args=(payload install "$b" --state-dir "$sd")
		before=$(stamp)
		listing=$(find "$work/trust" -printf '%y %m %U %p\n' | sort)
		if run 1 "$label: $cmd" timeout -k 2 60 "$bin" --sysroot "$root" "${args[@]}"; then
			grep -qxF "scsitune: state directory $sd: not trusted: $bad$why" "$work/err" && one_line "$label: $cmd" &&
				ok "$label: $cmd" || fail "$label: $cmd: $(head -c 300 "$work/err")"
		fi
		[ "$(stamp)" = "$before" ] || fail "$label: $cmd changed the tree"
		[ "$(find "$work/trust" -printf '%y %m %U %p\n' | sort)" = "$listing" ] || fail "$label: $cmd wrote in $work/trust"
	done
}
mkdir -p "$work/trust/open" && chmod 0777 "$work/trust/open"
untrusted "parent 0777" "$work/trust/open/state" "$work/trust/open" \
	" is writable by its group and others (mode 0777): chmod go-w $work/trust/open"
mkdir -p "$work/trust/theirs/state/payload" && cp "$work/status" "$work/trust/theirs/state/payload/journal.json"
chown nobody "$work/trust/theirs"
untrusted "parent owned by nobody" "$work/trust/theirs/state" "$work/trust/theirs" \
	" is owned by uid $(id -u nobody), not root: chown root $work/trust/theirs"
chown -R root "$work/trust"
