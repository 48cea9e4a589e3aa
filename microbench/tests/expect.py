#!/usr/bin/env python3
"""Runs a command and checks its exit status and output: the test driver for expected failures
(usage errors, injected wrong results) and for scripts that write several files.

Usage: expect.py [--rc N] [--regex R]... [--absent R]... [--exists FILE]... [--timeout S] -- CMD...
Exit 0 when the command exited with N (default 0), its combined output matches every --regex and
no --absent, and every --exists file exists afterwards; else 1 with the reason.
"""
import argparse
import os
import re
import subprocess
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rc", type=int, default=0)
    p.add_argument("--regex", action="append", default=[])
    p.add_argument("--absent", action="append", default=[])
    p.add_argument("--exists", action="append", default=[])
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        p.error("no command given")
    for f in a.exists:
        if os.path.exists(f):
            os.remove(f)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=a.timeout)
    except subprocess.TimeoutExpired:
        print(f"expect.py: FAIL: timed out after {a.timeout}s: {' '.join(cmd)}")
        return 1
    sys.stdout.write(r.stdout)
    problems = []
    if r.returncode != a.rc:
        problems.append(f"exit status {r.returncode}, expected {a.rc}")
    problems += [f"output does not match /{x}/" for x in a.regex if not re.search(x, r.stdout)]
    problems += [f"output matches /{x}/" for x in a.absent if re.search(x, r.stdout)]
    problems += [f"{f} was not written" for f in a.exists if not os.path.exists(f)]
    for msg in problems:
        print(f"expect.py: FAIL: {msg}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
