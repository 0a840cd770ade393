#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The commands with modes (report, payload) refuse exactly what their table
# says, and --help prints that table. From `scsitune CMD --help`'s "Options by
# mode" block (cli/shared/modes.c prints it from the same table the binary
# checks against), for every mode and every option of the command:
#  - an option the block does not list for the mode: exit 64 and
#    "--OPT does not go with MODE", stdout empty;
#  - an option it lists: taken; the command line then has one argument too
#    many (or too few) for the mode, so the binary stops at that usage error,
#    the same message as without the option, and runs nothing.
# Also: the block names every option of the command's --help, and no option
# twice in a mode. Nothing is read or written outside a temp dir (--sysroot).
# Usage: test-modes.sh SCSITUNE
set -uo pipefail
bin=${1:?usage: test-modes.sh SCSITUNE}
T=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-modes.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir "$T/root"
fails=0 checks=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# A valid value for each option that takes one (a flag has none here): the
# option's own check passes, so only the mode decides. An option with an
# argument missing here fails the "taken" check with "needs an argument".
declare -A value=(
	[phase]=tuned [state-dir]=$T/st [group]=0 [compare]=baseline [upload]=http://127.0.0.1:9/write
	[auth-file]=$T/auth [ca-file]=$T/ca [upload-timeout]=5 [config]=$T/c.conf [html]=$T/o.html
	[query]=http://127.0.0.1:9 [query-api]=export [hosts]=a [hosts-file]=$T/hosts [since]=7d
	[gate]='kiops>=+5%' [confidence]=95 [query-timeout]=5 [runs]=2 [device]=/dev/null [rw]=randread [bs]=4k
	[iodepth]=1 [numjobs]=1 [runtime]=1 [job-file]=$T/job.fio [node]=0 [fio]=/bin/true
	[output]=$T/b.bundle [signature]=$T/b.minisig [trusted-key]=$T/k.pub [release]=6.1.0-28-amd64
	[password-file]=$T/pw
)

# How each mode is written, and a right and a wrong number of arguments for it.
declare -A words=(
	["report FILE..."]="report" ["report --run"]="report --run" ["report --flush"]="report --flush"
	["report --query"]="report --query http://127.0.0.1:9"
	["payload pack"]="payload pack" ["payload install"]="payload install"
	["payload verify"]="payload verify" ["payload remove"]="payload remove" ["payload enroll"]="payload enroll"
)
declare -A good_args=(
	["report FILE..."]="$T/x.json" ["payload pack"]="$T/dir" ["payload install"]="$T/b.bundle"
	["payload enroll"]="$T/b.bundle"
)
declare -A bad_args=(
	["report --run"]="$T/x.json" ["report --flush"]="$T/x.json" ["report --query"]="$T/x.json"
	["payload verify"]="$T/a $T/b" ["payload remove"]="$T/x" ["payload enroll"]="$T/a $T/b"
)

# run ARGS...: the binary under the temp root; sets rc, err (stderr), out (stdout).
run() {
	rc=0
	"$bin" --sysroot "$T/root" "$@" >"$T/out" 2>"$T/err" || rc=$?
	err=$(cat "$T/err")
	out=$(cat "$T/out")
	checks=$((checks + 1))
}

for cmd in report payload; do
	help=$("$bin" "$cmd" --help) || { fail "$cmd --help exited $?"; continue; }
	# The block: "  MODE: --a --b" then indented continuation lines, up to a blank line.
	block=$(printf '%s\n' "$help" | awk '/^Options by mode/ {on = 1; next} on && /^$/ {exit} on')
	[ -n "$block" ] || { fail "$cmd --help has no 'Options by mode' block"; continue; }
	declare -A opts_of=()
	modes=()
	while IFS= read -r line; do
		if [[ $line =~ ^\ \ ([a-z]+\ [^:]+):(.*)$ ]]; then
			mode=${BASH_REMATCH[1]}
			modes+=("$mode")
			opts_of[$mode]=${BASH_REMATCH[2]}
		else
			opts_of[$mode]+=" $line"
		fi
	done <<<"$block"
	all=$(printf '%s\n' "${opts_of[@]}" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	# Every option of the command's --help (but the global ones) is in the block.
	globals=$("$bin" --help | sed -n '/^Global options:/,/^$/p' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	for o in $(printf '%s\n' "$help" | sed '/^Global options:/,/^$/d' | grep -oE -- '(^|[ [])--[a-z][a-z0-9-]*' |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		grep -qxF -- "$o" <<<"$globals$(printf '\n%s' "$all")" || fail "$cmd: $o is in --help but in no mode of the block"
	done
	[ "${#modes[@]}" -ge 2 ] || fail "$cmd: fewer than two modes in the block"
	# The options that choose a mode: the second word of a mode's name.
	selectors=()
	for mode in "${modes[@]}"; do
		read -ra w <<<"$mode"
		[[ ${w[1]:-} == --* ]] && selectors+=("${w[1]}")
	done
	for mode in "${modes[@]}"; do
		[ -n "${words[$mode]+x}" ] || { fail "$cmd: mode '$mode' is new to this test (add it to words)"; continue; }
		dups=$(tr ' ' '\n' <<<"${opts_of[$mode]}" | grep . | sort | uniq -d)
		[ -z "$dups" ] || fail "$mode: listed twice: $dups"
		read -ra w <<<"${words[$mode]}"
		read -ra good <<<"${good_args[$mode]:-}"
		read -ra bad <<<"${bad_args[$mode]:-}"
		# The reference: the mode with the wrong number of arguments and no other option.
		run "${w[@]}" "${bad[@]}"
		ref=$err
		if [ "$rc" -ne 64 ] || [ -z "$ref" ] || [[ $ref == *"does not go with"* ]]; then
			fail "$mode with the wrong arguments: exit $rc, want 64 and the mode's message: $ref"
			continue
		fi
		for o in $all; do
			name=${o#--}
			arg=()
			[ -n "${value[$name]+x}" ] && arg=("${value[$name]}")
			# The mode's own selector is already on the line.
			[[ " ${w[*]} " == *" $o "* ]] && continue
			# Another mode's selector (report --run, --flush, --query): with none
			# on the line it picks its own mode; with one it is refused (either).
			if [[ " ${selectors[*]} " == *" $o "* ]]; then
				[[ ${w[1]:-} == --* ]] || continue
				run "${w[@]}" "$o" "${arg[@]}"
				[ "$rc" -eq 64 ] && [[ $err == *" does not go with report --"* ]] ||
					fail "$mode $o: two modes at once: got exit $rc: ${err%%$'\n'*}"
				continue
			fi
			# A global option (payload's --output outside pack) goes with every mode.
			if grep -qxF -- "$o" <<<"$globals" && ! [[ " ${opts_of[$mode]} " == *" $o "* ]]; then
				continue
			fi
			if [[ " ${opts_of[$mode]} " == *" $o "* ]]; then
				run "${w[@]}" "$o" "${arg[@]}" "${bad[@]}"
				if [ "$rc" -ne 64 ] || [ "$err" != "$ref" ]; then
					fail "$mode $o: listed, so taken: want the mode's argument error, got exit $rc: ${err%%$'\n'*}"
				fi
			else
				run "${w[@]}" "$o" "${arg[@]}" "${good[@]}"
				if [ "$rc" -ne 64 ] || [[ $err != *"$o does not go with $mode; it goes with "* ]] || [ -n "$out" ]; then
					fail "$mode $o: not listed, so refused: got exit $rc: ${err%%$'\n'*}"
				fi
			fi
		done
	done
	unset opts_of
done
echo "$checks command lines, $fails failed"
[ "$fails" -eq 0 ] && [ "$checks" -gt 100 ]
