"""Model validation (ovb-model validate --json), drawn by the "model" plot kind: predicted against
published TFLOP/s per GPU for published large-scale training runs, with y = x and the validation
file's tolerance band; known misses (findings stated in the file) are drawn hollow."""

from pathlib import Path

from ..style import SINGLE_COLUMN_IN, color, new_figure, paper_style, save_figure
from . import Output

TITLE = "Model validation against published runs"
DESCRIPTION = ("Predicted against published TFLOP/s per GPU (each run in its own FLOP convention) "
               "for published runs of >= 256 GPUs; the line is y = x and the band the tolerance of "
               "the validation file. Filled: within the tolerance; hollow: a known miss, whose cause "
               "the file states.")
STRATEGIES = {"4d": 0, "megatron": 1}


def _figure(doc):
    rows = doc["rows"]
    tol = float(doc["tolerance_pct"]) / 100
    pub = [float(r["published_tflops_per_gpu"]) for r in rows]
    pred = [float(r["predicted_tflops_per_gpu"]) for r in rows]
    lo, hi = min(pub + pred) * 0.8, max(pub + pred) * 1.15
    fig = new_figure(SINGLE_COLUMN_IN, 2.8)
    ax = fig.subplots()
    line = [lo, hi]
    ax.fill_between(line, [v * (1 - tol) for v in line], [v * (1 + tol) for v in line],
                    color=color(5), alpha=0.2, linewidth=0, label=f"+-{tol * 100:.0f}%")
    ax.plot(line, line, color="black", linewidth=0.8, label="y = x")
    for strategy, ci in STRATEGIES.items():
        for known in (False, True):
            sel = [r for r in rows if r.get("strategy") == strategy and bool(r.get("known_miss"))
                   == known]
            if not sel:
                continue
            xs = [float(r["published_tflops_per_gpu"]) for r in sel]
            ys = [float(r["predicted_tflops_per_gpu"]) for r in sel]
            label = ("4D (AxoNN)" if strategy == "4d" else "Megatron-LM") + (
                " known miss" if known else "")
            ax.scatter(xs, ys, s=16, zorder=3, label=label, edgecolors=color(ci),
                       facecolors="none" if known else color(ci))
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("published TFLOP/s per GPU")
    ax.set_ylabel("predicted TFLOP/s per GPU")
    ax.legend(loc="upper left", fontsize=6)
    return fig


def make(rs, outdir, options):
    """Outputs for every validate result with rows (none: an empty list)."""
    files = [f for f in rs.of("model_validation") if f.doc["rows"]]
    outputs = []
    for f in files:
        stem = "model_validation" if len(files) == 1 else f"model_validation_{Path(f.rel).stem}"
        with paper_style():
            fig = _figure(f.doc)
            out = save_figure(fig, outdir, stem)
        outputs.append(Output(stem, TITLE, DESCRIPTION, out, tuple(fig.get_size_inches())))
    return outputs
