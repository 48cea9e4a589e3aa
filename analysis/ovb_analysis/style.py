"""The one style sheet of every figure: two-column paper sizes, 8 pt fonts, the Okabe-Ito
colour-blind-safe palette, and deterministic vector PDF + PNG output (no dates in the files).
"""

import contextlib
import io

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402  (after choosing the backend)

from .io_util import atomic_write  # noqa: E402

SINGLE_COLUMN_IN = 3.5    # width of one column of a two-column paper
DOUBLE_COLUMN_IN = 7.16   # width across both columns
PNG_DPI = 200

# Okabe & Ito (2008), ordered so that neighbouring series differ most; black last.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")
SEQUENTIAL_CMAP = "cividis"  # perceptually uniform and readable with colour-vision deficiency

RC = {
    "font.family": "DejaVu Sans",
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7,
    "xtick.labelsize": 7, "ytick.labelsize": 7, "figure.titlesize": 9,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "axes.grid": True, "grid.linewidth": 0.4, "grid.alpha": 0.5, "axes.axisbelow": True,
    "axes.spines.top": False, "axes.spines.right": False, "axes.linewidth": 0.6,
    "lines.linewidth": 1.2, "lines.markersize": 3.5, "patch.linewidth": 0.4,
    "legend.frameon": False, "legend.handlelength": 1.6,
    "pdf.fonttype": 42, "ps.fonttype": 42, "svg.hashsalt": "overlapbench", "svg.fonttype": "none",
    "savefig.dpi": PNG_DPI, "figure.dpi": PNG_DPI,
    "image.cmap": SEQUENTIAL_CMAP,
}

PDF_METADATA = {"Creator": "OverlapBench ovb-analysis", "Producer": None, "CreationDate": None,
                "ModDate": None}
PNG_METADATA = {"Software": "OverlapBench ovb-analysis"}


@contextlib.contextmanager
def paper_style():
    """Apply the style sheet for the duration of a plot."""
    with matplotlib.rc_context(RC):
        yield


def new_figure(width_in, height_in):
    """A figure of the exact size (constrained layout, never cropped, so PNG size = size * dpi)."""
    # Rounded so that float noise (1.9 * 3 + 0.3) cannot cut a pixel off the PNG.
    return Figure(figsize=(round(width_in, 3), round(height_in, 3)), dpi=PNG_DPI,
                  layout="constrained")


def color(i):
    return PALETTE[i % len(PALETTE)]


def marker(i):
    return MARKERS[i % len(MARKERS)]


def save_figure(fig, outdir, stem):
    """Write STEM.pdf and STEM.png under outdir, atomically; returns the two paths."""
    paths = []
    for fmt, meta in (("pdf", PDF_METADATA), ("png", PNG_METADATA)):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=PNG_DPI, metadata=meta)
        paths.append(atomic_write(f"{outdir}/{stem}.{fmt}", buf.getvalue()))
    return paths


def format_bytes(n):
    """1024 -> '1 KiB', 1048576 -> '1 MiB' (binary units, as message sizes are powers of two)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.0f} TiB"
