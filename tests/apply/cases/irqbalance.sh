# shellcheck shell=bash disable=SC2154 # variables of run-apply.sh and setup_tree
# SPDX-License-Identifier: GPL-2.0-or-later
# Case irqbalance of run-apply.sh (sourced in a subshell on a fresh tree): the
# bans added to an active IRQBALANCE_ARGS in place, a hand edit left alone by
# revert, a value that is not plain not touched; on a tree with no IRQ to
# pin, the file left as it is.
# 5. irqbalance's defaults file: an active IRQBALANCE_ARGS line is extended in
# place; a hand edit after apply is left alone by revert; a value that is
# not plain (systemd does no expansion) is not touched.
ib=$work/root/etc/default/irqbalance
if grep -q '"object": "irqbalance"' < <(st apply --profile "$profile" --profile-dir "$profiles" --dry-run -o json); then
	printf '# site options\nIRQBALANCE_ARGS="--hintpolicy=ignore"\nIRQBALANCE_ONESHOT=\n' >"$ib"
	before=$(snap)
	run 0 "apply with IRQBALANCE_ARGS set" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	[ "$(grep -c '^IRQBALANCE_ARGS=' "$ib")" = 1 ] || fail "irqbalance: not exactly one active IRQBALANCE_ARGS line"
	grep -q '^IRQBALANCE_ARGS="--hintpolicy=ignore --banirq=[0-9]' "$ib" || fail "irqbalance: site options not kept, or no bans: $(cat "$ib")"
	grep -q '^IRQBALANCE_ONESHOT=$' "$ib" || fail "irqbalance: the other lines were not kept"
	run 0 "verify with the bans in place" st verify --state-dir "$state" -v
	jgrep -qE '^in-effect +- +irqbalance +IRQBALANCE_ARGS ' || fail "verify does not see the bans in effect"
	sed -i 's/--hintpolicy=ignore/--hintpolicy=exact/' "$ib"
	run 0 "verify after a hand edit that keeps the bans" st verify --state-dir "$state"
	run 1 "revert leaves an edited irqbalance file alone" st revert --state-dir "$state"
	jgrep -qE '^left alone +- +irqbalance +IRQBALANCE_ARGS .*changed since apply' || fail "revert did not leave the edited irqbalance file alone"
	run 0 "revert --force puts the irqbalance file back" st revert --force --state-dir "$state"
	same_tree "irqbalance file after revert --force"
	printf 'IRQBALANCE_ARGS="$EXTRA --foreground"\n' >"$ib"
	before=$(snap)
	run 0 "dry-run with a non-plain IRQBALANCE_ARGS" st apply --profile "$profile" --profile-dir "$profiles" --dry-run -v
	jgrep -q 'not a plain value' || fail "a non-plain IRQBALANCE_ARGS is not reported"
	run 0 "apply with a non-plain IRQBALANCE_ARGS" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	grep -q '^IRQBALANCE_ARGS="$EXTRA --foreground"$' "$ib" || fail "a non-plain IRQBALANCE_ARGS was rewritten"
	run 0 "revert" st revert --state-dir "$state"
	same_tree "non-plain irqbalance file"
elif [ "$name" = dual-socket-mpi3mr ]; then
	fail "no irqbalance row in the plan of a host whose mpi3mr admin IRQs are pinned"
else
	# A tree with no IRQ to pin (vm-virtio-scsi: its request vectors are the
	# kernel's, the others already local): apply leaves the defaults file as it is.
	cp -p "$ib" "$work/ib-before"
	run 0 "apply with no IRQ to pin" st apply --profile "$profile" --profile-dir "$profiles" --state-dir "$state"
	cmp -s "$ib" "$work/ib-before" || fail "irqbalance: the defaults file was changed though no IRQ is pinned"
	run 0 "revert with no IRQ to pin" st revert --state-dir "$state"
	same_tree "revert with no IRQ to pin"
fi
