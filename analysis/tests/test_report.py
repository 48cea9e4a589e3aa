"""The report: builds from the fixtures, is self-contained, lists what is missing, is deterministic."""

import json
import re
import shutil

import pytest

from conftest import RESULTS
from ovb_analysis import report


def build(tmp_path, name="rep", src=RESULTS):
    rep, written = report.build(src, tmp_path / name)
    return rep, {p.name: p.read_bytes() for p in written}


@pytest.fixture(scope="module")
def first_build(tmp_path_factory):
    return build(tmp_path_factory.mktemp("report"))


def test_report_from_fixtures(first_build):
    rep, files = first_build
    assert rep.missing == []
    assert [o.stem for o in rep.outputs] == [
        "collective_busbw", "gemm_throughput",
        "overlap_heatmap_all_reduce",
        "iteration_breakdown", "model_vs_measured", "model_search", "scaling"]
    assert len(files) == 2 * 7 + 2
    html = files["report.html"].decode()
    assert html.count('src="data:image/png;base64,') == 7
    assert not re.search(r'src="(?!data:)', html) and "http" not in html
    for title in ("Run context", "Training runs", "gpt4d vs Megatron-LM", "Overlap microbenchmark",
                  "Files that could not be read", "broken/gpt4d_killed.json", "NVIDIA H100 80GB HBM3",
                  "2026-11-22T21:30:00Z .. 2026-11-23T09:00:00Z"):
        assert title in html
    md = files["report.md"].decode()
    assert "![Scaling: gpt4d vs Megatron-LM](scaling.png)" in md
    assert "| 1.3B | 8 | 16 | 2x2x1x2 oar,ors,oag | 133.4 | 260.0 | TP2 PP1 DP4 dist-opt,ogr,opg,sp " \
           "| 150.8 | 230.1 | 232.8 | 1.13 |" in md
    assert "| broken/megatron-oom.log | no Megatron-LM iteration lines" in md


def test_report_is_byte_identical_on_rerun(first_build, tmp_path):
    _, second = build(tmp_path, "again")
    assert first_build[1] == second


def test_missing_plots_listed_with_reason(tmp_path):
    src = tmp_path / "only_micro"
    shutil.copytree(RESULTS / "microbench", src / "microbench")
    rep, files = build(tmp_path, "rep", src)
    assert [m[0] for m in rep.missing] == ["breakdown", "model", "scaling"]
    md = files["report.md"].decode()
    assert "## Plots not made" in md
    assert "| Model vs measurement (model) | no ovb-model compare or search results |" in md
    assert "Plots not made" in files["report.html"].decode()


def test_cli_report_default_outdir_and_errors(cli, tmp_path):
    src = tmp_path / "results"
    shutil.copytree(RESULTS / "model", src / "model")
    rc, out, err = cli("report", src)
    assert rc == 0 and (src / "report" / "report.html").exists()
    assert out == (f"wrote {src}/report/report.html and {src}/report/report.md (2 figures, "
                   "5 plot kinds without data, 0 unreadable files)\n")
    rc, out2, _ = cli("report", src)  # its own output folder is not read back
    assert rc == 0 and out2 == out
    rc, _, err = cli("report", tmp_path / "absent")
    assert rc == 1 and err.strip().endswith("not a folder")


def test_one_broken_plot_or_table_does_not_cost_the_report(tmp_path, monkeypatch):
    from ovb_analysis import tables
    from ovb_analysis.plots import gemm

    def broken(*_):
        raise IndexError("list index out of range")
    monkeypatch.setattr(gemm, "make", broken)
    monkeypatch.setattr(tables.gemm, "gemm_rows", broken)
    src = tmp_path / "micro"
    shutil.copytree(RESULTS / "microbench", src / "microbench")
    rep, files = build(tmp_path, "rep", src)
    assert ("gemm", "GEMM throughput", "unexpected data (IndexError: list index out of range)") \
        in rep.missing
    assert [o.stem for o in rep.outputs][:1] == ["collective_busbw"]
    md = files["report.md"].decode()
    assert "## GEMM throughput\n\nnot made: unexpected data (IndexError" in md


def test_report_bytes_do_not_depend_on_the_process(first_build, tmp_path):
    """Another process, with another hash seed, writes the same files as this one."""
    from conftest import run_executable
    out = tmp_path / "other"
    res = run_executable("report", RESULTS, "-o", out, env={"PYTHONHASHSEED": "12345"})
    assert res.returncode == 0, res.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first_build[1]


def test_suite_steps_that_did_not_finish_are_listed(tmp_path, cli):
    src = tmp_path / "res"
    shutil.copytree(RESULTS / "model", src / "model")
    (src / ".suite").mkdir()
    (src / ".suite" / "status.json").write_text(json.dumps({"steps": [
        {"step": "microbench-gemm", "group": "microbench", "status": "finished"},
        {"step": "gpt4d-g1x2x1x2-oar", "group": "gpt4d", "status": "failed",
         "error": "exit status 1:\nerror: Gy=2 does not divide heads=3"},
        {"step": "model-search", "group": "model", "status": "pending",
         "error": "ovb-model not built"},
        {"step": "report", "group": "report", "status": "running"}]}))
    rep, files = build(tmp_path, "rep", src)
    assert rep.steps == [("gpt4d-g1x2x1x2-oar", "gpt4d", "failed",
                          "exit status 1: error: Gy=2 does not divide heads=3"),
                         ("model-search", "model", "pending", "ovb-model not built")]
    md = files["report.md"].decode()
    assert ("## Suite steps that did not finish\n\n| step | group | status | error |\n|---|---|---|"
            "---|\n| gpt4d-g1x2x1x2-oar | gpt4d | failed | exit status 1: error: Gy=2 does not "
            "divide heads=3 |") in md
    assert "Suite steps that did not finish" in files["report.html"].decode()
    rc, _, err = cli("report", src, "-o", tmp_path / "cli")
    assert rc == 0 and "note: suite step model-search pending: ovb-model not built" in err
    (src / ".suite" / "status.json").write_text("{")
    rep, _ = build(tmp_path, "rep2", src)
    assert rep.steps[0][2] == "unreadable"


def test_many_files_not_read_for_one_reason_share_a_row(tmp_path):
    from ovb_analysis import results, tables
    for i in range(5):
        (tmp_path / f"step-{i}.txt").write_text("gpt4d: iteration 3 done\n")
    (tmp_path / "state.json").write_text('{"hello": 1}')
    rows = tables.inputs_table(results.load_inputs([tmp_path])).rows
    assert rows == [["state.json", "not read: not a result file of a known shape (see "
                                   "results/SCHEMA.md)"],
                    ["step-0.txt and 4 more", "not read: log without Megatron-LM iteration lines"]]


def test_merged_traces_are_listed_for_perfetto(tmp_path):
    """ovb-trace merge's output (its header: mergedFrom, alignment) is a row of "Traces for
    Perfetto"; a plain trace beside it stays a raw trace, not read."""
    from ovb_analysis import results, tables
    merged = {"mergedFrom": [{"rank": r, "source": "measured", "file": f"m{r}"} for r in range(4)]
              + [{"rank": 0, "source": "predicted", "file": "p"}],
              "alignment": {"rule": "median steady-state iteration", "measured_rank": 0,
                            "iteration": 12, "iterations": 20, "warmup": 3, "begin_ns": 5,
                            "measured_ns": 8_123_000, "predicted_ns": 6_200_400},
              "traceEvents": [{"ph": "X", "name": "gemm", "pid": 1000, "ts": 0, "dur": 1}]}
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "timeline-vs-measured-x.trace.json").write_text(json.dumps(merged))
    (tmp_path / "model" / "timeline-x.trace.json").write_text('{"traceEvents": []}')
    rs = results.load_inputs([tmp_path])
    t = tables.merged_trace_table(rs)
    assert t.rows == [["model/timeline-vs-measured-x.trace.json",
                       "measured ranks 0-3; predicted rank 0",
                       "measured rank 0's iteration 12 of 20 (median steady-state, 3 warm-up)",
                       "8.123", "6.200"]]
    assert "traceEvents" not in rs.of("merged_trace")[0].doc  # the events are not kept
    assert ["model/timeline-x.trace.json", "not read: raw trace (analyse it with ovb-trace "
                                            "analyze)"] in tables.inputs_table(rs).rows
    rep, files = build(tmp_path, src=tmp_path)
    assert "| model/timeline-vs-measured-x.trace.json | measured ranks 0-3; predicted rank 0 |" \
        in files["report.md"].decode()
