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
