"""Summary of an `ovb-suite run --preset h100-single` folder (markdown, and summary.json).

Reads what the preset wrote (gpt4d result files: results/SCHEMA.md; pytorch_gpt.py results; ovb-trace
analysis.json and the trace itself; ovb-gemm Google Benchmark JSON; the kernel tests' gtest JSON)
and tabulates: gpt4d against PyTorch (eager, torch.compile) on the 1.3B shape, the other shapes,
the batch search, where the time goes (kernel categories and the top kernels of the traced run),
the tracer overhead, peak memory against the model's estimate, and the GEMM table. Missing files
leave their section out with a note. Standard library only.
"""
import glob
import gzip
import json
import os
from collections import defaultdict

from .common import Summary

TITLE = "gpt4d on one GPU"
JSON_NAME = "summary.json"

# Measured earlier on an H100 for the 1.3B shape (results/h100/README.md), for reference.
REFERENCE = [("Megatron-LM local (earlier H100 run)", 395.0, 175.5),
             ("PyTorch eager (earlier H100 run)", 173.0, 400.6),
             ("PyTorch torch.compile (earlier H100 run)", 150.0, 461.6)]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def gib(b):
    return f"{b / 2**30:.2f}" if isinstance(b, (int, float)) else "-"


def fmt(v, spec=".1f"):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def gpt4d_row(label, r):
    s, c = r["summary"], r["config"]
    return {"run": label, "preset": c["model"].get("preset"), "batch": c["batch"],
            "attention": c.get("attention"), "median_ms": s["median_time_ms"],
            "tflops": s["tflops_per_gpu"], "mfu": s.get("mfu"),
            "tokens_per_s": s["tokens_per_s"], "peak_memory_bytes": s["peak_memory_bytes"],
            "memory_estimate_bytes": s["memory_estimate_bytes"],
            "device_memory_used_bytes": s.get("device_memory_used_bytes")}


def torch_row(label, r):
    s = r["summary"]
    return {"run": label, "preset": r["config"]["model"].get("preset"),
            "batch": r["config"]["batch"], "attention": r["config"]["attention"],
            "median_ms": s["median_time_ms"], "tflops": s["tflops_per_gpu"], "mfu": s.get("mfu"),
            "tokens_per_s": s["tokens_per_s"], "peak_memory_bytes": s["peak_memory_bytes"]}


def table(rows, cols):
    out = ["| " + " | ".join(h for h, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(f(r) for _, f in cols) + " |")
    return out


def top_kernels(trace_dir, n=12):
    """Kernel time by name over every trace file of the traced run (ms summed), largest first."""
    by_name, files = defaultdict(lambda: [0.0, 0]), 0
    for path in sorted(glob.glob(os.path.join(trace_dir, "*trace.json*"))):
        opener = gzip.open if path.endswith(".gz") else open
        try:
            with opener(path, "rt") as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        files += 1
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        for e in events:
            if e.get("ph") == "X" and str(e.get("cat", "")).lower() in (
                    "kernel", "gpu_memset", "gpu_memcpy"):
                k = by_name[e.get("name", "?")]
                k[0] += float(e.get("dur", 0)) / 1e3
                k[1] += 1
    return files, sorted(by_name.items(), key=lambda kv: -kv[1][0])[:n]


def summarize(out):
    md, summary = [], {}

    # 1. gpt4d against PyTorch on the 1.3B shape.
    rows = []
    g = load(os.path.join(out, "gpt4d_1.3B.json"))
    if g:
        rows.append(gpt4d_row("gpt4d", g))
    for mode in ("eager", "compile"):
        t = load(os.path.join(out, f"torch_1.3B_{mode}.json"))
        if t:
            rows.append(torch_row(f"PyTorch {mode}", t))
    md += ["## GPT 1.3B (24 x 2048, 16 heads, seq 2048, vocab 50304, batch 4, bf16), one GPU", ""]
    if rows:
        md += table(rows, [("run", lambda r: r["run"]),
                           ("attention", lambda r: str(r["attention"])),
                           ("ms/iteration", lambda r: fmt(r["median_ms"])),
                           ("TFLOP/s", lambda r: fmt(r["tflops"])),
                           ("MFU", lambda r: fmt(100 * r["mfu"]) + " %" if r["mfu"] else "-"),
                           ("tokens/s", lambda r: fmt(r["tokens_per_s"], ".0f")),
                           ("peak memory GiB", lambda r: gib(r["peak_memory_bytes"]))])
        if g:
            for r in rows[1:]:
                md.append(f"\ngpt4d / {r['run']}: {rows[0]['tflops'] / r['tflops']:.2f}x "
                          "(TFLOP/s with the metrics.md formula, measured in this run)")
    else:
        md.append("(no gpt4d or PyTorch result)")
    md += ["", "For reference, measured earlier on an H100 (same formula): " +
           "; ".join(f"{n} {ms:.0f} ms, {tf:.1f} TFLOP/s" for n, ms, tf in REFERENCE) + ".", ""]
    summary["headline"] = rows

    # 2. Other shapes and the batch search.
    shapes = []
    for name in ("125M", "350M", "1.3B", "2.7B"):
        for suffix in ("", "_b2"):
            r = load(os.path.join(out, f"gpt4d_{name}{suffix}.json"))
            if r:
                shapes.append(gpt4d_row(f"gpt4d {name}", r))
    batches = []
    for path in sorted(glob.glob(os.path.join(out, "gpt4d_1.3B_batch*.json")),
                       key=lambda p: int(p.split("batch")[-1].split(".")[0])):
        r = load(path)
        if r:
            batches.append(gpt4d_row("gpt4d 1.3B", r))
    mem_cols = [("run", lambda r: r["run"]), ("batch", lambda r: str(r["batch"])),
                ("attention", lambda r: str(r["attention"])),
                ("ms/iteration", lambda r: fmt(r["median_ms"])),
                ("TFLOP/s", lambda r: fmt(r["tflops"])),
                ("MFU", lambda r: fmt(100 * r["mfu"]) + " %" if r["mfu"] else "-"),
                ("allocated GiB", lambda r: gib(r["peak_memory_bytes"])),
                ("estimate GiB", lambda r: gib(r["memory_estimate_bytes"])),
                ("allocated / estimate", lambda r: fmt(r["peak_memory_bytes"] /
                                                       r["memory_estimate_bytes"], ".3f")),
                ("device used GiB", lambda r: gib(r["device_memory_used_bytes"]))]
    md += ["## Shapes (batch 4; 2.7B at batch 2 where 4 does not fit)", ""]
    md += table(shapes, mem_cols) if shapes else ["(no results)"]
    md += ["", "## Largest batch of the 1.3B model", ""]
    if batches:
        md += table(batches, mem_cols)
        md.append(f"\nLargest batch that ran: {batches[-1]['batch']} (the next candidate did not "
                  "fit or was not tried; see the step table).")
    else:
        md.append("(no batch-search results)")
    md += ["", "Memory: `allocated` is every buffer gpt4d allocated (TrackedMemory, including the "
           "cuDNN workspace), `estimate` the model's gpt_memory(), `device used` the whole "
           "device's used memory at the end (CUDA context and libraries included).", ""]
    summary["shapes"], summary["batch_search"] = shapes, batches

    # 3. Where the time goes (traced run) and the tracer overhead.
    md += ["## Where the time goes (1.3B, batch 4, traced, 8 iterations incl. 3 of warm-up)", ""]
    a = load(os.path.join(out, "trace", "analysis.json"))
    traced = load(os.path.join(out, "gpt4d_1.3B_traced.json"))
    untraced = load(os.path.join(out, "gpt4d_1.3B_untraced.json"))
    iters = traced["config"]["iters"] if traced else 8
    if a:
        kb = a["summary"]["kernel_breakdown"]
        cats = [c for c in ("gemm", "attention", "elementwise", "optimizer", "communication",
                            "memory") if c in kb]
        md += ["| category | ms per iteration | % of kernel time | % of span |",
               "|---|---|---|---|"]
        for c in sorted(cats, key=lambda c: -kb[c]["total_us"]):
            md.append(f"| {c} | {kb[c]['total_us'] / 1e3 / iters:.2f} | {kb[c]['pct']:.1f} | "
                      f"{kb[c]['span_pct']:.1f} |")
        md.append(f"| idle | {kb['idle_us'] / 1e3 / iters:.2f} | | {kb['idle_pct']:.1f} |")
        summary["kernel_breakdown"] = kb
    else:
        md.append("(no trace analysis)")
    files, top = top_kernels(os.path.join(out, "trace"))
    if top:
        md += ["", f"Top kernels ({files} trace file(s); ms per iteration, calls per iteration):",
               "", "| kernel | ms/iter | calls/iter |", "|---|---|---|"]
        for name, (ms, count) in top:
            md.append(f"| `{name[:90]}` | {ms / iters:.2f} | {count / iters:.1f} |")
        summary["top_kernels"] = [{"name": n, "ms_per_iter": ms / iters,
                                   "calls_per_iter": c / iters} for n, (ms, c) in top]
    if traced and untraced:
        t, u = traced["summary"]["median_time_ms"], untraced["summary"]["median_time_ms"]
        ts, us = traced["summary"], untraced["summary"]
        spread = [100 * (r["p90_time_ms"] - r["p10_time_ms"]) / r["median_time_ms"]
                  for r in (ts, us) if r.get("p10_time_ms") is not None]
        within = (f"; p10-p90 spreads {' and '.join(f'{x:.1f} %' for x in spread)}, so a "
                  "difference smaller than them is not resolved") if spread else ""
        md += ["", f"Tracer overhead: traced {t:.1f} ms vs untraced {u:.1f} ms per iteration "
               f"(medians of {ts.get('measured_iters')} and {us.get('measured_iters')} timed "
               f"iterations): {100 * (t - u) / u:+.2f} % (target < 3 %){within}."]
        summary["tracer_overhead_pct"] = 100 * (t - u) / u
    md.append("")

    # 4. GEMMs.
    md += ["## bf16 GEMMs (ovb-gemm, cuBLASLt; % of best = the heuristic-chosen, then autotuned "
           "algorithm against the fastest of the candidates)", ""]
    gemm_rows = []
    for tag in ("1.3B", "2.7B", "6.7B", "8192"):
        r = load(os.path.join(out, f"gemm_{tag}.json"))
        for b in (r or {}).get("benchmarks", []):
            if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
                continue
            if b.get("error_occurred") or "tflops" not in b:
                continue
            ob, dob = b.get("over_best"), b.get("default_over_best")
            shape = f"{b.get('m', 0):.0f}x{b.get('n', 0):.0f}x{b.get('k', 0):.0f}"
            gemm_rows.append({"set": tag, "name": b["name"].split("/min_time")[0], "shape": shape,
                              "tflops": b["tflops"], "pct_of_best": 100 / ob if ob else None,
                              "heuristic_pct_of_best": 100 / dob if dob else None})
    if gemm_rows:
        md += table(gemm_rows, [("set", lambda r: r["set"]),
                                ("benchmark", lambda r: r["name"]),
                                ("MxNxK", lambda r: r["shape"]),
                                ("TFLOP/s", lambda r: fmt(r["tflops"])),
                                ("% of best", lambda r: fmt(r["pct_of_best"])),
                                ("heuristic's % of best",
                                 lambda r: fmt(r["heuristic_pct_of_best"]))])
    else:
        md.append("(no GEMM results)")
    summary["gemm"] = gemm_rows

    # 5. Kernel tests.
    k = load(os.path.join(out, "kernel_tests.json"))
    if k:
        skipped = sum(1 for s in k.get("testsuites", []) for t in s.get("testsuite", [])
                      if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN")
        md += ["", f"Kernel tests (every CUDA kernel against the host): {k.get('tests')} tests, "
               f"{k.get('failures')} failures, {skipped} skipped."]
        summary["kernel_tests"] = {"tests": k.get("tests"), "failures": k.get("failures"),
                                   "skipped": skipped}
    return Summary("\n".join(md), summary)
