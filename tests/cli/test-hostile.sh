#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile input (issue 15): every case is a regression test of something an
# outside audit found. Each command runs under `timeout`: a hang is a failure
# (exit 124), never a blocked CI. Every case asserts the exit code, one line on
# stderr matching a pattern (naming the file or setting), and what stdout holds.
# Usage: test-hostile.sh SCSITUNE SOURCE_DIR
set -uo pipefail
bin=$(realpath "$1") src=$(realpath "$2")
fixtures=$src/tests/fixtures fio=$src/tests/report/fio profiles=$src/profiles
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
export SCSITUNE_CONFIG=$work/no-such.conf # never the machine's /etc/scsitune/scsitune.conf
fails=0 checks=0
T=${HOSTILE_TIMEOUT:-60}

fail() {
	fails=$((fails + 1))
	echo "FAIL $*"
}

# expect NAME RC STDERR_REGEX STDOUT_MODE -- ARGS...   (STDOUT_MODE: empty|any)
# stderr must be exactly one line ($lines if set; a usage error's "Try ..." hint aside), or empty for
# an empty regex.
expect() {
	local name=$1 want_rc=$2 err_re=$3 out_mode=$4
	shift 5
	local rc=0
	timeout -k 2 "$T" "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null || rc=$?
	checks=$((checks + 1))
	sed -i "/^Try 'scsitune .*--help' for more information\.$/d" "$work/err"
	local why=""
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="hung (killed after $T s)"
	elif [ "$rc" -ne "$want_rc" ]; then
		why="exit $rc, want $want_rc"
	elif [ -z "$err_re" ] && [ -s "$work/err" ]; then
		why="stderr not empty"
	elif [ -n "$err_re" ] && [ "$(grep -vc '^scsitune: hint: ' "$work/err")" -ne "${lines:-1}" ]; then
		# (the hint of the next step after an error is not one of its lines: scsitune(8) DIAGNOSTICS)
		why="stderr is $(grep -vc "^scsitune: hint: " "$work/err") lines (hints not counted), want ${lines:-1}"
	elif [ -n "$err_re" ] && ! grep -Eq -- "$err_re" "$work/err"; then
		why="stderr does not match /$err_re/"
	elif [ "$out_mode" = empty ] && [ -s "$work/out" ]; then
		why="stdout not empty"
	fi
	if [ -n "$why" ]; then
		fail "$name: $why"
		sed 's/^/  stderr: /' "$work/err" | head -5 | cat -v
	else
		echo "ok   $name"
	fi
}

tree=$work/root
mkdir "$tree"
tar -xJf "$fixtures/vm-virtio-scsi.tar.xz" -C "$tree"
mkfifo "$work/fifo"
mkdir "$work/dir"
good=$fio/fio-3.33-randread-2jobs-json.json
d=(--sysroot "$tree" apply --dry-run --profile-dir "$profiles")

# --- 1. Nothing a user names may block: FIFOs (no writer), devices, directories ---
expect "report FIFO" 1 "^scsitune: $work/fifo: not a regular file" empty -- report "$work/fifo"
expect "report /dev/zero" 1 "^scsitune: /dev/zero: not a regular file" empty -- report /dev/zero
expect "report directory" 1 "^scsitune: $work/dir: Is a directory" empty -- report "$work/dir"
expect "--profile FIFO" 1 "^scsitune: profile $work/fifo: not a regular file" empty -- "${d[@]}" --profile "$work/fifo"
expect "--profile /dev/zero" 1 "^scsitune: profile /dev/zero: not a regular file" empty -- "${d[@]}" --profile /dev/zero
expect "--profile directory" 1 "^scsitune: profile $work/dir: Is a directory" empty -- "${d[@]}" --profile "$work/dir"
expect "--profile directory/" 1 "^scsitune: profile /tmp/: Is a directory" empty -- "${d[@]}" --profile /tmp/
for what in fifo /dev/zero dir; do
	case $what in
	fifo) target=$work/fifo why="not a regular file" ;;
	dir) target=$work/dir why="Is a directory" ;;
	*) target=$what why="not a regular file" ;;
	esac
	inc=$work/inc-${what##*/}
	printf 'include = %s\n[queue]\nnomerges = 1\n' "$target" >"$inc"
	expect "include = $what" 1 "^scsitune: $inc:1: include '$target': $why" empty -- "${d[@]}" --profile "$inc"
done
# A profile that is one endless line (no newline in 8 MiB) is refused by size, not read forever.
head -c $((8 << 20)) /dev/zero | tr '\0' 'x' >"$work/huge-profile"
expect "--profile huge" 1 "^scsitune: profile $work/huge-profile: larger than" empty -- "${d[@]}" --profile "$work/huge-profile"
up=(report --upload http://127.0.0.1:9/write --state-dir "$work/state")
expect "--auth-file FIFO" 1 "^scsitune: --auth-file $work/fifo: not a regular file" empty -- "${up[@]}" --auth-file "$work/fifo" "$good"
expect "--auth-file /dev/zero" 1 "^scsitune: --auth-file /dev/zero: not a regular file" empty -- "${up[@]}" --auth-file /dev/zero "$good"
expect "--ca-file FIFO" 1 "^scsitune: --ca-file $work/fifo: not a regular file" empty -- "${up[@]}" --ca-file "$work/fifo" "$good"
expect "--ca-file directory" 1 "^scsitune: --ca-file $work/dir: Is a directory" empty -- "${up[@]}" --ca-file "$work/dir" "$good"
expect "--config FIFO" 1 "^scsitune: $work/fifo: not a regular file" empty -- report --config "$work/fifo" "$good"
expect "--config directory" 1 "^scsitune: $work/dir: Is a directory" empty -- report --config "$work/dir" "$good"
expect "--compare FIFO" 1 "^scsitune: --compare $work/fifo: not a regular file" empty -- \
	report --state-dir "$work/state" --compare "$work/fifo" "$good"
expect "--compare /dev/zero" 1 "^scsitune: --compare /dev/zero: not a regular file" empty -- \
	report --state-dir "$work/state" --compare /dev/zero "$good"
[ -d "$work/state/spool" ] && fail "a refused upload setting left a spool behind"

# --- 3. Numbers out of range in fio output: one line naming the file and the field, never 0 or a wrap ---
# mutate SRC DST PYTHON: DST is SRC's JSON document after the Python statement ran on it as d.
mutate() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, stmt = sys.argv[1:]
t = open(src).read()
d = json.loads(t[t.index('{'):])
exec(stmt)
open(dst, 'w').write(json.dumps(d, indent=1))
PY
}
f3=$fio/fio-3.33-randread-2jobs-json.json f2=$fio/fio-2.17-randread-randwrite-2groups-json.json
f21=$fio/fio-2.1.4-5groups-json.json
mutate "$f3" "$work/ts.json" "del d['timestamp_ms']; d['timestamp'] = 9223372036854775807"
expect "fio timestamp x 1000 overflows" 1 "^scsitune: $work/ts.json: 'timestamp' .*out of range" empty -- report "$work/ts.json"
mutate "$f3" "$work/ts10000.json" "d['timestamp_ms'] = 253402300800000"
expect "fio timestamp_ms in the year 10000" 1 "^scsitune: $work/ts10000.json: 'timestamp_ms' .*out of range" empty -- report "$work/ts10000.json"
mutate "$f3" "$work/tsneg.json" "d['timestamp_ms'] = -5"
expect "fio timestamp_ms negative" 1 "^scsitune: $work/tsneg.json: 'timestamp_ms' .*out of range" empty -- report "$work/tsneg.json"
mutate "$f3" "$work/clatn.json" "d['jobs'][1]['read']['clat_ns']['N'] = 1e30"
expect "fio clat N 1e30" 1 "^scsitune: $work/clatn.json: jobs\[1\] .*'N' .*out of range" empty -- report "$work/clatn.json"
mutate "$f3" "$work/gid.json" "d['jobs'][0]['groupid'] = 1e30"
expect "fio groupid 1e30" 1 "^scsitune: $work/gid.json: jobs\[0\] .*'groupid' .*out of range" empty -- report "$work/gid.json"
mutate "$f2" "$work/kib.json" "d['jobs'][0]['read']['io_bytes'] = 2**55"
expect "fio 2.x io_bytes KiB x 1024 wraps" 1 "^scsitune: $work/kib.json: jobs\[0\] .*'io_bytes' .*out of range" empty -- report "$work/kib.json"
mutate "$f21" "$work/llround.json" "d['jobs'][0]['read']['iops'] = 1e300; d['jobs'][0]['read']['runtime'] = 10**12"
expect "fio 2.1 iops x runtime unchecked" 1 "^scsitune: $work/llround.json: jobs\[0\] .*'iops' .*out of range" empty -- report "$work/llround.json"
mutate "$f3" "$work/iopsinf.json" "d['jobs'][0]['read']['iops'] = 1.7e308; d['jobs'][1]['read']['iops'] = 1.7e308"
expect "fio IOPS sum to infinity" 1 "^scsitune: $work/iopsinf.json: .*'iops' .*out of range" empty -- report "$work/iopsinf.json"
mutate "$f3" "$work/bytesum.json" "d['jobs'][0]['read']['io_bytes'] = 2**63 - 1; d['jobs'][1]['read']['io_bytes'] = 2**63 - 1"
expect "fio io_bytes sum wraps" 1 "^scsitune: $work/bytesum.json: .*'io_bytes' .*out of range" empty -- report "$work/bytesum.json"
mutate "$f3" "$work/meaninf.json" "d['jobs'][0]['read']['clat_ns']['mean'] = 1.7e308"
expect "fio clat mean x samples to infinity" 1 "^scsitune: $work/meaninf.json: .*'mean' .*out of range" empty -- report "$work/meaninf.json"
mutate "$fio/fio-3.33-randread-2jobs-jsonplus.json" "$work/bins.json" \
	"b = d['jobs'][0]['read']['clat_ns']['bins']; b[str(2**64 - 1)] = 1"
expect "fio json+ bin above 2^63" 1 "^scsitune: $work/bins.json: jobs\[0\] .*bins.*out of range" empty -- report "$work/bins.json"
mutate "$fio/fio-3.33-randread-2jobs-jsonplus.json" "$work/bincount.json" \
	"b = d['jobs'][0]['read']['clat_ns']['bins']; k = list(b)[:2]; b[k[0]] = 2**63 - 1; b[k[1]] = 2**63 - 1"
expect "fio json+ bin counts sum wraps" 1 "^scsitune: $work/bincount.json: jobs\[0\] .*bins.*out of range" empty -- report "$work/bincount.json"
mutate "$f2" "$work/clatus.json" "d['jobs'][0]['read']['clat']['max'] = 1e306"
expect "fio 2.x clat usec x 1000 to infinity" 1 "^scsitune: $work/clatus.json: jobs\[0\] .*'max' .*out of range" empty -- report "$work/clatus.json"

# --- 5. Terminal escapes: nothing from outside reaches the terminal raw ---
# ESC [2J (clear screen), an OSC title sequence ended by BEL, a C1 CSI (U+009B), DEL.
evil=$'\e[2J\e]0;pwned\a\xc2\x9b1m\x7f'
export EVIL=$evil
# clean FILE NAME [noform]: no control byte but newline and tab, no C1 control, and (without noform)
# the escaped ESC [2J is there.
clean() {
	checks=$((checks + 1))
	if ! python3 - "$1" "${3:-}" <<'PY'; then
import sys
b = open(sys.argv[1], 'rb').read()
bad = [c for c in b if (c < 0x20 and c not in b'\n\t') or c == 0x7f]
sys.exit(1 if bad or b'\xc2\x9b' in b or (b'\\x1b[2J' not in b and sys.argv[2] != 'noform') else 0)
PY
		fail "$2: control characters reach the terminal, or the escaped form is missing:"
		grep -a 'x1b\|pwned' "$1" | head -3 | cat -v | sed 's/^/  /'
	else
		echo "ok   $2: escaped"
	fi
}
es=$work/es
mkdir "$es"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$es"
# udev properties: the HBA's model from the hwdb; a garbage attribute's value, which the warning quotes.
python3 -c 'import os,sys; p=sys.argv[1]; t=open(p).read().splitlines()
open(p,"w").write("\n".join("E:ID_MODEL_FROM_DATABASE=Fusion " + os.environ["EVIL"] if l.startswith("E:ID_MODEL_FROM_DATABASE=") else l for l in t) + "\n")' \
	"$es/run/udev/data/+pci:0000:b1:00.0"
printf '12%s\n' "$evil" >"$es/sys/block/sdc/queue/nr_requests"
# (-v: the default text does not read nr_requests, which it does not show)
expect "escapes: detect (udev, sysfs)" 0 "nr_requests: unexpected value" any -- --sysroot "$es" detect -v
clean "$work/out" "udev's ID_MODEL_FROM_DATABASE in detect's text"
grep -aq 'Fusion \\x1b\[2J' "$work/out" || fail "the udev model is not in detect's text, escaped"
clean "$work/err" "a garbage sysfs value in a warning"
# sysfs and /proc strings with control characters are refused by the readers, with warnings that do not quote them.
es2=$work/es2
cp -a "$es" "$es2"
printf 'EVIL%s\n' "$evil" >"$es2/sys/block/sdb/device/model"
python3 -c 'import os,sys; p=sys.argv[1]; t=open(p).read()
open(p,"w").write(t.replace("mpi3mr0-msix0\n", "mpi3mr0-msix0" + os.environ["EVIL"] + "\n"))' "$es2/proc/interrupts"
# (sdc's nr_requests is not read by the default text: two warnings)
lines=2 expect "escapes: sysfs model, /proc/interrupts name" 0 "/model: unexpected non-text value$" any -- --sysroot "$es2" detect
grep -q "/proc/interrupts: unexpected non-text value$" "$work/err" || fail "no warning for /proc/interrupts"
clean "$work/out" "detect's text with a model and an IRQ name refused" noform
clean "$work/err" "the warnings for them" noform
# Profile values: a comment (the "why" the plan shows); a bad value in an error.
printf '[hba]\nmatch_driver = mpi3mr\n[queue]\n# why %s\nnomerges = 1\n' "$evil" >"$work/evil-profile"
# (The plan reads only the attributes the profile sets: nomerges, not the garbage nr_requests, so no warning.)
expect "escapes: plan (profile values)" 0 "" any -- --sysroot "$es" apply --dry-run --profile "$work/evil-profile"
clean "$work/out" "profile comment and value in the plan's text"
printf '[hba]\nmatch_driver = mpi3mr\n[queue]\nnomerges = 1%s\n' "$evil" >"$work/evil-value"
expect "escapes: bad profile value" 1 "^scsitune: $work/evil-value:4: bad value" empty -- \
	--sysroot "$es" apply --dry-run --profile "$work/evil-value"
clean "$work/err" "a bad profile value in the error"
# File contents echoed in errors: fio output that is not JSON; a fio job name; a failed job's name.
printf 'x%s\n' "$evil" >"$work/evil.json"
expect "escapes: not-JSON fio file" 1 "^scsitune: $work/evil.json: not JSON" empty -- report "$work/evil.json"
clean "$work/err" "a file's first line in the error"
mutate "$f3" "$work/evil-fail.json" "d['jobs'][0]['jobname'] = 'job' + __import__('os').environ['EVIL']; d['jobs'][0]['error'] = 5"
expect "escapes: failed fio job's name" 1 "^scsitune: $work/evil-fail.json: fio job 0 'job" empty -- report "$work/evil-fail.json"
clean "$work/err" "a failed fio job's name in the error"
# A file name (the user's own) is escaped too.
expect "escapes: missing file's name" 1 "^scsitune: $work/name" empty -- report "$work/name$evil.json"
clean "$work/err" "a file name in the error"

# --- 6. numa_node outside -1..(possible nodes - 1): a warning naming the file, the node unknown ---
ds=$work/ds
mkdir "$ds"
tar -xJf "$fixtures/dual-socket-mpi3mr.tar.xz" -C "$ds"
nn=sys/devices/pci0000:b0/0000:b0:02.0/0000:b1:00.0/numa_node # the mpi3mr HBA on node 1 (possible 0-1)
for v in -5 -2147483649 99999 2147483648 2; do
	echo "$v" >"$ds/$nn"
	expect "numa_node $v: detect" 0 "^scsitune: warning: $ds/$nn: numa_node $v is neither -1 nor a possible node \(0-1\): treated as unknown$" any -- \
		--sysroot "$ds" detect -o json
	got=$(python3 -c 'import json,sys; print([h["numa_node"] for h in json.load(open(sys.argv[1]))["hbas"] if h["pci_address"] == "0000:b1:00.0"])' "$work/out")
	[ "$got" = "[None]" ] || fail "numa_node $v: JSON numa_node is $got, want null"
	expect "numa_node $v: plan" 0 "^scsitune: warning: $ds/$nn: numa_node $v is neither" any -- \
		--sysroot "$ds" apply --dry-run --profile numa --profile-dir "$profiles" -o json
	grep -q "the HBA's numa_node is -1" "$work/out" && fail "numa_node $v: the plan calls it -1"
	grep -q "numa_node unreadable or out of range" "$work/out" || fail "numa_node $v: the plan does not call the node unknown"
done
echo 1 >"$ds/$nn"
expect "numa_node 1 (a possible node): no warning" 0 "" any -- --sysroot "$ds" detect -o json
echo -1 >"$ds/$nn"
expect "numa_node -1: no warning" 0 "" any -- --sysroot "$ds" detect -o json

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
