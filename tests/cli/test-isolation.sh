#!/bin/bash
# isolation tier: under --sysroot, no command reads anything of this machine.
# strace records every path each process touches; anything outside the tree
# and the files named on the command line (other than the binary, the
# directories above those paths that realpath walks, the loader's cache and
# shared libraries) fails. Commands: detect, apply --dry-run, apply, verify
# (the journal's profile, and --profile), revert, and report on committed fio
# files with a saved result set and --compare, with --state-dir and without it
# (the tree's /var/lib/scsitune: saved, compared, spooled by --upload to a
# port where nothing listens, --flush). Runs on the normal build only:
# the sanitizer runtimes read /proc/self themselves. And none of these
# commands loads libcrypto, libarchive or libkmod (core/dlib.h). detect's
# default text reads none of the disks' attributes it does not show.
# Usage: test-isolation.sh SCSITUNE FIXTURE_DIR
set -uo pipefail
bin=$1 fixtures=$2
src=$(realpath "$fixtures/../..")
profiles=$src/profiles fio=$src/tests/report/fio
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-isolation.XXXXXX")
work=$(realpath "$work")
trap 'rm -rf "$work"' EXIT
fails=0 checks=0
tree=$work/root
mkdir "$tree"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$tree"
mkdir -p "$tree/etc/default"
install -m 0640 "$src/tests/apply/irqbalance.default" "$tree/etc/default/irqbalance"
state=$work/state
# No settings file of the machine's: report reads none without --upload, but make sure.
unset SCSITUNE_CONFIG

if ! command -v strace >/dev/null; then
	echo "FAIL no host reads: strace is not installed"
	exit 1
fi

# Allowed: what the test made ($work: tree and state directory), the files
# named on the command line (profiles, fio outputs), the directories above
# them (realpath walks them), the binary, the loader's cache, shared libraries.
ancestors() { local d; for d in "$@"; do while [ "$d" != / ]; do printf '%s\n' "$d"; d=$(dirname "$d"); done; done; }
ancestors "$work" "$profiles" "$fio" >"$work/allowed"

# isolated NAME WANT_RC MIN_OPENAT2 ARGS...: scsitune ARGS under strace; exit
# WANT_RC, at least MIN_OPENAT2 openat2 calls (reads through the root layer),
# no path outside the allowed ones.
isolated() {
	local name=$1 want=$2 min=$3 rc=0
	shift 3
	checks=$((checks + 1))
	strace -f -qq -s 4096 -e trace=%file -o "$work/strace" "$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	local n
	n=$(grep -c 'openat2(' "$work/strace" || true)
	if [ "$rc" -ne "$want" ] || [ "$n" -lt "$min" ]; then
		echo "FAIL $name: exited $rc with $n openat2 calls traced (want $want and >= $min)"
		sed 's/^/  stderr: /' "$work/err" | head -5
		fails=$((fails + 1))
		return
	fi
	grep -Eo '"/[^"]*"' "$work/strace" | tr -d '"' | grep -v "^$work/" | grep -v "^$profiles/" |
		grep -v "^$fio/" | grep -vxF "$bin" | grep -vxF -e / -f "$work/allowed" |
		grep -Ev '^/etc/ld\.so\.(cache|preload)$|^/(usr/)?lib/x86_64-linux-gnu/|^/lib64/' |
		grep -Ev "${extra_allowed:-^$}" | sort -u >"$work/escaped" || true
	if [ -s "$work/escaped" ]; then
		echo "FAIL $name: paths outside the sysroot:"
		sed 's/^/  /' "$work/escaped" | head
		fails=$((fails + 1))
	else
		echo "ok   $name: no host path ($(wc -l <"$work/strace") file syscalls traced)"
	fi
	# libcrypto, libarchive and libkmod are loaded on first use (core/dlib.h):
	# none of these commands needs them (the tree has no firmware
	# certificates), so none may load them, nor libarchive's libxml2 and ICU.
	# (libcurl, loaded by an upload, brings libcrypto: extra_allowed is set.)
	[ -z "${extra_allowed:-}" ] || return 0
	checks=$((checks + 1))
	local lazy
	lazy=$(grep -Eo '/(libarchive\.so\.13|libcrypto\.so\.3|libkmod\.so\.2|libxml2\.so\.2|libicuuc\.so\.[0-9]+)"' "$work/strace" | sort -u | tr -d '"/' | tr '\n' ' ')
	if [ -n "$lazy" ]; then
		echo "FAIL $name: loaded $lazy(linked again, or loaded where it is not needed)"
		fails=$((fails + 1))
	else
		echo "ok   $name: libcrypto, libarchive, libkmod not loaded"
	fi
}

R=(--sysroot "$tree")
P=(--profile numa --profile-dir "$profiles")
# detect's default text reads of each disk what its row shows, no more
# (detect/topology.h, brief): none of the attributes only -v and JSON show,
# which JSON does read (so this check can fail).
# (A disk's attributes are opened relative to its directory, by bare name.)
unshown='openat2\([0-9]+, "(queue/(scheduler|nr_requests|rq_affinity|nomerges|read_ahead_kb|add_random|io_poll)|vendor|rev|type|state|queue_depth|iocounterbits|io(request|done|err|tmo)_cnt)"'
isolated "detect" 0 100 "${R[@]}" detect -o json
json_reads=$(grep -Ec "$unshown" "$work/strace")
isolated "detect (text)" 0 100 "${R[@]}" detect
text_reads=$(grep -Ec "$unshown" "$work/strace")
checks=$((checks + 1))
if [ "$json_reads" -gt 0 ] && [ "$text_reads" -eq 0 ]; then
	echo "ok   detect (text): none of the $json_reads reads of what only -v and JSON show"
else
	echo "FAIL detect (text): $text_reads reads of what it does not show (JSON: $json_reads)"
	grep -E "$unshown" "$work/strace" | head -3 | sed 's/^/  /'
	fails=$((fails + 1))
fi
isolated "apply --dry-run" 0 100 "${R[@]}" apply --dry-run "${P[@]}" -o json
isolated "apply --dry-run (text)" 0 100 "${R[@]}" apply --dry-run "${P[@]}"
isolated "apply" 0 100 "${R[@]}" apply "${P[@]}" --state-dir "$state"
isolated "verify (the journal's profile)" 0 100 "${R[@]}" verify --state-dir "$state"
isolated "verify --profile" 0 100 "${R[@]}" verify "${P[@]}" --state-dir "$state" -o json
isolated "revert" 0 10 "${R[@]}" revert --state-dir "$state"
isolated "report" 0 0 "${R[@]}" report --state-dir "$state" --phase base "$fio/fio-3.33-randread-2jobs-json.json"
isolated "report --compare" 0 0 "${R[@]}" report --state-dir "$state" --compare base -o json --allow-mixed \
	"$fio/fio-3.33-randread-2jobs-jsonplus.json" "$fio/fio-3.1-randread-1job-json.json"
# Without --state-dir, report keeps its sets and spool in the tree's /var/lib/scsitune
# (as apply does), never this machine's: saved, compared, spooled, flushed there.
isolated "report (the tree's state dir)" 0 0 "${R[@]}" report --phase tree "$fio/fio-3.33-randread-2jobs-json.json"
checks=$((checks + 1))
if [ -n "$(find "$tree/var/lib/scsitune/reports/tree" -name '*.json' 2>/dev/null)" ]; then
	echo "ok   report: the set is saved in the tree's /var/lib/scsitune"
else
	echo "FAIL report: no set saved in the tree's /var/lib/scsitune"; fails=$((fails + 1))
fi
isolated "report --compare (the tree's state dir)" 0 0 "${R[@]}" report --compare tree -o json \
	"$fio/fio-3.33-randread-2jobs-jsonplus.json"
# --upload to a port where nothing listens: exit 3, the batch spooled in the tree.
# libcurl's TLS libraries read their own configuration when curl starts (GnuTLS's
# /etc/gnutls/config, OpenSSL's openssl.cnf): the sending machine's, like its
# network; allowed for these two commands only.
extra_allowed='^/etc/gnutls/config$|^/usr/lib/ssl/openssl\.cnf$'

isolated "report --upload (spooled in the tree)" 3 0 "${R[@]}" report --phase up --upload-timeout 1 \
	--host-facts --upload http://127.0.0.1:1/write "$fio/fio-3.1-randread-1job-json.json"
checks=$((checks + 1))
if [ -n "$(find "$tree/var/lib/scsitune/spool" -type f 2>/dev/null)" ] && grep -q "$tree/var/lib/scsitune/spool" "$work/err"; then
	echo "ok   report --upload: spooled in the tree's /var/lib/scsitune/spool"
else
	echo "FAIL report --upload: not spooled in the tree: $(cat "$work/err")"; fails=$((fails + 1))
fi
isolated "report --flush (the tree's spool)" 3 0 "${R[@]}" report --flush --upload-timeout 1 --upload http://127.0.0.1:1/write
grep -q "$tree/var/lib/scsitune/spool" "$work/err" || {
	echo "FAIL report --flush: does not name the tree's spool: $(cat "$work/err")"; fails=$((fails + 1))
}
extra_allowed=

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
