"""Collective bandwidth: bus bandwidth vs message size, one panel per collective; solid lines per
group (and any other setting that varies) alone (ovb-collective), dashed lines under overlap with a
GEMM (ovb-overlap, per priority setting: busbw from the collective's own duration under overlap,
median over GEMM shapes and the other overlap settings)."""

from .. import metrics, results
from ..style import (DOUBLE_COLUMN_IN, SINGLE_COLUMN_IN, color, marker, new_figure, paper_style,
                     save_figure)
from . import NoData, Output
from .common import bytes_axis, figure_legend, group, median_by, varying_keys

TITLE = "Collective bandwidth"
DESCRIPTION = ("Bus bandwidth (nccl-tests convention) against message size for each collective, "
               "alone (solid) and under overlap with a GEMM (dashed, per stream-priority setting).")
ORDER = ("all_reduce", "reduce_scatter", "all_gather")
GROUP_ORDER = ("world", "x", "y", "z", "data")
GROUP_COLORS = (0, 1, 2, 5, 7)   # palette indices: groups alone
PRIO_COLORS = (3, 4, 6)          # palette indices: under overlap


def alone_points(rs):
    """[(coll, series, bytes, busbw)] from ovb-collective results. The series is the group, its
    rank count when files of several rank counts are read (a 1-rank world and a 4-rank world are
    different measurements), and every other label field (dtype, inplace, CTA settings) that
    differs between the collective's entries, so that different settings never share a line.
    Collectives over one rank move no data (busbw is 0 by definition): they are left out."""
    rows = {coll: [] for coll in ORDER}
    for f in rs.of("gbench"):
        n = results.context_of(f.doc).get("world_size")
        for coll in ORDER:
            for r in results.benchmark_rows(f.doc, coll):
                r["_ranks"] = int(r.get("ranks") or n or 0)
                if r["_ranks"] != 1:
                    rows[coll].append(r)
    out = []
    for coll, members in rows.items():
        keys = varying_keys([r["label_fields"] for r in members], exclude=("group",))
        several = len({r["_ranks"] for r in members}) > 1
        for r in members:
            lf = r["label_fields"]
            head = [lf.get("group", "world")] + ([f"{r['_ranks']}-rank"] if several else [])
            series = " ".join(head + [f"{k}={lf.get(k, '-')}" for k in keys])
            out.append((coll, series, float(r["bytes"]), float(r["busbw"])))
    return out


def overlap_points(rs):
    """[(coll, series, bytes, busbw)] under overlap, busbw from t_comm_under_us and the rank
    count; the series is the priority setting, with the rank count when several are read and the
    scenario when several are. As
    alone, collectives over one rank (busbw 0 by definition) are left out."""
    rows = []
    for f in rs.of("gbench"):
        n = results.context_of(f.doc).get("world_size")
        for row in results.overlap_rows(f.doc):
            ranks = int(row.get("ranks") or n or 0)
            if ranks > 1 and row.get("t_comm_under_us") and "bytes" in row:
                rows.append((ranks, row))
    several = len({r for r, _ in rows}) > 1
    scenarios = len({row["label_fields"]["scenario"] for _, row in rows}) > 1
    out = []
    for ranks, row in rows:
        lf = row["label_fields"]
        coll = lf.get("coll", "all_reduce")
        bw = metrics.busbw_gbps(coll, ranks, float(row["bytes"]),
                                float(row["t_comm_under_us"]) * 1e-6)
        series = (lf.get("prio", "equal") + (f", {ranks}-rank" if several else "")
                  + (f", {lf['scenario']}" if scenarios else ""))
        out.append((coll, series, float(row["bytes"]), bw))
    return out


def _group_key(series):
    g = series.split()[0]
    return (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), series)


def make(rs, outdir, options):
    alone, under = alone_points(rs), overlap_points(rs)
    colls = [c for c in ORDER if any(p[0] == c for p in alone)]
    if not colls:
        raise NoData("no ovb-collective results (Google Benchmark JSON with all_reduce/"
                     "reduce_scatter/all_gather entries and a busbw counter)")
    width = SINGLE_COLUMN_IN if len(colls) == 1 else DOUBLE_COLUMN_IN
    with paper_style():
        fig = new_figure(width, 2.6)
        axes = fig.subplots(1, len(colls), squeeze=False)[0]
        for ax, coll in zip(axes, colls):
            by_group = group([p for p in alone if p[0] == coll], key=lambda p: p[1])
            for i, grp in enumerate(sorted(by_group, key=_group_key)):
                pts = median_by({b: [p[3] for p in ps] for b, ps in
                                 group(by_group[grp], key=lambda p: p[2]).items()})
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker(i),
                        color=color(GROUP_COLORS[i % len(GROUP_COLORS)]), label=f"{grp} alone")
            by_prio = group([p for p in under if p[0] == coll], key=lambda p: p[1])
            for j, prio in enumerate(sorted(by_prio)):
                pts = median_by({b: [p[3] for p in ps] for b, ps in
                                 group(by_prio[prio], key=lambda p: p[2]).items()})
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--",
                        marker=marker(len(GROUP_ORDER) + j),
                        color=color(PRIO_COLORS[j % len(PRIO_COLORS)]),
                        label=f"under overlap, prio={prio}")
            bytes_axis(ax, [p[2] for p in alone + under if p[0] == coll])
            ax.set_title(coll.replace("_", "-"))
            ax.set_xlabel("message size S (bytes)")
            ax.set_ylabel("bus bandwidth (GB/s)")
            ax.set_ylim(bottom=0)
        figure_legend(fig, axes, ncol=3)
        files = save_figure(fig, outdir, "collective_busbw")
    return [Output("collective_busbw", TITLE, DESCRIPTION, files, tuple(fig.get_size_inches()))]
