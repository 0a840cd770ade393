#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion offers what the program accepts: every command and long
# option of `scsitune --help` and `scsitune CMD --help`, the -o values, and
# directories for --sysroot. Runs without the bash-completion package.
# With the bash-completion package installed, everything is checked a second
# time with its helpers (_init_completion, _filedir) loaded.
# Usage: check-completion.sh SCSITUNE COMPLETION_FILE
set -uo pipefail
bin=${1:?usage: check-completion.sh SCSITUNE COMPLETION_FILE}
file=${2:?usage: check-completion.sh SCSITUNE COMPLETION_FILE}
status=0
fail() { echo "FAIL${WITH_BASH_COMPLETION:+ (with bash-completion)}: $*"; status=1; }

bash_completion=/usr/share/bash-completion/bash_completion
if [ -n "${WITH_BASH_COMPLETION:-}" ]; then
	set +u # bash_completion is not written for set -u
	# shellcheck source=/dev/null
	source "$bash_completion" || { echo "FAIL: cannot source $bash_completion"; exit 1; }
fi
# shellcheck source=/dev/null
source "$file" || { echo "FAIL: cannot source $file"; exit 1; }
complete -p scsitune >/dev/null 2>&1 || fail "$file does not register a completion for scsitune"

# comp WORD...: complete the last word as bash would; result in $got.
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	# The line as typed: no blanks around the "=" bash splits off.
	local w prev=
	COMP_LINE=
	for w in "$@"; do
		[ -n "$COMP_LINE" ] && [ "$w" != = ] && [ "$prev" != = ] && COMP_LINE+=" "
		COMP_LINE+=$w
		prev=$w
	done
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_scsitune
	got=" ${COMPREPLY[*]} "
}
expect_has() { # expect_has WORD DESCRIPTION
	[[ $got == *" $1 "* ]] || fail "$2: '$1' not offered (got:$got)"
}
expect_only() { # expect_only "LIST" DESCRIPTION
	[ "$(tr ' ' '\n' <<<"$got" | sed '/^$/d' | sort | tr '\n' ' ')" = "$(tr ' ' '\n' <<<"$1" | sort | tr '\n' ' ' | sed 's/^ //')" ] ||
		fail "$2: expected '$1', got '$got'"
}

long_opts() { grep -oE -- '(^|[^[:alnum:]-])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }

main_help=$("$bin" --help) || { echo "FAIL: $bin --help exited $?"; exit 1; }
commands=$(printf '%s\n' "$main_help" | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}')

comp scsitune ''
for c in $commands; do expect_has "$c" "command name"; done
comp scsitune --
for o in $(long_opts <<<"$main_help"); do expect_has "$o" "global option"; done
global=$(sed -n '/^Global options:/,/^$/p' <<<"$main_help" | long_opts)
for c in $commands; do
	[ "$c" = help ] && continue
	comp scsitune help ''
	expect_has "$c" "help CMD"
	cmd_help=$("$bin" "$c" --help)
	if ! grep -q '^Options by mode' <<<"$cmd_help"; then
		comp scsitune "$c" --
		for o in $(long_opts <<<"$cmd_help"); do expect_has "$o" "option of $c"; done
		continue
	fi
	# A command with modes (report, payload): on a line in a mode, exactly that mode's options of
	# --help's "Options by mode" block and the global ones; report before a mode is chosen: the fio
	# FILE mode's and the options that choose the others. Every option is offered in some mode.
	offered=""
	while IFS= read -r line; do
		mode=${line%%:*} opts=$(long_opts <<<"${line#*:}" | tr '\n' ' ')
		read -ra mw <<<"${mode# }"
		case ${mw[1]} in
		FILE...) comp scsitune "$c" -- ;;
		--query) comp scsitune "$c" --query http://vm:8428 -- ;;
		*) comp scsitune "$c" "${mw[1]}" -- ;;
		esac
		want="$global $opts"
		[ "${mw[1]}" = FILE... ] && want+=" $(awk '{print $2}' <<<"$(sed -n '/^Options by mode/,/^$/p' <<<"$cmd_help" | grep -oE '^  [a-z]+ --[a-z]+')")"
		expect_only "$(tr -s ' \n' '  ' <<<"$want" | sed 's/^ //; s/ $//')" "${mode# }: the mode's options"
		offered+=" $opts"
	done < <(sed -n '/^Options by mode/,/^$/p' <<<"$cmd_help" | sed '1d;/^$/d' |
		awk '/^  [a-z]/ {if (l) print l; l = $0; next} {l = l " " $0} END {if (l) print l}')
	for o in $(long_opts <<<"$cmd_help"); do
		grep -qxF -- "$o" <<<"$global" || [[ " $offered " == *" $o "* ]] || fail "option of $c: '$o' in no mode"
	done
done

comp scsitune -o ''
expect_only "text json" "-o values"
comp scsitune detect --output j
expect_only "json" "--output values after the command"
comp scsitune --output = ''
expect_only "text json" "--output=VALUE"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/root-a" "$tmp/root-b"
touch "$tmp/root-file"
comp scsitune --sysroot "$tmp/root"
expect_only "$tmp/root-a $tmp/root-b" "--sysroot completes directories only"
comp scsitune --sysroot "$tmp/root-a" ''
for c in $commands; do expect_has "$c" "command after --sysroot DIR"; done
comp scsitune -o json detect ''
expect_only "" "no arguments after detect"

# --profile follows --profile-dir on the line (before it, and with =).
mkdir "$tmp/profiles"
touch "$tmp/profiles/site-numa" "$tmp/profiles/site-default"
comp scsitune apply --profile-dir "$tmp/profiles" --profile ''
expect_only "site-default site-numa" "--profile names from --profile-dir"
comp scsitune verify --profile-dir = "$tmp/profiles" -p site-n
expect_only "site-numa" "--profile names from --profile-dir=DIR"
# --compare and --phase offer the saved phases: of --state-dir, else of the --sysroot tree.
mkdir -p "$tmp/state/reports/baseline" "$tmp/state/reports/tuned" "$tmp/root-a/var/lib/scsitune/reports/canary"
comp scsitune report --state-dir "$tmp/state" --compare ''
expect_only "baseline tuned" "--compare phases of --state-dir"
comp scsitune report --state-dir "$tmp/state" --phase t
expect_only "tuned" "--phase phases of --state-dir"
comp scsitune --sysroot "$tmp/root-a" report --compare ''
expect_only "canary" "--compare phases of the --sysroot tree"
# --hba: the HBAs of the --sysroot tree.
mkdir -p "$tmp/root-b/sys/devices/pci0000:00/0000:00:05.0/host3/scsi_host/host3" "$tmp/root-b/sys/class/scsi_host"
touch "$tmp/root-b/sys/devices/pci0000:00/0000:00:05.0/vendor"
ln -s ../../devices/pci0000:00/0000:00:05.0/host3/scsi_host/host3 "$tmp/root-b/sys/class/scsi_host/host3"
ln -s ../../../host3 "$tmp/root-b/sys/devices/pci0000:00/0000:00:05.0/host3/scsi_host/host3/device"
comp scsitune --sysroot "$tmp/root-b" detect --hba ''
expect_only "0000:00:05.0" "--hba: the --sysroot tree's HBAs"

[ "$status" -eq 0 ] && echo "ok${WITH_BASH_COMPLETION:+ (with bash-completion)}: completion offers commands (${commands//$'\n'/ }), options, -o values, --sysroot directories, profiles of --profile-dir, saved phases, the tree's HBAs"
if [ -z "${WITH_BASH_COMPLETION:-}" ] && [ -r "$bash_completion" ]; then
	WITH_BASH_COMPLETION=1 bash "$0" "$@" || status=1
fi
exit "$status"
