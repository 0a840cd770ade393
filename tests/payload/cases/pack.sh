# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# payload/sysroot/pack (sourced by test-payload.sh; $b is made again here, as it is checked).
# --- 1. pack ---------------------------------------------------------------------
section "1. pack"
if run 0 "pack" env SOURCE_DATE_EPOCH=1700000000 "$bin" payload pack "$pout" --output "$b"; then
	out_has pack "^Wrote $b" && ok pack
fi
run 0 "pack again" env SOURCE_DATE_EPOCH=1700000000 "$bin" -o json payload pack "$pout" --output "$work/again.tar.zst" &&
	cp "$work/out" "$work/schema-pack.json"
cmp -s "$b" "$work/again.tar.zst" && ok "pack is reproducible" || fail "pack twice with one SOURCE_DATE_EPOCH: different bundles"
first=$(zstd -q -d -c "$b" | tar -t | head -1)
[ "$first" = manifest.json ] && ok "manifest first" || fail "the bundle's first entry is '$first', not manifest.json"
zstd -q -d -c "$b" | tar -xO manifest.json >"$work/manifest.json"
# The CRCs libelf read from the modules equal Debian's Module.symvers (linux-headers .deb in
# payload/build's download cache: $SCSITUNE_PAYLOAD_DEBS, tests/CMakeLists.txt).
debs=${SCSITUNE_PAYLOAD_DEBS:-$pout/../payload-cache}
hdeb=$(ls "$debs"/linux-headers-"$R"_"$V"_*.deb 2>/dev/null | head -1)
if [ -z "$hdeb" ]; then # (payload/build's output reused from the tests' cache, the downloads not)
	mkdir -p "$debs" && (cd "$debs" && apt-get download -q "linux-headers-$R=$V" >/dev/null 2>&1) &&
		hdeb=$(ls "$debs"/linux-headers-"$R"_"$V"_*.deb 2>/dev/null | head -1)
fi
if [ -n "$hdeb" ]; then
	dpkg-deb --fsys-tarfile "$hdeb" | tar -xO --wildcards '*/Module.symvers' >"$work/Module.symvers"
	python3 - "$work/manifest.json" "$work/Module.symvers" <<-'PY' && ok "exports equal Module.symvers" || fail "the manifest's exported CRCs differ from Debian's Module.symvers"
		import json, sys
		m = json.load(open(sys.argv[1]))
		sv = {}
		for line in open(sys.argv[2]):
		    crc, sym, mod = line.split("\t")[:3]
		    sv.setdefault(mod.rsplit("/", 1)[-1], {})[sym] = int(crc, 16)
		for mod in m["modules"]:
		    got = {k: int(v, 16) for k, v in mod["exports"].items()}
		    assert got == sv[mod["name"]], mod["name"]
		    assert len(got) > 50
		print("exports:", ", ".join("%s %d" % (x["name"], len(x["exports"])) for x in m["modules"]))
	PY
else
	fail "no linux-headers-$R .deb in $debs to compare the CRCs with"
fi
cp -a "$pout" "$work/pout-changed"
printf 'x' >>"$work/pout-changed/modules/scsi_mod.ko"
run 1 "pack of a changed build" "$bin" payload pack "$work/pout-changed" --output "$work/x.tar.zst" &&
	err_has "pack of a changed build" 'scsi_mod.ko: SHA-256 differs from .*manifest.json' && one_line "pack changed"
[ ! -e "$work/x.tar.zst" ] || fail "pack of a changed build wrote its output"
run 1 "pack of no directory" "$bin" payload pack "$work/none" --output "$work/x.tar.zst" &&
	err_has "pack none" 'none/manifest.json: no such file' && one_line "pack none"
run 64 "pack without --output" "$bin" payload pack "$pout"
run 64 "payload without subcommand" "$bin" payload
run 64 "payload frob" "$bin" payload frob
run 64 "--force for install" "$bin" payload install "$b" --force
sign a "$b"
