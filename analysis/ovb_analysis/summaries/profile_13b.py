"""Summary of an `ovb-suite run --preset profile-1.3B` folder: the steady-state cost of one
iteration of gpt4d's 1.3B shape, taken as the difference of a long and a short traced run with the
same warm-up (the warm-up iterations, traced in both, cancel): per kernel category, GPU idle and
the top kernels, per repeat and their median; and the tracer's overhead from the untraced and
traced runs of the same length, with their spread.
"""

import re
from pathlib import Path

from .. import stats
from .common import Summary, load_optional
from .h100_single import top_kernels

TITLE = "gpt4d 1.3B: steady-state cost breakdown"
JSON_NAME = "profile.json"
CATEGORIES = ("gemm", "attention", "optimizer", "elementwise", "memory", "communication")
NAME = re.compile(r"^(\d+)-(\d+)$")


def totals(analysis):
    """{category: us, "idle": us, "span": us} of an ovb-trace analysis (all ranks summed)."""
    s = analysis["summary"]
    kb = s["kernel_breakdown"]
    out = {c: float(kb.get(c, {}).get("total_us", 0.0)) for c in CATEGORIES}
    out["idle"], out["span"] = float(s["idle_us"]), float(s["span_us"])
    return out


def analysed(analysis, iterations):
    """Iterations an analysis covers: those ovb-trace kept after its warm-up rule when the trace
    marks iterations (summary.steady_state), else the whole run."""
    ss = analysis["summary"].get("steady_state") or {}
    n = ss.get("iterations_analyzed")
    return int(n) if n else iterations


def steady_state(short, long_, iters_between):
    """Per steady-state iteration, ms: (long - short) / iterations_between, key by key."""
    return {k: (long_[k] - short[k]) / iters_between / 1e3 for k in short}


def _runs(out):
    """{rep: {iters: analysis}} of the folder."""
    found = {}
    for f in sorted((Path(out) / "analysis").glob("*.json")):
        m = NAME.match(f.stem)
        doc = load_optional(f)
        if m and doc:
            found.setdefault(int(m.group(2)), {})[int(m.group(1))] = doc
    return found


def summarize(out):
    md, problems, doc = [], [], {"repeats": []}
    per_rep = []
    for rep, by_len in sorted(_runs(out).items()):
        if len(by_len) < 2:
            continue
        short, long_ = min(by_len), max(by_len)
        between = analysed(by_len[long_], long_) - analysed(by_len[short], short)
        if between <= 0:
            problems.append(f"repeat {rep}: the long run covers no more iterations than the short")
            continue
        ss = steady_state(totals(by_len[short]), totals(by_len[long_]), between)
        per_rep.append(ss)
        doc["repeats"].append({"repeat": rep, "short": short, "long": long_,
                               "iterations_between": between, "per_iter_ms": ss})
        if by_len[long_]["summary"].get("steady_state", {}).get("iterations_analyzed"):
            # ovb-trace's own steady-state window of the long run: a cross-check of the difference
            n = analysed(by_len[long_], long_)
            doc["repeats"][-1]["long_run_window_ms"] = {k: v / n / 1e3 for k, v in
                                                       totals(by_len[long_]).items()}
        # Kernel names from the trace files, whole runs: the same difference.
        _, top_s = top_kernels(str(Path(out) / "traces" / f"{short}-{rep}"), n=200)
        _, top_l = top_kernels(str(Path(out) / "traces" / f"{long_}-{rep}"), n=200)
        if top_l:
            s_ms = {n: v[0] for n, v in top_s}
            diff = sorted(((n, (v[0] - s_ms.get(n, 0.0)) / (long_ - short), v[1])
                           for n, v in top_l), key=lambda t: -t[1])[:15]
            doc["repeats"][-1]["top_kernels_ms"] = [{"name": n, "ms_per_iter": ms}
                                                    for n, ms, _ in diff]
    if not per_rep:
        md.append("No pair of short and long traced runs analysed yet (analysis/N-REP.json).\n")
    else:
        keys = list(per_rep[0])
        med = {k: stats.median([r[k] for r in per_rep]) for k in keys}
        kernel = sum(med[c] for c in CATEGORIES)
        doc["median_per_iter_ms"] = med
        md.append(f"## Steady state, per iteration ({len(per_rep)} repeat(s); long minus short "
                  "traced run)\n")
        md.append("| category | ms per iteration (median) | per repeat | % of kernel time | "
                  "% of the iteration |")
        md.append("|---|---|---|---|---|")
        for k in (*CATEGORIES, "idle"):
            each = ", ".join(f"{r[k]:.2f}" for r in per_rep)
            share = f"{100 * med[k] / kernel:.1f}" if k != "idle" and kernel > 0 else ""
            md.append(f"| {k} | {med[k]:.2f} | {each} | {share} | "
                      f"{100 * med[k] / med['span']:.1f} |")
        md.append(f"| (iteration span) | {med['span']:.2f} | | | |\n")
        window = [r["long_run_window_ms"] for r in doc["repeats"] if "long_run_window_ms" in r]
        if window:
            w = {k: stats.median([x[k] for x in window]) for k in window[0]}
            md.append("Cross-check, ovb-trace's own steady-state window of the long runs (ms per "
                      "iteration): " + ", ".join(f"{k} {w[k]:.2f}" for k in (*CATEGORIES, "idle"))
                      + f"; span {w['span']:.2f}.\n")
        top = doc["repeats"][-1].get("top_kernels_ms")
        if top:
            md.append("Top kernels of the last repeat (steady state, ms per iteration):\n")
            md.append("| kernel | ms/iter |")
            md.append("|---|---|")
            md += [f"| `{t['name'][:90]}` | {t['ms_per_iter']:.2f} |" for t in top]
            md.append("")
    _overhead(out, md, doc)
    return Summary("\n".join(md) + "\n", doc, ok=not problems, problems=problems)


def _overhead(out, md, doc):
    """Traced vs untraced runs of the same length: median and p10-p90 of the timed iterations
    pooled over repeats; the difference is stated with both spreads."""
    pooled = {}
    for f in sorted((Path(out) / "runs").glob("*.json")):
        res = load_optional(f)
        mode = f.stem.split("-")[0]
        if not res or mode not in ("traced", "untraced"):
            continue
        warm = int(res["summary"]["warmup_iters"])
        pooled.setdefault(mode, []).extend(float(i["time_ms"]) for i in res["iterations"][warm:])
    if len(pooled) < 2:
        return
    rows = {m: stats.spread(v) + (len(v),) for m, v in pooled.items()}
    (tm, t10, t90, tn), (um, u10, u90, un) = rows["traced"], rows["untraced"]
    doc["tracer_overhead"] = {"traced": rows["traced"], "untraced": rows["untraced"],
                              "overhead_pct": 100 * (tm - um) / um}
    md.append("## Tracer overhead (traced vs untraced, alternating runs)\n")
    md.append(f"untraced: median {um:.1f} ms (p10-p90 {u10:.1f}-{u90:.1f}, n = {un}); traced: "
              f"{tm:.1f} ms ({t10:.1f}-{t90:.1f}, n = {tn}); difference "
              f"{100 * (tm - um) / um:+.2f} % of the median, against spreads of "
              f"{100 * (u90 - u10) / um:.1f} % and {100 * (t90 - t10) / tm:.1f} %.\n")
