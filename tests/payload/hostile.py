#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hostile.py GOOD.tar.zst OUTDIR [NAME]... -- hostile variants of a real payload
bundle (the one `scsitune payload pack` made), each written as OUTDIR/NAME.tar.zst
(tar made with Python's tarfile, compressed with Debian's zstd). The test
signs each with a trusted key, so every refusal is the archive reader's or
the preflight's, not the signature's. Prints NAME per line. With NAMEs, only
those are written (a test case that needs one hostile bundle, not all).
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile


def read_good(path):
    raw = subprocess.run(["zstd", "-q", "-d", "-c", path], check=True, capture_output=True).stdout
    members = []
    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
        for ti in tf.getmembers():
            members.append((ti.name, tf.extractfile(ti).read()))
    if members[0][0] != "manifest.json":
        sys.exit("hostile.py: %s does not start with manifest.json" % path)
    return members


def reg(name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    ti.mtime = 0
    return ti, data


def special(name, kind, **kw):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = 0o644
    for k, v in kw.items():
        setattr(ti, k, v)
    return ti, None


ONLY = set(sys.argv[3:])


def write(outdir, name, entries):
    if ONLY and name not in ONLY:
        return
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for ti, data in entries:
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    zst = subprocess.run(["zstd", "-q", "-c", "-3"], input=buf.getvalue(), check=True, capture_output=True).stdout
    with open(os.path.join(outdir, name + ".tar.zst"), "wb") as f:
        f.write(zst)
    print(name)


def main():
    good, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    members = read_good(good)
    manifest = json.loads(members[0][1])
    files = members[1:]
    regs = [reg(n, d) for n, d in members]

    def with_manifest(m, rest):
        return [reg("manifest.json", (json.dumps(m, indent=2) + "\n").encode())] + rest

    write(outdir, "traversal", regs[:1] + [reg("../../etc/cron.d/evil", b"* * * * * root sh\n")] + regs[1:])
    write(outdir, "traversal-inner", regs[:1] + [reg("modules/../../../etc/evil", b"x")] + regs[1:])
    write(outdir, "absolute", regs[:1] + [reg("/etc/cron.d/evil", b"* * * * * root sh\n")] + regs[1:])
    write(outdir, "symlink", regs[:1] + [special("modules/scsi_mod.ko", tarfile.SYMTYPE, linkname="/etc/shadow")] +
          regs[2:])
    write(outdir, "hardlink", regs[:1] + [special("modules/scsi_mod.ko", tarfile.LNKTYPE, linkname="manifest.json")] +
          regs[2:])
    write(outdir, "device", regs[:1] + [special("modules/scsi_mod.ko", tarfile.CHRTYPE, devmajor=1, devminor=3)] +
          regs[2:])
    write(outdir, "fifo", regs[:1] + [special("modules/scsi_mod.ko", tarfile.FIFOTYPE)] + regs[2:])
    write(outdir, "directory", regs[:1] + [special("modules", tarfile.DIRTYPE)] + regs[1:])
    # 80 MiB of zeros under a name the manifest lists: compresses to a few KiB.
    write(outdir, "size-bomb", regs[:1] + [reg("modules/scsi_mod.ko", bytes(80 << 20))] + regs[2:])
    write(outdir, "duplicate", regs + [regs[1]])
    write(outdir, "manifest-not-first", regs[1:] + regs[:1])
    write(outdir, "not-in-manifest", regs + [reg("modules/extra.ko", files[0][1])])
    write(outdir, "missing-file", regs[:-1])
    m = json.loads(members[0][1])
    for f in m["files"]:
        if f["name"] == "modules/scsi_mod.ko":
            f["sha256"] = hashlib.sha256(b"not the module").hexdigest()
    write(outdir, "hash-mismatch", with_manifest(m, regs[1:]))
    m = json.loads(members[0][1])
    m["modules"][0]["srcversion"] = "0123456789ABCDEF0123456"
    write(outdir, "module-mismatch", with_manifest(m, regs[1:]))
    # The module replaced by another real module (target_core_mod's bytes), the manifest's hash updated.
    m = json.loads(members[0][1])
    other = dict(files)["modules/target_core_mod.ko"]
    for f in m["files"]:
        if f["name"] == "modules/scsi_mod.ko":
            f["sha256"] = hashlib.sha256(other).hexdigest()
            f["size"] = len(other)
    write(outdir, "module-swapped", with_manifest(m, [reg("modules/scsi_mod.ko", other)] + regs[2:]))
    m = json.loads(members[0][1])
    m["release"] = "../../../etc"
    write(outdir, "release-path", with_manifest(m, regs[1:]))
    # The kernel package the messages and the journal name is not the one the host is checked for.
    m = json.loads(members[0][1])
    m["debian_package"] = "linux-image-6.1.0-99-other"
    write(outdir, "debian-package", with_manifest(m, regs[1:]))
    write(outdir, "not-json", [reg("manifest.json", b"{ this is not json")] + regs[1:])
    # A kernel package entry (payload/build --kernel) that must not pass: its file
    # named in "kernel" but not in "files", a release that is a path, a package
    # that is not linux-image-RELEASE, the modules' own release (the package
    # would replace the kernel they are for), a version that would be an apt option.
    deb = "kernel/linux-image-6.1.0-98-scsitune_1.0_amd64.deb"
    kern = {"release": "6.1.0-98-scsitune", "package": "linux-image-6.1.0-98-scsitune", "version": "1.0",
            "file": deb, "build_id": "ab" * 20, "patches": ["B"]}
    debdata = b"!<arch>\n"
    debentry = {"name": deb, "size": len(debdata), "sha256": hashlib.sha256(debdata).hexdigest()}
    for name, change, listed in (("kernel-not-in-files", {}, False),
                                 ("kernel-release-path", {"release": "../../boot"}, True),
                                 ("kernel-package", {"package": "linux-image-other"}, True),
                                 ("kernel-same-release", {"release": manifest["release"],
                                                          "package": "linux-image-" + manifest["release"]}, True),
                                 ("kernel-version-option", {"version": "1.0 -o=APT::Get::AllowUnauthenticated"}, True)):
        m = json.loads(members[0][1])
        m["kernel"] = dict(kern, **change)
        if listed:
            m["files"].append(debentry)
        write(outdir, name, with_manifest(m, regs[1:] + ([reg(deb, debdata)] if listed else [])))
    # A signer (payload/sign) the bundle does not bear out. On an unsigned bundle: a signer
    # named for unsigned modules. On a signed one (the trust case passes one): its serial
    # changed, and its certificate not among the files.
    if "signer" not in manifest:
        m = json.loads(members[0][1])
        m["signer"] = {"certificate": "modules/scsi_mod.ko", "kernel_name": "forged", "issuer_cn": "forged",
                       "serial": "01", "skid": None}
        write(outdir, "signer-unsigned", with_manifest(m, regs[1:]))
    else:
        m = json.loads(members[0][1])
        m["signer"]["serial"] = "7e57"
        write(outdir, "signer-serial", with_manifest(m, regs[1:]))
        m = json.loads(members[0][1])
        m["files"] = [f for f in m["files"] if f["name"] != m["signer"]["certificate"]]
        write(outdir, "signer-not-in-files",
              with_manifest(m, [r for r in regs[1:] if r[0].name != m["signer"]["certificate"]]))
    # Truncated: the good bundle cut in half (zstd frame incomplete).
    with open(good, "rb") as f:
        data = f.read()
    if not ONLY or "truncated" in ONLY:
        with open(os.path.join(outdir, "truncated.tar.zst"), "wb") as f:
            f.write(data[: len(data) // 2])
        print("truncated")
    if not ONLY or "not-an-archive" in ONLY:
        with open(os.path.join(outdir, "not-an-archive.tar.zst"), "wb") as f:
            f.write(hashlib.sha512(b"x").digest() * 64)
        print("not-an-archive")


if __name__ == "__main__":
    main()
