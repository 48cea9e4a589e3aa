"""Helpers shared by the plot modules: log2 byte axes, grouping, medians."""

import math

from matplotlib.ticker import FuncFormatter, LogLocator

from .. import stats
from ..style import format_bytes


MAX_BYTE_TICKS = 5  # labels like "256 KiB" collide beyond this on a panel a third of a page wide


def bytes_axis(ax, sizes):
    """A log2 x axis labelled in binary units (message sizes are powers of two), with ticks every
    4^k bytes, k chosen so that at most MAX_BYTE_TICKS labels cover `sizes`."""
    ax.set_xscale("log", base=2)
    lo, hi = min(sizes), max(sizes)
    span = math.log2(hi / lo) if lo > 0 and hi > lo else 0.0
    step = 2
    while span / step >= MAX_BYTE_TICKS:
        step += 2
    ax.xaxis.set_major_locator(LogLocator(base=2.0 ** step))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))


def varying_keys(label_fields, exclude=()):
    """Sorted keys of `key=value` label dicts whose value is not the same in all of them (a key
    missing from one counts as the value "-")."""
    keys = sorted({k for lf in label_fields for k in lf} - set(exclude))
    return [k for k in keys if len({lf.get(k, "-") for lf in label_fields}) > 1]


def median_by(points):
    """{key: [values]} -> sorted [(key, median of the finite values)]; keys without one are left
    out."""
    out = []
    for k, v in sorted(points.items()):
        vals = stats.finite(v)
        if vals:
            out.append((k, stats.median(vals)))
    return out


def group(rows, key):
    out = {}
    for row in rows:
        out.setdefault(key(row), []).append(row)
    return out


def figure_legend(fig, axes, ncol=4):
    """One legend for the whole figure, below the panels, without duplicate labels."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside lower center",
                   ncol=min(ncol, len(seen)))
