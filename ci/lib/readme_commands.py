#!/usr/bin/env python3
"""Runs the README's `ovb-model` examples as written (its ```sh blocks), with the programs found the
way the README says: installed by `cmake --install BUILD --prefix PREFIX` and PREFIX/bin on PATH.
A command that needs files of the reader's own (RESULTS_DIR, coll.json, `...`) is listed as not
run. Each run must exit 0 and must not end in "no configuration fits".

Usage: readme_commands.py REPO BUILD_DIR           (ctest: readme.commands)
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile

PLACEHOLDER = re.compile(r"\.\.\.|\b[A-Z][A-Z_]+\b|\S+\.json\b")


def sh_blocks(text):
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def commands(text, program):
    """The lines of ```sh blocks that start with `program`, comments and continuations joined."""
    out = []
    for block in sh_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith(program + " "):
                out.append(line)
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    repo, build = argv[1], argv[2]
    with open(os.path.join(repo, "README.md"), encoding="utf-8") as f:
        lines = commands(f.read(), "ovb-model")
    if not lines:
        print("readme_commands.py: FAIL: the README has no ovb-model example")
        return 1
    failures, ran = [], 0
    with tempfile.TemporaryDirectory(prefix="ovb-install-") as prefix:
        inst = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                              capture_output=True, text=True)
        if inst.returncode != 0:
            print(inst.stdout + inst.stderr)
            print("readme_commands.py: FAIL: cmake --install did not work")
            return 1
        env = dict(os.environ, PATH=os.path.join(prefix, "bin") + os.pathsep + os.environ["PATH"])
        for line in lines:
            if PLACEHOLDER.search(line.replace("ovb-model", "", 1)):
                print(f"not run (needs the reader's files): {line}")
                continue
            r = subprocess.run(shlex.split(line), capture_output=True, text=True, env=env,
                               timeout=600)
            ran += 1
            text = r.stdout + r.stderr
            ok = r.returncode == 0 and not re.search(r"no (4D |Megatron )?configuration fits",
                                                      text)
            print(f"{'ok' if ok else 'FAILED'} (exit {r.returncode}): {line}")
            if not ok:
                print(text[-2000:])
                failures.append(line)
    if not ran:
        print("readme_commands.py: FAIL: no README ovb-model example could be run")
        return 1
    if failures:
        print(f"readme_commands.py: FAIL: {len(failures)} README command(s) did not work")
        return 1
    print(f"readme_commands.py: PASS: {ran} README command(s) ran as written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
