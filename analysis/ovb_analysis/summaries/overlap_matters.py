"""Summary of an `ovb-suite run --preset overlap-matters` folder: for each grid and condition
(overlap flags, stream priorities) the iteration time pooled over the repeats (median, p10-p90,
the repeats' medians), communication and exposed communication per grid dimension, the overlap
efficiency against the same grid without overlap (metrics.overlap_efficiency), whether the
difference from no overlap is outside both runs' p10-p90 ranges, and ovb-model's prediction; the
NCCL socket settings probed, and the runs' own (from their context.environment: one setting for
all, else a problem). Runs are runs/gGRID-CONDITION-rREP.json (gpt4d results).
"""

import re
from pathlib import Path

from .. import metrics, stats
from .common import Summary, load_optional

TITLE = "Overlap where communication and compute are comparable"
JSON_NAME = "overlap-matters.json"
RUN = re.compile(r"^g(\d+x\d+x\d+x\d+)-(.+)-r(\d+)$")
DIMS = ("x", "y", "z", "data")


def exposed_by_dim(summary):
    """{dimension: exposed ms} summed over the collective kinds of a gpt4d result."""
    out = dict.fromkeys(DIMS, 0.0)
    for c in summary.get("collectives") or []:
        if c.get("group") in out:
            out[c["group"]] += float(c.get("exposed_ms") or 0.0)
    return out


def condition_stats(docs):
    """Pooled statistics of the repeats of one grid and condition."""
    times, medians, comm, exposed, dims = [], [], [], [], []
    for d in docs:
        s = d["summary"]
        times += [float(i["time_ms"]) for i in d["iterations"][int(s["warmup_iters"]):]]
        medians.append(float(s["median_time_ms"]))
        comm.append(float(s["comm_time_ms"]))
        exposed.append(float(s["exposed_comm_ms"]))
        dims.append(exposed_by_dim(s))
    med, p10, p90 = stats.spread(times)
    return {"repeats": len(docs), "n": len(times), "median_ms": med, "p10_ms": p10, "p90_ms": p90,
            "repeat_medians_ms": medians, "comm_ms": stats.median(comm),
            "exposed_ms": stats.median(exposed),
            "exposed_by_dim_ms": {k: stats.median([d[k] for d in dims]) for k in DIMS}}


def efficiency(none, cond):
    """overlap_efficiency with compute alone = no-overlap time minus its exposed communication,
    communication alone = its communication time, overlapped = this condition's time."""
    t_c = none["median_ms"] - none["exposed_ms"]
    if t_c <= 0 or none["comm_ms"] <= 0:
        return None
    return metrics.overlap_efficiency(t_c, none["comm_ms"], cond["median_ms"])


def _sockets(out, md, doc):
    rows = []
    for f in sorted((Path(out) / "sockets").glob("*.json")):
        res = load_optional(f)
        for b in (res or {}).get("benchmarks", []):
            if b.get("run_type", "iteration") == "iteration" and b.get("busbw") is not None:
                place = b["name"].split("/")[3] if b["name"].count("/") >= 3 else "?"
                rows.append((f.stem, place, float(b["busbw"])))
    if rows:
        doc["sockets"] = [{"setting": s, "placement": p, "busbw": v} for s, p, v in rows]
        md.append("## NCCL socket threading (64 MiB all-reduce, 4 ranks)\n")
        md.append("| NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD | placement | busbw GB/s |")
        md.append("|---|---|---|")
        md += [f"| {s} | {p} | {v:.2f} |" for s, p, v in rows]
        md.append("")


def socket_setting(result):
    """The NCCL socket threading a run had, from its context.environment: "THREADSxSOCKETS" as
    the preset's `socket` parameter writes it, "default" when neither variable was set."""
    env = (result.get("context") or {}).get("environment") or {}
    threads, socks = env.get("NCCL_SOCKET_NTHREADS"), env.get("NCCL_NSOCKS_PERTHREAD")
    if threads is None and socks is None:
        return "default"
    return f"{threads or 'default'}x{socks or 'default'}"


def _run_sockets(settings, md, doc, problems):
    """One line: the runs' socket setting; runs under different settings are not comparable."""
    if not settings:
        return
    counts = {s: settings.count(s) for s in sorted(set(settings))}
    doc["run_sockets"] = counts
    if len(counts) == 1:
        md.append(f"Runs' NCCL socket setting (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, from "
                  f"their context.environment): {settings[0]} in all {len(settings)} runs.\n")
    else:
        listed = ", ".join(f"{s} in {n}" for s, n in counts.items())
        problems.append(f"runs under different NCCL socket settings: {listed}")
        md.append(f"**Runs under different NCCL socket settings**: {listed}.\n")


def summarize(out):
    md, problems = [], []
    doc = {"grids": {}, "sockets": []}
    _sockets(out, md, doc)
    groups, settings = {}, []
    for f in sorted((Path(out) / "runs").glob("g*.json")):
        m = RUN.match(f.stem)
        res = load_optional(f)
        if not m or not res:
            problems.append(f"runs/{f.name}: not a run of this preset or unreadable")
            continue
        groups.setdefault(m.group(1), {}).setdefault(m.group(2), []).append(res)
        settings.append(socket_setting(res))
    _run_sockets(settings, md, doc, problems)
    if not groups:
        md.append("No runs yet (runs/).\n")
    for grid, conds in groups.items():
        table = {c: condition_stats(docs) for c, docs in conds.items()}
        none = table.get("none")
        md.append(f"## Grid {grid}\n")
        md.append("| condition | repeats | n | median ms | p10-p90 ms | comm ms | exposed ms | "
                  "exposed x / y / z / data ms | efficiency vs none | outside none's range | "
                  "model ms (exposed) |")
        md.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for cond, t in table.items():
            pred = load_optional(Path(out) / "model" / f"g{grid}-{cond}.json")
            cfg = (pred or {}).get("config") or {}
            t["predicted_ms"] = cfg.get("predicted_ms")
            t["predicted_exposed_ms"] = cfg.get("exposed_comm_ms")
            t["efficiency"] = efficiency(none, t) if none and cond != "none" else None
            apart = None
            if none and cond != "none":
                apart = t["p90_ms"] < none["p10_ms"] or t["p10_ms"] > none["p90_ms"]
            t["outside_none_range"] = apart
            e = t["exposed_by_dim_ms"]
            eff = "-" if t["efficiency"] is None else f"{t['efficiency']:.2f}"
            model = "-" if t["predicted_ms"] is None else \
                f"{t['predicted_ms']:.1f} ({t['predicted_exposed_ms']:.1f})"
            md.append(f"| {cond} | {t['repeats']} | {t['n']} | {t['median_ms']:.1f} | "
                      f"{t['p10_ms']:.1f}-{t['p90_ms']:.1f} | {t['comm_ms']:.1f} | "
                      f"{t['exposed_ms']:.1f} | {e['x']:.1f} / {e['y']:.1f} / {e['z']:.1f} / "
                      f"{e['data']:.1f} | "
                      f"{eff} | "
                      f"{'-' if apart is None else ('yes' if apart else 'no')} | {model} |")
        if none and none["comm_ms"] > 0:
            compute = none["median_ms"] - none["exposed_ms"]
            ratio = compute / none["comm_ms"]
            within = 0.5 <= ratio <= 2.0
            doc.setdefault("balance", {})[grid] = {"compute_ms": compute,
                                                   "comm_ms": none["comm_ms"], "ratio": ratio,
                                                   "within_2x": within}
            md.append(f"\nWithout overlap: compute alone {compute:.1f} ms (iteration minus "
                      f"exposed communication), communication {none['comm_ms']:.1f} ms, ratio "
                      f"{ratio:.2f}: {'within' if within else '**outside**'} the 2x window the "
                      "configuration was chosen for.")
        md.append("")
        doc["grids"][grid] = table
    md.append("Efficiency: (serial - t_o) / min(t_c, t_m) with t_c = the no-overlap run's time "
              "minus its exposed communication, t_m = its communication time, t_o = this "
              "condition's time (docs/metrics.md). \"outside none's range\": the two p10-p90 "
              "ranges of iteration time do not overlap.")
    return Summary("\n".join(md) + "\n", doc, ok=not problems, problems=problems)
