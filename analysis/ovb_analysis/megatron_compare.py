"""Side-by-side comparison of a gpt4d run and a matched Megatron-LM run.

Both iteration times go through the same warm-up rule and the same FLOP formula
(metrics.gpt_model_flop); each system's own TFLOP/s figure is shown beside the recomputed one,
never instead of it. Speedup = Megatron median time / gpt4d median time (> 1: gpt4d is faster).
"""

from . import runs

COLUMNS = (("system", "system", "{}"), ("layout", "layout", "{}"), ("flags", "overlap", "{}"),
           ("gpus", "GPUs", "{}"), ("batch", "batch", "{}"), ("iterations_used", "iters", "{}"),
           ("median_ms", "median ms", "{:.1f}"), ("p10_ms", "p10 ms", "{:.1f}"),
           ("p90_ms", "p90 ms", "{:.1f}"), ("tflops_per_gpu", "TFLOP/s/GPU", "{:.1f}"),
           ("own_tflops_per_gpu", "own figure", "{:.1f}"), ("pct_peak", "% peak", "{:.1f}"))


def mismatches(a, b):
    """What differs between two runs that should be matched (model, batch, GPU count,
    recomputation)."""
    out = []
    for key in ("layers", "hidden", "heads", "seq", "vocab"):
        va, vb = a.model.get(key), b.model.get(key)
        if va is not None and vb is not None and int(va) != int(vb):
            out.append(f"{key}: {a.system} {va} vs {b.system} {vb}")
    if a.batch != b.batch:
        out.append(f"global batch: {a.system} {a.batch} vs {b.system} {b.batch}")
    if a.gpus != b.gpus:
        out.append(f"GPUs: {a.system} {a.gpus} vs {b.system} {b.gpus}")
    ra, rb = bool(a.extra.get("recompute")), bool(b.extra.get("recompute"))
    if ra != rb:
        out.append(f"full recomputation: {a.system} {'on' if ra else 'off'} vs {b.system} "
                   f"{'on' if rb else 'off'} (the model FLOP count is the same; the work is not)")
    return out


def compare(gpt4d_run, megatron_run, warmup=None):
    """The comparison as a JSON-ready dict: one row per system, the speedup and any mismatch."""
    if megatron_run.peak is None:
        megatron_run.peak = gpt4d_run.peak  # same machine: the matched run's peak
    rows = []
    for run in (gpt4d_run, megatron_run):
        row = {"system": run.system, "source": run.source, "layout": run.layout, "flags": run.flags,
               "gpus": run.gpus, "batch": run.batch}
        row.update(runs.run_stats(run, warmup))
        rows.append(row)
    return {"schema_version": 1, "rows": rows,
            "speedup": rows[1]["median_ms"] / rows[0]["median_ms"],
            "model": {k: gpt4d_run.model.get(k) for k in ("layers", "hidden", "heads", "seq",
                                                            "vocab", "preset")},
            "mismatches": mismatches(gpt4d_run, megatron_run),
            "formula": "F = 72*B*s*L*h^2*(1 + s/(12h) + V/(12*L*h)); TFLOP/s per GPU = F/t/n/1e12"}


def _cell(fmt, value):
    return "-" if value is None else fmt.format(value)


def format_table(result):
    """The comparison as aligned text lines."""
    table = [[title for _, title, _ in COLUMNS]]
    for row in result["rows"]:
        table.append([_cell(fmt, row.get(key)) for key, _, fmt in COLUMNS])
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.rjust(w) if i >= 3 else c.ljust(w) for i, (c, w) in
                       enumerate(zip(r, widths))).rstrip() for r in table]
    lines.append("")
    lines.append(f"speedup of gpt4d over Megatron-LM (median time ratio): {result['speedup']:.3f}x")
    lines.append("TFLOP/s/GPU: " + result["formula"] + "; 'own figure' = the system's own number")
    lines.append(f"warm-up excluded: gpt4d {result['rows'][0]['warmup']}, Megatron-LM "
                 f"{result['rows'][1]['warmup']} iterations")
    return "\n".join(lines) + "\n"
