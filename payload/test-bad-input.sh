#!/bin/bash
# payload/test-bad-input.sh CACHE -- payload/build refuses bad input with a
# one-line error naming the thing, its documented exit status, and leaves
# --out as it was: an unknown or malformed release (65), a patch that does
# not apply (66), a patch that changes an exported symbol's CRC (67), a
# --kernel configuration fragment with a malformed line or a line the final
# .config does not have (68), bad usage (64); a .deb in the cache that is
# not apt's is downloaded again (one small .deb), a cache writable by others
# refused (1). CACHE is the .deb cache payload/build used. PART: build
# (default: usage, releases, patches, CRCs, the cache) or kernel (the
# --kernel cases: one unpacks the whole source and configures it), two
# ctest tests so that neither holds the other's CPU time on a loaded machine.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd -P)
build=$here/build
cache=$1
part=${2:-build}
case $part in build | kernel) ;; *) echo "usage: $0 CACHE [build|kernel]" >&2; exit 64 ;; esac
t=$(mktemp -d "${TMPDIR:-/tmp}/payload-bad.XXXXXX")
trap 'rm -rf "$t"' EXIT
fails=0
# expect NAME STATUS PATTERN -- ARGS...: run payload/build, check the exit
# status, that stderr's last line matches PATTERN, and that --out ($t/out,
# holding a sentinel) is unchanged.
expect() {
	local name=$1 want=$2 pat=$3 rc=0
	shift 4
	rm -rf "$t/out" && mkdir -p "$t/out" && echo keep >"$t/out/sentinel"
	"$build" "$@" >"$t/stdout" 2>"$t/stderr" || rc=$?
	local last
	last=$(tail -n 1 "$t/stderr")
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want; stderr: $last" >&2
		# (the lines before it: payload/build prints a failed build's first errors there)
		tail -n 12 "$t/stderr" | sed 's/^/    /' >&2
		fails=$((fails + 1))
	elif ! grep -qE -- "$pat" <<<"$last"; then
		echo "FAIL $name: last stderr line '$last' does not match /$pat/" >&2
		fails=$((fails + 1))
	elif [ "$(ls -A "$t/out")" != sentinel ] || [ "$(cat "$t/out/sentinel")" != keep ]; then
		echo "FAIL $name: --out was changed: $(ls -A "$t/out" | tr '\n' ' ')" >&2
		fails=$((fails + 1))
	elif ls -A "$t" | grep -q '^\.out\.'; then
		echo "FAIL $name: a temporary output directory was left next to --out" >&2
		fails=$((fails + 1))
	else
		echo "ok   $name: exit $rc: $last"
	fi
}
if [ "$part" = build ]; then
	expect usage-no-out 64 '^usage: payload/build' --
	expect usage-bad-option 64 '^usage: payload/build' -- --frobnicate --out "$t/out"
	expect release-malformed 65 "unknown release 'not-a-release'" -- --release not-a-release --cache "$cache" --out "$t/out"
	expect release-unknown 65 'unknown release 6\.1\.0-999-amd64: apt knows no package linux-headers-6\.1\.0-999-amd64' -- \
		--release 6.1.0-999-amd64 --cache "$cache" --out "$t/out"

	# A series whose second patch no longer applies (a context line changed).
	mkdir -p "$t/p-stale"
	cp "$here/patches"/* "$t/p-stale/"
	# replace patch 0002 by one whose context is not in scsi.c
	printf 'diff --git a/drivers/scsi/scsi.c b/drivers/scsi/scsi.c\n--- a/drivers/scsi/scsi.c\n+++ b/drivers/scsi/scsi.c\n@@ -1,1 +1,1 @@\n-no such line\n+x\n' \
		>"$t/p-stale/0002-scsi-percpu-iorequest-iodone-counters.patch"
	expect patch-does-not-apply 66 'patch 0002-scsi-percpu-iorequest-iodone-counters.patch does not apply to linux-source-6\.1' -- \
		--patches "$t/p-stale" --cache "$cache" --out "$t/out"

	# A series with one more patch that grows struct scsi_device where genksyms
	# sees it: the ABI check must name an export whose CRC changed.
	mkdir -p "$t/p-abi"
	cp "$here/patches"/* "$t/p-abi/"
	cp "$here/../tests/payload/9999-break-kabi.patch" "$t/p-abi/" # (the KABI-breaking fixture uses it too)
	echo 9999-break-kabi.patch >>"$t/p-abi/series"
	expect crc-mismatch 67 '^payload/build: scsi_mod: CRC of exported symbol [A-Za-z_0-9]+ differs from Module\.symvers of 6\.1\.0-[0-9]+-amd64' -- \
		--patches "$t/p-abi" --cache "$cache" --out "$t/out"

	# The download cache is input too: a .deb that is not the one apt's index
	# describes is downloaded again (here the small linux-kbuild one, cut short),
	# and a cache another user could write is refused before anything is read.
	mkdir -m 0755 "$t/cache2"
	for f in "$cache"/*.deb "$cache"/*.subset.tar "$cache"/*.subset.tar.sha256; do
		[ -f "$f" ] && ln "$f" "$t/cache2/" 2>/dev/null || cp "$f" "$t/cache2/"
	done
	kb=$(ls "$t/cache2"/linux-kbuild-*.deb | head -1)
	head -c 100000 "$kb" >"$kb.cut" && rm "$kb" && mv "$kb.cut" "$kb"
	expect cached-deb-cut-short 66 'patch 0002-scsi-percpu-iorequest-iodone-counters.patch does not apply' -- \
		--patches "$t/p-stale" --cache "$t/cache2" --out "$t/out"
	if grep -q "cached $(basename "$kb") is not apt's (SHA-256 differs): downloading it again" "$t/stderr" &&
		[ "$(sha256sum <"$kb" | cut -c1-64)" = "$(apt-cache show "$(dpkg-deb -f "$kb" Package)=$(dpkg-deb -f "$kb" Version)" |
			awk '$1 == "SHA256:" { print $2; exit }')" ]; then
		echo "ok   cached-deb-cut-short: said so, downloaded again, now apt's"
	else
		echo "FAIL cached-deb-cut-short: the cut .deb was not noticed or not replaced: $(grep -m1 kbuild "$t/stderr")" >&2
		fails=$((fails + 1))
	fi
	chmod 0775 "$t/cache2"
	expect cache-group-writable 1 "cache2: not owned by uid $(id -u), or writable by group or others: not used" -- \
		--cache "$t/cache2" --out "$t/out"
else
	# --kernel: usage, and a configuration fragment that cannot be met. The
	# fragment is checked before anything compiles (about 40 s: the whole source
	# unpacked, tinyconfig, merge_config.sh, olddefconfig).
	expect stock-without-kernel 64 'stock-kernel needs --kernel' -- --stock-kernel --out "$t/out"
	expect kconfig-missing 64 'kconfig /nonexistent/vm.config: no such file' -- --kernel --kconfig /nonexistent/vm.config --out "$t/out"
	printf 'CONFIG_SMP=y\nnot a config line\n' >"$t/bad-syntax.config"
	expect kconfig-syntax 68 "bad-syntax.config: line 2: 'not a config line' is not CONFIG_NAME=VALUE" -- \
		--kernel --kconfig "$t/bad-syntax.config" --cache "$cache" --out "$t/out"
	# 9p without INET (9P_FS depends on INET && NET_9P): olddefconfig drops it.
	printf '# 9p, but no TCP/IP\nCONFIG_NET=y\nCONFIG_NET_9P=y\nCONFIG_NETWORK_FILESYSTEMS=y\nCONFIG_9P_FS=y\n' >"$t/no-inet.config"
	expect kconfig-unmet 68 'kernel: no-inet\.config: CONFIG_9P_FS=y is not in the final \.config \(a dependency is missing: it is CONFIG_9P_FS=unset\)' -- \
		--kernel --kconfig "$t/no-inet.config" --skip-block --cache "$cache" --out "$t/out"
fi

[ "$fails" -eq 0 ] || { echo "payload/test-bad-input.sh: $fails failed" >&2; exit 1; }
echo "payload/test-bad-input.sh: all passed"
