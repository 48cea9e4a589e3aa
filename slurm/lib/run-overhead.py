#!/usr/bin/env python3
"""slurm/lib/run-overhead.py: what a gpt4d run costs beyond its iterations, from result files of
runs made one after the other (the campaign presets' time estimates, e.g.
overlap_matters.RUN_SETUP_S).
A result's context.date is written when its run is over (1 s resolution), so for consecutive runs
the gap between two dates is the later run's whole duration; minus the sum of its iterations
(iterations[].time_ms) it leaves start-up (MPI, CUDA/MPS, NCCL), exit and the launch between runs.
Iteration 0's extra over the run's median iteration is printed beside it (one-time work: NCCL
connections, cuDNN/cuBLASLt plans), and iteration 1 over the median (how long warm-up lasts).
Usage: slurm/lib/run-overhead.py RESULT.json...   e.g. results/h100/overlap-4ranks/*.json
"""

import json
import statistics
import sys
from datetime import datetime


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        date = datetime.strptime(doc["context"]["date"], "%Y-%m-%dT%H:%M:%SZ")
        times = [float(i["time_ms"]) for i in doc["iterations"]]
    except (KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"run-overhead.py: error: {path}: not a gpt4d result with context.date "
                         f"and iterations[].time_ms ({e})") from None
    if not times:
        raise SystemExit(f"run-overhead.py: error: {path}: no iterations")
    return date, path, times


def main(paths):
    if len(paths) < 2:
        raise SystemExit("run-overhead.py: error: give at least two results of consecutive runs")
    runs = sorted(load(p) for p in paths)
    overheads, iter_sums, extras, seconds = [], [], [], []
    print("| run | ended | gap s | iterations s | gap - iterations s | iteration 0 - median ms | "
          "iteration 1 / median |")
    print("|---|---|---|---|---|---|---|")
    for (before, _, _), (date, path, times) in zip(runs, runs[1:]):
        gap = (date - before).total_seconds()
        iters = sum(times) / 1000.0
        median = statistics.median(times[1:] or times)
        extra = times[0] - median
        second = times[1] / median if len(times) > 1 else 1.0
        overheads.append(gap - iters)
        iter_sums.append(iters)
        extras.append(extra)
        seconds.append(second)
        print(f"| {path} | {date:%H:%M:%S} | {gap:.0f} | {iters:.2f} | {gap - iters:.2f} | "
              f"{extra:.0f} | {second:.2f} |")
    print(f"\n{len(overheads)} runs (each after the one before; the first file only starts the "
          f"clock): gap - iterations {min(overheads):.1f}-{max(overheads):.1f} s, median "
          f"{statistics.median(overheads):.1f} s (dates to 1 s: +-1 s each); iterations "
          f"{min(iter_sums):.1f}-{max(iter_sums):.1f} s; iteration 0 - median "
          f"{min(extras):.0f}-{max(extras):.0f} ms; iteration 1 / median "
          f"{min(seconds):.2f}-{max(seconds):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
