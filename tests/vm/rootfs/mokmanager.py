#!/usr/bin/env python3
"""mokmanager.py -- one boot of the Secure Boot guest in which shim's MokManager
runs (a key staged with mokutil --import: MokNew), driven over the serial
console as a person at the console would: "Enroll MOK", the key, yes, the
password given to mokutil, Reboot. run.sh (SCSITUNE_VM_FIRMWARE=secureboot)
runs it for the boot after a stage asked for it (lib.sh next_boot_mokmanager).

    mokmanager.py --password-file PW --console LOG --log STEPS --qemu-log ERR
                  --time TIME [--deadline S] -- QEMU ARGS...

QEMU ARGS is the boot's command line without -serial: the console is this
process's pipe (-serial stdio is added). Each screen is waited for by its text
(ANSI escapes stripped) with a deadline, never a fixed time, and then its keys
are sent; after the last one MokManager resets the machine, which -no-reboot
makes QEMU's exit. LOG gets the raw console, STEPS what each step saw and sent,
ERR QEMU's stderr, TIME "WALL USER SYS" of QEMU (as /usr/bin/time -f '%e %U %S').
Exit 0: every screen seen and QEMU exited 0; 1 otherwise, with one line on
stderr naming the screen that was not seen and why (QEMU exited, or the
deadline), the screen's last text in STEPS.
"""
import argparse
import os
import re
import resource
import select
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--password-file", required=True)
ap.add_argument("--console", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--qemu-log", required=True)
ap.add_argument("--time", required=True)
ap.add_argument("--deadline", type=float, default=300.0,
                help="seconds for the first screen (firmware, shim); each later one gets 60")
ap.add_argument("qemu", nargs=argparse.REMAINDER)
a = ap.parse_args()
qemu = a.qemu[1:] if a.qemu[:1] == ["--"] else a.qemu
if not qemu:
    sys.exit("usage: mokmanager.py ... -- QEMU ARGS...")
with open(a.password_file) as f:
    password = f.read().strip("\n")
if not password or len(password) > 256 or not re.fullmatch(r"[ -~]+", password):
    sys.exit("mokmanager.py: FAIL: the password in %s is not 1-256 printable ASCII characters" % a.password_file)

DOWN, ENTER = b"\x1b[B", b"\r"
ANSI = re.compile(rb"\x1b\[[0-9;?=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78cDEHM]")
BOX = bytes.maketrans(bytes([0xB3, 0xC4, 0xDA, 0xBF, 0xC0, 0xD9]), b"|-++++")  # CP437 frames
raw = open(a.console, "wb")
steps = open(a.log, "w")
t0 = time.time()


def log(msg):
    steps.write("[%7.1f s] %s\n" % (time.time() - t0, msg))
    steps.flush()


before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.Popen(qemu + ["-serial", "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open(a.qemu_log, "ab"))
fd = p.stdout.fileno()
pend = b""  # an escape sequence cut by a read, kept for the next
text = b""  # everything QEMU wrote, escapes stripped
mark = 0  # where the current screen starts in text
eof = False


def pump(timeout):
    """Read what QEMU writes within timeout seconds; False at EOF."""
    global text, pend, eof
    if eof:
        return False
    r, _, _ = select.select([fd], [], [], max(0.0, timeout))
    if not r:
        return True
    b = os.read(fd, 65536)
    if not b:
        eof = True
        return False
    raw.write(b)
    raw.flush()
    b = pend + b
    pend = b""
    i = b.rfind(b"\x1b")
    if i >= 0 and len(b) - i < 32 and not ANSI.match(b, i):
        b, pend = b[:i], b[i:]
    text += ANSI.sub(b"", b).replace(b"\x00", b"")
    return True


def screen(since=None):
    s = text[mark if since is None else since:].translate(BOX).decode("latin-1")
    return re.sub(r"[ \t]+", " ", s)[-3000:]


def settle(quiet, deadline):
    """Read until the console was quiet for `quiet` s (a redraw finished), at most `deadline` s."""
    end = time.time() + deadline
    last, t_last = len(text), time.time()
    while time.time() < end and pump(0.1):
        if len(text) != last:
            last, t_last = len(text), time.time()
        elif time.time() - t_last >= quiet:
            return


def fail(msg):
    log("FAIL: " + msg + "; the console since the last step:\n" + screen())
    print("mokmanager.py: FAIL: " + msg + " (" + a.log + ")", file=sys.stderr)
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    finish(1)


def finish(status):
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(a.time, "w") as f:
        f.write("%.2f %.2f %.2f\n" % (wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime))
    log("QEMU exited with %s after %.1f s" % (p.returncode, wall))
    sys.exit(status)


def step(name, pattern, keys, deadline, redraw=True):
    """Wait for pattern on the screen (after mark), then send keys, each followed by its redraw."""
    global mark
    rx = re.compile(pattern.encode())
    end = time.time() + deadline
    m = None
    while True:
        m = rx.search(text, mark)
        if m:
            break
        if time.time() >= end:
            fail("MokManager's %s screen (%r) not seen within %d s" % (name, pattern, deadline))
        if not pump(min(1.0, end - time.time())):
            fail("QEMU exited (status %s) before MokManager's %s screen (%r)" % (p.wait(), name, pattern))
    if redraw:
        settle(0.7, 10)
    log("step %r: saw %r; screen:\n%s" % (name, m.group(0).decode("latin-1"), screen()))
    mark = len(text)
    for k, what in keys:
        p.stdin.write(k)
        p.stdin.flush()
        log("sent " + what)
        settle(0.5, 5)


# The screens of the MokManager of Debian's shim-signed 1.51 (shim 16.1), in
# order. The first comes with a 10 s countdown, after which shim boots on
# without it: the key goes at once.
step("prompt", r"Press any key to perform MOK management", [(ENTER, "Enter")], a.deadline, redraw=False)
step("main menu", r"Enroll MOK", [(DOWN, "Down"), (ENTER, "Enter (Enroll MOK)")], 60)
step("Enroll MOK", r"View key 0(.|\n)*Continue", [(DOWN, "Down"), (ENTER, "Enter (Continue)")], 60)
step("Enroll the key(s)?", r"Enroll the key", [(DOWN, "Down"), (ENTER, "Enter (Yes)")], 60)
step("password", r"Password", [(password.encode(), "the password"), (ENTER, "Enter")], 60)
# back in the main menu, Reboot now first: MokManager resets, QEMU exits (-no-reboot)
step("Reboot", r"Reboot", [(ENTER, "Enter (Reboot)")], 60)
end = time.time() + 60
while time.time() < end and pump(1.0):
    pass
try:
    p.wait(max(1.0, end - time.time()))
except subprocess.TimeoutExpired:
    fail("QEMU still running 60 s after Reboot was chosen (no reset)")
if p.returncode != 0:
    fail("QEMU exited with %s after Reboot" % p.returncode)
if re.search(rb"Failed|[Ee]rror|Invalid|incorrect", text[mark:]):
    fail("MokManager said something went wrong after the password")
finish(0)
