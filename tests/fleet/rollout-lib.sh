# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# The helpers of test-rollout.sh's cases (sourced by it, after lib.sh): the
# fleets' hosts (make_fleet, inventory), ansible-playbook runs (play) and the
# checks on what they left (check, same_tree, untouched, verified,
# waves_are). Globals the driver sets: bin src py T playbook now; each
# case's own: fleet_hosts vm (the service's URL, in the inventory).
rollout() { "$py" "$src/tests/fleet/check-rollout.py" "$@"; }

hosts=(f1 f2 f3 f4 f5 f6 f7 f8) # fleet A; fleet B: the first five (fleet_hosts)
declare -A fixture=([f1]=dual-socket-mpi3mr [f2]=dual-socket-mpi3mr [f3]=four-node [f4]=dual-socket-mpi3mr
	[f5]=offline-cpus [f6]=dual-socket-mpi3mr [f7]=four-node [f8]=no-hba)
# make_fleet DIR NAME: the hosts of ${fleet_hosts[@]} (host names NAME-f1 ...: each fleet
# its own in the one service), their trees' snapshots, their fio results
# (baseline around 45 KIOPS, tuned 10-20 % more; each host its own numbers).
make_fleet() {
	local d=$1 name=$2 h i=0 b1 b2 b3 t1 t2 t3
	for h in "${fleet_hosts[@]}"; do
		i=$((i + 1))
		make_host "$d/$h" "${fixture[$h]}" "$name-$h" || { fail "make_host $h"; return 1; }
		# the host's scale s = 1 + i/50: baseline s*(1.0, 0.9, 0.95), tuned s*(1.15, 1.12, 1.18)
		read -r b1 b2 b3 t1 t2 t3 < <(awk -v s="$(awk -v i="$i" 'BEGIN { print 1 + i / 50 }')" \
			'BEGIN { printf "%.6g %.6g %.6g %.6g %.6g %.6g\n", s, s * 0.9, s * 0.95, s * 1.15, s * 1.12, s * 1.18 }')
		make_fio "$d/$h/fio" baseline $((now - 3 * 3600000)) "$b1" "$b2" "$b3" &&
			make_fio "$d/$h/fio" tuned $((now - 2 * 3600000)) "$t1" "$t2" "$t3" ||
			{ fail "make_fio $h"; return 1; }
		snap "$d/$h/root" >"$d/$h.snap"
	done
}
# inventory DIR [HOST=TUNED_PREFIX]...: DIR/inventory.yml (tuned-runK.json unless a prefix is given).
inventory() {
	local d=$1 h k
	shift
	declare -A prefix=()
	for k in "$@"; do prefix[${k%%=*}]=${k#*=}; done
	{
		echo "scsitune:"
		echo "  hosts:"
		for h in "${fleet_hosts[@]}"; do
			local p=${prefix[$h]:-tuned}
			cat <<HOST
    $h:
      scsitune_sysroot: $d/$h/root
      scsitune_state_dir: $d/$h/state
      scsitune_fio_files:
        baseline: [$d/$h/fio/baseline-run1.json, $d/$h/fio/baseline-run2.json, $d/$h/fio/baseline-run3.json]
        tuned: [$d/$h/fio/$p-run1.json, $d/$h/fio/$p-run2.json, $d/$h/fio/$p-run3.json]
HOST
		done
		cat <<VARS
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    scsitune_bin: $bin
    scsitune_query_bin: $bin
    scsitune_profile_dir: $src/profiles
    scsitune_upload_url: $vm/write
    scsitune_query_url: $vm
    scsitune_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
    scsitune_query_environment: {SCSITUNE_CONFIG: $SCSITUNE_CONFIG}
    fleet_test_python: $py
    fleet_test_dir: $src/tests/fleet
VARS
	} >"$d/inventory.yml"
}
# play NAME WANT_RC DIR [ansible-playbook args]: the output in $T/NAME.log.
play() {
	local name=$1 want=$2 d=$3 rc=0 t0
	shift 3
	t0=$(date +%s)
	timeout 1200 ansible-playbook -i "$d/inventory.yml" "$playbook" "$@" >"$T/$name.log" 2>&1 || rc=$?
	checks=$((checks + 1))
	if [ "$rc" -eq "$want" ]; then
		pass "$name: ansible-playbook exit $rc ($(($(date +%s) - t0)) s)"
	else
		fail "$name: ansible-playbook exit $rc, want $want"
		grep -E 'fatal|FAILED|ERROR|WARNING' "$T/$name.log" | head -20
	fi
	rollout waves "$T/$name.log" | sed 's/^/       /'
}
same_tree() { # DIR HOST: the host's tree hashes as its snapshot
	[ "$(snap "$1/$2/root")" = "$(cat "$1/$2.snap")" ]
}
untouched() { # DIR HOST...: trees as before, state directories empty
	local d=$1 h
	shift
	for h in "$@"; do
		same_tree "$d" "$h" || { echo "$h: the tree changed"; return 1; }
		[ -z "$(ls -A "$d/$h/state")" ] || { echo "$h: state $(ls -A "$d/$h/state")"; return 1; }
	done
	echo "untouched: $*"
}
st() { "$bin" --sysroot "$1/$2/root" "${@:3}"; }
verified() { # DIR HOST...: apply's journal there, scsitune verify exit 0, the rollout mark
	local d=$1 h
	shift
	for h in "$@"; do
		st "$d" "$h" verify --state-dir "$d/$h/state" >/dev/null 2>&1 || { echo "$h: verify failed"; return 1; }
		[ "$(stat -c %a "$d/$h/state/rollout-gate.json" 2>&1)" = 640 ] || { echo "$h: no rollout mark of mode 0640"; return 1; }
		"$py" -c 'import json, sys; json.load(open(sys.argv[1]))["judged"]["tuned"]["set"]' "$d/$h/state/rollout-gate.json" ||
			{ echo "$h: the rollout mark does not name the tuned set judged"; return 1; }
	done
	echo "verified and marked: $*"
}
check() { # NAME COMMAND...
	checks=$((checks + 1))
	local name=$1
	shift
	local out=$T/check-$BASHPID.out
	if "$@" >"$out" 2>&1; then pass "$name: $(tail -1 "$out")"; else fail "$name:"; sed 's/^/  /' "$out" | head -20; fi
}
waves_are() { # LOG PATTERN...: the wave summaries match, in order
	local log=$1 i=0 p
	shift
	mapfile -t got < <(rollout waves "$log")
	for p in "$@"; do
		[[ ${got[$i]:-} =~ $p ]] || { echo "wave $((i + 1)): '${got[$i]:-none}' does not match /$p/"; return 1; }
		i=$((i + 1))
	done
	[ "${#got[@]}" -eq "$#" ] || { echo "${#got[@]} wave summaries, want $#"; return 1; }
	echo "${#got[@]} waves as expected"
}
