#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# monitoring tier: what a fleet's monitoring gets from scsitune, checked with
# the tools that read it. Nothing of this machine is changed: every check
# reads the source tree (and the built binary) or copies in a temporary
# directory.
#
# Cases (each its own CTest test monitoring/CASE):
#   rules-check   `promtool check rules` (Debian's prometheus, 2.42) on
#                 fleet/alerts/scsitune.rules.yml: it parses, every
#                 expression and template is valid; every alert has a
#                 severity label, a summary and a description naming a
#                 scsitune or systemctl command to run.
#   rules-test    `promtool test rules` on fleet/alerts/tests/*.yml: each
#                 alert fires, and does not fire, as the tests say; then
#                 each planted breach of the rules in a copy (the mpi3mr
#                 filter dropped, the join not per instance, the payload's
#                 not-installed alerted, a shorter `for:`, a staleness
#                 threshold of an hour, the newest check not taken) makes
#                 the tests fail.
#   vmalert       `vmalert -dryRun -rule=FILE` (Debian's victoria-metrics,
#                 1.79): vmalert reads the same file; a copy with a broken
#                 expression is refused (the check can fail).
#   units         debian/scsitune.scsitune-metrics.{service,timer} through
#                 `systemd-analyze verify` (systemd 252) as copies named as
#                 installed whose ExecStart is this build's scsitune (verify
#                 needs the binary to exist; the host's /usr/sbin is not
#                 touched): no message at all (an unknown directive is only
#                 a warning there, so any output fails); `systemd-analyze
#                 security --offline=yes` exposure at most 2.0; what the
#                 units must say (ExecStart, the one writable directory, the
#                 condition on it, every 5 minutes, the timer's [Install]
#                 and none in the service); control: a misspelled
#                 directive and an unhardened copy are caught.
# Usage: test-monitoring.sh --case CASE SRC SCSITUNE | --list
set -uo pipefail
cases=(rules-check rules-test vmalert units)
usage="usage: test-monitoring.sh --case CASE SRC SCSITUNE | --list"
status=0 pass=0
fail() { echo "FAIL: $*"; status=1; }
ok() { pass=$((pass + 1)); }
need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || { echo "FAIL: $p not installed (scripts/install-deps --test installs it)"; exit 1; }
	done
}

case ${1:-} in
--list)
	printf '%s\n' "${cases[@]}"
	exit 0
	;;
--case)
	[ $# -eq 4 ] || { echo "$usage" >&2; exit 64; }
	[[ " ${cases[*]} " == *" $2 "* ]] || { echo "test-monitoring.sh: no case '$2' (--list names them)" >&2; exit 64; }
	case=$2 src=$(realpath "$3") bin=$(realpath "$4")
	;;
*)
	echo "$usage" >&2
	exit 64
	;;
esac
rules=$src/fleet/alerts/scsitune.rules.yml
work=$(mktemp -d "${TMPDIR:-/tmp}/scsitune-monitoring.XXXXXX")
trap 'rm -rf "$work"' EXIT

case_rules_check() {
	need promtool python3
	promtool check rules "$rules" >"$work/check.log" 2>&1 && ok || { fail "promtool check rules:"; sed 's/^/    /' "$work/check.log"; }
	# Every alert: severity, summary, description; the description names
	# what to run (a scsitune or systemctl command in backticks).
	python3 - "$rules" <<-'PY' && ok || fail "an alert lacks its severity, summary or command (above)"
		import re, sys, yaml
		doc = yaml.safe_load(open(sys.argv[1]))
		bad, n = 0, 0
		for g in doc["groups"]:
		    for r in g["rules"]:
		        if "alert" not in r:
		            continue
		        n += 1
		        a, l = r.get("annotations", {}), r.get("labels", {})
		        if l.get("severity") not in ("info", "warning", "critical"):
		            print(f"  {r['alert']}: severity {l.get('severity')!r}"); bad = 1
		        for k in ("summary", "description"):
		            if not a.get(k):
		                print(f"  {r['alert']}: no {k}"); bad = 1
		        if not re.search(r"`(scsitune|systemctl) [^`]+`", a.get("description", "")):
		            print(f"  {r['alert']}: the description names no command to run"); bad = 1
		        if not r.get("for"):
		            print(f"  {r['alert']}: no for: (one bad scrape would page)"); bad = 1
		print(f"  {n} alerts")
		sys.exit(bad or n == 0)
	PY
}

# mutate NAME OLD NEW: a copy of fleet/alerts with OLD replaced by NEW (once,
# after the line naming the alert ALERT when given as ALERT:OLD) in the rules.
mutate() {
	local name=$1 old=$2 new=$3
	rm -rf "${work:?}/${name:?}"
	cp -r "$src/fleet/alerts" "$work/$name"
	python3 - "$work/$name/scsitune.rules.yml" "$old" "$new" <<-'PY'
		import sys
		p, old, new = sys.argv[1:]
		s = open(p).read()
		start = 0
		if ":" in old and old.split(":", 1)[0].startswith("Scsitune"):
		    alert, old = old.split(":", 1)
		    start = s.index("alert: " + alert)
		i = s.index(old, start)
		open(p, "w").write(s[:i] + new + s[i + len(old):])
	PY
}

case_rules_test() {
	need promtool python3
	local t
	for t in "$src"/fleet/alerts/tests/*.yml; do
		promtool test rules "$t" >"$work/test.log" 2>&1 && ok ||
			{ fail "promtool test rules $(basename "$t"):"; sed 's/^/    /' "$work/test.log" | head -60; }
	done
	# Planted breaches, NAME OLD NEW each (OLD as ALERT:TEXT: the first TEXT
	# after that alert's name): each must make the tests fail.
	local breaches=(
		no-mpi3mr-filter '{driver="mpi3mr"}' ''
		join-not-per-instance 'and on (instance, hba)' 'and on (hba)'
		payload-not-installed-alerted 'state=~"drift|unknown"' 'state!="loaded"'
		drifted-short-for 'ScsituneProfileDrifted:for: 15m' 'for: 5m'
		not-loaded-after-an-hour 'ScsitunePayloadNotLoaded:for: 24h' 'for: 1h'
		stale-after-an-hour '> 900' '> 3600'
		stale-any-check 'max by (job, instance) (scsitune_last_check_timestamp_seconds) > 900'
		'scsitune_last_check_timestamp_seconds > 900'
		gone-never 'unless on (job, instance)' 'and on (job, instance)'
	)
	local i name old new
	for ((i = 0; i < ${#breaches[@]}; i += 3)); do
		name=${breaches[i]} old=${breaches[i + 1]} new=${breaches[i + 2]}
		mutate "$name" "$old" "$new" || { fail "control $name: could not plant it"; continue; }
		promtool check rules "$work/$name/scsitune.rules.yml" >/dev/null 2>&1 ||
			{ fail "control $name: the planted copy does not even parse"; continue; }
		if (cd "$work/$name/tests" && promtool test rules ./*.yml) >"$work/$name.log" 2>&1; then
			fail "control $name: the tests pass on rules with it planted"
		else
			ok
		fi
	done
}

case_vmalert() {
	need vmalert
	vmalert -dryRun -rule="$rules" -loggerLevel=ERROR >"$work/vmalert.log" 2>&1 && ok ||
		{ fail "vmalert -dryRun -rule=$rules:"; sed 's/^/    /' "$work/vmalert.log" | tail -5; }
	mutate broken 'scsitune_irq_vectors{placement="remote"} > 0' 'sum(scsitune_irq_vectors{placement="remote"} > 0'
	vmalert -dryRun -rule="$work/broken/scsitune.rules.yml" -loggerLevel=ERROR >"$work/vmalert-broken.log" 2>&1 &&
		fail "control: vmalert -dryRun accepts a rule file with a broken expression" || ok
}

case_units() {
	need systemd-analyze
	local svc=$src/debian/scsitune.scsitune-metrics.service tim=$src/debian/scsitune.scsitune-metrics.timer u=$work/units
	[ -x "$bin" ] || { fail "no binary $bin"; return; }
	mkdir -p "$u"
	# What the units must say.
	grep -qx 'ExecStart=/usr/sbin/scsitune metrics --textfile /var/lib/prometheus/node-exporter' "$svc" && ok ||
		fail "the service does not run /usr/sbin/scsitune metrics --textfile /var/lib/prometheus/node-exporter"
	[ "$(grep '^ReadWritePaths=' "$svc")" = "ReadWritePaths=/var/lib/prometheus/node-exporter" ] && ok ||
		fail "the service may write elsewhere than the textfile directory: $(grep '^ReadWritePaths=' "$svc" | tr '\n' ' ')"
	local d
	for d in Type=oneshot ProtectSystem=strict ConditionPathIsDirectory=/var/lib/prometheus/node-exporter PrivateTmp=yes \
		NoNewPrivileges=yes PrivateNetwork=yes UMask=0022; do
		grep -qx "$d" "$svc" && ok || fail "the service lacks $d"
	done
	grep -q '^\[Install\]' "$svc" && fail "the service has an [Install] section: only the timer is enabled" || ok
	for d in OnBootSec=2min OnUnitActiveSec=5min RandomizedDelaySec=30s WantedBy=timers.target; do
		grep -qx "$d" "$tim" && ok || fail "the timer lacks $d"
	done
	grep -q '^Unit=' "$tim" && fail "the timer names another unit than scsitune-metrics.service" || ok
	# systemd-analyze verify: the copies as installed, ExecStart this build's binary.
	sed "s|^ExecStart=/usr/sbin/scsitune |ExecStart=$bin |" "$svc" >"$u/scsitune-metrics.service"
	cp "$tim" "$u/scsitune-metrics.timer"
	grep -q "^ExecStart=$bin metrics" "$u/scsitune-metrics.service" && ok || fail "the copy's ExecStart was not rewritten"
	# The man page named by Documentation= is checked once this tree has it.
	local man=no
	if [ -f "$src/man/scsitune-metrics.8.scd" ] && command -v scdoc >/dev/null && command -v man >/dev/null; then
		mkdir -p "$work/man/man8"
		scdoc <"$src/man/scsitune-metrics.8.scd" >"$work/man/man8/scsitune-metrics.8" && man=yes
	else
		echo "note: man/scsitune-metrics.8.scd not in this tree: Documentation= not checked"
	fi
	analyze() { (cd "$u" && MANPATH=$work/man systemd-analyze verify --man="$man" "$@") >"$work/verify.log" 2>&1; }
	if analyze scsitune-metrics.service scsitune-metrics.timer && [ ! -s "$work/verify.log" ]; then
		ok
	else
		fail "systemd-analyze verify (any message fails):"
		sed 's/^/    /' "$work/verify.log"
	fi
	(cd "$u" && systemd-analyze security --offline=yes --threshold=20 scsitune-metrics.service) >"$work/security.log" 2>&1 && ok ||
		fail "systemd-analyze security: exposure over 2.0: $(tail -1 "$work/security.log")"
	# Controls: a misspelled directive is caught; an unhardened copy is over the threshold.
	mkdir -p "$u/bad"
	sed 's/^ProtectSystem=strict/ProtectSytem=strict/' "$u/scsitune-metrics.service" >"$u/bad/scsitune-metrics.service"
	cp "$tim" "$u/bad/"
	(cd "$u/bad" && systemd-analyze verify --man=no scsitune-metrics.service scsitune-metrics.timer) >"$work/bad.log" 2>&1
	grep -q "Unknown key 'ProtectSytem'" "$work/bad.log" && ok || fail "control: a misspelled directive went unseen"
	mkdir -p "$u/soft"
	sed -n '/^\[Unit\]/,/^Type=oneshot/p; /^ExecStart=/p' "$u/scsitune-metrics.service" >"$u/soft/scsitune-metrics.service"
	(cd "$u/soft" && systemd-analyze security --offline=yes --threshold=20 scsitune-metrics.service) >/dev/null 2>&1 &&
		fail "control: the service without its hardening is within the threshold" || ok
}

"case_${case//-/_}"
[ "$pass" -gt 0 ] || fail "case $case: no check passed"
echo "test-monitoring.sh: case $case: $pass passed$([ "$status" -ne 0 ] && echo ", FAILURES above")"
exit "$status"
