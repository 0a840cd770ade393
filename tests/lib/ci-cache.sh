# SPDX-License-Identifier: GPL-2.0-or-later
# ci-cache.sh -- the tests' content-keyed cache, outside the clone (sourced).
#
# What one run builds from the same inputs as the last one (the kernel
# packages of payload/build --kernel, the payload modules, the vm tier's
# Debian image, the package tier's Debian 12 chroot tarball) is kept under
# $SCSITUNE_CI_CACHE (default /var/cache/scsitune-ci), one directory per
# entry:
#
#   ROOT/NAME/KEY/data/       what was built (a directory tree)
#   ROOT/NAME/KEY/SHA256SUMS  every regular file of data/, with its SHA-256
#   ROOT/NAME/KEY/inputs.txt  what the key was computed from, one per line
#
# KEY is the SHA-256 of every input (files hashed by content, and strings:
# package versions, tool versions, arguments). An entry is made in a
# temporary directory next to it and renamed into place, so a killed run
# leaves no partial entry under a key; an entry whose files do not match
# SHA256SUMS (or have files it does not list, or lack one it lists) is
# corrupt: it is removed and rebuilt, never used. The root and every entry
# must be this user's and writable by no one else (else not used: a cache
# another user can write could hand a root test run their build).
#
# SCSITUNE_NO_CACHE=1: nothing is looked up (every build runs cold); what
# is built is still stored, so the next run can be warm. The newest two
# entries of each NAME are kept (CI_CACHE_KEEP), older ones removed when a
# new one is stored. CI_CACHE_MAX_AGE_MIN (for one fetch): an older entry
# is a miss (removed).
#
#   ci_cache_key NAME INPUT...    sets CI_CACHE_KEY and CI_CACHE_INPUTS.
#                                 INPUT: a file or directory (hashed by
#                                 content: every file under it, by relative
#                                 name), or =TEXT (the text itself)
#   ci_cache_fetch NAME KEY DEST  0: hit, DEST is a fresh copy of the
#                                 entry's data; 1: miss. One line on stderr
#                                 either way (the hash, what was reused, or
#                                 why it missed).
#   ci_cache_store NAME KEY SRC   copies SRC into the entry (an existing
#                                 entry under KEY is left as it is)
#
# scripts/ci-cache lists, verifies and clears the entries.

CI_CACHE_ROOT=${SCSITUNE_CI_CACHE:-/var/cache/scsitune-ci}
# Inputs inside the clone are named relative to it in the key: the same
# sources in another clone (CI's fresh one, a developer's) are the same key.
_ci_cache_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

_ci_cache_log() { echo "ci-cache: $*" >&2; }

# _ci_cache_safe DIR: DIR is a directory (not a link), this user's, and not
# writable by group or others.
_ci_cache_safe() {
	local d=$1 owner mode
	[ -d "$d" ] && [ ! -L "$d" ] || return 1
	read -r owner mode < <(stat -c '%u %a' "$d") || return 1
	[ "$owner" = "$(id -u)" ] || { _ci_cache_log "$d is owned by uid $owner, not $(id -u): not used"; return 1; }
	[ $((8#$mode & 8#022)) -eq 0 ] || { _ci_cache_log "$d is writable by group or others (mode $mode): not used"; return 1; }
}

# _ci_cache_dir NAME: makes ROOT/NAME (0755) and checks both; prints it.
_ci_cache_dir() {
	local name=$1
	case $name in '' | */* | .*) _ci_cache_log "bad entry name '$name'"; return 1 ;; esac
	mkdir -p -m 0755 "$CI_CACHE_ROOT/$name" 2>/dev/null ||
		{ _ci_cache_log "cannot make $CI_CACHE_ROOT/$name"; return 1; }
	_ci_cache_safe "$CI_CACHE_ROOT" && _ci_cache_safe "$CI_CACHE_ROOT/$name" || return 1
	echo "$CI_CACHE_ROOT/$name"
}

ci_cache_key() {
	local name=$1 in h
	shift
	CI_CACHE_INPUTS="entry $name"
	for in in "$@"; do
		case $in in
		=*) h=$(printf '%s' "${in#=}" | sha256sum | cut -c1-64)
			CI_CACHE_INPUTS+=$'\n'"text ${in#=}" ;;
		*)
			if [ -d "$in" ]; then
				# every file by relative name and content, links by target
				h=$(cd "$in" && find . \( -type f -o -type l \) -print0 | LC_ALL=C sort -z |
					while IFS= read -r -d '' f; do
						if [ -L "$f" ]; then printf 'L %s %s\n' "$f" "$(readlink "$f")"
						else printf 'F %s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-64)"; fi
					done | sha256sum | cut -c1-64)
			elif [ -f "$in" ]; then
				h=$(sha256sum <"$in" | cut -c1-64)
			else
				_ci_cache_log "key input $in: no such file"
				return 1
			fi
			local rel
			rel=$(realpath -m -- "$in")
			case $rel in "$_ci_cache_repo"/*) rel=${rel#"$_ci_cache_repo"/} ;; esac
			CI_CACHE_INPUTS+=$'\n'"file $rel $h" ;;
		esac
	done
	CI_CACHE_KEY=$(printf '%s\n' "$CI_CACHE_INPUTS" | sha256sum | cut -c1-64)
}

# _ci_cache_sums DIR: SHA256SUMS lines of every regular file under DIR/data
# (relative names, sorted); fails on anything but files, directories and links.
_ci_cache_sums() {
	(cd "$1/data" && find . ! -type d ! -type f ! -type l | grep -q . && exit 2
	 find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum --)
}

ci_cache_fetch() {
	local name=$1 key=$2 dest=$3 dir e short=${2:0:16} bad sums
	if [ "${SCSITUNE_NO_CACHE:-}" = 1 ]; then
		_ci_cache_log "$name $short: miss (SCSITUNE_NO_CACHE=1: not looked up)"
		return 1
	fi
	dir=$(_ci_cache_dir "$name") || { _ci_cache_log "$name $short: miss (cache not usable)"; return 1; }
	e=$dir/$key
	exec {_ci_lock}>"$dir/.lock"
	flock "$_ci_lock"
	if [ ! -d "$e" ]; then
		local others
		others=$(find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)
		flock -u "$_ci_lock"; exec {_ci_lock}>&-
		_ci_cache_log "$name $short: miss (no entry for these inputs; $others entries of other inputs in $dir)"
		return 1
	fi
	if [ -n "${CI_CACHE_MAX_AGE_MIN:-}" ] && [ -f "$e/SHA256SUMS" ] &&
		[ -z "$(find "$e/SHA256SUMS" -mmin -"$CI_CACHE_MAX_AGE_MIN")" ]; then
		rm -rf "$e"
		flock -u "$_ci_lock"; exec {_ci_lock}>&-
		_ci_cache_log "$name $short: miss (the entry is older than $CI_CACHE_MAX_AGE_MIN minutes: removed, made again)"
		return 1
	fi
	bad=''
	if ! _ci_cache_safe "$e" || [ ! -f "$e/SHA256SUMS" ] || [ ! -d "$e/data" ]; then
		bad='incomplete entry'
	elif ! sums=$(_ci_cache_sums "$e"); then
		bad='it holds something other than files, directories and links'
	elif [ "$sums" != "$(cat "$e/SHA256SUMS")" ]; then
		bad="checksum mismatch: $(diff <(echo "$sums") "$e/SHA256SUMS" | grep -m1 '^[<>]' | cut -c1-200)"
	fi
	if [ -n "$bad" ]; then
		rm -rf "$e"
		flock -u "$_ci_lock"; exec {_ci_lock}>&-
		_ci_cache_log "$name $short: miss (corrupt entry removed, $bad): rebuilt"
		return 1
	fi
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	cp -a --sparse=always "$e/data" "$dest.ci-cache.$$" && mv "$dest.ci-cache.$$" "$dest" || {
		rm -rf "$dest.ci-cache.$$"
		flock -u "$_ci_lock"; exec {_ci_lock}>&-
		_ci_cache_log "$name $short: miss (cannot copy the entry to $dest)"
		return 1
	}
	flock -u "$_ci_lock"; exec {_ci_lock}>&-
	_ci_cache_log "$name $short: hit, reused $e ($(wc -l <"$e/SHA256SUMS") files, $(du -sh "$e/data" | cut -f1), made $(date -r "$e/SHA256SUMS" '+%F %T')) for $dest"
	return 0
}

ci_cache_store() {
	local name=$1 key=$2 src=$3 dir e tmp short=${2:0:16}
	dir=$(_ci_cache_dir "$name") || { _ci_cache_log "$name $short: not stored (cache not usable)"; return 0; }
	e=$dir/$key
	tmp=$(mktemp -d "$dir/.new.XXXXXX") || { _ci_cache_log "$name $short: not stored (mktemp in $dir)"; return 0; }
	chmod 0755 "$tmp"
	if ! cp -a --sparse=always "$src" "$tmp/data" || ! _ci_cache_sums "$tmp" >"$tmp/SHA256SUMS"; then
		rm -rf "$tmp"
		_ci_cache_log "$name $short: not stored (cannot copy $src, or it holds something other than files, directories and links)"
		return 0
	fi
	printf '%s\n' "$CI_CACHE_INPUTS" >"$tmp/inputs.txt"
	exec {_ci_lock}>"$dir/.lock"
	flock "$_ci_lock"
	if [ -d "$e" ]; then
		rm -rf "$tmp"
		_ci_cache_log "$name $short: already stored"
	else
		mv "$tmp" "$e"
		_ci_cache_log "$name $short: stored $src as $e ($(wc -l <"$e/SHA256SUMS") files, $(du -sh "$e/data" | cut -f1))"
		# Kept: the newest CI_CACHE_KEEP entries of NAME (default 2); left-over
		# temporary entries of killed runs older than a day go too.
		ls -1dt "$dir"/*/ 2>/dev/null | tail -n +$((${CI_CACHE_KEEP:-2} + 1)) | while read -r old; do
			_ci_cache_log "$name: removed the older entry $(basename "$old")"
			rm -rf "$old"
		done
		find "$dir" -mindepth 1 -maxdepth 1 -name '.new.*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
	fi
	flock -u "$_ci_lock"; exec {_ci_lock}>&-
	return 0
}

# ci_ccache_setup BASEDIR: Debian's ccache for the C builds of a run, its
# directory ROOT/ccache checked as an entry's is (this user's, writable by
# no one else). Exports what ccache reads: CCACHE_DIR; CCACHE_BASEDIR=BASEDIR
# and CCACHE_NOHASHDIR (paths under BASEDIR are hashed relative to it, so
# another clone of the same sources hits); CCACHE_COMPILERCHECK=content (a
# new compiler, the same path, is a miss); at most 2 GB (ccache drops the
# least recently used). ccache's own key is the compiler, its arguments and
# the preprocessed source; a result whose checksum does not match is a miss
# and is compiled again (tests/lib/test-ccache.sh). 1 (a line on stderr)
# when the directory is not usable.
ci_ccache_setup() {
	local d
	d=$(_ci_cache_dir ccache) || return 1
	export CCACHE_DIR=$d CCACHE_BASEDIR=$1 CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content CCACHE_MAXSIZE=2G
	unset CCACHE_DISABLE CCACHE_RECACHE CCACHE_READONLY CCACHE_PREFIX CCACHE_CONFIGPATH
}
