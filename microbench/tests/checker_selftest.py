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


def rounding_near_zero():
    """An overlap that saved and slowed nothing: every derived figure is a difference of terms of
    size ~1 that the benchmark computes from unrounded times, so it may be a few ulps of those terms
    away from zero (CI saw comm_slowdown = -6.8e-14). The checker must accept that rounding and
    still reject a real error of 1e-4 in each (fraction_of_ideal is checked to 1e-6 relative).
    Returns the number of wrong verdicts."""
    sys.path.insert(0, HERE)
    import check_results as cr
    tc, tm = 100.0, 50.0
    row = {"name": "overlap/synthetic", "label": "transport=mpi transport_requested=mpi",
           "t_compute_us": tc, "t_comm_us": tm, "t_overlap_us": tc + tm, "real_time": tc + tm,
           "t_compute_under_us": tc, "t_comm_under_us": tm, "ideal_us": tc, "serial_us": tc + tm,
           "speedup_vs_serial": 1.0, "exposed_comm_us": tm}
    near_zero = ["overlap_efficiency", "fraction_of_ideal", "compute_slowdown", "comm_slowdown"]
    wrong = 0
    for key in near_zero:
        for value, accept in ((-6.8e-14, True), (3e-14, True), (1e-4, False)):
            b = dict(row, **{k: 0.0 for k in near_zero})
            b[key] = value
            c = cr.Checker()
            cr.check_overlap(c, b, {"backend": "host"})
            ok = (not c.problems) == accept
            print(f"checker_selftest.py: {key} = {value:g} on a zero overlap: "
                  f"{'accepted' if not c.problems else 'rejected'}{'' if ok else ' (WRONG)'}")
            wrong += not ok
    return wrong


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
    if a.kind == "overlap":
        failures += rounding_near_zero()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
