#!/usr/bin/env python3
"""Validates a microbench result file (Google Benchmark JSON with the suite's run context):
context keys, benchmark names and labels, and every counter against its formula from
docs/metrics.md, recomputed here independently of the C++ code.

Usage: check_results.py --kind gemm|collective|overlap|membw FILE [--ranks N] [--backend host|cuda]
         [--min-ok N] [--allow-skip REGEX]... [--label-has TEXT]...
         [--min-wait-us US]
The blocking_wait scenario's rows (overlap, label scenario=blocking_wait) have their own counters:
wait_us = t_sequence_us - t_compute_mean_us - t_comm_us; --min-wait-us asks every such row for a
wait of at least US (an injected delay).
Exit 0 when valid; 1 with one line per problem otherwise. Python 3 standard library only.
"""
import argparse
import json
import math
import re
import sys

CONTEXT_KEYS = ["schema_version", "suite", "suite_version", "git_revision", "build_type",
                "compiler", "date", "host", "backend", "world_size", "local_size", "device",
                "versions", "environment", "ranks_per_gpu", "oversubscribed", "gpu_telemetry"]
TIMED = ["iterations_timed", "p10_ms", "p50_ms", "p90_ms"]
MIN_TIMED_SAMPLES = 20  # docs/metrics.md, "Timed figures"
GBENCH_CONTEXT_KEYS = ["executable", "num_cpus", "mhz_per_cpu", "library_build_type"]
CONNECTION_KEYS = ["device_max_connections", "warnings"]  # ovb/device_connections.hpp
ELEM = {"fp32": 4, "fp16": 2, "bf16": 2}
PREFIX = {"gemm": ("gemm/",), "overlap": ("overlap/",), "membw": ("membw/",),
          "collective": ("all_reduce/", "reduce_scatter/", "all_gather/")}
LABEL = {
    "collective": r"^dtype=(bf16|fp16|fp32) group=(world|x|y|z|data) inplace=(0|1)"
                  r" min_ctas=\S+ max_ctas=\S+ cta_policy=\S+$",
    "overlap": r"^coll=(all_reduce|reduce_scatter|all_gather) prio=(equal|comm_high|compute_high)"
               r" order=(comm_first|gemm_first|pipeline|sequence) max_ctas=(default|\d+) cdmc=(default|\d+)"
               r" group=\S+ dtype=\S+ min_ctas=\S+ cta_policy=\S+ scenario=[a-z0-9_]+( |$)",
    "gemm": r"plan=\S",
    "membw": r"^class=[a-z_]+ dtype=(fp32|bf16) row=\d+$",
}


class Checker:
    def __init__(self):
        self.problems = []

    def fail(self, where, msg):
        self.problems.append(f"{where}: {msg}")

    def close(self, where, what, got, want, rel=1e-9, scale=0.0):
        # scale: the size of the terms of a difference (its rounding is relative to them)
        if not (math.isfinite(got) and math.isfinite(want)) or \
                abs(got - want) > rel * max(abs(want), abs(scale), 1e-30):
            self.fail(where, f"{what} = {got!r}, expected {want!r}")


def check_gemm(c, b, ctx):
    w = b["name"]
    m, n, k = b["m"], b["n"], b["k"]
    c.close(w, "flop", b["flop"], 2.0 * m * n * k)
    c.close(w, "time_us", b["time_us"], b["real_time"])
    c.close(w, "tflops", b["tflops"], b["flop"] / (b["time_us"] * 1e-6) / 1e12)
    dtype = w.split("/")[1]
    peaks = ctx.get("device", {}).get("peak_tflops") or {}
    if dtype in peaks:
        if "pct_peak" not in b:
            c.fail(w, f"pct_peak missing although the {dtype} peak is known")
        else:
            c.close(w, "pct_peak", b["pct_peak"], 100.0 * b["tflops"] / peaks[dtype])
    elif "pct_peak" in b:
        c.fail(w, "pct_peak present although the peak is unknown")
    if ctx.get("backend") == "host" and b["algo"] != -1:
        c.fail(w, f"algo = {b['algo']} on host, expected -1")
    if ctx.get("backend") == "cuda" and b["algo"] < 0:
        c.fail(w, f"algo = {b['algo']} on cuda, expected an index >= 0")
    if "autotune_best_us" in b:
        c.close(w, "default_over_best", b["default_over_best"],
                b["autotune_default_us"] / b["autotune_best_us"])
        c.close(w, "over_best", b["over_best"], b["time_us"] / b["best_sustained_us"])
        if not 0 <= b["algo"] < b["autotune_candidates"]:
            c.fail(w, "algo is not one of the autotune candidates")
        if not 0 <= b["best_sustained_algo"] < b["autotune_candidates"]:
            c.fail(w, "best_sustained_algo is not one of the autotune candidates")


def check_collective(c, b, ctx):
    w = b["name"]
    kind = w.split("/")[0]
    label = dict(kv.split("=", 1) for kv in b["label"].split())
    n = b["ranks"]
    per_rank = 1 if kind == "all_reduce" else n
    c.close(w, "bytes", b["bytes"], b["count"] * ELEM[label["dtype"]] * per_rank)
    c.close(w, "time_max_us", b["time_max_us"], b["real_time"])
    if b["time_us"] > b["time_max_us"] * (1 + 1e-9):
        c.fail(w, "time_us (mean over ranks) exceeds time_max_us")
    algbw = b["bytes"] / (b["time_max_us"] * 1e-6) / 1e9
    c.close(w, "algbw", b["algbw"], algbw)
    factor = 2.0 * (n - 1) / n if kind == "all_reduce" else (n - 1.0) / n
    c.close(w, "busbw", b["busbw"], algbw * factor)
    if label["group"] == "world" and n != ctx["world_size"]:
        c.fail(w, f"ranks = {n} over the world of {ctx['world_size']}")


def membw_bytes(cls, n, row, a):
    """Bytes one kernel moves, written out from its buffers (x read, y written, ...) here, apart
    from the C++ table (ovb/mem_class.hpp)."""
    rows = n // row
    return {
        "copy": a * n + a * n,
        "softmax": a * n + a * n,
        "layernorm": a * n + a * row + a * row + a * n + 4 * rows + 4 * rows,
        "rmsnorm": a * n + a * row + a * n + 4 * rows,
        "bias_gelu": a * n + a * row + a * n + a * n,
        "swiglu": a * n + a * n + a * n,
        "rope": a * n + a * n,
        "dropout": a * n + a * n + 1 * n,
        "residual": a * n + a * n + a * n,
        "cross_entropy": a * n + 4 * rows + 4 * rows,
        "adamw": 3 * (4 * n + 4 * n) + a * n + (a * n if a != 4 else 0),
        "grad_accum": 4 * n + 4 * n + a * n,
    }[cls]


def check_membw(c, b, ctx):
    w = b["name"]
    _, cls, dtype, size = w.split("/")[:4]
    a = ELEM[dtype]
    n, row = int(b["n"]), int(b["row"])
    c.close(w, "n", n, int(size) // a)
    c.close(w, "size", b["size"], int(size))
    c.close(w, "bytes", b["bytes"], membw_bytes(cls, n, row, a))
    c.close(w, "time_us", b["time_us"], b["real_time"])
    c.close(w, "gbps", b["gbps"], b["bytes"] / (b["time_us"] * 1e-6) / 1e9)
    peak = (ctx.get("device") or {}).get("peak_memory_gbps")
    if peak:
        if "pct_peak_bw" not in b:
            c.fail(w, "pct_peak_bw missing although the device's bandwidth is known")
        else:
            c.close(w, "pct_peak_bw", b["pct_peak_bw"], 100.0 * b["gbps"] / peak)
    elif "pct_peak_bw" in b:
        c.fail(w, "pct_peak_bw present although the device's bandwidth is unknown")


# The transport words of microbench/overlap/transport.hpp.
TRANSPORTS = {"mpi", "nccl-sm", "nccl-ce", "ce-ipc", "unknown"}


def check_overlap(c, b, ctx):
    w = b["name"]
    label = dict(kv.split("=", 1) for kv in b["label"].split() if "=" in kv)
    for key in ("transport", "transport_requested"):
        if label.get(key) not in TRANSPORTS:
            c.fail(w, f"label's {key}={label.get(key)} is not one of {sorted(TRANSPORTS)}")
    if ctx.get("backend") == "host" and label.get("transport") != "mpi":
        c.fail(w, f"the host backend's transport is mpi, not {label.get('transport')}")
    tc, tm, to = b["t_compute_us"], b["t_comm_us"], b["t_overlap_us"]
    tcu, tmu = b["t_compute_under_us"], b["t_comm_under_us"]
    if min(tc, tm, to, tcu, tmu) <= 0:
        c.fail(w, "a time is not positive")
        return
    c.close(w, "t_overlap_us", to, b["real_time"])
    ideal, serial = max(tc, tm), tc + tm
    c.close(w, "ideal_us", b["ideal_us"], ideal)
    c.close(w, "serial_us", b["serial_us"], serial)
    c.close(w, "speedup_vs_serial", b["speedup_vs_serial"], serial / to)
    # Both are differences divided by something smaller: when the overlap saved nothing the
    # difference is rounding of terms of size serial (serial / to), so the tolerance scales with
    # those terms over the divisor, not with the near-zero result.
    c.close(w, "overlap_efficiency", b["overlap_efficiency"], (serial - to) / min(tc, tm),
            scale=serial / min(tc, tm))
    if serial > ideal:
        c.close(w, "fraction_of_ideal", b["fraction_of_ideal"],
                (serial / to - 1) / (serial / ideal - 1), rel=1e-6,
                scale=(serial / to) / (serial / ideal - 1))
    elif "fraction_of_ideal" in b:
        c.fail(w, "fraction_of_ideal present although serial == ideal")
    # Ratios less one: zero when overlap slowed nothing, and then all that is left is the
    # rounding of terms of size ratio (and 1), so the tolerance scales with those terms.
    c.close(w, "compute_slowdown", b["compute_slowdown"], tcu / tc - 1, scale=max(tcu / tc, 1))
    c.close(w, "comm_slowdown", b["comm_slowdown"], tmu / tm - 1, scale=max(tmu / tm, 1))
    c.close(w, "exposed_comm_us", b["exposed_comm_us"], to - tcu, scale=to)
    if "chunks" in b:  # a dependent pipeline (docs/metrics.md)
        tcw, tmw = b["t_compute_whole_us"], b["t_comm_whole_us"]
        c.close(w, "decomposition_loss_us", b["decomposition_loss_us"], tc - tcw,
                scale=max(tc, tcw))
        if tmw > 0:
            sw, iw = tcw + tmw, max(tcw, tmw)
            c.close(w, "pipeline_fraction_of_ideal", b["pipeline_fraction_of_ideal"],
                    (sw / to - 1) / (sw / iw - 1), rel=1e-6,
                    scale=(sw / to) / (sw / iw - 1))
    if to + 1e-9 < max(tcu, tmu):
        c.fail(w, "t_overlap_us is shorter than one op's own span under overlap")


def check_wait(c, b, ctx, a):
    """The blocking_wait scenario (microbench/overlap/blocking_wait.hpp)."""
    w = b["name"]
    tc, tcm, tm, ts = (b["t_compute_us"], b["t_compute_mean_us"], b["t_comm_us"],
                       b["t_sequence_us"])
    if min(tc, tcm, tm, ts) <= 0:
        c.fail(w, "a time is not positive")
        return
    if ctx.get("backend") != "host":
        c.fail(w, "blocking_wait on a backend other than host")
    c.close(w, "t_sequence_us", ts, b["real_time"])
    c.close(w, "wait_us", b["wait_us"], ts - tcm - tm, scale=ts)
    if tcm > tc * (1 + 1e-9):
        c.fail(w, f"t_compute_mean_us {tcm} above its max over ranks {tc}")
    p10, p50, p90 = b["wait_p10_us"], b["wait_p50_us"], b["wait_p90_us"]
    if not p10 <= p50 <= p90:
        c.fail(w, f"wait percentiles out of order: {p10} {p50} {p90}")
    delay = b["injected_delay_us"]
    # The delayed rank's span holds its sleep, so every sample's t_s is at least the delay, and
    # the wait at least the delay less the parts alone.
    if ts < delay or b["wait_us"] < delay - tcm - tm:
        c.fail(w, f"t_sequence_us {ts} / wait_us {b['wait_us']} below the injected {delay} us")
    if a.min_wait_us is not None and b["wait_us"] < a.min_wait_us:
        c.fail(w, f"wait_us = {b['wait_us']}, expected at least {a.min_wait_us}")


WAIT_REQUIRED = ["t_compute_us", "t_compute_mean_us", "t_comm_us", "t_sequence_us", "wait_us",
                 "wait_p10_us", "wait_p50_us", "wait_p90_us", "injected_delay_us", "bytes", "m",
                 "n", "k", "wrong"]

REQUIRED = {
    "gemm": ["m", "n", "k", "flop", "time_us", "tflops", "algo", "wrong"],
    "collective": ["bytes", "count", "ranks", "time_us", "time_max_us", "algbw", "busbw", "wrong"],
    "membw": ["n", "row", "size", "bytes", "time_us", "gbps", "wrong"],
    "overlap": ["t_compute_us", "t_comm_us", "t_overlap_us", "t_compute_under_us",
                "t_comm_under_us", "overlap_efficiency", "speedup_vs_serial", "compute_slowdown",
                "comm_slowdown", "bytes", "m", "n", "k", "wrong", "ideal_us", "serial_us",
                "exposed_comm_us"],
}
CHECK = {"gemm": check_gemm, "collective": check_collective, "overlap": check_overlap,
         "membw": check_membw}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", required=True, choices=sorted(CHECK))
    p.add_argument("file")
    p.add_argument("--ranks", type=int)
    p.add_argument("--backend", choices=["host", "cuda"])
    p.add_argument("--min-ok", type=int, default=1)
    p.add_argument("--allow-skip", action="append", default=[])
    p.add_argument("--label-has", action="append", default=[])
    p.add_argument("--min-wait-us", type=float)
    a = p.parse_args()
    c = Checker()
    try:
        with open(a.file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_results.py: FAIL: {a.file}: {e}")
        return 1
    ctx = doc.get("context", {})
    for key in CONTEXT_KEYS + GBENCH_CONTEXT_KEYS + CONNECTION_KEYS:
        if key not in ctx:
            c.fail("context", f"missing {key}")
    cdmc = ctx.get("environment", {}).get("CUDA_DEVICE_MAX_CONNECTIONS")
    if ctx.get("device_max_connections") != (int(cdmc) if cdmc else None):
        c.fail("context", f"device_max_connections = {ctx.get('device_max_connections')}, "
                          f"environment says {cdmc}")
    if ctx.get("backend") == "host" and ctx.get("warnings"):
        c.fail("context", f"warnings on the host backend: {ctx.get('warnings')}")
    if ctx.get("schema_version") != 1 or ctx.get("suite") != "OverlapBench":
        c.fail("context", "not an OverlapBench schema 1 file")
    if a.ranks is not None and ctx.get("world_size") != a.ranks:
        c.fail("context", f"world_size = {ctx.get('world_size')}, expected {a.ranks}")
    if a.backend and ctx.get("backend") != a.backend:
        c.fail("context", f"backend = {ctx.get('backend')}, expected {a.backend}")
    ok = 0
    for b in doc.get("benchmarks", []):
        w = b.get("name", "?")
        if not w.startswith(PREFIX[a.kind]):
            c.fail(w, f"name does not start with {' or '.join(PREFIX[a.kind])}")
        if b.get("error_occurred"):
            msg = b.get("error_message", "")
            if not any(re.search(r, msg) for r in a.allow_skip):
                c.fail(w, f"skipped for an unexpected reason: {msg}")
            continue
        if b.get("run_type") != "iteration":
            continue  # aggregates (mean/median/stddev/cv) of the counters checked below
        wait_row = a.kind == "overlap" and "scenario=blocking_wait" in b.get("label", "")
        missing = [k for k in (WAIT_REQUIRED if wait_row else REQUIRED[a.kind]) if k not in b]
        if missing:
            c.fail(w, f"missing counters {missing}")
            continue
        if b["wrong"] != 0:
            c.fail(w, f"wrong = {b['wrong']}")
        if any(k not in b for k in TIMED):
            c.fail(w, f"missing timed-figure counters {[k for k in TIMED if k not in b]}")
        else:
            # Every loop iteration is a sample, and the reported run is topped up to 20.
            if b["iterations_timed"] < max(MIN_TIMED_SAMPLES, b.get("iterations", 0)):
                c.fail(w, f"iterations_timed = {b['iterations_timed']}, expected at least "
                          f"max(20, iterations = {b.get('iterations')})")
            if not 0 < b["p10_ms"] <= b["p50_ms"] <= b["p90_ms"]:
                c.fail(w, f"percentiles out of order: p10 {b['p10_ms']} p50 {b['p50_ms']} "
                          f"p90 {b['p90_ms']}")
        tel = ctx.get("gpu_telemetry", {})
        if ctx.get("backend") == "host" and tel.get("available") is not False:
            c.fail("context", "gpu_telemetry on host should say available: false")
        if ctx.get("backend") == "cuda" and (tel.get("available") is not True
                                             or tel.get("samples", 0) < 1):
            c.fail("context", f"gpu_telemetry on cuda not sampled: {tel}")
        if b.get("time_unit") != "us":
            c.fail(w, f"time_unit = {b.get('time_unit')}, expected us")
        if not re.search(LABEL[a.kind], b.get("label", "")):
            c.fail(w, f"label '{b.get('label', '')}' does not match /{LABEL[a.kind]}/")
        for t in a.label_has:
            if t not in b.get("label", ""):
                c.fail(w, f"label lacks '{t}'")
        if wait_row:
            check_wait(c, b, ctx, a)
        else:
            CHECK[a.kind](c, b, ctx)
        ok += 1
    if ok < a.min_ok:
        c.fail(a.file, f"{ok} benchmark(s) ran, expected at least {a.min_ok}")
    for msg in c.problems:
        print(f"check_results.py: FAIL: {msg}")
    if not c.problems:
        print(f"check_results.py: {a.file}: {ok} {a.kind} benchmark(s) valid")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
