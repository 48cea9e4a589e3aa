"""Summary of an `ovb-suite run --preset profiling-gpu` folder: the tracer's overhead from the
interleaved untraced/traced pairs (each run's median iteration time; per pair the ratio traced /
untraced; its median, p10 and p90 over the pairs, docs/metrics.md "Overheads"; the target is < 3 %)
into overhead.json, and the text of the two trace analyses. Standard library only.
"""
import json
import os
import re

from .. import stats
from .common import Summary, log_body

TITLE = "Profiling on the GPU"
JSON_NAME = "overhead.json"
PROGRAMS = ("gpt4d", "demo")


def _median_of(path):
    with open(path, encoding="utf-8") as f:
        s = json.load(f)["summary"]
    return float(s.get("p50_ms", s.get("median_time_ms")))


def _pairs(over, prog):
    """{pair number: (untraced ms, traced ms)} for the pairs with both runs."""
    runs = {}
    for name in sorted(os.listdir(over)) if os.path.isdir(over) else []:
        m = re.fullmatch(rf"{prog}-(untraced|traced)-(\d+)\.json", name)
        if m:
            runs.setdefault(int(m.group(2)), {})[m.group(1)] = _median_of(os.path.join(over, name))
    return {k: (v["untraced"], v["traced"]) for k, v in sorted(runs.items()) if len(v) == 2}


def summarize(out):
    over = os.path.join(out, "overhead")
    doc = {"programs": {}}
    md = ["## Tracer overhead (untraced and traced runs interleaved; target < 3 %)", "",
          "| program | untraced median ms | traced median ms | traced/untraced per pair: "
          "median (p10, p90) | overhead % | pairs |",
          "|---|---|---|---|---|---|"]
    for prog in PROGRAMS:
        pairs = _pairs(over, prog)
        if not pairs:
            continue
        un = [u for u, _ in pairs.values()]
        tr = [t for _, t in pairs.values()]
        ratios = [t / u for u, t in pairs.values()]
        r50, r10, r90 = stats.spread(ratios)
        pct = 100.0 * (r50 - 1.0)
        doc["programs"][prog] = {"untraced_ms": un, "traced_ms": tr, "ratios": ratios,
                                 "untraced_median_ms": stats.median(un),
                                 "traced_median_ms": stats.median(tr), "ratio_p50": r50,
                                 "ratio_p10": r10, "ratio_p90": r90, "overhead_pct": pct,
                                 "pairs": len(ratios)}
        md.append(f"| {prog} | {stats.median(un):.3f} | {stats.median(tr):.3f} | {r50:.4f} "
                  f"({r10:.4f}, {r90:.4f}) | {pct:+.2f} | {len(ratios)} |")
    if not doc["programs"]:
        md.append("| (no traced/untraced pair) | | | | | |")
    for name, step in (("inject", "inject-analyze"), ("demo", "demo-analyze")):
        text = log_body(out, step)
        if text:
            md += ["", f"## ovb-trace analyze: {name}", "", "```", text, "```"]
    md += ["", "The 2-rank runs share one GPU: NCCL goes over loopback sockets (emulated "
           "bandwidth), never an NVLink/IB figure."]
    return Summary("\n".join(md), doc)
