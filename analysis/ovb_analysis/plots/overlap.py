"""Overlap heatmaps (ovb-overlap): overlap efficiency, compute slowdown and communication slowdown
over GEMM size x message size, one column of panels per stream-priority setting; one figure per
collective and combination of the other label settings that vary (scenario, launch order, CTA
limits, CUDA_DEVICE_MAX_CONNECTIONS, group, dtype, ...)."""

import re

import numpy as np

from .. import results, stats
from ..style import (DOUBLE_COLUMN_IN, SEQUENTIAL_CMAP, format_bytes, new_figure, paper_style,
                     save_figure)
from . import NoData, Output
from .common import varying_keys

TITLE = "Overlap heatmaps"
DESCRIPTION = ("Overlap efficiency (serial - t_o) / min(t_c, t_m) (1 = shorter op fully hidden), "
               "compute slowdown t_c'/t_c - 1 and communication slowdown t_m'/t_m - 1 (in %), over "
               "GEMM size and message size, per stream-priority setting. One colour scale per "
               "metric for every heatmap of the report (efficiency within -1 to 1; slowdowns the "
               "5th to 95th percentile of all cells, arrows beyond).")
METRICS = (("overlap_efficiency", "overlap efficiency\n(1 = fully hidden)", 1.0),
           ("compute_slowdown", "compute slowdown (%)", 100.0),
           ("comm_slowdown", "comm. slowdown (%)", 100.0))
PRIO_ORDER = ("equal", "comm_high", "compute_high")


def overlap_rows(rs):
    out = []
    for f in rs.of("gbench"):
        for row in results.overlap_rows(f.doc):
            if all(k in row for k in ("m", "n", "k", "bytes")):
                out.append(row)
    return out


def setting_keys(rows):
    """The label fields that make one figure: the collective, and every other field (the scenario,
    launch order, CTA limits, CUDA_DEVICE_MAX_CONNECTIONS, group, dtype, ...) whose value differs
    between the rows; the priority is the column inside a figure. Rows of two scenarios never
    share a cell: every row has one (results.overlap_rows)."""
    return ["coll"] + varying_keys([r["label_fields"] for r in rows], exclude=("coll", "prio"))


def setting(row, keys):
    lf = row["label_fields"]
    defaults = {"coll": "all_reduce", "prio": "equal"}
    return tuple(lf.get(k, defaults.get(k, "-")) for k in keys)


def _stem(keys, values):
    text = "_".join([values[0]] + [f"{k}-{v}" for k, v in zip(keys[1:], values[1:])])
    return "overlap_heatmap_" + re.sub(r"[^A-Za-z0-9_.-]", "", text)


def _color_range(grids, key):
    """Colour limits of one metric, shared by every panel of every overlap figure so that a colour
    means the same number everywhere. Overlap efficiency is clipped to [-1, 1] (1: fully hidden, 0:
    serial, -1: as slow as running the shorter op twice); the slowdowns span the 5th to 95th
    percentile of all cells, so that one pathological cell does not wash out the rest. Cells
    outside keep their true values as text and the colour bar shows an arrow."""
    finite = np.concatenate([g[np.isfinite(g)] for g in grids] or [np.array([])])
    if key == "overlap_efficiency" and finite.size:
        lo = min(max(float(finite.min()), -1.0), 1.0)
        hi = max(min(float(finite.max()), 1.0), -1.0)
    elif finite.size:
        lo, hi = (float(v) for v in np.percentile(finite, [5, 95]))
    else:
        lo, hi = 0.0, 1.0
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    below = bool(finite.size and finite.min() < lo)
    above = bool(finite.size and finite.max() > hi)
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max",
              (True, True): "both"}[(below, above)]
    return lo, hi, extend


def _axes_of(rows):
    prios = sorted({r["label_fields"].get("prio", "equal") for r in rows},
                   key=lambda p: (PRIO_ORDER.index(p) if p in PRIO_ORDER else 9, p))
    gemms = sorted({(int(r["m"]), int(r["n"]), int(r["k"])) for r in rows},
                   key=lambda s: (s[0] * s[1] * s[2], s))
    sizes = sorted({float(r["bytes"]) for r in rows})
    return prios, gemms, sizes


def _grids(rows, key, scale):
    prios, gemms, sizes = _axes_of(rows)
    return [_grid([r for r in rows if r["label_fields"].get("prio", "equal") == p],
                  gemms, sizes, key, scale) for p in prios]


def shared_ranges(figures):
    """{metric: (lo, hi, extend)} over the rows of every figure."""
    return {key: _color_range([g for rows in figures for g in _grids(rows, key, scale)], key)
            for key, _, scale in METRICS}


def _grid(rows, gemms, sizes, key, scale):
    cells = {}
    for r in rows:
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        cells.setdefault((gemms.index(shape), sizes.index(float(r["bytes"]))), []).append(r[key])
    grid = np.full((len(gemms), len(sizes)), np.nan)
    for (i, j), vals in cells.items():
        vals = stats.finite(vals)  # NaN (undefined ratio) leaves the cell empty
        if vals:
            grid[i, j] = stats.median(vals) * scale
    return grid


def _cell_text(v, scale):
    if scale == 1.0:
        return f"{v:.2f}"
    return f"{v:.1f}" if abs(v) < 10 else f"{v:.0f}"


def _panel(ax, grid, norm_range, annotate, scale):
    lo, hi = norm_range
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap=SEQUENTIAL_CMAP, vmin=lo, vmax=hi,
                   interpolation="nearest")
    if annotate:
        for (i, j), v in np.ndenumerate(grid):
            if not np.isnan(v):
                dark = (v - lo) < 0.5 * (hi - lo)
                ax.text(j, i, _cell_text(v, scale), ha="center", va="center",
                        fontsize=5.5, color="white" if dark else "black")
    ax.grid(False)
    return im


def _figure(rows, title, ranges):
    prios, gemms, sizes = _axes_of(rows)
    annotate = len(gemms) * len(sizes) <= 64
    fig = new_figure(DOUBLE_COLUMN_IN, 1.9 * len(METRICS) + 0.3)
    axes = fig.subplots(len(METRICS), len(prios), squeeze=False)
    for mi, (key, label, scale) in enumerate(METRICS):
        grids = _grids(rows, key, scale)
        lo, hi, extend = ranges[key]
        for pi, prio in enumerate(prios):
            ax = axes[mi][pi]
            im = _panel(ax, grids[pi], (lo, hi), annotate, scale)
            ax.set_xticks(range(len(sizes)))
            ax.set_xticklabels([format_bytes(s) for s in sizes], rotation=40, ha="right")
            ax.set_yticks(range(len(gemms)))
            ax.set_yticklabels(["x".join(map(str, g)) for g in gemms] if pi == 0 else [])
            if mi == 0:
                ax.set_title(f"prio={prio}")
            if mi == len(METRICS) - 1:
                ax.set_xlabel("message size (bytes)")
            if pi == 0:
                ax.set_ylabel("GEMM M x N x K")
        fig.colorbar(im, ax=list(axes[mi]), label=label, shrink=0.9, extend=extend)
    fig.suptitle(title)
    return fig


def make(rs, outdir, options):
    rows = overlap_rows(rs)
    if not rows:
        raise NoData("no ovb-overlap results (Google Benchmark JSON with overlap* entries and "
                     "m, n, k, bytes counters)")
    outputs = []
    keys = setting_keys(rows)
    by_setting = {}
    for r in rows:
        by_setting.setdefault(setting(r, keys), []).append(r)
    ranges = shared_ranges(list(by_setting.values()))
    for values in sorted(by_setting):
        members = by_setting[values]
        which = ", ".join(f"{k}={v}" for k, v in zip(keys, values))
        # fields equal in all rows of the figure (dtype, group, ...) go into the caption
        fixed = {k: v for k, v in members[0]["label_fields"].items()
                 if k not in keys and k != "prio"
                 and all(r["label_fields"].get(k) == v for r in members)}
        caption = DESCRIPTION + (" Same in every cell: " + ", ".join(
            f"{k}={v}" for k, v in sorted(fixed.items())) + "." if fixed else "")
        with paper_style():
            fig = _figure(members, which, ranges)
            stem = _stem(keys, values)
            files = save_figure(fig, outdir, stem)
        outputs.append(Output(stem, f"{TITLE} ({which})", caption, files,
                              tuple(fig.get_size_inches())))
    return outputs
