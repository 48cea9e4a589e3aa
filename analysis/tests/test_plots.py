"""Every plot kind from the fixture result sets: files exist, are non-empty, PNG pixel size is the
figure size x dpi at a two-column paper width, PDFs carry no dates, output is deterministic."""

import json
import shutil
import struct

import pytest

from conftest import RESULTS
from ovb_analysis import results
from ovb_analysis.plots import NoData, Options, kinds
from ovb_analysis.style import DOUBLE_COLUMN_IN, PNG_DPI, SINGLE_COLUMN_IN

EXPECTED = {  # stem -> PNG pixels (width, height) at 200 dpi
    "collective_busbw": (1432, 520), "gemm_throughput": (1432, 560),
    "overlap_heatmap_all_reduce": (1432, 1200),
    "iteration_breakdown": (1432, 600), "model_vs_measured": (1432, 560),
    "model_search": (700, 332), "scaling": (1432, 880)}


def png_size(path):
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def check_output(o):
    pdf, png = o.files
    assert pdf.suffix == ".pdf" and png.suffix == ".png"
    assert pdf.stat().st_size > 1000 and png.stat().st_size > 1000
    head = pdf.read_bytes()
    assert head.startswith(b"%PDF") and b"CreationDate" not in head
    w, h = o.size_in
    assert w in (SINGLE_COLUMN_IN, DOUBLE_COLUMN_IN)
    assert png_size(png) == (round(w * PNG_DPI), round(h * PNG_DPI))


@pytest.fixture(scope="module")
def fixture_results():
    return results.load_inputs([RESULTS])


@pytest.mark.parametrize("kind", list(kinds()))
def test_plot_kind_from_fixtures(kind, fixture_results, tmp_path):
    outputs = kinds()[kind].make(fixture_results, tmp_path, Options())
    assert outputs
    for o in outputs:
        check_output(o)
        assert png_size(o.files[1]) == EXPECTED[o.stem]


@pytest.mark.parametrize("kind", list(kinds()))
def test_plot_kind_without_data_says_why(kind, tmp_path):
    with pytest.raises(NoData) as e:
        kinds()[kind].make(results.ResultSet(), tmp_path, Options())
    assert str(e.value).startswith("no ")


def test_single_panel_figures_are_one_column_wide(tmp_path):
    src = tmp_path / "in"
    (src / "gpt4d").mkdir(parents=True)
    for name in ("gpt4d_1.3B_g1_none.json", "gpt4d_1.3B_g2_oar.json", "gpt4d_1.3B_g8_none.json"):
        shutil.copy(RESULTS / "gpt4d" / name, src / "gpt4d" / name)
    rs = results.load_inputs([src])
    (out,) = kinds()["scaling"].make(rs, tmp_path / "out", Options())
    check_output(out)
    assert png_size(out.files[1]) == (700, 880)  # strong scaling only


def test_peak_option_used_when_files_have_none(tmp_path):
    src = tmp_path / "in"
    shutil.copytree(RESULTS / "megatron", src / "megatron")
    for cfg in src.glob("megatron/*/megatron_config.json"):
        cfg.write_text(cfg.read_text().replace('"peak_tflops": 989.0,', ""))
    rs = results.load_inputs([src])
    from ovb_analysis.plots.scaling import collect
    assert {st["pct_peak"] for _, st in collect(rs, Options())} == {None}
    pcts = [st["pct_peak"] for _, st in collect(rs, Options(peak=500.0))]
    assert all(p is not None for p in pcts)
    check_output(kinds()["scaling"].make(rs, tmp_path / "out", Options())[0])


def test_plots_are_byte_identical_when_remade(fixture_results, tmp_path):
    a = kinds()["overlap"].make(fixture_results, tmp_path / "a", Options())
    b = kinds()["overlap"].make(fixture_results, tmp_path / "b", Options())
    for oa, ob in zip(a, b):
        for fa, fb in zip(oa.files, ob.files):
            assert fa.read_bytes() == fb.read_bytes()


def test_cli_plot(cli, tmp_path):
    rc, out, err = cli("plot", "gemm", RESULTS / "microbench", "-o", tmp_path)
    assert rc == 0 and err == ""
    assert out.splitlines() == [str(tmp_path / "gemm_throughput.pdf"),
                                str(tmp_path / "gemm_throughput.png")]
    rc, _, err = cli("plot", "model", RESULTS / "microbench", "-o", tmp_path)
    assert rc == 1 and "cannot make the model plot: no ovb-model" in err
    rc, out, err = cli("plot", "all", RESULTS / "model", "-o", tmp_path / "all")
    assert rc == 0 and len(out.splitlines()) == 4 and "note: scaling plot not made" in err


def test_breakdown_segments_by_hand(tmp_path):
    from ovb_analysis.plots import breakdown
    src = tmp_path / "in"
    (src / "g").mkdir(parents=True)
    for name in ("gpt4d_1.3B_g8_all.json", "gpt4d_1.3B_g8_all.trace-analysis.json"):
        shutil.copy(RESULTS / "gpt4d" / name, src / "g" / name)
    doc = json.loads((src / "g" / "gpt4d_1.3B_g8_all.json").read_text())
    doc["summary"]["collectives"] += [
        {"kind": "all_gather", "group": "z-allgather", "count": 24, "bytes": 1, "time_ms": 2.0,
         "exposed_ms": 0.5},
        {"kind": "all_reduce", "group": "world", "count": 1, "bytes": 8, "time_ms": 0.1,
         "exposed_ms": 0.1}]
    doc["config"].update(comm_priority="normal", compute_priority="high")  # named under its bar
    (src / "g" / "other.json").write_text(json.dumps(doc))  # no trace: idle inside compute
    bars, used = breakdown.gpt4d_bars(results.load_inputs([src]), Options())
    assert used == {"g/gpt4d_1.3B_g8_all.trace-analysis.json"}
    (label_a, a), (label_b, b) = bars
    # median 133.43 ms; exposed x 6.3, y 5.6, data 3.15; idle = 133.43 * 5000 / 134000
    idle = 133.43 * 5000.0 / 134000.0
    assert a == pytest.approx({"exposed x": 6.3, "exposed y": 5.6, "exposed z": 0.0,
                               "exposed data": 3.15, "exposed other": 0.0, "idle": idle,
                               "compute": 133.43 - 15.05 - idle})
    assert label_a == "2x2x1x2\noar,ors,oag"
    assert label_b == "2x2x1x2\noar,ors,oag\ncomm normal\ncompute high*"
    assert b["exposed z"] == 0.5 and b["exposed other"] == 0.1 and b["idle"] == 0.0
    assert b["compute"] == pytest.approx(133.43 - 15.05 - 0.6)
    assert breakdown.dimension("Y") == "y" and breakdown.dimension("pipeline") == "other"


@pytest.mark.parametrize("lo_exp, hi_exp", [(10, 28), (16, 20), (3, 33), (20, 20)])
def test_byte_axis_labels_never_crowd(lo_exp, hi_exp):
    from ovb_analysis.plots.common import MAX_BYTE_TICKS, bytes_axis
    from ovb_analysis.style import new_figure
    ax = new_figure(2.3, 2.0).subplots()
    lo, hi = 2.0 ** lo_exp, 2.0 ** hi_exp
    bytes_axis(ax, [lo, hi])
    ticks = [t for t in ax.xaxis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi]
    assert 1 <= len(ticks) <= MAX_BYTE_TICKS or lo == hi


def test_overlap_efficiency_colours_clipped_to_meaningful_range():
    import numpy as np
    from ovb_analysis.plots.overlap import _color_range
    grids = [np.array([[-83.5, 0.4], [np.nan, 0.9]]), np.array([[0.2, 1.2]])]
    assert _color_range(grids, "overlap_efficiency") == (-1.0, 1.0, "both")
    assert _color_range([np.array([[0.2, 0.7]])], "overlap_efficiency") == (0.2, 0.7, "neither")
    # Slowdowns: the 5th..95th percentile of the cells (one outlier must not wash out the rest).
    lo, hi, extend = _color_range(grids, "comm_slowdown")
    assert (round(lo, 2), round(hi, 2), extend) == (-66.76, 1.14, "both")
    assert _color_range([np.array([[np.nan]])], "compute_slowdown") == (0.0, 1.0, "neither")
    # Every efficiency below -1 (a host run): a valid range, not lo > hi.
    lo, hi, extend = _color_range([np.array([[-3.0, -2.0]])], "overlap_efficiency")
    assert lo < hi and lo <= -1.0 <= hi and extend == "min"


def test_gemm_plot_with_many_shapes_switches_to_points(tmp_path):
    """More shapes x series than bars can show (every layer GEMM of several GPT sizes): one point
    per shape and precision, drawn without layout warnings, same figure size."""
    import warnings

    from ovb_analysis.plots import gemm

    benches = []
    for i in range(30):
        for layer in ("qkv.fwd", "mlp_up.dx"):
            m = 256 * (i + 1)
            benches.append({"name": f"gemm/bf16/{layer}/{m}x2048x2048/nt/manual_time",
                            "run_name": f"gemm/bf16/{layer}/{m}x2048x2048/nt/manual_time",
                            "run_type": "iteration", "m": m, "n": 2048, "k": 2048,
                            "tflops": 400.0 + i, "pct_peak": 40.0 + i / 10, "time_us": 1.0,
                            "flop": 2.0 * m * 2048 * 2048})
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "gemm.json").write_text(json.dumps({"context": {}, "benchmarks": benches}))
    rs = results.load_inputs([tmp_path / "in"])
    rows = gemm.gemm_rows(rs)
    assert len({r[1] for r in rows}) * len({r[0] for r in rows}) > gemm.MAX_BARS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = gemm.make(rs, tmp_path / "out", Options())
    check_output(out)
    assert png_size(out.files[1]) == EXPECTED["gemm_throughput"]


def test_breakdown_repeated_runs_are_one_bar_at_their_median(tmp_path):
    from ovb_analysis.plots import breakdown
    src = tmp_path / "in"
    (src / "g").mkdir(parents=True)
    doc = json.loads((RESULTS / "gpt4d" / "gpt4d_1.3B_g8_all.json").read_text())
    medians = {"r.json": 140.0, "r.round-2.json": 120.0, "r.round-3.json": 130.0}
    for name, ms in medians.items():  # three repetitions of one configuration, another once
        d = json.loads(json.dumps(doc))
        d["summary"]["median_time_ms"] = ms
        d["iterations"] = [dict(it, time_ms=ms) for it in d["iterations"]]
        (src / "g" / name).write_text(json.dumps(d))
    doc["config"]["comm_priority"] = "normal"
    (src / "g" / "other.json").write_text(json.dumps(doc))
    bars, _ = breakdown.gpt4d_bars(results.load_inputs([src]), Options())
    assert len(bars) == 2
    repeated = [(label, seg) for label, seg in bars if "median of 3" in label]
    assert len(repeated) == 1
    assert sum(repeated[0][1].values()) == pytest.approx(130.0)


def test_model_plot_shows_the_range_of_repeated_runs():
    from ovb_analysis.plots import model
    doc = json.loads((RESULTS / "model" / "compare.json").read_text())
    for i, c in enumerate(doc["configs"]):
        m = c["measured_ms"]
        c["measured_runs_ms"] = [m, m * (0.5 if i == 0 else 1.1), m * 3.0]
    doc["measured_split_half_spearman"] = 0.5
    fig = model._compare_figure(doc)
    ax, ax_rank = fig.axes
    lo, hi = ax.get_xlim()
    runs = [v for c in doc["configs"] for v in c["measured_runs_ms"]]
    assert lo <= min(runs) and hi >= max(runs)  # every run's time is on the axis
    assert "measured vs itself (odd vs even runs): 0.50" in ax_rank.get_title()
