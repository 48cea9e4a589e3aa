"""Performance model vs measurement (ovb-model compare): predicted vs measured iteration time with
the y = x line and +-10% / +-25% error bands, and a ranking plot (predicted rank vs measured rank).
From ovb-model search: the predicted time of the best configurations, split into compute and
exposed communication. From ovb-model validate: predicted vs published throughput
(plots/validation.py)."""

from pathlib import Path

from .. import stats
from ..style import DOUBLE_COLUMN_IN, SINGLE_COLUMN_IN, color, new_figure, paper_style, save_figure
from . import NoData, Output, validation

TITLE = "Model vs measurement"
DESCRIPTION = ("Left: predicted against measured iteration time per 4D configuration (repeated "
               "runs: their median, the bar their range); the line is y = x, shaded bands are "
               "+-10% and +-25%. Right: rank by predicted time against rank by measured time (on "
               "the diagonal = ranked right); the title gives Spearman's rho and, with repeated "
               "runs, the measurement's own (the median of odd- against even-numbered runs).")
SEARCH_TITLE = "Model search: best predicted configurations"
SEARCH_DESCRIPTION = ("Predicted iteration time of the best-ranked configurations that fit in "
                      "memory, split into compute and exposed communication.")
TOP_N = 20


def config_label(c):
    return "x".join(str(c.get(k, "?")) for k in ("gx", "gy", "gz", "gdata"))


def _compare_figure(doc):
    cfgs = [c for c in doc["configs"] if c.get("predicted_ms") is not None
            and c.get("measured_ms") is not None]
    pred = [float(c["predicted_ms"]) for c in cfgs]
    meas = [float(c["measured_ms"]) for c in cfgs]
    rho = doc.get("spearman")
    if rho is None:
        rho = stats.spearman(pred, meas)
    fig = new_figure(DOUBLE_COLUMN_IN, 2.8)
    ax, ax_rank = fig.subplots(1, 2)
    # Repeated runs of a configuration: the point is their median, the bar their range.
    runs = [[float(v) for v in c.get("measured_runs_ms") or []] for c in cfgs]
    spread = [v for r in runs for v in r]
    lo, hi = min(pred + meas + spread) * 0.8, max(pred + meas + spread) * 1.2
    line = [lo, hi]
    ax.fill_between(line, [v * 0.75 for v in line], [v * 1.25 for v in line], color=color(5),
                    alpha=0.15, linewidth=0, label="+-25%")
    ax.fill_between(line, [v * 0.9 for v in line], [v * 1.1 for v in line], color=color(5),
                    alpha=0.3, linewidth=0, label="+-10%")
    ax.plot(line, line, color="black", linewidth=0.8, label="y = x")
    ax.scatter(meas, pred, color=color(0), s=12, zorder=3, label="configuration")
    if any(len(r) > 1 for r in runs):
        lows = [m - min(r) if len(r) > 1 else 0.0 for m, r in zip(meas, runs)]
        highs = [max(r) - m if len(r) > 1 else 0.0 for m, r in zip(meas, runs)]
        ax.errorbar(meas, pred, xerr=[lows, highs], fmt="none", ecolor=color(0), elinewidth=0.6,
                    capsize=1.5, zorder=2, label="range of repeated runs")
    if hi / lo > 20:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured iteration time (ms)")
    ax.set_ylabel("predicted iteration time (ms)")
    ax.legend(loc="upper left")
    rp, rm = stats.ranks(pred), stats.ranks(meas)
    n = len(cfgs)
    ax_rank.plot([0.5, n + 0.5], [0.5, n + 0.5], color="black", linewidth=0.8)
    ax_rank.scatter(rm, rp, color=color(1), s=12, zorder=3)
    if n <= 12:
        for c, x, y in zip(cfgs, rm, rp):
            ax_rank.annotate(config_label(c), (x, y), textcoords="offset points", xytext=(3, 3),
                             fontsize=5.5)
    k = doc.get("k")
    if k:
        ax_rank.axhspan(0.5, k + 0.5, color=color(2), alpha=0.12, linewidth=0,
                        label=f"predicted top-{k}")
        ax_rank.legend(loc="lower right")
    ax_rank.set_xlim(0.5, n + 0.5)
    ax_rank.set_ylim(0.5, n + 0.5)
    ax_rank.set_xlabel("rank by measured time (1 = fastest)")
    ax_rank.set_ylabel("rank by predicted time")
    title = "Spearman rho = " + ("n/a" if rho is None else f"{rho:.2f}")
    if "measured_best_in_top_k" in doc:
        title += f"; measured best in top-{k}: {'yes' if doc['measured_best_in_top_k'] else 'no'}"
    if doc.get("measured_split_half_spearman") is not None:
        title += f"\nmeasured vs itself (odd vs even runs): {doc['measured_split_half_spearman']:.2f}"
    ax_rank.set_title(title)
    return fig


def _search_figure(doc):
    cfgs = [c for c in doc["configs"] if c.get("fits", True) and c.get("predicted_ms") is not None
            and c.get("strategy", "4d") == "4d"]
    cfgs = sorted(cfgs, key=lambda c: (c.get("rank", 0), float(c["predicted_ms"])))[:TOP_N]
    fig = new_figure(SINGLE_COLUMN_IN, 1.1 + 0.14 * len(cfgs))
    ax = fig.subplots()
    ys = list(range(len(cfgs)))[::-1]
    comp = [float(c.get("compute_ms") or 0.0) for c in cfgs]
    expo = [float(c.get("exposed_comm_ms") or 0.0) for c in cfgs]
    ax.barh(ys, comp, color=color(0), label="compute", height=0.7)
    ax.barh(ys, expo, left=comp, color=color(1), label="exposed comm.", height=0.7)
    ax.scatter([float(c["predicted_ms"]) for c in cfgs], ys, marker="|", color="black", s=30,
               zorder=3, label="predicted total")
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{config_label(c)} {c.get('order', '')}".strip() for c in cfgs],
                       fontsize=6)
    ax.set_xlabel("predicted time per iteration (ms)")
    ax.set_ylabel("Gx x Gy x Gz x Gdata")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=6)
    return fig


def _stem(base, f, many):
    return base if not many else f"{base}_{Path(f.rel).stem}"


def make(rs, outdir, options):
    compares = [f for f in rs.of("model_compare")
                if any(c.get("measured_ms") is not None for c in f.doc["configs"])]
    searches = [f for f in rs.of("model_search")
                if any(c.get("strategy", "4d") == "4d" for c in f.doc["configs"])]
    validations = validation.make(rs, outdir, options)
    if not compares and not searches and not validations:
        raise NoData("no ovb-model compare or search results")
    outputs = []
    for f in compares:
        stem = _stem("model_vs_measured", f, len(compares) > 1)
        with paper_style():
            fig = _compare_figure(f.doc)
            files = save_figure(fig, outdir, stem)
        outputs.append(Output(stem, TITLE, DESCRIPTION, files, tuple(fig.get_size_inches())))
    for f in searches:
        stem = _stem("model_search", f, len(searches) > 1)
        with paper_style():
            fig = _search_figure(f.doc)
            files = save_figure(fig, outdir, stem)
        outputs.append(Output(stem, SEARCH_TITLE, SEARCH_DESCRIPTION, files,
                              tuple(fig.get_size_inches())))
    return outputs + validations
