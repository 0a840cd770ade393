# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/round-trip (sourced by test-payload.sh; round_trip, boot_payload: sysroot-lib.sh).
# --- 5. round trips -------------------------------------------------------------------
section "5. round trips"
round_trip plain
# An admin's depmod.d with a search line that leaves updates/ out: the override lines still win.
mkdir -p "$root/etc/depmod.d"
echo 'search built-in' >"$root/etc/depmod.d/00-local.conf"
depmod -b "$root" -C "$root/etc/depmod.d" "$R"
grep -q "^kernel/drivers/scsi/scsi_mod.ko:" "$root/lib/modules/$R/modules.dep" || fail "search line: the stock scsi_mod should win before install"
round_trip search-line
rm -rf "$root/etc/depmod.d" && depmod -b "$root" -C /dev/null "$R"
