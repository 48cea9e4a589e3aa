"""Files written by the suite's own microbenchmark binaries (host backend, 2 ranks, tiny sweeps;
fixtures/host_run/, made with build/*/microbench/ovb-{gemm,collective,overlap} --backend host
--benchmark_out=FILE) are read, plotted and reported: the readers follow the real producers, not
only the hand-written fixtures."""

from conftest import FIXTURES
from ovb_analysis import report, results, tables
from ovb_analysis.plots import Options, collective, gemm, overlap

HOST_RUN = FIXTURES / "host_run"


def test_real_microbench_files_load():
    rs = results.load_inputs([HOST_RUN])
    assert rs.failed == [] and rs.ignored == []
    assert [(f.rel, f.kind) for f in rs.files] == [
        ("collective.json", "gbench"), ("gemm.json", "gbench"), ("overlap.json", "gbench")]


def test_series_keep_settings_apart():
    rs = results.load_inputs([HOST_RUN])
    series = {(c, s) for c, s, _, _ in collective.alone_points(rs)}
    # in-place and out-of-place differ in the label: two lines per collective, never averaged
    assert series == {(c, f"world inplace={i}") for c in collective.ORDER for i in (0, 1)}
    assert {r[0] for r in gemm.gemm_rows(rs)} == {"gemm/fp32/nn"}
    assert gemm.series_of({"name": "gemm/bf16/8192x8192x8192/tn/min_time:0.5/repeats:3/"
                                   "manual_time"}) == "gemm/bf16/tn"


def test_overlap_figure_and_caption_from_real_labels(tmp_path):
    rs = results.load_inputs([HOST_RUN])
    (out,) = overlap.make(rs, tmp_path, Options())
    assert out.stem == "overlap_heatmap_all_reduce"
    # The file's labels name no scenario (written before they did): read as gemm_coll.
    assert out.caption.endswith("Same in every cell: cdmc=default, cta_policy=default, "
                                "dtype=fp32, group=world, max_ctas=default, min_ctas=default, "
                                "order=comm_first, scenario=gemm_coll.")
    table = tables.overlap_table(rs)
    assert table.header[:2] == ["coll", "prio"] and len(table.rows) == 2


def test_report_of_real_files(tmp_path):
    rep, written = report.build(HOST_RUN, tmp_path / "rep")
    assert [o.stem for o in rep.outputs] == ["collective_busbw", "gemm_throughput",
                                             "overlap_heatmap_all_reduce"]
    assert [m[0] for m in rep.missing] == ["breakdown", "model", "scaling"]
    assert all(p.stat().st_size > 1000 for p in written)
