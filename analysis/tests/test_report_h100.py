"""The report of the committed H100 results (results/h100), checked for the defects a reader saw
in a browser: a plot that failed on unexpected data, iteration-breakdown labels drawn over each
other, 1-rank collectives (busbw 0 by definition) merged into the multi-rank series, heatmaps that
each had their own colour scale, and run-context cells that said "-" or "unknown" without saying
why. The figures are checked as drawn (label boxes, colour limits), the tables as written."""

from pathlib import Path

import pytest

from ovb_analysis import report, results
from ovb_analysis.plots import Options
from ovb_analysis.plots import breakdown, overlap
from ovb_analysis.style import paper_style

H100 = Path(__file__).resolve().parents[2] / "results" / "h100"


@pytest.fixture(scope="module")
def h100():
    if not H100.is_dir():
        pytest.skip("results/h100 not in this tree")
    return results.load_inputs([H100], exclude=[H100 / "report"])


@pytest.fixture(scope="module")
def h100_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("h100-report")
    rep, _ = report.build(H100, out)
    return rep, out


def _overlapping(boxes):
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes))
            if boxes[i].overlaps(boxes[j])]


def test_every_plot_is_made_or_absent_for_want_of_data(h100_report):
    rep, out = h100_report
    broken = [(kind, why) for kind, _, why in rep.missing if "unexpected data" in why]
    assert not broken
    made = {o.stem for o in rep.outputs}
    assert {"collective_busbw", "gemm_throughput", "iteration_breakdown",
            "model_vs_measured"} <= made
    html = (out / "report.html").read_text()
    assert "unexpected data" not in html


def test_iteration_breakdown_labels_do_not_overlap(h100):
    with paper_style():
        fig = breakdown.figure(h100, Options())
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        for ax in fig.axes:
            for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
                boxes = [t.get_window_extent(renderer) for t in ticks if t.get_text()]
                assert not _overlapping(boxes), [t.get_text() for t in ticks]
    gpt4d_axis = fig.axes[0]
    assert len(gpt4d_axis.get_yticklabels()) > breakdown.MANY  # the H100 runs lie down


def test_collective_series_have_real_bandwidth(h100_report):
    rep, _ = h100_report
    table = next(t for t in rep.tables if t.title.startswith("Collective bus bandwidth"))
    assert table.rows
    for row in table.rows:
        assert float(row[3]) > 0 and float(row[4]) > 0, row  # peak and at the largest size
    # 2- and 4-rank world groups are different series, and no series is a 1-rank one.
    groups = {row[1] for row in table.rows}
    assert any("2-rank" in g for g in groups) and any("4-rank" in g for g in groups)


def test_collective_under_overlap_has_no_one_rank_points(h100):
    from ovb_analysis.plots import collective
    pts = collective.overlap_points(h100)
    assert pts and all(bw > 0 for _, _, _, bw in pts)
    assert any("2-rank" in series for _, series, _, _ in pts)


def test_all_heatmaps_share_one_colour_scale_per_metric(h100):
    rows = overlap.overlap_rows(h100)
    keys = overlap.setting_keys(rows)
    figures = {}
    for r in rows:
        figures.setdefault(overlap.setting(r, keys), []).append(r)
    assert len(figures) > 5
    ranges = overlap.shared_ranges(list(figures.values()))
    limits = set()
    with paper_style():
        for members in figures.values():
            fig = overlap._figure(members, "t", ranges)
            for ax in fig.axes:
                limits |= {(ax.get_subplotspec().rowspan.start, im.get_clim())
                           for im in ax.images}
    by_row = {}
    for row, clim in limits:
        by_row.setdefault(row, set()).add(clim)
    assert len(by_row) == len(overlap.METRICS)
    assert all(len(c) == 1 for c in by_row.values()), by_row


def test_run_context_says_why_a_cell_is_empty(h100_report):
    rep, _ = h100_report
    table = next(t for t in rep.tables if t.title == "Run context")
    for row in table.rows:
        assert row[1] != "-" and row[2] != "-", row  # device, backend
        assert row[4] != "unknown", row
    assert "not recorded" in table.note
