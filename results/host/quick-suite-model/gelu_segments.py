#!/usr/bin/env python3
"""GELU's forward and backward on the host, from the traced 2x2x1x1 run of quick-suite folders.

The host trace has no kernel per element-wise op: the compute between two annotated points is one
event. The one right after the wait of `all_reduce x mlp_up` is the bias + GELU forward, the one
right after the wait of `all_reduce x mlp_down` in backward is GELU's gradient + the bias
gradient. Prints their count, p10, median and p90 (us) over the steady-state iterations of every
rank of every folder given.

Usage: gelu_segments.py SUITE_DIR [SUITE_DIR ...]
"""
import glob
import json
import statistics
import sys


def segments(path):
    """(forward, backward) segment durations of one rank's trace, steady state only."""
    with open(path) as f:
        d = json.load(f)
    ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
    ev.sort(key=lambda e: e["ts"])
    marked = [e for e in ev if e["name"] == "iteration"]
    start = marked[min(3, len(marked) - 1)]["ts"]  # gpt4d's 3 warm-up iterations excluded
    fwd, bwd = [], []
    for i, e in enumerate(ev):
        if e["ts"] < start or e["cat"] != "user_annotation":
            continue
        if e["name"] not in ("all_reduce x mlp_up", "all_reduce x mlp_down"):
            continue
        j = next((j for j in range(i + 1, len(ev)) if ev[j]["name"] == "MPI_Wait"), None)
        if j is None:
            continue
        end = ev[j]["ts"] + ev[j]["dur"]
        nxt = [x for x in ev[j:j + 12] if x["cat"] == "kernel" and x.get("tid") == 0
               and x["ts"] >= end - 1 and x["name"] != "cblas_sgemm"]
        if nxt:
            (bwd if "backward" in nxt[0]["name"] else fwd).append(nxt[0]["dur"])
    return fwd, bwd


def main(dirs):
    if not dirs:
        sys.exit("usage: gelu_segments.py SUITE_DIR [SUITE_DIR ...]")
    fwd, bwd = [], []
    for d in dirs:
        files = sorted(glob.glob(f"{d}/traces/traced-g2x2x1x1-*/rank-*.trace.json"))
        if not files:
            sys.exit(f"gelu_segments.py: no traced 2x2x1x1 run in {d}")
        for f in files:
            try:
                a, b = segments(f)
            except (OSError, ValueError, KeyError, IndexError) as e:
                sys.exit(f"gelu_segments.py: {f}: not a readable gpt4d trace ({e})")
            fwd += a
            bwd += b
    for name, v in (("forward (bias + GELU)", fwd), ("backward (GELU grad + bias grad)", bwd)):
        if len(v) < 2:
            sys.exit(f"gelu_segments.py: fewer than 2 {name} segments found")
        q = statistics.quantiles(v, n=10)
        print(f"{name}: n={len(v)} p10 {q[0]:.0f} median {statistics.median(v):.0f} "
              f"p90 {q[-1]:.0f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
