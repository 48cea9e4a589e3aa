"""Helpers shared by the plot modules: log2 byte axes, grouping, medians."""

from matplotlib.ticker import FuncFormatter, LogLocator

from .. import stats
from ..style import format_bytes


def bytes_axis(ax, axis="x"):
    """A log2 axis labelled in binary units (message sizes are powers of two)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log", base=2)
    target.set_major_locator(LogLocator(base=4))
    target.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))


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
