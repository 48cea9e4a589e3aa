"""Scaling, in the style of the AxoNN paper's figures: TFLOP/s per GPU and % of peak against GPU
count for the suite's gpt4d and for Megatron-LM, both recomputed with the suite's formula.
Strong scaling: one line per system and (model, global batch) run at two or more GPU counts.
Weak scaling: per system, the largest model run at each GPU count (the model grows with the GPUs),
points labelled with the model size. At each point the best configuration/flag set measured is
shown; error bars span the p10..p90 iteration times."""

from matplotlib.ticker import FixedLocator, NullLocator

from .. import runs
from ..errors import AnalysisError
from ..style import (DOUBLE_COLUMN_IN, LINESTYLES, SINGLE_COLUMN_IN, color, marker, new_figure,
                     paper_style, save_figure)
from . import NoData, Output

TITLE = "Scaling: gpt4d vs Megatron-LM"
DESCRIPTION = ("Model TFLOP/s per GPU (F = 72Bs Lh^2 (1 + s/12h + V/12Lh), both systems recomputed "
               "from iteration time) and percent of the GPU's dense peak against GPU count; weak "
               "scaling (model grows with GPUs) and strong scaling (fixed model and batch).")
SYSTEMS = (runs.GPT4D, runs.MEGATRON)


def params(model):
    """Approximate parameter count 12 L h^2 + V h."""
    return 12 * model["layers"] * model["hidden"] ** 2 + (model.get("vocab") or 0) * model["hidden"]


def arch(model):
    """The model's architecture: gpt (results written before --arch existed) or llama."""
    return model.get("arch") or "gpt"


def size_label(model):
    """The preset's name, else the size; a Llama model says so unless its preset name does."""
    if model.get("preset"):
        label = str(model["preset"])
    else:
        # A Llama's SwiGLU, GQA and untied head make 12 L h^2 + V h wrong: gpt4d writes the
        # exact count.
        p = model.get("parameters") if arch(model) == "llama" else None
        p = p or params(model)
        if p >= 1e9:
            label = f"{p / 1e9:.1f}B"
        else:
            # Test and host models have well under a million parameters: "0.42M", never "0M".
            label = f"{p / 1e6:.0f}M" if p >= 1e7 else f"{p / 1e6:.2g}M"
    if arch(model) != "gpt" and arch(model) not in label.lower():
        label = f"{arch(model).capitalize()} {label}"
    return label


def collect(rs, options):
    """[(Run, stats)] for every run of either system with a known model and GPU count."""
    out, peaks = [], set()
    for f in rs.of("gpt4d"):
        run = runs.from_gpt4d(f)
        if run.peak is None:
            run.peak = options.peak
        if run.peak:
            peaks.add(run.peak)
        out.append(run)
    for f in rs.of("megatron"):
        try:
            run = runs.from_megatron(f)
        except AnalysisError:
            continue
        run.peak = run.peak or options.peak or (peaks.pop() if len(peaks) == 1 else None)
        out.append(run)
    pairs = []
    for run in out:
        try:
            pairs.append((run, runs.run_stats(run, options.warmup)))
        except AnalysisError:
            continue
    return pairs


def _model_key(run):
    return tuple(run.model.get(k) for k in ("layers", "hidden", "heads", "seq", "vocab"))


def _best(pairs):
    """{gpus: (run, stats)} keeping the highest TFLOP/s per GPU count."""
    best = {}
    for run, st in pairs:
        cur = best.get(run.gpus)
        if cur is None or st["tflops_per_gpu"] > cur[1]["tflops_per_gpu"]:
            best[run.gpus] = (run, st)
    return dict(sorted(best.items()))


def series(pairs):
    """(weak, strong): lists of (system, label, {gpus: (run, stats)})."""
    strong, weak = [], []
    for si, system in enumerate(SYSTEMS):
        mine = [p for p in pairs if p[0].system == system]
        groups = {}
        for run, st in mine:
            groups.setdefault((_model_key(run), run.batch), []).append((run, st))
        for (mkey, batch), members in sorted(groups.items(), key=lambda g: str(g[0])):
            pts = _best(members)
            if len(pts) >= 2:
                strong.append((system, f"{system} {size_label(members[0][0].model)}, B={batch}", pts))
        by_gpus = {}
        for run, st in mine:
            cur = by_gpus.get(run.gpus)
            if cur is None or (params(run.model), st["tflops_per_gpu"]) > \
                    (params(cur[0].model), cur[1]["tflops_per_gpu"]):
                by_gpus[run.gpus] = (run, st)
        if len(by_gpus) >= 2 and len({_model_key(r) for r, _ in by_gpus.values()}) >= 2:
            weak.append((system, system, dict(sorted(by_gpus.items()))))
    return weak, strong


def _plot(ax, lines, key, annotate):
    for i, (system, label, pts) in enumerate(lines):
        si = SYSTEMS.index(system)
        xs = list(pts)
        vals = [pts[g][1][key] for g in xs]
        if any(v is None for v in vals):
            continue
        err = None
        if key == "tflops_per_gpu":
            err = [[v - pts[g][1]["tflops_p10"] for g, v in zip(xs, vals)],
                   [pts[g][1]["tflops_p90"] - v for g, v in zip(xs, vals)]]
        ax.errorbar(xs, vals, yerr=err, color=color(si), marker=marker(i),
                    linestyle=LINESTYLES[i % len(LINESTYLES)], capsize=2, label=label)
        if annotate:
            for g, v in zip(xs, vals):
                ax.annotate(size_label(pts[g][0].model), (g, v), textcoords="offset points",
                            xytext=(2, 4), fontsize=5.5)


def _gpu_axis(ax, lines):
    gpus = sorted({g for _, _, pts in lines for g in pts})
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(gpus))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(g) for g in gpus])
    ax.set_xlabel("GPUs")


def make(rs, outdir, options):
    weak, strong = series(collect(rs, options))
    panels = [p for p in (("weak scaling", weak), ("strong scaling", strong)) if p[1]]
    if not panels:
        raise NoData("no gpt4d or Megatron-LM runs at two or more GPU counts with a known model "
                     "(Megatron runs need megatron_config.json or an arguments block)")
    width = SINGLE_COLUMN_IN if len(panels) == 1 else DOUBLE_COLUMN_IN
    with paper_style():
        fig = new_figure(width, 4.4)
        axes = fig.subplots(2, len(panels), squeeze=False)
        for col, (title, lines) in enumerate(panels):
            ax_tf, ax_pct = axes[0][col], axes[1][col]
            _plot(ax_tf, lines, "tflops_per_gpu", title.startswith("weak"))
            ax_tf.set_title(title)
            ax_tf.set_ylabel("model TFLOP/s per GPU")
            top = max(st["tflops_p90"] for _, _, pts in lines for _, st in pts.values())
            ax_tf.set_ylim(0, top * 1.18)
            ax_tf.legend(loc="lower left", fontsize=6)
            if any(st["pct_peak"] is not None for _, _, pts in lines for _, st in pts.values()):
                _plot(ax_pct, lines, "pct_peak", False)
                ax_pct.set_ylim(0, 100)
            else:
                ax_pct.text(0.5, 0.5, "peak unknown", ha="center", va="center",
                            transform=ax_pct.transAxes)
            ax_pct.set_ylabel("percent of peak (%)")
            for ax in (ax_tf, ax_pct):
                _gpu_axis(ax, lines)
        files = save_figure(fig, outdir, "scaling")
    return [Output("scaling", TITLE, DESCRIPTION, files, tuple(fig.get_size_inches()))]
