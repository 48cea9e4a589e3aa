"""Summary of an `ovb-suite run --preset microbench-gpu` folder (or any folder of microbenchmark
JSON files): the GPU, the GEMM target check (bf16 8192^3 within 5% of the best cuBLASLt algorithm
of the same run), GEMM throughput per precision, collective bus bandwidth, and the overlap metrics.
Standard library only.
"""
import glob
import json
import os

from ..results import BLOCKING_WAIT_SCENARIO, parse_label
from .common import Summary

TITLE = "Microbenchmarks on one GPU"
JSON_NAME = None


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def runs(doc):
    """Plain runs, or the median aggregate where repetitions produced one; skips listed apart."""
    out, skipped, medians = {}, [], set()
    for b in doc.get("benchmarks", []):
        key = b.get("run_name", b["name"])
        if b.get("error_occurred"):
            skipped.append((b["name"], b.get("error_message", "")))
        elif b.get("run_type") == "aggregate" and b.get("aggregate_name") == "median":
            out[key] = b
            medians.add(key)
        elif b.get("run_type") == "iteration" and key not in medians:
            out[key] = b
    return list(out.values()), skipped


def result_runs(folder, pattern):
    """(file name, runs, skipped) of every readable result file matching pattern."""
    for path in sorted(glob.glob(os.path.join(folder, pattern))):
        doc = load(path)
        if doc:
            yield (os.path.basename(path),) + runs(doc)


def fmt(v, nd=1):
    return "-" if v is None else f"{v:.{nd}f}"


def gemm_section(folder, lines):
    target = load(os.path.join(folder, "gemm-target.json"))
    lines.append("## GEMM (1 rank)\n")
    if target:
        rs, _ = runs(target)
        for b in rs:
            if "/bf16/8192x8192x8192/" not in b["name"] or "autotune_best_us" not in b:
                continue
            best_us = b.get("best_sustained_us", b.get("reference_us"))  # older files: reference_us
            best_tflops = b["flop"] / (best_us * 1e-6) / 1e12
            ok = b["over_best"] <= 1.05
            lines.append(
                f"- Target `{b['name']}`: **{b['tflops']:.1f} TFLOP/s**, best of the cuBLASLt "
                f"candidates back to back in the same run {best_tflops:.1f} TFLOP/s (time ratio over_best "
                f"{b['over_best']:.3f}): **{'PASS' if ok else 'FAIL'}** (limit 1.05); algorithm "
                f"{int(b['algo'])} of {int(b['autotune_candidates'])}, heuristic default / best "
                f"= {b['default_over_best']:.3f}; {int(b.get('iterations_timed', 0))} timed "
                f"samples, p10/p50/p90 {fmt(b.get('p10_ms'), 4)}/{fmt(b.get('p50_ms'), 4)}/"
                f"{fmt(b.get('p90_ms'), 4)} ms.")
        lines.append("")
    torch = load(os.path.join(folder, "gemm-torch.json"))
    if torch and torch.get("skipped"):
        lines += [f"- torch.matmul reference: skipped ({torch['skipped']}).", ""]
    elif torch:
        for r in torch.get("results", []):
            lines.append(f"- torch.matmul {torch.get('dtype')} {r['m']}x{r['n']}x{r['k']} "
                         f"(torch {torch.get('torch')}), same run: **{r['tflops']:.1f} TFLOP/s** "
                         f"at the median of {r['iterations_timed']} samples (p10/p50/p90 "
                         f"{r['p10_ms']:.4f}/{r['p50_ms']:.4f}/{r['p90_ms']:.4f} ms).")
        lines.append("")
    lines.append("| file | benchmark | TFLOP/s | % peak | time (us) | algo | over_best |")
    lines.append("|---|---|---|---|---|---|---|")
    skipped_all = {}
    for name, rs, skipped in result_runs(folder, "gemm-*.json"):
        skipped_all.update(skipped)
        for b in rs:
            lines.append(f"| {name} | `{b['name']}` | {fmt(b.get('tflops'))} | "
                         f"{fmt(b.get('pct_peak'))} | {fmt(b.get('time_us'))} | "
                         f"{int(b.get('algo', -1))} | {fmt(b.get('over_best'), 3)} |")
    for name, msg in skipped_all.items():
        lines.append(f"\nSkipped `{name}`: {msg}")
    lines.append("")


def collective_section(folder, lines):
    lines.append("## Collectives (busbw in GB/s from the max time over ranks)\n")
    lines.append("Multi-rank runs share one GPU over loopback sockets: emulated bandwidth.\n")
    lines.append("| file | ranks | benchmark | size (B) | time max (us) | algbw | busbw | wrong |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for name, rs, _ in result_runs(folder, "collective-*.json"):
        for b in rs:
            lines.append(f"| {name} | {int(b['ranks'])} | `{b['name']}` | "
                         f"{int(b['bytes'])} | {fmt(b['time_max_us'])} | {fmt(b['algbw'], 2)} | "
                         f"{fmt(b['busbw'], 2)} | {int(b['wrong'])} |")
    lines.append("")


def overlap_section(folder, lines):
    lines.append("## Overlap (times in us; see microbench/README.md for the metrics)\n")
    lines.append("| file | benchmark | label | t_c | t_m | t_o | efficiency | speedup | "
                 "fraction of ideal | compute slowdown | comm slowdown |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, rs, _ in result_runs(folder, "overlap-*.json"):
        for b in rs:
            if parse_label(b.get("label", "")).get("scenario") == BLOCKING_WAIT_SCENARIO:
                continue  # no overlap measured: a GEMM, then a collective waited for
            label = " ".join(kv for kv in b.get("label", "").split()
                             if kv.split("=")[0] in ("prio", "order", "max_ctas", "cdmc"))
            lines.append(
                f"| {name} | `{b['name']}` | {label} | {fmt(b['t_compute_us'])} | "
                f"{fmt(b['t_comm_us'])} | {fmt(b['t_overlap_us'])} | "
                f"{fmt(b['overlap_efficiency'], 3)} | {fmt(b['speedup_vs_serial'], 3)} | "
                f"{fmt(b.get('fraction_of_ideal'), 3)} | {fmt(b['compute_slowdown'], 3)} | "
                f"{fmt(b['comm_slowdown'], 3)} |")
    lines.append("")


def summarize(folder):
    lines = []
    any_doc = next((load(p) for p in sorted(glob.glob(os.path.join(folder, "*.json")))), None)
    if any_doc:
        c = any_doc.get("context", {})
        d = c.get("device", {})
        v = c.get("versions", {})
        lines.append(f"GPU: {d.get('name')} ({d.get('memory_bytes', 0) / 2**30:.0f} GiB), driver "
                     f"{v.get('driver')}, CUDA runtime {v.get('cuda_runtime')}, NCCL "
                     f"{v.get('nccl')}, {v.get('mpi')}; host {c.get('host')}, {c.get('date')}, "
                     f"git {c.get('git_revision')}, build {c.get('build_type')}.\n")
    gemm_section(folder, lines)
    collective_section(folder, lines)
    overlap_section(folder, lines)
    lines.append("Multi-rank runs share one GPU: their NCCL bandwidth goes over loopback sockets "
                 "(emulated), never an NVLink/IB figure.")
    return Summary("\n".join(lines))
