#!/usr/bin/env python3
"""folder_snapshot.py: what a resumed run must leave alone in a results folder (used by
slurm-resume-test.sh).

  folder_snapshot.py take DIR > SNAP.json   the finished steps' records (attempt, started_epoch)
                                            and every result file's mtime and SHA-256
  folder_snapshot.py same SNAP.json DIR     exit 1, one line per difference, when a step of the
                                            snapshot is no longer the same finished attempt or a
                                            file of the snapshot was rewritten or removed
Result files are everything but the driver's own (.suite/, logs/, suite-status.md) and the report
(rewritten whenever a step finishes after it).
"""

import hashlib
import json
import os
import sys

SKIP_DIRS = (".suite", "logs", "report")
SKIP_FILES = ("suite-status.md",)


def _records(root):
    out, folder = {}, os.path.join(root, ".suite", "state")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                r = json.load(f)
            if r.get("status") == "finished":
                out[r["step"]] = {"attempt": r["attempt"], "started_epoch": r["started_epoch"]}
    return out


def _files(root):
    out = {}
    for d, dirs, files in os.walk(root):
        if d == root:
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for name in files:
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root)
            if rel in SKIP_FILES:
                continue
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            out[rel] = [os.stat(path).st_mtime_ns, digest]
    return out


def take(root):
    return {"steps": _records(root), "files": _files(root)}


def differences(snap, root):
    now = take(root)
    bad = []
    for step, rec in snap["steps"].items():
        if now["steps"].get(step) != rec:
            got = now["steps"].get(step) or "not finished"
            bad.append(f"step {step} ran again: was {rec}, now {got}")
    for rel, (mtime, digest) in snap["files"].items():
        if rel not in now["files"]:
            bad.append(f"{rel} was removed")
        elif now["files"][rel][1] != digest:
            bad.append(f"{rel} was rewritten (content changed)")
        elif now["files"][rel][0] != mtime:
            bad.append(f"{rel} was rewritten (modification time changed)")
    return bad


def main(argv):
    if len(argv) == 2 and argv[0] == "take":
        json.dump(take(argv[1]), sys.stdout, indent=1, sort_keys=True)
        return 0
    if len(argv) == 3 and argv[0] == "same":
        with open(argv[1], encoding="utf-8") as f:
            snap = json.load(f)
        bad = differences(snap, argv[2])
        for b in bad:
            print(f"folder_snapshot: {b}")
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
