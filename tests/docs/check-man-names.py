#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The docs name only what the binary has.

    check-man-names.py SCSITUNE FILE...   (man/*.scd, README.md)

From the binary: its commands (`scsitune --help`), its global options and each
command's options (`scsitune CMD --help`). In each file:
  - every long option (--x) is an option of scsitune (of some command, or a
    global one), or one of the other tools' options listed in FOREIGN;
  - every scsitune command line (in a code block, a `...` span of the README,
    or a bold *scsitune ...* span of a man page) names a command the binary
    has, and each option after the command is that command's or a global one
    (so `scsitune apply --payload` fails: apply has no --payload).
Prints one line per problem; exit 1 when there is one.
"""
import re
import subprocess
import sys

# Long options of other tools that the pages quote, and which tool.
FOREIGN = {
    "--banirq": "irqbalance", "--hintpolicy": "irqbalance", "--foreground": "irqbalance",
    "--interval": "irqbalance",
    "--client": "fio", "--direct": "fio", "--filename": "fio", "--ioengine": "fio", "--name": "fio",
    "--output-format": "fio", "--readonly": "fio", "--status-interval": "fio", "--time_based": "fio",
    "--rw": "fio", "--bs": "fio", "--iodepth": "fio", "--numjobs": "fio", "--runtime": "fio",
    "--size": "fio", "--group_reporting": "fio", "--stonewall": "fio",
    "--sysfsroot": "lsscsi", "--sysroot": "lscpu", "--install": "cmake", "--build": "cmake",
    "--test": "scripts/install-deps", "--fix": "scripts/check-format",
    "--list": "mkfixture.py and the test binaries and scripts (one case each)",
    "--case": "the test binaries and scripts (tests/unit/tap.h, test-payload.sh ...)",
    "--pack": "mkfixture.py", "--update": "the test scripts", "--output-on-failure": "ctest",
    "--test-dir": "ctest", "--version": "umockdev-run", "--import": "mokutil", "--out": "payload/build",
    "--kernel": "payload/build", "--stock-kernel": "payload/build", "--kconfig": "payload/build",
    "--prof": "scsitune(8) DIAGNOSTICS: the example of an abbreviation that is refused",
    "--check": "ansible-playbook (check mode)", "--syntax-check": "ansible-playbook",
    "--exit-on-error": "run-parts (the kernel packages' hooks)",
}
GLOBAL_WITH_ARG = {"-o", "--output", "--sysroot"}
OPT = re.compile(r"--[a-z][a-z0-9_-]*")


def help_of(binary, *args):
    return subprocess.run([binary, *args, "--help"], capture_output=True, text=True, check=True).stdout


def main():
    binary, files = sys.argv[1], sys.argv[2:]
    main_help = help_of(binary)
    commands = []
    on = False
    for line in main_help.splitlines():
        if line.startswith("Commands:"):
            on = True
            continue
        if on and not line.strip():
            break
        if on:
            commands.append(line.split()[0])
    glob = set(OPT.findall(main_help[main_help.index("Global options:"):]))
    opts = {c: set(OPT.findall(help_of(binary, c))) | glob for c in commands if c != "help"}
    every = set().union(*opts.values()) | glob
    problems = []

    def invocation(where, text):
        """text starts right after the word scsitune."""
        toks = re.split(r"\s+", text.strip())
        # A quoted command line ends with its closing quote.
        for k, t in enumerate(toks):
            if t.endswith(("'", '"', "`")):
                toks = toks[:k] + [t.rstrip("'\"`.,;")]
                break
        i = 0
        while i < len(toks) and toks[i].startswith("-"):
            t = toks[i].split("=")[0]
            if t.startswith("--") and t not in glob:
                problems.append("%s: 'scsitune %s': %s is not a global option" % (where, text.strip()[:60], t))
            i += 2 if toks[i] in GLOBAL_WITH_ARG else 1
        if i >= len(toks) or not re.fullmatch(r"[a-z]+", toks[i]):
            return
        cmd = toks[i]
        if cmd not in commands:
            problems.append("%s: 'scsitune %s': no command '%s' (the binary has: %s)" %
                            (where, text.strip()[:60], cmd, " ".join(commands)))
            return
        if cmd == "help":
            if i + 1 < len(toks) and re.fullmatch(r"[a-z]+", toks[i + 1]) and toks[i + 1] not in commands:
                problems.append("%s: 'scsitune help %s': no such command" % (where, toks[i + 1]))
            return
        for t in toks[i + 1:]:
            if t in ("|", ">", "#", ";", "&&", "||", "2>", ")") or t.startswith(("#", "|", ">", "2>")):
                break
            t = t.strip("*_`'\",;.()[]")
            if not t.startswith("--"):
                continue
            t = t.split("=")[0]
            if t not in opts[cmd]:
                problems.append("%s: 'scsitune %s': %s is not an option of %s" % (where, text.strip()[:60], t, cmd))

    for path in files:
        raw = open(path).read()
        name = path.rsplit("/", 1)[-1]
        # Every long option is scsitune's or a listed tool's.
        for n, line in enumerate(raw.splitlines(), 1):
            for o in OPT.findall(line.replace("\\", "")):
                if o not in every and o not in FOREIGN:
                    problems.append("%s:%d: %s is no option of scsitune (nor of a tool the docs quote)" % (name, n, o))
        # Command lines: code blocks, README `...` spans, man page *scsitune ...* spans.
        spans = []
        for block in re.findall(r"```[a-z]*\n(.*?)```", raw, re.S):
            spans += block.splitlines()
        if path.endswith(".md"):
            spans += re.findall(r"`(scsitune [^`]*)`", re.sub(r"```.*?```", "", raw, flags=re.S))
        else:
            spans += re.findall(r"\*(scsitune [^*]+)\*", re.sub(r"```.*?```", "", raw, flags=re.S))
        for s in spans:
            s = s.replace("\\", "")
            for m in re.finditer(r"(?:^|[\s$(`'])scsitune((?:\s+\S+)*)", s):
                invocation(name, m.group(1))
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print("ok: %d files name only commands and options the binary has (%s)" % (len(files), " ".join(commands)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
