#!/usr/bin/env python3
"""torch.matmul timed like ovb-gemm, as an outside reference in the same run: after the warm-up
rule's 3 untimed calls, samples of back-to-back calls between CUDA events until both 20 samples
and --min-time seconds are reached (the sustained regime of ovb-gemm's timed loop), reported as
p10/p50/p90 (percentiles as in docs/metrics.md, "Timed figures") and TFLOP/s at the median.

  python3 microbench/torch_matmul.py --shapes 8192x8192x8192 --dtype bf16 --out torch-gemm.json

Skips cleanly (exit 0, {"skipped": reason} written) where torch or a CUDA device is missing.
Shapes MxNxK: C[M,N] = A[M,K] B[K,N], FLOP = 2 M N K.
"""
import argparse
import json
import math
import os
import sys
import time

MIN_TIMED_SAMPLES = 20
WARMUP = 3
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "tf32": "float32"}


def percentile(values, q):
    """Linear interpolation between order statistics at (n-1) q / 100, as ovb_analysis.stats."""
    v = sorted(values)
    pos = (len(v) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def parse_shape(text):
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"torch_matmul.py: error: shape '{text}' is not MxNxK") from None
    if min(m, n, k) < 1:
        raise SystemExit(f"torch_matmul.py: error: shape '{text}' has a dimension < 1")
    return m, n, k


def write(path, doc):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)


def time_shape(torch, shape, dtype, min_time, inner):
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(k, n, device="cuda", dtype=dtype)
    for _ in range(WARMUP):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples, total = [], 0.0
    while len(samples) < MIN_TIMED_SAMPLES or total < min_time:
        start.record()
        for _ in range(inner):
            torch.matmul(a, b)
        stop.record()
        stop.synchronize()
        ms = start.elapsed_time(stop) / inner
        samples.append(ms)
        total += ms * inner / 1e3
    p50 = percentile(samples, 50.0)
    return {"m": m, "n": n, "k": k, "iterations_timed": len(samples),
            "p10_ms": percentile(samples, 10.0), "p50_ms": p50,
            "p90_ms": percentile(samples, 90.0), "tflops": 2.0 * m * n * k / (p50 * 1e-3) / 1e12}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", required=True, help="comma-separated MxNxK")
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--min-time", type=float, default=0.5, help="timed seconds per shape, at least")
    p.add_argument("--inner", type=int, default=1, help="back-to-back calls per sample")
    p.add_argument("--out", help="JSON result")
    a = p.parse_args()
    shapes = [parse_shape(s) for s in a.shapes.split(",") if s]
    if a.inner < 1 or a.min_time < 0:
        raise SystemExit("torch_matmul.py: error: --inner must be >= 1 and --min-time >= 0")
    try:
        import torch
    except ImportError:
        reason = "torch is not installed in this Python"
        print(f"torch_matmul.py: skipped: {reason}")
        write(a.out, {"skipped": reason})
        return 0
    if not torch.cuda.is_available():
        reason = "no CUDA device visible to torch"
        print(f"torch_matmul.py: skipped: {reason}")
        write(a.out, {"skipped": reason})
        return 0
    torch.backends.cuda.matmul.allow_tf32 = a.dtype == "tf32"
    dtype = getattr(torch, DTYPES[a.dtype])
    results = [time_shape(torch, s, dtype, a.min_time, a.inner) for s in shapes]
    doc = {"tool": "torch.matmul", "torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(), "dtype": a.dtype, "warmup": WARMUP,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "results": results}
    write(a.out, doc)
    for r in results:
        print(f"torch.matmul {a.dtype} {r['m']}x{r['n']}x{r['k']}: p50 {r['p50_ms']:.4f} ms "
              f"(p10 {r['p10_ms']:.4f}, p90 {r['p90_ms']:.4f}, {r['iterations_timed']} samples), "
              f"{r['tflops']:.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
