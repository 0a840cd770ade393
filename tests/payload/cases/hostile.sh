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
	[not-json]="manifest\.json: not a JSON object"
	[kernel-not-in-files]="manifest\.json: kernel: its file kernel/linux-image-6\.1\.0-98-scsitune_1\.0_amd64\.deb is not in \"files\""
	[kernel-release-path]="manifest\.json: kernel: missing or invalid \"release\""
	[kernel-package]="manifest\.json: kernel: \"package\" is not linux-image-6\.1\.0-98-scsitune"
	[kernel-same-release]="manifest\.json: kernel: release .* is the modules' release"
	[kernel-version-option]="manifest\.json: kernel: missing or invalid \"version\""
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

# --- 3b. a hostile state directory (issue 29) -------------------------------------
section "3b. hostile state directory"
# planted LABEL PATTERN: install and remove, with what was planted in $state/payload, refuse it at
# once (under timeout 10: a FIFO or /dev/zero must not be waited on or read forever): exit 1, one
# line naming the journal, the tree untouched.
planted() {
	local label=$1 pat=$2 cmd before
	for cmd in install remove; do
		local args=(payload remove --state-dir "$state")
		[ "$cmd" = install ] && args=(payload install "$b" --state-dir "$state")
		before=$(stamp)
		if run 1 "$label: $cmd" timeout -k 2 10 "$bin" --sysroot "$root" "${args[@]}"; then
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
		if run 1 "$label: $cmd" timeout -k 2 10 "$bin" --sysroot "$root" "${args[@]}"; then
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
