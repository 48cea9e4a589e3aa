"""ovb-analysis timeline: a predicted trace (ovb-model explain --timeline's shape) drawn above a
traced run's measured iteration. The measured iteration is the one of median duration among those
the warm-up rule keeps, the figure's rows are the tracks that have events in it, and bad input is
one error line. Synthetic traces with worked-out numbers; no build needed. Run:
    .venv/bin/python -m pytest -q analysis/tests/test_timeline_plot.py"""

import json

import pytest

from ovb_analysis import cli
from ovb_analysis.errors import AnalysisError
from ovb_analysis.plots import timeline


def x(name, cat, tid, ts, dur, pid=0, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def predicted():
    return {"distributedInfo": {"backend": "model", "rank": 0, "world_size": 2},
            "ovbTracer": {"tracer": "model", "mode": "predicted"},
            "traceEvents": [
                {"ph": "M", "name": "thread_name", "pid": 0, "tid": 0, "args": {"name": "compute stream"}},
                x("gemm qkv.fwd", "kernel", 0, 0, 600, stream=0),
                x("wait qkv", "cuda_sync", 0, 600, 400, collective="all_reduce", group="x"),
                x("qkv all_reduce x", "kernel", 1, 600, 400, collective="all_reduce", group="x"),
                x("iteration", "gpu_user_annotation", 1000000, 0, 1000, category="iteration")]}


def measured(rank, durations):
    """A rank whose iterations last `durations` us, back to back from 5000 us."""
    ev, t = [], 5000.0
    for d in durations:
        ev += [x("iteration", "user_annotation", 7, t, d, pid=99, category="iteration"),
               x("layer0", "kernel", 0, t, d / 2, stream=1000),
               x("MPI all_reduce x", "kernel", 100, t + d / 2, d / 2, collective="all_reduce"),
               x("MPI_Wait", "cuda_runtime", 7, t + d / 2, d / 2, pid=99)]
        t += d
    return {"distributedInfo": {"backend": "mpi", "rank": rank, "world_size": 2},
            "traceEvents": ev}


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "pred.trace.json").write_text(json.dumps(predicted()))
    runs = tmp_path / "traces"
    runs.mkdir()
    # 8 iterations: the warm-up rule (max(3, ceil(n/10))) leaves out 3 and keeps 2000, 1500, 1700,
    # 1600, 1800 us, whose median is 1700 us.
    for r in (0, 1):
        (runs / f"rank-0000{r}.trace.json").write_text(
            json.dumps(measured(r, [9000, 3000, 4000, 2000, 1500, 1700, 1600, 1800])))
    return tmp_path


def test_median_steady_iteration_beside_the_prediction(inputs, capsys):
    paths, pred_ms, meas_ms = timeline.make(inputs / "pred.trace.json", inputs / "traces",
                                            inputs / "out" / "t.png")
    assert pred_ms == pytest.approx(1.0, abs=1e-12)
    assert meas_ms == pytest.approx(1.7, abs=1e-12)
    assert sorted(str(p).rsplit(".", 1)[1] for p in paths) == ["pdf", "png"]
    assert (inputs / "out" / "t.png").read_bytes()[:4] == b"\x89PNG"
    # The subcommand: the same numbers in its line.
    assert cli.main(["timeline", str(inputs / "pred.trace.json"), str(inputs / "traces"), "-o",
                     str(inputs / "cli.png")]) == 0
    assert "predicted 1.000 ms, measured 1.700 ms; wrote" in capsys.readouterr().out


def test_gpu_spans_of_the_iterations_win_over_their_cpu_ranges(inputs):
    """A CUDA trace marks each iteration twice: the CPU range and its GPU span. Only the spans
    count (as in ovb-trace analyze and merge): here they last 1.2 ms longer than the CPU ranges
    (1700 -> 2900 us median); the CPU ranges alone or both mixed would give another iteration."""
    for r in (0, 1):
        path = inputs / "traces" / f"rank-0000{r}.trace.json"
        doc = json.loads(path.read_text())
        doc["traceEvents"] += [dict(e, cat="gpu_user_annotation", pid=0, tid=1000000,
                                    dur=e["dur"] + 1200) for e in doc["traceEvents"]
                               if e["args"].get("category") == "iteration"]
        path.write_text(json.dumps(doc))
    _, _, meas_ms = timeline.make(inputs / "pred.trace.json", inputs / "traces",
                                  inputs / "out" / "g.png")
    assert meas_ms == pytest.approx(2.9, abs=1e-12)


def test_two_middle_iterations_tie_exactly_and_the_earlier_wins():
    # The median of 22092.782 and 86269.036 us is 54180.909 us; in floating point the first lies
    # 32088.127 from it and the second 32088.126999999993, which would pick the second.
    assert timeline.median_index([22092.782, 86269.036]) == 0
    assert timeline.median_index([86269.036, 22092.782]) == 0
    assert timeline.median_index([300, 130, 110, 100]) == 1  # median 120: 130 and 110 tie
    assert timeline.median_index([100, 140, 300, 130, 110]) == 3  # odd: the middle one, 130


def test_rows_are_the_tracks_with_events_in_the_window():
    rows = timeline._rows(predicted(), 0, 1000, "predicted:")
    assert [label for label, _ in rows] == ["predicted: compute stream", "predicted: thread 1"]
    measured_rows = timeline._rows(measured(0, [1000]), 5000, 6000, "rank 0:")
    assert [label for label, _ in measured_rows] == ["rank 0: thread 0", "rank 0: thread 100",
                                                     "rank 0: thread 7 waits"]
    assert rows[0][1] == [(0.0, 0.6, timeline.COMPUTE), (0.6, 0.4, timeline.WAIT)]
    assert rows[1][1] == [(0.6, 0.4, timeline.COMM)]
    # Clipped to the window and moved to its start.
    assert timeline._rows(predicted(), 500, 700, "p")[0][1] == [(0.0, 0.1, timeline.COMPUTE),
                                                              (0.1, 0.1, timeline.WAIT)]


def test_bad_input_is_one_error(inputs, capsys):
    with pytest.raises(AnalysisError, match="not a predicted trace"):
        timeline.make(inputs / "traces" / "rank-00000.trace.json", inputs / "traces",
                      inputs / "t.png")
    with pytest.raises(AnalysisError, match="no trace files"):
        timeline.make(inputs / "pred.trace.json", inputs / "out-none", inputs / "t.png")
    assert cli.main(["timeline", str(inputs / "missing.json"), str(inputs / "traces"), "-o",
                     str(inputs / "t.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.json: no such file" in err[0]
