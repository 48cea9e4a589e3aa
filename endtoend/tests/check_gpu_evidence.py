#!/usr/bin/env python3
"""GPU evidence of a gpt4d run on the CUDA backend (GPU only): with the default --iters the
summary has 20 timed iterations after the warm-up rule's 3, its percentiles are those of the
iterations' times, the context carries NVML telemetry sampled during the run, and the measured
device peak (driver's view) holds at least the tracked buffers.

Usage: check_gpu_evidence.py GPT4D OUTDIR. Exit 0 when all hold, 1 with one line per problem.
"""
import json
import os
import subprocess
import sys


def percentile(v, q):
    v = sorted(v)
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    gpt4d, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "gpu_evidence.json")
    r = subprocess.run([gpt4d, "--backend", "cuda", "--preset", "tiny", "--seq", "64", "--vocab",
                        "512", "--batch", "8", "--quiet", "--out", out],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print(f"check_gpu_evidence.py: FAIL: gpt4d exited {r.returncode}: {r.stderr[-500:]}")
        return 1
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    s, ctx, problems = doc["summary"], doc["context"], []
    if (s["warmup"], s["iterations_timed"], s["enough_samples"]) != (3, 20, True):
        problems.append(f"default run: warmup {s['warmup']}, timed {s['iterations_timed']}, "
                        "expected 3 and 20")
    timed = [it["time_ms"] for it in doc["iterations"] if it["iter"] >= s["warmup"]]
    for q, key in ((10, "p10_ms"), (50, "p50_ms"), (90, "p90_ms")):
        if abs(percentile(timed, q) - s[key]) > 1e-9 * s[key]:
            problems.append(f"{key} {s[key]} is not the p{q} of the timed iterations")
    tel = ctx.get("gpu_telemetry", {})
    if tel.get("available") is not True or tel.get("samples", 0) < 1:
        problems.append(f"gpu_telemetry not sampled: {tel}")
    else:
        c = tel["sm_clock_mhz"]
        if not 0 < c["min"] <= c["median"] <= c["max"]:
            problems.append(f"SM clock summary out of order: {c}")
        if not isinstance(tel["throttled"], bool) or tel["throttled"] != (tel["throttled_samples"] > 0):
            problems.append("throttled flag disagrees with throttled_samples")
        if not 0 < tel["power_w"]["median"] < 2000 or not 0 < tel["temperature_c"]["max"] < 120:
            problems.append(f"implausible power or temperature: {tel}")
    peak = s.get("device_memory_peak_bytes")
    if peak is None or peak < s["peak_memory_bytes"]:
        problems.append(f"device_memory_peak_bytes {peak} below the tracked buffers "
                        f"{s['peak_memory_bytes']}")
    elif abs(s["device_memory_peak_over_estimate"] - peak / s["memory_estimate_bytes"]) > 1e-12:
        problems.append("device_memory_peak_over_estimate is not peak / estimate")
    for p in problems:
        print(f"check_gpu_evidence.py: FAIL: {p}")
    if not problems:
        print(f"check_gpu_evidence.py: ok: p50 {s['p50_ms']:.3f} ms over 20, telemetry "
              f"{tel['samples']} samples, device peak {peak / 2**20:.1f} MiB vs estimate "
              f"{s['memory_estimate_bytes'] / 2**20:.1f} MiB")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
