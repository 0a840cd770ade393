# shellcheck shell=bash disable=SC2154 # variables of test-report.sh and cli-lib.sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Case treatment of test-report.sh, sourced in a subshell after setup_case
# (cli-lib.sh): --compare says what differs between the sets' host facts
# (--host-facts on a captured tree): nothing (an A/A comparison), the payload
# alone (the tree's scsi_mod version changed, no profile on either side: the
# seeds' experiment, compared), and unknown for files without host facts.
tree=$work/tree
mkdir -p "$tree" && tar -xJf "$(dirname "$0")/../fixtures/dual-socket-mpi3mr.tar.xz" -C "$tree" || fail "extract the tree"
st=$work/state
hf=(--sysroot "$tree" --host-facts --state-dir "$st")
stock=$(cat "$tree/sys/module/scsi_mod/version")
"$bin" report "${hf[@]}" --phase base "$fixtures/fio-3.33-randread-2jobs-json.json" >/dev/null 2>"$work/err" ||
	fail "saving base: $(cat "$work/err")"
# treatment CASE WANT_JSON TEXT_LINE ARGS...: compare.treatment (a Python literal) and the text line.
treatment() {
	local name=$1 want=$2 line=$3
	shift 3
	checks=$((checks + 1))
	if "$bin" report -o json "$@" >"$work/t.json" 2>"$work/err" && "$bin" report "$@" >"$work/t.txt" 2>/dev/null &&
		"$py" -c 'import json,sys
t=json.load(open(sys.argv[1]))["compare"]["treatment"]; w=eval(sys.argv[2]); assert t == w, (t, w)' "$work/t.json" "$want" &&
		grep -qxF -- "$line" "$work/t.txt"; then
		pass "$name: $line"
	else
		fail "$name: $(cat "$work/err") $(grep treatment "$work/t.txt")"; head -c 300 "$work/t.json"
	fi
}
treatment "nothing differs" "[]" "  treatment: none: nothing differs (an A/A comparison)" \
	"${hf[@]}" --compare base "$fixtures/fio-3.33-randread-2jobs-jsonplus.json"
echo 8.4.0.0-scsitune1 >"$tree/sys/module/scsi_mod/version"
treatment "the payload alone" "[{'what': 'payload', 'reference': '$stock', 'current': '8.4.0.0-scsitune1'}]" \
	"  treatment: payload $stock → 8.4.0.0-scsitune1" \
	"${hf[@]}" --compare base "$fixtures/fio-3.33-randread-2jobs-jsonplus.json"
treatment "files without host facts" "None" \
	"  treatment: unknown (a set without host facts: --run, --host-facts record them)" \
	--state-dir "$st" --compare base "$fixtures/fio-3.33-randread-2jobs-jsonplus.json"
