"""Summary of an `ovb-suite run --preset gpt4d-gpu` folder (standard library only). Not ok (exit
status 1 of `ovb-analysis summarize`) when a check fails: CUDA fp32 not following the host's loss
curve, or exposed communication with every overlap flag not lower than with none.
"""
import json
import os

from .. import overlap_flags
from .common import Summary

TITLE = "gpt4d on the GPU"
JSON_NAME = None


def load(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def fmt(v, spec=".1f"):
    return "n/a" if v is None else format(v, spec)


def summarize(out):
    ok, md = True, []
    kt = load(out, "kernel_tests.json")
    if kt:
        md.append(f"Kernel tests (CUDA vs host): {kt['tests']} run, {kt['failures']} failed.\n")

    runs = {n: load(out, f"compare_{n}.json") for n in ("host", "cuda_fp32", "cuda_bf16")}
    if all(runs.values()):
        md.append("## Same model on host and CUDA (tiny GPT on text, 30 iterations)\n")
        md.append("| iteration | host fp32 | cuda fp32 | cuda bf16 |")
        md.append("|---|---|---|---|")
        its = [r["iterations"] for r in runs.values()]
        for i in range(0, len(its[0]), 5):
            md.append(f"| {i + 1} | " + " | ".join(f"{it[i]['loss']:.4f}" for it in its) + " |")
        worst = max(abs(a["loss"] - b["loss"]) / abs(b["loss"])
                    for a, b in zip(its[1], its[0]))
        passed = worst < 1e-3
        ok &= passed
        md.append(f"\nLargest relative deviation cuda fp32 vs host: {worst:.2e} "
              f"({'ok' if passed else 'FAILED'}: < 1e-3).\n")

    big = load(out, "gpt4d_1.3B_1gpu.json")
    if big:
        s = big["summary"]
        md.append("## 1.3B shape on one GPU (24 x 2048, 16 heads, seq 2048, vocab 50304, batch 4, bf16)\n")
        md.append("| median ms | p10 | p90 | timed iterations | tokens/s | TFLOP/s per GPU | MFU | "
                  "memory estimate | device peak, measured | final loss |")
        md.append("|---|---|---|---|---|---|---|---|---|---|")
        mfu = None if s["mfu"] is None else 100 * s["mfu"]
        # The measured peak (driver's view) beside the plan's estimate; older files have only the
        # device memory in use at the end.
        peak = s.get("device_memory_peak_bytes", s.get("device_memory_used_bytes"))
        n = s.get("iterations_timed", s.get("measured_iters"))
        md.append(f"| {s['median_time_ms']:.1f} | {s['p10_time_ms']:.1f} | {s['p90_time_ms']:.1f} | "
              f"{n} | {s['tokens_per_s']:.0f} | {s['tflops_per_gpu']:.1f} | {fmt(mfu)}% | "
              f"{s['memory_estimate_bytes'] / 2**30:.2f} GiB | "
              f"{fmt(None if peak is None else peak / 2**30, '.2f')} GiB | {s['final_loss']:.4f} |\n")
        md.append(f"Kernels: {big['config']['kernels']}\n")

    rows = []
    for flags in overlap_flags.subsets():
        r = load(out, f"overlap_{flags.replace(',', '_')}.json")
        if r:
            rows.append((flags, r["summary"]))
    if rows:
        md.append("## Overlap flags, 4 ranks sharing the GPU (grid 1x2x2x1, loopback NCCL: bandwidth emulated)\n")
        md.append("| overlap | median ms | comm ms | exposed comm ms | exposed / comm | "
              "per kind and group: exposed ms |")
        md.append("|---|---|---|---|---|---|")
        for flags, s in rows:
            per = ", ".join(f"{c['kind']} {c['group']} {c['exposed_ms']:.1f}" for c in s["collectives"])
            ratio = s["exposed_comm_ms"] / s["comm_time_ms"] if s["comm_time_ms"] else 0
            md.append(f"| {flags} | {s['median_time_ms']:.1f} | {s['comm_time_ms']:.1f} | "
                  f"{s['exposed_comm_ms']:.1f} | {ratio:.2f} | {per} |")
        d = dict(rows)
        every, none = overlap_flags.ALL, overlap_flags.NONE
        if none in d and every in d:
            passed = d[every]["exposed_comm_ms"] < d[none]["exposed_comm_ms"]
            ok &= passed
            md.append(f"\nExposed communication with {every} "
                  f"{d[every]['exposed_comm_ms']:.1f} ms vs none {d[none]['exposed_comm_ms']:.1f} ms: "
                  f"{'lower (ok)' if passed else 'NOT lower (FAILED)'}.")
    return Summary("\n".join(md), ok=ok,
                   problems=[] if ok else ["a check of the GPU run failed (see summary.md)"])

