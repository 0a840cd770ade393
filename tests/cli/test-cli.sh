#!/bin/bash
# cli tier: options, exit codes and bad input. Every case asserts the exit
# code, that stdout holds nothing half-written, and the one-line message.
# Usage: test-cli.sh SCSITUNE FIXTURE_DIR
set -uo pipefail
bin=$1 fixtures=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# expect NAME RC STDERR_REGEX STDOUT_MODE -- ARGS...   (STDOUT_MODE: empty|any|json)
expect() {
	local name=$1 want_rc=$2 err_re=$3 out_mode=$4
	shift 5
	local rc=0
	"$bin" "$@" >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	local why=""
	[ "$rc" -eq "$want_rc" ] || why="exit $rc, want $want_rc"
	if [ -z "$why" ] && [ -n "$err_re" ] && ! grep -Eq -- "$err_re" "$work/err"; then
		why="stderr does not match /$err_re/"
	fi
	case $out_mode in
	empty) [ -z "$why" ] && [ -s "$work/out" ] && why="stdout not empty" ;;
	json) [ -z "$why" ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/out" 2>/dev/null &&
		why="stdout is not one JSON document" ;;
	esac
	if [ -n "$why" ]; then
		fails=$((fails + 1))
		echo "FAIL $name: $why"
		sed 's/^/  stderr: /' "$work/err" | head -5
	else
		echo "ok   $name"
	fi
}

jq_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$work/out" "$1"; }

tree=$work/root
mkdir "$tree"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$tree"

# Usage errors: 64, message plus the --help hint, nothing on stdout.
expect "no command" 64 "no command given" empty --
expect "unknown command" 64 "unknown command 'frobnicate'" empty -- frobnicate
expect "prefix is not a command" 64 "unknown command 'det'" empty -- det
expect "bad -o" 64 "--output: unknown format 'yaml'" empty -- -o yaml detect
expect "bad -o after command" 64 "unknown format 'xml'" empty -- detect -o xml
expect "unknown option" 64 "^scsitune: detect: unknown option '--frob'$" empty -- detect --frob
# Every message is scsitune's (not getopt's, which names argv[0]'s path), with the nearest name.
expect "unknown option: the nearest" 64 "^scsitune: detect: unknown option '--hab' \(did you mean '--hba'\?\)$" empty -- detect --hab x
expect "unknown command: the nearest" 64 "^scsitune: unknown command 'detcet' \(did you mean 'detect'\?\)$" empty -- detcet
expect "unknown global option" 64 "^scsitune: unknown option '--verbos' \(did you mean '--verbose'\?\)$" empty -- --verbos detect
expect "unknown short option" 64 "^scsitune: revert: unknown option '-x'$" empty -- revert -x
expect "an abbreviated option is not taken" 64 "^scsitune: apply: unknown option '--prof' \(did you mean '--profile'\?\)$" empty -- apply --prof numa --dry-run
expect "missing option argument" 64 "^scsitune: verify: option '--state-dir' needs an argument$" empty -- verify --state-dir
expect "unwanted option argument" 64 "^scsitune: apply: option '--dry-run' takes no argument$" empty -- apply --dry-run=yes
for args in "detect --frob" "--frob" "-o" "detect --hab x" "verify --state-dir" "apply --prof x"; do
	# shellcheck disable=SC2086
	"$bin" $args >/dev/null 2>"$work/err"
	checks=$((checks + 1))
	if grep -qv -e '^scsitune: ' -e "^Try 'scsitune " "$work/err" || grep -q "$bin" "$work/err"; then
		echo "FAIL '$args': a message line not from scsitune: $(cat "$work/err")"; fails=$((fails + 1))
	else
		echo "ok   '$args': every message line is scsitune's"
	fi
done
expect "extra argument" 64 "unexpected argument 'sda'" empty -- detect sda
expect "help unknown" 64 "help: unknown command" empty -- help frob
expect "help help" 0 "" any -- help help
grep -q "^Usage: scsitune help \[COMMAND\]" "$work/out" || { echo "FAIL help help"; fails=$((fails + 1)); }
expect "--help detect" 0 "" any -- --help detect
grep -q "^Usage: scsitune detect" "$work/out" || { echo "FAIL --help detect does not show detect's help"; fails=$((fails + 1)); }
expect "--help frob" 64 "^scsitune: help: unknown command 'frob'" empty -- --help frob

# Help and version: 0.
expect "--help" 0 "" any -- --help
grep -q "detect" "$work/out" || { echo "FAIL --help does not list detect"; fails=$((fails + 1)); }
expect "help detect" 0 "" any -- help detect
grep -q "Usage: scsitune detect" "$work/out" || { echo "FAIL help detect"; fails=$((fails + 1)); }
expect "detect --help" 0 "" any -- detect --help
expect "--version" 0 "" any -- --version
grep -Eq '^scsitune [0-9]+\.[0-9]+\.[0-9]+$' "$work/out" || { echo "FAIL --version output"; fails=$((fails + 1)); }

# Bad --sysroot: 1, one line naming it, nothing on stdout.
expect "missing sysroot" 1 "^scsitune: --sysroot $work/nope: No such file or directory$" empty -- --sysroot "$work/nope" detect
[ "$(grep -vc '^scsitune: hint: ' "$work/err")" -eq 1 ] || { echo "FAIL missing sysroot: not one line"; fails=$((fails + 1)); }
touch "$work/file"
expect "sysroot is a file" 1 "--sysroot $work/file: Not a directory" empty -- --sysroot "$work/file" detect -o json
mkdir "$work/empty"
expect "sysroot without sys/" 1 "^scsitune: --sysroot $work/empty: no sys/ directory: not a captured root tree$" empty -- --sysroot "$work/empty" detect
expect "sysroot after command" 0 "" json -- detect --sysroot "$tree" -o json
# PCI IDs as lspci -n writes them (schema_version 2): hex strings, vendor:device, class 0107.
v=$(jq_get "[d['schema_version']] + [(h['vendor_id'], h['device_id'], h['pci_id'], h['subsystem_id'], h['class'], h['prog_if'], h['revision']) for h in d['hbas'] if h['pci_address'] == '0000:17:00.0']")
checks=$((checks + 1))
[ "$v" = "[2, ('1000', '00a5', '1000:00a5', '1000:4660', '0107', '00', '01')]" ] && echo "ok   PCI IDs as lspci writes them" ||
	{ echo "FAIL PCI IDs as lspci writes them: $v"; fails=$((fails + 1)); }

# --hba names an HBA as lsblk takes names: its PCI address (with or without the
# domain), one of its SCSI hosts, one of its disks (name, /dev path, key).
for which in 0000:b1:00.0 b1:00.0 host5 sdg /dev/sdf wwn-0x5000c500a1b2c400 \
	"/sys/devices/pci0000:b0/0000:b0:02.0/0000:b1:00.0"; do
	expect "--hba $which" 0 "" json -- --sysroot "$tree" detect -o json --hba "$which"
	v=$(jq_get "[h['pci_address'] for h in d['hbas']]")
	checks=$((checks + 1))
	[ "$v" = "['0000:b1:00.0']" ] && echo "ok   --hba $which: the node-1 HBA only" ||
		{ echo "FAIL --hba $which: $v"; fails=$((fails + 1)); }
done
expect "--hba sda: the AHCI HBA" 0 "" json -- --sysroot "$tree" detect -o json --hba sda
v=$(jq_get "[h['pci_address'] for h in d['hbas']]")
checks=$((checks + 1))
[ "$v" = "['0000:00:17.0']" ] && echo "ok   --hba sda: the AHCI HBA" || { echo "FAIL --hba sda: $v"; fails=$((fails + 1)); }
expect "--hba not on the host" 1 "^scsitune: --hba sdz: no such HBA, SCSI host or disk on this host \(HBAs: 0000:00:17.0, 0000:17:00.0, 0000:00:14.0, 0000:b1:00.0\)$" empty -- --sysroot "$tree" detect --hba sdz
expect "--hba host99" 1 "no such HBA, SCSI host or disk" empty -- --sysroot "$tree" detect --hba host99
expect "--hba host5x" 1 "no such HBA, SCSI host or disk" empty -- --sysroot "$tree" detect --hba host5x

# SCSITUNE_THREADS must be a number from 1 to 64.
for bad in 0 65 x 4x ""; do
	rc=0
	SCSITUNE_THREADS=$bad "$bin" --sysroot "$tree" detect >"$work/out" 2>"$work/err" || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -eq 1 ] && [ ! -s "$work/out" ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
		grep -q "^scsitune: SCSITUNE_THREADS: '$bad' is not a number from 1 to 64$" "$work/err"; then
		echo "ok   SCSITUNE_THREADS='$bad' refused"
	else
		echo "FAIL SCSITUNE_THREADS='$bad': exit $rc"; fails=$((fails + 1))
	fi
done

# stdout that cannot be written is an error, not a silent success.
rc=0
"$bin" --sysroot "$tree" detect -o json >/dev/full 2>"$work/err" || rc=$?
checks=$((checks + 1))
if [ "$rc" -eq 1 ] && grep -q "writing output: No space left on device" "$work/err"; then
	echo "ok   stdout is /dev/full"
else
	echo "FAIL stdout is /dev/full: exit $rc"; fails=$((fails + 1))
fi

# Garbage attributes: exit 0, one warning naming the file, the field is null.
host=$(cd "$tree/sys/class/scsi_host" && ls | head -1)
cq=$tree/sys/class/scsi_host/$host/can_queue
cp "$cq" "$work/cq.orig"
echo "lots" >"$cq"
expect "garbage can_queue" 0 "^scsitune: warning: $tree/sys/devices/.*/scsi_host/$host/can_queue: unexpected value 'lots' \\(expected an integer\\)$" json -- --sysroot "$tree" detect -o json
[ "$(grep -c warning "$work/err")" -eq 1 ] || { echo "FAIL garbage can_queue: want exactly one warning"; fails=$((fails + 1)); }
v=$(jq_get "[h for b in d['hbas'] for h in b['scsi_hosts'] if 'host%d' % h['host_no'] == '$host'][0]['can_queue']")
[ "$v" = None ] || { echo "FAIL garbage can_queue: JSON value $v, want null"; fails=$((fails + 1)); }
cp "$work/cq.orig" "$cq"

# A directory where a file should be: a warning with the reason.
nr=$(ls -d "$tree"/sys/devices/*/*/*/host*/port-*/end_device-*/target*/*/block/*/queue/nr_requests 2>/dev/null | head -1)
if [ -n "$nr" ]; then
	mv "$nr" "$work/nr.orig" && mkdir "$nr"
	expect "directory as attribute" 0 "warning: .*queue/nr_requests: cannot read: Is a directory" json -- --sysroot "$tree" detect -o json
	rmdir "$nr" && mv "$work/nr.orig" "$nr"
else
	echo "FAIL: no SAS disk nr_requests in the fixture"; fails=$((fails + 1))
fi

# Truncated /proc/interrupts: a warning, IRQs still found through msi_irqs/.
cp "$tree/proc/interrupts" "$work/interrupts.orig"
head -c 200 "$work/interrupts.orig" >"$tree/proc/interrupts"
expect "truncated /proc/interrupts" 0 "warning: $tree/proc/interrupts: malformed at line" json -- --sysroot "$tree" detect -o json
n=$(jq_get "sum(len(b['irqs']) for b in d['hbas'])")
[ "$n" -gt 0 ] || { echo "FAIL truncated interrupts: no IRQs left"; fails=$((fails + 1)); }
cp "$work/interrupts.orig" "$tree/proc/interrupts"

# A disk's class link through a linked directory (a capture that kept a
# symlink on the way): the listing's unopened path is resolved by the scan,
# and detect sees the same disks, by their own paths.
expect "class link via a symlink (before)" 0 "" json -- --sysroot "$tree" detect -o json
cp "$work/out" "$work/detect-plain.json"
disk=$(cd "$tree/sys/class/block" && for b in *; do case $(readlink "$b") in */block/"$b") echo "$b"; break ;; esac; done)
link=$(readlink "$tree/sys/class/block/$disk")
top=${link#../../devices/}
top=${top%%/*}
ln -s "$top" "$tree/sys/devices/alias-$top"
ln -sfn "../../devices/alias-$top/${link#../../devices/"$top"/}" "$tree/sys/class/block/$disk"
expect "class link via a symlink" 0 "" json -- --sysroot "$tree" detect -o json
checks=$((checks + 1))
cmp -s "$work/out" "$work/detect-plain.json" || { echo "FAIL class link via a symlink: detect differs"; diff "$work/detect-plain.json" "$work/out" | head -5; fails=$((fails + 1)); }
ln -sfn "$link" "$tree/sys/class/block/$disk"
rm "$tree/sys/devices/alias-$top"

# A hostile tree: a symlink that points at the host's / stays inside the sysroot.
rm -rf "$tree/proc/sys/kernel/osrelease"
ln -s /etc/hostname "$tree/proc/sys/kernel/osrelease"
expect "absolute symlink stays in sysroot" 0 "warning: $tree/proc/sys/kernel/osrelease: cannot read: No such file or directory" json -- --sysroot "$tree" detect -o json
v=$(jq_get "d['kernel']['release']")
[ "$v" = None ] || { echo "FAIL hostile symlink: read '$v' from the host"; fails=$((fails + 1)); }

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
