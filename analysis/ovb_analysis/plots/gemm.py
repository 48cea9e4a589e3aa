"""GEMM throughput: TFLOP/s per shape (M x N x K) and percent of the device's dense peak, one bar
per benchmark series (the name without shape and run options, e.g. gemm/bf16/nn) and shape
(ovb-gemm; the median when a series has the shape more than once). With more bars than a
two-column figure can label (e.g. every layer GEMM of several GPT sizes), one point per shape
against its size in FLOP (log scale), one colour per precision, instead."""

import re

from .. import results, stats
from ..style import (DOUBLE_COLUMN_IN, SINGLE_COLUMN_IN, color, marker, new_figure, paper_style,
                     save_figure)
from . import NoData, Output

TITLE = "GEMM throughput"
DESCRIPTION = ("Achieved TFLOP/s (FLOP = 2MNK) per GEMM shape, and the same as a percentage of "
               "the device's dense peak (absent where the peak is unknown).")


# Parts of a Google Benchmark name that are not the series: the shape (in the m, n, k counters)
# and Google Benchmark's own run options.
SHAPE_PART = re.compile(r"^\d+x\d+x\d+$")
RUN_OPTION_PART = re.compile(r"^(?:min_time|min_warmup_time|repeats|iterations|threads):|"
                             r"^(?:manual_time|real_time|process_time)$")


def series_of(row):
    """The benchmark name without the shape and the run options: "gemm/fp32/256x256x256/nn/
    min_time:0.050/manual_time" -> "gemm/fp32/nn" (precision and transposes stay apart)."""
    parts = str(row.get("run", row.get("name"))).split("/")
    kept = [p for p in parts if not SHAPE_PART.match(p) and not RUN_OPTION_PART.match(p)]
    return "/".join(kept) or "gemm"


def gemm_rows(rs):
    """[(series, (m, n, k), tflops, pct_peak or None)]"""
    out = []
    for f in rs.of("gbench"):
        for row in results.benchmark_rows(f.doc, "gemm"):
            try:
                shape = (int(row["m"]), int(row["n"]), int(row["k"]))
                tf = float(row["tflops"])
            except (KeyError, TypeError, ValueError):
                continue
            series = series_of(row)
            pct = row.get("pct_peak")
            out.append((series, shape, tf, float(pct) if pct is not None else None))
    return out


def _bars(ax, rows, shapes, series, value):
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        xs, ys = [], []
        for j, shape in enumerate(shapes):
            vals = stats.finite(value(r) for r in rows if r[0] == s and r[1] == shape)
            if vals:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(stats.median(vals))
        ax.bar(xs, ys, width=width * 0.9, color=color(i), label=s)
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels(["x".join(map(str, s)) for s in shapes], rotation=40, ha="right")
    ax.set_xlabel("GEMM shape M x N x K")
    ax.grid(axis="x", visible=False)


MAX_BARS = 48  # shapes x series beyond which bars get unreadable in a two-column figure


def precision_of(series):
    """"gemm/bf16/qkv.fwd/nt" -> "bf16"."""
    parts = series.split("/")
    return parts[1] if len(parts) > 1 else series


def _points(ax, rows, value):
    """One point per (precision, shape): the median over the series of that precision."""
    precisions = sorted({precision_of(r[0]) for r in rows})
    for i, p in enumerate(precisions):
        by_shape = {}
        for r in rows:
            v = value(r)
            if precision_of(r[0]) == p and v is not None:
                by_shape.setdefault(r[1], []).append(v)
        shapes = sorted(by_shape, key=lambda s: s[0] * s[1] * s[2])
        xs = [2.0 * s[0] * s[1] * s[2] for s in shapes]
        ys = [stats.median(stats.finite(by_shape[s])) for s in shapes]
        ax.plot(xs, ys, linestyle="none", marker=marker(i), color=color(i), label=p)
    ax.set_xscale("log")
    ax.set_xlabel("GEMM size (FLOP = 2MNK)")


def make(rs, outdir, options):
    rows = gemm_rows(rs)
    if not rows:
        raise NoData("no ovb-gemm results (Google Benchmark JSON with gemm* entries and m, n, k, "
                     "tflops counters)")
    shapes = sorted({r[1] for r in rows}, key=lambda s: (s[0] * s[1] * s[2], s))
    series = sorted({r[0] for r in rows})
    if len(shapes) * len(series) > MAX_BARS:
        series = sorted({precision_of(s) for s in series})
        draw = _points
    else:
        def draw(ax, rows_, value):
            _bars(ax, rows_, shapes, series, value)
    # A CPU reaches GFLOP/s: TFLOP/s would print 0.0. Without a known peak (the host backend) the
    # percent-of-peak panel would be empty: it is left out and the caption says why.
    have_peak = any(r[3] is not None for r in rows)
    top = max((r[2] for r in rows if r[2] is not None), default=0.0)
    unit, scale = ("GFLOP/s", 1e3) if top < 1.0 else ("TFLOP/s", 1.0)
    with paper_style():
        fig = new_figure(DOUBLE_COLUMN_IN if have_peak else SINGLE_COLUMN_IN, 2.8)
        axes = fig.subplots(1, 2 if have_peak else 1, squeeze=False)[0]
        ax_tf = axes[0]
        draw(ax_tf, rows, lambda r: None if r[2] is None else r[2] * scale)
        ax_tf.set_ylabel(f"throughput ({unit})")
        ax_tf.set_title("achieved throughput")
        if have_peak:
            ax_pct = axes[1]
            draw(ax_pct, rows, lambda r: r[3])
            ax_pct.set_ylim(0, max(100.0, max(r[3] for r in rows if r[3] is not None)))
            ax_pct.set_ylabel("percent of dense peak (%)")
            ax_pct.set_title("percent of peak")
        if len(series) > 1:
            ax_tf.legend(loc="upper left")
        files = save_figure(fig, outdir, "gemm_throughput")
    caption = DESCRIPTION if have_peak else (
        DESCRIPTION + " No device peak is known for these runs (host backend), so the percentage "
        "panel is left out.")
    return [Output("gemm_throughput", TITLE, caption, files, tuple(fig.get_size_inches()))]
