"""Summary of an `ovb-suite run --preset multirank` folder (markdown, and summary.json).

Reads the gpt4d result files (results/SCHEMA.md) under OUT_DIR/{grids4,grids8,flags8,priorities}/
and tabulates, per run: ranks, grid (Gx x Gy x Gz x Gdata), overlap flags, stream priorities, median
iteration time, the collectives' own time, exposed communication (the compute stream's wait on
them) in total and per grid dimension (gpt4d's summary.collectives, "z-allgather" counted as z and
"world" - the loss and gradient-norm reductions - as other), and, per grid, what the three overlap
flags together change; per priority setting, the change against gpt4d's default (comm high,
compute normal) measured in the same sweep. A folder without any result is an error.
Standard library only.
"""
import glob
import json
import os

from .. import overlap_flags
from ..errors import AnalysisError
from ..overlap_flags import ALL, NONE
from .common import Summary

TITLE = "gpt4d, 4 and 8 ranks on one device"
JSON_NAME = "summary.json"

PARTS = ("grids4", "grids8", "flags8", "priorities")
DIMS = ("x", "y", "z", "data", "other")
DEFAULT_PRIORITY = ("high", "normal")
NOTE = {"cuda": "All ranks share one GPU (CUDA MPS, NCCL over loopback sockets): communication "
                "bandwidth is emulated, so these figures show overlap behaviour, never NVLink or "
                "network speed.",
        "host": "Host backend: the ranks are CPU processes exchanging MPI messages, so these "
                "figures check the sweep, not GPU overlap."}


def dimension(group):
    head = str(group).lower().split("-")[0]
    return head if head in DIMS[:-1] else "other"


def row_of(part, path):
    with open(path) as f:
        doc = json.load(f)
    c, s = doc["config"], doc["summary"]
    g = c["grid"]
    per = dict.fromkeys(DIMS, 0.0)
    for coll in s["collectives"]:
        per[dimension(coll["group"])] += float(coll["exposed_ms"])
    return {"part": part, "file": os.path.join(part, os.path.basename(path)),
            "backend": doc.get("context", {}).get("backend"),
            "ranks": int(c["world_size"]),
            "grid": "x".join(str(g[k]) for k in ("gx", "gy", "gz", "gdata")),
            "overlap": overlap_flags.text(c.get("overlap")),
            "comm_priority": c.get("comm_priority"), "compute_priority": c.get("compute_priority"),
            "median_ms": float(s["median_time_ms"]), "p10_ms": float(s["p10_time_ms"]),
            "p90_ms": float(s["p90_time_ms"]), "comm_ms": float(s["comm_time_ms"]),
            "timed": s.get("iterations_timed", s.get("measured_iters")),
            "exposed_ms": float(s["exposed_comm_ms"]),
            "exposed_per_dim_ms": per}


def load(out):
    rows = []
    for part in PARTS:
        for path in sorted(glob.glob(os.path.join(out, part, "*.json"))):
            try:
                rows.append(row_of(part, path))
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise AnalysisError(f"{path}: not a gpt4d result ({e})") from None
    return rows


def priority(r):
    return f"comm {r['comm_priority']}, compute {r['compute_priority']}"


def table(rows, extra_cols=()):
    head = ["ranks", "grid", "overlap", "priorities", "median ms (p10-p90; timed iterations)",
            "comm ms", "exposed ms"]
    head += [f"exposed {d}" for d in DIMS] + [name for name, _ in extra_cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r["ranks"]), r["grid"], r["overlap"], priority(r),
                 f"{r['median_ms']:.1f} ({r['p10_ms']:.1f}-{r['p90_ms']:.1f}; {r['timed']})",
                 f"{r['comm_ms']:.1f}", f"{r['exposed_ms']:.1f}"]
        cells += [f"{r['exposed_per_dim_ms'][d]:.1f}" for d in DIMS]
        cells += [fn(r) for _, fn in extra_cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def change(a, b):
    """Relative change of b against a, in percent (None when a is 0)."""
    return 100.0 * (b - a) / a if a else None


def pct(v):
    return "n/a" if v is None else f"{v:+.1f} %"


def grid_effects(rows):
    """Per (ranks, grid) with both a 'none' and an every-flag ('oar,ors,oag') run at default
    priorities."""
    by = {}
    for r in rows:
        if r["part"] in ("grids4", "grids8") and (r["comm_priority"], r["compute_priority"]) == DEFAULT_PRIORITY:
            by.setdefault((r["ranks"], r["grid"]), {})[r["overlap"]] = r
    out = []
    for (ranks, grid), runs in sorted(by.items()):
        if NONE in runs and ALL in runs:
            n, a = runs[NONE], runs[ALL]
            out.append({"ranks": ranks, "grid": grid, "none_ms": n["median_ms"],
                        "all_ms": a["median_ms"], "time_change_pct": change(n["median_ms"], a["median_ms"]),
                        "none_exposed_ms": n["exposed_ms"], "all_exposed_ms": a["exposed_ms"],
                        "exposed_change_pct": change(n["exposed_ms"], a["exposed_ms"])})
    return out


def priority_effects(rows):
    """Per (ranks, grid, overlap) in the priorities part: each setting against the default one."""
    by = {}
    for r in rows:
        if r["part"] == "priorities":
            by.setdefault((r["ranks"], r["grid"], r["overlap"]), []).append(r)
    out = []
    for key, runs in sorted(by.items()):
        base = next((r for r in runs if (r["comm_priority"], r["compute_priority"]) == DEFAULT_PRIORITY), None)
        for r in runs:
            if base is None or r is base:
                continue
            out.append({"ranks": key[0], "grid": key[1], "overlap": key[2],
                        "priorities": priority(r), "median_ms": r["median_ms"],
                        "default_ms": base["median_ms"],
                        "time_change_pct": change(base["median_ms"], r["median_ms"]),
                        "exposed_ms": r["exposed_ms"], "default_exposed_ms": base["exposed_ms"],
                        "exposed_change_pct": change(base["exposed_ms"], r["exposed_ms"])})
    return out


def summarize(out):
    rows = load(out)
    if not rows:
        raise AnalysisError(f"no gpt4d results under {out}/{{{','.join(PARTS)}}}")
    md = []
    backends = sorted({str(r["backend"]) for r in rows})
    note = " ".join(NOTE.get(b, "") for b in backends)
    md.append(f"Backend: {', '.join(backends)}. {note} \"exposed\" is the compute stream's wait on each "
          "collective, \"comm\" the collectives' own durations: two measurements, so exposed can "
          "exceed comm by a little.\n")
    sections = (("grids4", "4 ranks, grids, no overlap vs every overlap flag"),
                ("grids8", "8 ranks, grids, no overlap vs every overlap flag"),
                ("flags8", "8 ranks, grid 2x2x2x1, each overlap flag alone"),
                ("priorities", "Stream priorities, every overlap flag, side by side"))
    for part, title in sections:
        sel = [r for r in rows if r["part"] == part]
        if part == "flags8" and sel:  # with the none and all runs of the same grid, for reference
            sel += [r for r in rows if r["part"] == "grids8" and r["grid"] == "2x2x2x1"]
        if sel:
            sel.sort(key=lambda r: (r["ranks"], r["grid"], r["overlap"] != "none", r["overlap"],
                                    r["comm_priority"] != "high", r["compute_priority"]))
            md.append(f"## {title}\n\n{table(sel)}\n")
    ge = grid_effects(rows)
    if ge:
        md.append("## What the three overlap flags change, per grid\n")
        md.append(f"| ranks | grid | none ms | {ALL} ms | time change | exposed none ms | "
              "exposed all ms | exposed change |")
        md.append("|---|---|---|---|---|---|---|---|")
        for e in ge:
            md.append(f"| {e['ranks']} | {e['grid']} | {e['none_ms']:.1f} | {e['all_ms']:.1f} | "
                  f"{pct(e['time_change_pct'])} | {e['none_exposed_ms']:.1f} | "
                  f"{e['all_exposed_ms']:.1f} | {pct(e['exposed_change_pct'])} |")
        md.append("")
    pe = priority_effects(rows)
    if pe:
        md.append("## Stream priorities against the default (comm high, compute normal)\n")
        md.append("| ranks | grid | priorities | median ms | default ms | time change | exposed ms | "
              "default exposed ms | exposed change |")
        md.append("|---|---|---|---|---|---|---|---|---|")
        for e in pe:
            md.append(f"| {e['ranks']} | {e['grid']} | {e['priorities']} | {e['median_ms']:.1f} | "
                  f"{e['default_ms']:.1f} | {pct(e['time_change_pct'])} | {e['exposed_ms']:.1f} | "
                  f"{e['default_exposed_ms']:.1f} | {pct(e['exposed_change_pct'])} |")
        md.append("")
    doc = {"note": note, "runs": rows, "overlap_effect": ge, "priority_effect": pe}
    return Summary("\n".join(md), doc)

