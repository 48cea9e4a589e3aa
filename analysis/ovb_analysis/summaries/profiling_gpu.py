"""Summary of an `ovb-suite run --preset profiling-gpu` folder: the tracer's overhead (the median
over repetitions of each run's median iteration time, traced against untraced, per program; the
target is < 3 %) into overhead.json, and the text of the two trace analyses. Standard library only.
"""
import glob
import json
import os
import statistics

from .common import Summary, log_body

TITLE = "Profiling on the GPU"
JSON_NAME = "overhead.json"
PROGRAMS = ("gpt4d", "demo")


def _medians(over, prog, mode):
    vals = []
    for path in sorted(glob.glob(os.path.join(over, f"{prog}-{mode}-*.json"))):
        with open(path, encoding="utf-8") as f:
            vals.append(float(json.load(f)["summary"]["median_time_ms"]))
    return vals


def summarize(out):
    over = os.path.join(out, "overhead")
    doc = {"programs": {}}
    md = ["## Tracer overhead (same run traced and untraced; target < 3 %)", "",
          "| program | untraced median ms | traced median ms | overhead % | runs |",
          "|---|---|---|---|---|"]
    for prog in PROGRAMS:
        un, tr = _medians(over, prog, "untraced"), _medians(over, prog, "traced")
        if not un or not tr:
            continue
        u, t = statistics.median(un), statistics.median(tr)
        pct = 100.0 * (t - u) / u
        doc["programs"][prog] = {"untraced_ms": un, "traced_ms": tr, "untraced_median_ms": u,
                                 "traced_median_ms": t, "overhead_pct": pct}
        md.append(f"| {prog} | {u:.3f} | {t:.3f} | {pct:+.2f} | {len(tr)} |")
    if not doc["programs"]:
        md.append("| (no traced/untraced pair) | | | | |")
    for name, step in (("inject", "inject-analyze"), ("demo", "demo-analyze")):
        text = log_body(out, step)
        if text:
            md += ["", f"## ovb-trace analyze: {name}", "", "```", text, "```"]
    md += ["", "The 2-rank runs share one GPU: NCCL goes over loopback sockets (emulated "
           "bandwidth), never an NVLink/IB figure."]
    return Summary("\n".join(md), doc)
