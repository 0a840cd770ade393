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
    (so `scsitune detect --payload` fails: detect has no --payload);
  - for a command with modes (its --help has an "Options by mode" block:
    report, payload), each such command line is in one mode (report --run,
    payload install, or the default, report FILE...) and names only that
    mode's options, and the command's page (scsitune-CMD.8.scd) has the
    same block in a code block: the same modes, each with the same options.
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
    "--test-dir": "ctest", "--version": "umockdev-run", "--import": "mokutil", "--hash-file": "mokutil", "--generate-hash": "mokutil",
    "--untrust-mok": "mokutil", "--trust-mok": "mokutil", "--out": "payload/build",
    "--kernel": "payload/build", "--stock-kernel": "payload/build", "--kconfig": "payload/build",
    "--sign-key": "payload/build", "--sign-cert": "payload/build", "--key": "payload/sign",
    "--cert": "payload/sign", "--sign-file": "payload/sign",
    "--prof": "scsitune(8) DIAGNOSTICS: the example of an abbreviation that is refused",
    "--check": "ansible-playbook (check mode)", "--syntax-check": "ansible-playbook",
    "--exit-on-error": "run-parts (the kernel packages' hooks)",
    "--now": "systemctl enable (scsitune-metrics(8) TIMER, README Monitoring)",
}
GLOBAL_WITH_ARG = {"-o", "--output", "--sysroot"}
OPT = re.compile(r"--[a-z][a-z0-9_-]*")


def help_of(binary, *args):
    return subprocess.run([binary, *args, "--help"], capture_output=True, text=True, check=True).stdout


MODE_LINE = re.compile(r"^\s*([a-z]+ [^:\s]+):(.*)$")


def modes_of(text):
    """The "MODE: --a --b" lines (and their continuation lines) of a block: {mode: set}."""
    modes, cur = {}, None
    for line in text.splitlines():
        m = MODE_LINE.match(line)
        if m:
            cur = m.group(1)
            modes[cur] = set(OPT.findall(m.group(2)))
        elif cur and line.strip().startswith("--"):
            modes[cur] |= set(OPT.findall(line))
        else:
            cur = None
    return modes


def help_modes(help_text):
    """--help's "Options by mode" block, up to the blank line: {mode: set} ({} when none)."""
    if "Options by mode" not in help_text:
        return {}
    block = help_text.split("Options by mode", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    return modes_of(block)


def mode_of(cmd, modes, toks):
    """The mode a command line is in: the mode whose selector (--run, install) it has, else the default."""
    chosen = []
    for name in modes:
        sel = name.split()[1]
        if sel.startswith("--") and sel in toks or not sel.startswith("--") and sel.islower() and toks[:1] == [sel]:
            chosen.append(name)
    if not chosen:
        chosen = [n for n in modes if not n.split()[1].startswith("--") and not n.split()[1].islower()]
    return chosen


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
    modes = {c: help_modes(help_of(binary, c)) for c in commands if c != "help"}
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
        words = []
        for t in toks[i + 1:]:
            if t in ("|", ">", "#", ";", "&&", "||", "2>", ")") or t.startswith(("#", "|", ">", "2>")):
                break
            t = t.strip("*_`'\",;.()[]")
            words.append(t.split("=")[0])
            if not t.startswith("--"):
                continue
            t = t.split("=")[0]
            if t not in opts[cmd]:
                problems.append("%s: 'scsitune %s': %s is not an option of %s" % (where, text.strip()[:60], t, cmd))
        if modes[cmd]:
            chosen = mode_of(cmd, modes[cmd], words)
            if not chosen and all(t in glob for t in words if t.startswith("--")):
                return  # "scsitune payload --help": no mode, only global options
            if len(chosen) != 1:
                problems.append("%s: 'scsitune %s': %s modes at once (%s)" %
                                (where, text.strip()[:60], len(chosen), ", ".join(chosen)))
                return
            for t in words:
                if t.startswith("--") and t in opts[cmd] and t not in glob and t not in modes[cmd][chosen[0]]:
                    problems.append("%s: 'scsitune %s': %s does not go with %s" %
                                    (where, text.strip()[:60], t, chosen[0]))

    for path in files:
        raw = open(path).read()
        name = path.rsplit("/", 1)[-1]
        # A command with modes: its page has --help's "Options by mode" table in a code block.
        page_cmd = re.fullmatch(r"scsitune-([a-z]+)\.8\.scd", name)
        if page_cmd and modes.get(page_cmd.group(1)):
            want = modes[page_cmd.group(1)]
            got = {}
            for block in re.findall(r"```[a-z]*\n(.*?)```", raw, re.S):
                if set(modes_of(block)) == set(want):
                    got = modes_of(block)
            if not got:
                problems.append("%s: no code block with the modes of --help's 'Options by mode' (%s)" %
                                (name, ", ".join(want)))
            for m in want if got else ():
                for o in sorted(want[m] - got[m]):
                    problems.append("%s: options by mode: %s lacks %s (--help lists it)" % (name, m, o))
                for o in sorted(got[m] - want[m]):
                    problems.append("%s: options by mode: %s has %s (--help does not)" % (name, m, o))
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
