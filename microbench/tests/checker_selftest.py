#!/usr/bin/env python3
"""Proves that check_results.py can fail: takes a valid result file, breaks one counter at a time
(the busbw factor, the FLOP count, an overlap metric, the wrong count, a label...) and requires
the checker to reject every broken copy while accepting the original.

Usage: checker_selftest.py --kind gemm|collective|overlap|membw FILE
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MUTATIONS = {
    "gemm": [("flop", lambda v: v * 2), ("tflops", lambda v: v * 1.01),
             ("wrong", lambda v: 1), ("time_us", lambda v: v * 1.1)],
    "collective": [("busbw", lambda v: v * 1.5), ("algbw", lambda v: v * 0.9),
                   ("bytes", lambda v: v + 2), ("wrong", lambda v: 3),
                   ("label", lambda v: v.replace("group=", "grp="))],
    "membw": [("bytes", lambda v: v + 8), ("gbps", lambda v: v * 1.01), ("wrong", lambda v: 1),
              ("n", lambda v: v * 2), ("label", lambda v: v.replace("class=", "cls="))],
    "overlap": [("overlap_efficiency", lambda v: v + 0.1), ("speedup_vs_serial", lambda v: v * 1.2),
                ("comm_slowdown", lambda v: v + 0.5), ("serial_us", lambda v: v + 1),
                ("label", lambda v: v.replace("prio=", "p=")),
                ("label", lambda v: v.replace("transport=mpi", "transport=nccl-ce"))],
}


def run_checker(kind, doc):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
        path = f.name
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "check_results.py"), "--kind", kind,
                            path, "--allow-skip", "."], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return r.returncode, r.stdout
    finally:
        os.remove(path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", required=True, choices=sorted(MUTATIONS))
    p.add_argument("file")
    a = p.parse_args()
    with open(a.file, encoding="utf-8") as f:
        doc = json.load(f)
    rc, out = run_checker(a.kind, doc)
    if rc != 0:
        print(f"checker_selftest.py: FAIL: the original file is rejected:\n{out}")
        return 1
    target = next(i for i, b in enumerate(doc["benchmarks"])
                  if b.get("run_type") == "iteration" and not b.get("error_occurred"))
    failures = 0
    for key, change in MUTATIONS[a.kind]:
        broken = copy.deepcopy(doc)
        broken["benchmarks"][target][key] = change(broken["benchmarks"][target][key])
        rc, out = run_checker(a.kind, broken)
        status = "caught" if rc != 0 else "MISSED"
        print(f"checker_selftest.py: {key} changed: {status}")
        failures += rc == 0
    broken = copy.deepcopy(doc)
    del broken["context"]["git_revision"]
    rc, _ = run_checker(a.kind, broken)
    print(f"checker_selftest.py: context.git_revision removed: {'caught' if rc else 'MISSED'}")
    failures += rc == 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
