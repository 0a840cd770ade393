#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One harness for SECONDS on its corpus. Any finding (a crash, a sanitizer
# report, a property violated, a leak, a timeout, out of memory) fails, with
# the reproducer's path and how to make it a regression test (README.md).
# Usage: run-fuzz.sh HARNESS SECONDS CORPUS_DIR FINDINGS_DIR [MORE_SEED_DIRS...]
set -uo pipefail
harness=$1 seconds=$2 corpus=$3 findings=$4
shift 4
name=$(basename "$harness")
mkdir -p "$corpus" "$findings"
seeds=()
for d in "$@"; do [ -d "$d" ] && seeds+=("$d"); done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log=$findings/$name.log
rc=0
"$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
	-artifact_prefix="$findings/$name-" "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
grep -E '^(#[0-9]+\s+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tr '\n' ' '
echo
if [ "$rc" -ne 0 ]; then
	echo "FAIL $name: libFuzzer exited $rc; the end of its log ($log):"
	tail -40 "$log"
	echo "Reproducer: $(ls -t "$findings/$name-"* 2>/dev/null | head -1)"
	echo "Make it a regression test: copy it to tests/fuzz/regress/${name#fuzz-}/ (tests/fuzz/README.md)."
	exit 1
fi
echo "ok   $name: $seconds s, no finding; corpus $(find "$corpus" -type f | wc -l) inputs"
