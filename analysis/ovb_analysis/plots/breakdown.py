"""Iteration-time breakdown bars. (a) gpt4d runs, per configuration and overlap-flag combination:
median iteration time split into exposed communication per grid dimension (summary.collectives
exposed_ms, per iteration; "z-allgather" counts as z, "world" as other), idle (the idle share of a
matching ovb-trace analysis: same folder, file name starting with the gpt4d file's stem) and
compute (the rest); stream priorities other than gpt4d's default (comm high, compute normal) are
named under the bar; repeated runs of one configuration are one bar, the run at their median
time. (b) each ovb-trace analysis on its own: compute, exposed communication,
memory/other and idle over the traced span (mean over ranks)."""

import json
from pathlib import Path

from .. import runs
from ..errors import AnalysisError
from ..style import DOUBLE_COLUMN_IN, SINGLE_COLUMN_IN, color, new_figure, paper_style, save_figure
from . import NoData, Output
from .scaling import size_label

TITLE = "Iteration-time breakdown"
DESCRIPTION = ("Where the iteration time goes, as a share of it (the time in ms under each bar): "
               "compute, communication left exposed (not hidden behind compute) per grid dimension, "
               "and idle GPU time; one bar per configuration (Gx x Gy x Gz x Gdata) and overlap-flag "
               "combination (repeated runs of one: the run at their median time). Bars marked * have no matching trace, so their idle time is included "
               "in compute.")
DIMS = ("x", "y", "z", "data")
IDLE_COLOR = "#BBBBBB"


def dimension(group):
    """Grid dimension of a communicator name: "x", "y", "z", "data"; "z-allgather" (gpt4d's second
    Z communicator) is z; "world" (the loss / grad-norm all-reduce) and unknown names are "other"."""
    head = str(group).lower().split("-")[0]
    return head if head in DIMS else "other"


def _matching_trace(gpt4d_file, traces):
    stem = gpt4d_file.path.name.removesuffix(".json")
    for t in traces:
        if t.path.parent == gpt4d_file.path.parent and t.path.name.startswith(stem):
            return t
    return None


def gpt4d_bars(rs, options):
    """[(label, {segment: ms})] for the gpt4d runs, and the traces used for idle."""
    traces, used, bars = rs.of("trace"), set(), []
    for f in rs.of("gpt4d"):
        run = runs.from_gpt4d(f)
        try:
            total = runs.run_stats(run, options.warmup)["median_ms"]
        except AnalysisError:
            continue
        seg = {f"exposed {d}": 0.0 for d in DIMS + ("other",)}
        for c in run.extra["summary"]["collectives"]:
            seg[f"exposed {dimension(c['group'])}"] += float(c["exposed_ms"])
        exposed = sum(seg.values())
        trace = _matching_trace(f, traces)
        idle = 0.0
        if trace is not None:
            s = trace.doc["summary"]
            if s.get("span_us"):
                idle = total * float(s.get("idle_us", 0.0)) / float(s["span_us"])
            used.add(trace.rel)
        seg["idle"] = idle
        seg["compute"] = max(total - exposed - idle, 0.0)
        label = f"{run.layout}\n{run.flags}"
        prio = run.extra["priorities"]
        if prio != ("high", "normal"):  # gpt4d's default stream priorities are left unsaid
            label += f"\ncomm {prio[0]}\ncompute {prio[1]}"
        label += "" if trace is not None else "*"
        same = _repetition_key(f.doc, trace is not None)
        bars.append(((run.gpus, run.layout, run.flags, prio, f.rel), label, seg,
                     size_label(run.model), same))
    bars = _median_of_repeats(bars)
    bars.sort(key=lambda b: b[0])
    several = len({b[3] for b in bars}) > 1
    return [(f"{size}\n{label}" if several else label, seg) for _, label, seg, size, _ in bars], used


def _repetition_key(doc, traced):
    """What makes two gpt4d results repetitions of one configuration, as ovb-model compare
    decides it (analysis/model/src/compare.cpp, repetition_key): the config block, backend, host,
    device and placement (local size, CPUs, ranks per GPU); traced runs apart."""
    ctx = doc.get("context") or {}
    dev = ctx.get("device") if isinstance(ctx.get("device"), dict) else {}
    where = {k: ctx.get(k) for k in ("backend", "host", "local_size", "cpus", "ranks_per_gpu")}
    return json.dumps([doc.get("config"), where, dev.get("name"), traced], sort_keys=True)


def _median_of_repeats(bars):
    """Repeated runs of one configuration (the same gpt4d config; traced runs apart, as ovb-model
    compare takes them): one bar, the run at the median time (the lower of an even count)."""
    groups = {}
    for b in bars:
        groups.setdefault(b[4], []).append(b)
    out = []
    for same in groups.values():
        same.sort(key=lambda b: sum(b[2].values()))
        key, label, seg, size, _ = same[(len(same) - 1) // 2]
        out.append((key, label + (f"\nmedian of {len(same)}" if len(same) > 1 else ""), seg,
                    size, None))
    return out


def trace_bars(rs, used):
    bars = []
    for t in rs.of("trace"):
        if t.rel in used:
            continue
        s = t.doc.get("summary") or {}
        try:
            compute, exposed = float(s["compute_us"]), float(s["exposed_comm_us"])
            busy, idle = float(s["busy_us"]), float(s["idle_us"])
        except (KeyError, TypeError, ValueError):
            continue
        seg = {"compute": compute / 1e3, "exposed comm": exposed / 1e3,
               "memory/other": max(busy - compute - exposed, 0.0) / 1e3, "idle": idle / 1e3}
        bars.append((Path(t.rel).stem, seg))
    return bars


MANY = 8  # more bars than this: horizontal bars, one label line each, so labels never overlap


def _stack(ax, bars, segments):
    """Stacked bars as a share of each bar's total (100%); the total in ms goes with the label.
    Up to MANY bars stand upright with the label under each; more lie down, first at the top, with
    the label on one line beside each."""
    horizontal = len(bars) > MANY
    xs = range(len(bars))
    totals = [sum(seg.values()) or 1.0 for _, seg in bars]
    bottom = [0.0] * len(bars)
    draw = ax.barh if horizontal else ax.bar
    for name, col in segments:
        vals = [100.0 * seg.get(name, 0.0) / t for (_, seg), t in zip(bars, totals)]
        if not any(vals):
            continue
        kw = {"left": bottom, "height": 0.7} if horizontal else {"bottom": bottom, "width": 0.7}
        draw(xs, vals, color=col, label=name, hatch="//" if name == "idle" else None,
             edgecolor="white", **kw)
        bottom = [b + v for b, v in zip(bottom, vals)]
    if horizontal:
        ax.set_yticks(list(xs))
        ax.set_yticklabels([f"{' '.join(label.split())}  {t:.0f} ms"
                            for (label, _), t in zip(bars, totals)], fontsize=6)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.grid(axis="y", visible=False)
    else:
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{label}\n{t:.0f} ms" for (label, _), t in zip(bars, totals)],
                           fontsize=6)
        ax.set_ylim(0, 100)
        ax.grid(axis="x", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=6)
    return horizontal


def figure(rs, options):
    """The figure (not saved): gpt4d bars, then the trace analyses without a matching run."""
    g_bars, used = gpt4d_bars(rs, options)
    t_bars = trace_bars(rs, used)
    if not g_bars and not t_bars:
        raise NoData("no gpt4d results and no ovb-trace analyses")
    panels = [p for p in (("gpt4d", g_bars), ("trace", t_bars)) if p[1]]
    n = max(len(b) for _, b in panels)
    width = SINGLE_COLUMN_IN if len(panels) == 1 and n <= 4 else DOUBLE_COLUMN_IN
    height = 3.0 if n <= MANY else 1.2 + 0.16 * n
    fig = new_figure(width, height)
    ratios = [max(len(b), 2) if len(b) <= MANY else 3 * MANY for _, b in panels]
    axes = fig.subplots(1, len(panels), squeeze=False,
                        gridspec_kw={"width_ratios": ratios})[0]
    for ax, (kind, bars) in zip(axes, panels):
        if kind == "gpt4d":
            exposed = [(f"exposed {d}", color(i + 1)) for i, d in enumerate(DIMS + ("other",))]
            segs = [("compute", color(0))] + exposed + [("idle", IDLE_COLOR)]
            share, what = "share of gpt4d median iteration (%)", \
                "grid Gx x Gy x Gz x Gdata / overlap flags / iteration time"
        else:
            segs = [("compute", color(0)), ("exposed comm", color(1)),
                    ("memory/other", color(5)), ("idle", IDLE_COLOR)]
            share, what = "share of traced span (%)", "trace analysis (mean over ranks) / span"
        if _stack(ax, bars, segs):
            ax.set_xlabel(share)
            ax.set_ylabel(what)
        else:
            ax.set_ylabel(share)
            ax.set_xlabel(what)
    return fig


def make(rs, outdir, options):
    with paper_style():
        fig = figure(rs, options)
        files = save_figure(fig, outdir, "iteration_breakdown")
    return [Output("iteration_breakdown", TITLE, DESCRIPTION, files, tuple(fig.get_size_inches()))]
