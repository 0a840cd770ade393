# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/kill-remove-install (sourced by test-payload.sh; abort_hooks: sysroot-lib.sh).
# --- 6. kill -9 anywhere: remove, then install ---------------------------------------------
# One install, then at each of remove's journaled points: remove killed there;
# verify says installed only while the tree is still the installed one; install
# of the same bundle finishes that remove first (saying so) and installs: the tree
# is a clean install's again (the next point's remove starts from it). At the end
# remove: the tree as before.
section "6. kill -9 anywhere: remove, then install"
if abort_hooks; then
	before=$(snap)
	# verify_says: verify -o json's ($work/out) verdict and "missing" when a file, depmod.d or
	# modprobe row is not ok, else "whole" (one python3 per point: it is most of a point's time)
	verify_says() {
		python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(d["verdict"], "missing" if any(l["link"] in ("file","depmod.d","modprobe") and l["state"]!="ok" for l in d["links"]) else "whole")' "$work/out"
	}
	run 0 "install for the remove-then-install sweep" st payload install "$b" --state-dir "$state"
	installed=$(snap)
	run 2 "verify, installed" st -o json payload verify "$b"
	installed_says=$(verify_says)
	[ "${installed_says#* }" = whole ] || fail "verify of a clean install: $installed_says"
	rpoints=0
	for n in $(seq 1 30); do
		rc=0
		(SCSITUNE_TEST_PAYLOAD_ABORT=$n "$bin" --sysroot "$root" payload remove --state-dir "$state"; exit $?) >/dev/null 2>&1 || rc=$?
		if [ "$rc" -eq 0 ]; then # past remove's last point: it finished
			[ "$(snap)" = "$before" ] || fail "remove with no kill (point $n): the tree differs from before install"
			run 0 "install after a whole remove" st payload install "$b" --state-dir "$state"
			! grep -q "interrupted" "$work/out" || fail "install after a whole remove speaks of an interrupted one"
			break
		fi
		rpoints=$((rpoints + 1))
		[ "$rc" -eq 134 ] || { fail "remove killed at point $n: exit $rc"; break; }
		half=$(snap)
		# verify: what a clean install's tree gets only while the tree is still the installed
		# one; else a module's file, its depmod.d line or what modprobe loads is named
		rc=0
		st -o json payload verify "$b" >"$work/out" 2>"$work/err" || rc=$?
		says=$(verify_says)
		if [ "$half" = "$installed" ]; then
			[ "$says" = "$installed_says" ] ||
				fail "verify after a remove killed at point $n (the tree still the installed one): $says, want $installed_says"
		else
			case "$rc $says" in
			"2 drift missing" | "2 not-installed missing") ;;
			*) fail "verify after a remove killed at point $n, the tree half removed: exit $rc, $says (want drift or not-installed, a module's row not ok)" ;;
			esac
		fi
		if [ "$n" -eq 3 ]; then # the JSON document: finished_remove names the payload, against the schema
			run 0 "install -o json after a remove killed at point $n" st -o json payload install "$b" --state-dir "$state" || break
			[ "$(jget finished_remove.release)" = "$R" ] && [ "$(jget result)" = installed ] ||
				fail "install -o json after a killed remove: finished_remove $(jget finished_remove), result $(jget result)"
			"${PYTHON3:-python3}" "$src/tests/docs/check-schema.py" "$src/schema/payload.schema.json" "$work/out" >"$work/schema.log" 2>&1 ||
				{ fail "install -o json after a killed remove: not valid against schema/payload.schema.json"; tail -5 "$work/schema.log"; }
		else
			run 0 "install after a remove killed at point $n" st payload install "$b" --state-dir "$state" || break
			said "A 'payload remove' that stopped half way \(payload [^ ]+ for $R, [^)]*\) was finished first: the tree is as before that install\. Preflight:" ||
				{ fail "install after a remove killed at point $n does not say it finished that remove first"; sed 's/^/    /' "$work/out" | head -20; break; }
			out_has "install after a remove killed at point $n" "^Installed\.$" || break
		fi
		[ "$(snap)" = "$installed" ] || { fail "remove killed at point $n, then install: the tree is not a clean install's"; break; }
	done
	[ "$rpoints" -ge 5 ] && ok "remove killed at $rpoints points, install after each finished it and installed" ||
		fail "remove: only $rpoints abort points"
	run 0 "remove after the sweep" st payload remove --state-dir "$state"
	[ "$(snap)" = "$before" ] && ok "remove after the sweep: the tree as before" || fail "after the remove-then-install sweep the tree differs"
fi
