"""`ovb-analysis summarize KIND DIR` and `pick-configs`: the campaign summaries' numbers against
the files they read (or hand computation), their checks failing when they must, the step table
from the suite's status file, one error line for bad input."""

import json
import shutil

import pytest

from conftest import ANALYSIS

REPO = ANALYSIS.parent
H100_MODEL = REPO / "results" / "h100" / "model"


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def gpt4d_doc(grid, overlap, median, exposed, per_group, prio=("high", "normal"), ranks=4):
    gx, gy, gz, gd = grid
    return {"context": {"backend": "host", "world_size": ranks},
            "config": {"world_size": ranks, "grid": {"gx": gx, "gy": gy, "gz": gz, "gdata": gd},
                       "overlap": overlap, "comm_priority": prio[0], "compute_priority": prio[1]},
            "summary": {"median_time_ms": median, "p10_time_ms": median - 1,
                        "p90_time_ms": median + 1, "comm_time_ms": 2 * exposed,
                        "exposed_comm_ms": exposed,
                        "collectives": [{"kind": "all_reduce", "group": g, "exposed_ms": v}
                                        for g, v in per_group.items()]}}


def test_multirank_rows_equal_the_files_and_effects(cli, tmp_path):
    write(tmp_path / "grids4" / "g1x2x2x1-none.json",
          gpt4d_doc((1, 2, 2, 1), [], 100.0, 30.0, {"y-0": 10.0, "z-allgather": 15.0, "world": 5.0}))
    write(tmp_path / "grids4" / "g1x2x2x1-all.json",
          gpt4d_doc((1, 2, 2, 1), ["oar", "ors", "oag"], 80.0, 12.0, {"y-0": 4.0, "z-1": 8.0}))
    write(tmp_path / "priorities" / "g1x2x2x1-comm_high-compute_normal.json",
          gpt4d_doc((1, 2, 2, 1), ["oar", "ors", "oag"], 80.0, 12.0, {"y-0": 12.0}))
    write(tmp_path / "priorities" / "g1x2x2x1-comm_normal-compute_high.json",
          gpt4d_doc((1, 2, 2, 1), ["oar", "ors", "oag"], 88.0, 18.0, {"y-0": 18.0},
                    prio=("normal", "high")))
    write(tmp_path / ".suite" / "status.json", {"steps": [
        {"step": "grids4-g1x2x2x1-none", "group": "grids4", "status": "finished", "attempt": 1,
         "duration_s": 3.2},
        {"step": "flags8-g2x2x2x1-oar", "group": "flags8", "status": "failed", "attempt": 2,
         "error": "exit status 1: a | b"},
        {"step": "summary", "group": "report", "status": "running"}]})
    rc, out, _ = cli("summarize", "multirank", tmp_path)
    assert rc == 0
    doc = json.loads((tmp_path / "summary.json").read_text())
    rows = {r["file"]: r for r in doc["runs"]}
    none = rows["grids4/g1x2x2x1-none.json"]
    assert none["exposed_per_dim_ms"] == {"x": 0.0, "y": 10.0, "z": 15.0, "data": 0.0,
                                          "other": 5.0}
    assert (none["median_ms"], none["comm_ms"], none["overlap"]) == (100.0, 60.0, "none")
    [effect] = doc["overlap_effect"]
    assert effect["time_change_pct"] == -20.0 and effect["exposed_change_pct"] == -60.0
    [prio] = doc["priority_effect"]
    assert prio["priorities"] == "comm normal, compute high"
    assert prio["time_change_pct"] == 10.0 and prio["exposed_change_pct"] == 50.0
    md = (tmp_path / "summary.md").read_text()
    assert md.strip() == out.strip()
    assert md.startswith("# gpt4d, 4 and 8 ranks on one device\n")
    assert "| grids4-g1x2x2x1-none | finished | 1 | 3 s |  |" in md
    assert "| flags8-g2x2x2x1-oar | failed | 2 |  | exit status 1: a \\| b |" in md
    assert "| summary |" not in md  # the summary's own row is left out


def test_multirank_without_results_is_one_error_line(cli, tmp_path):
    rc, _, err = cli("summarize", "multirank", tmp_path)
    assert rc == 1
    assert err.startswith("ovb-analysis: error: no gpt4d results under") and err.count("\n") == 1
    rc, _, err = cli("summarize", "multirank", tmp_path / "nope")
    assert rc == 1 and "no such folder" in err


def test_model_pipeline_on_the_committed_h100_folder(cli, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(H100_MODEL / "model", folder / "model")
    rc, _, _ = cli("summarize", "model-pipeline", folder)
    assert rc == 0
    md = (folder / "summary.md").read_text()
    cmp = json.loads((folder / "model" / "compare.json").read_text())
    for c in cmp["configs"]:
        assert (f"| {c['gx']}x{c['gy']}x{c['gz']}x{c['gdata']} | {c['order']} | {c['overlap']} | "
                f"{c['predicted_ms']:.2f} | {c['measured_ms']:.2f} | {c['error_pct']:+.1f} |") in md
    assert "mean |error|: 11.6 %" in md
    # gpt4d's collectives differing from the plan: the summary is written, the check fails.
    cmp["warnings"] = ["x all_reduce: 3 calls measured, 4 planned"]
    (folder / "model" / "compare.json").write_text(json.dumps(cmp))
    rc, _, _ = cli("summarize", "model-pipeline", folder)
    assert rc == 1
    md = (folder / "summary.md").read_text()
    assert "## Checks that failed" in md and "3 calls measured, 4 planned" in md
    # A trace analysis that compare did not pair with its run fails too.
    cmp["warnings"] = []
    (folder / "model" / "compare.json").write_text(json.dumps(cmp))
    write(folder / "gpt4d" / "pick-1.trace-analysis.json", {"summary": {}})
    rc, _, _ = cli("summarize", "model-pipeline", folder)
    assert rc == 1
    assert "did not pair the trace analysis pick-1.trace-analysis.json" in \
        (folder / "summary.md").read_text()


def losses(values):
    return {"iterations": [{"iter": i + 1, "loss": v} for i, v in enumerate(values)]}


def test_gpt4d_gpu_checks(cli, tmp_path):
    host = [5.0 - 0.1 * i for i in range(30)]
    write(tmp_path / "compare_host.json", losses(host))
    write(tmp_path / "compare_cuda_fp32.json", losses([v * (1 + 5e-4) for v in host]))
    write(tmp_path / "compare_cuda_bf16.json", losses([v * 1.01 for v in host]))
    rc, _, _ = cli("summarize", "gpt4d-gpu", tmp_path)
    assert rc == 0
    assert "Largest relative deviation cuda fp32 vs host: 5.00e-04 (ok: < 1e-3)" in \
        (tmp_path / "summary.md").read_text()
    write(tmp_path / "compare_cuda_fp32.json", losses([v * (1 + 2e-3) for v in host]))
    rc, _, _ = cli("summarize", "gpt4d-gpu", tmp_path)
    assert rc == 1
    assert "2.00e-03 (FAILED: < 1e-3)" in (tmp_path / "summary.md").read_text()


def test_profiling_overhead_by_hand(cli, tmp_path):
    untraced, traced = [10.0, 12.0, 11.0], [10.1, 12.3, 11.2]
    for mode, vals in (("untraced", untraced), ("traced", traced)):
        for i, v in enumerate(vals, 1):
            write(tmp_path / "overhead" / f"demo-{mode}-{i}.json", {"summary": {"median_time_ms": v}})
    rc, _, _ = cli("summarize", "profiling-gpu", tmp_path)
    assert rc == 0
    demo = json.loads((tmp_path / "overhead.json").read_text())["programs"]["demo"]
    assert demo["untraced_median_ms"] == 11.0 and demo["traced_median_ms"] == 11.2
    assert abs(demo["overhead_pct"] - 100 * 0.2 / 11.0) < 1e-12
    # Per pair traced / untraced: 1.01, 1.025, 1.0181818 (= 11.2 / 11); median 1.0181818,
    # p10 at position 0.2: 1.01 + 0.2 * 0.0081818 = 1.0116364, p90 at 1.8: 1.0236364.
    assert demo["ratios"] == pytest.approx([1.01, 1.025, 11.2 / 11.0])
    assert demo["ratio_p10"] == pytest.approx(1.0116364, abs=1e-7)
    assert demo["ratio_p90"] == pytest.approx(1.0236364, abs=1e-7)
    assert "| demo | 11.000 | 11.200 | 1.0182 (1.0116, 1.0236) | +1.82 | 3 |" in \
        (tmp_path / "summary.md").read_text()


def search_doc():
    cfg = [dict(gx=gx, gy=gy, gz=1, gdata=gd, order=o, fits=f) for gx, gy, gd, o, f in (
        (2, 2, 1, "x,y,z", True), (4, 1, 1, "x,y,z", False), (1, 2, 2, "y,x,z", True),
        (1, 1, 4, "x,y,z", True), (1, 4, 1, "x,y,z", True))]
    return {"configs": cfg}


def test_pick_configs_best_and_worst(cli, tmp_path):
    write(tmp_path / "search.json", search_doc())
    rc, out, _ = cli("pick-configs", tmp_path / "search.json", "--count", "3", "-o",
                     tmp_path / "picks.json")
    assert rc == 0
    runs = json.loads((tmp_path / "picks.json").read_text())["runs"]
    assert [r["tag"] for r in runs] == ["g2x2x1x1-xyz", "g1x2x1x2-yxz", "g1x4x1x1-xyz"]
    assert runs[1]["args"] == ["--gx", "1", "--gy", "2", "--gz", "1", "--gdata", "2",
                               "--grid-order", "y,x,z"]
    assert out.split() == [r["tag"] for r in runs]
    rc, _, _ = cli("pick-configs", tmp_path / "search.json", "--count", "9", "-o",
                   tmp_path / "all.json")
    assert rc == 0 and len(json.loads((tmp_path / "all.json").read_text())["runs"]) == 4


def test_pick_configs_run_the_micro_batch_and_sharding_the_search_chose(cli, tmp_path):
    doc = search_doc()
    doc["inputs"] = {"micro_batch": "auto", "shard_optimizer": "auto"}
    doc["configs"][0].update(micro_batch=1, micro_steps=4, shard_optimizer=False)
    doc["configs"][4].update(micro_batch=2, micro_steps=1, shard_optimizer=True)  # the worst
    write(tmp_path / "search.json", doc)
    rc, _, _ = cli("pick-configs", tmp_path / "search.json", "--count", "2", "-o",
                   tmp_path / "picks.json")
    assert rc == 0
    runs = json.loads((tmp_path / "picks.json").read_text())["runs"]
    assert runs[0]["args"][-2:] == ["--micro-batch", "1"]
    # One micro-step is gpt4d's default: only the sharding is passed.
    assert runs[1]["args"][-1] == "--shard-optimizer" and "--micro-batch" not in runs[1]["args"]
    # A file pinned in its inputs, written before the search chose per configuration.
    doc = search_doc()
    doc["inputs"] = {"micro_batch": 2, "shard_optimizer": True}
    write(tmp_path / "old.json", doc)
    rc, _, _ = cli("pick-configs", tmp_path / "old.json", "--count", "1", "-o",
                   tmp_path / "old-picks.json")
    assert rc == 0
    assert json.loads((tmp_path / "old-picks.json").read_text())["runs"][0]["args"][-3:] == [
        "--micro-batch", "2", "--shard-optimizer"]


def test_pick_configs_bad_input(cli, tmp_path):
    write(tmp_path / "none.json", {"configs": [dict(gx=1, gy=1, gz=1, gdata=4, order="x,y,z",
                                                    fits=False)]})
    write(tmp_path / "other.json", {"rows": []})
    for path, count, msg in ((tmp_path / "none.json", "2", "no configuration fits"),
                             (tmp_path / "other.json", "2", "not ovb-model search output"),
                             (tmp_path / "none.json", "0", "--count 0: expected at least 1"),
                             (tmp_path / "missing.json", "2", "no such file")):
        rc, _, err = cli("pick-configs", path, "--count", count, "-o", tmp_path / "p.json")
        assert rc == 1, msg
        assert msg in err and err.count("\n") == 1
    assert not (tmp_path / "p.json").exists()


def test_h100_where_the_time_goes_is_per_steady_state_iteration(tmp_path):
    """Five marked iterations, the first a 1000 us warm-up with a 900 us kernel, then 100 us
    iterations with an 80 us GEMM each. The analysis kept iterations 3 and 4 (warm-up rule):
    160 us of GEMM over 2 iterations = 0.08 ms per iteration, and the top-kernel table counts the
    same two kernels (not the warm-up's 900 us, not per 8 configured iterations)."""
    from ovb_analysis.summaries import h100_single
    events = [{"ph": "X", "cat": "user_annotation", "name": "iteration", "ts": 0, "dur": 1000,
               "args": {"category": "iteration"}},
              {"ph": "X", "cat": "kernel", "name": "gemm_k", "ts": 0, "dur": 900}]
    for k in range(1, 5):
        b = 1000 + 100 * (k - 1)
        events += [{"ph": "X", "cat": "user_annotation", "name": "iteration", "ts": b, "dur": 100,
                    "args": {"category": "iteration"}},
                   {"ph": "X", "cat": "kernel", "name": "gemm_k", "ts": b, "dur": 80}]
    write(tmp_path / "trace" / "rank-00000.trace.json", {"traceEvents": events})
    write(tmp_path / "trace" / "analysis.json", {"summary": {
        "steady_state": {"iterations_marked": 5, "warmup_excluded": 3, "iterations_analyzed": 2},
        "kernel_breakdown": {"gemm": {"count": 2, "total_us": 160.0, "pct": 100.0,
                                      "span_pct": 88.9},
                             "kernel_total_us": 160.0, "idle_us": 20.0, "idle_pct": 11.1}}})
    md = h100_single.summarize(str(tmp_path)).markdown
    assert "steady state: 2 of 5 iterations, the first 3 left out as warm-up" in md
    assert "| gemm | 0.08 | 100.0 | 88.9 |" in md
    assert "| idle | 0.01 | | 11.1 |" in md  # 20 us over 2 iterations
    assert "| `gemm_k` | 0.08 | 1.0 |" in md


def test_microbench_gpu_overlap_table_leaves_out_blocking_wait_rows(cli, tmp_path):
    # The blocking_wait scenario runs nothing concurrently: its rows have no t_overlap_us and no
    # place in the overlap table, which lists every other row of the file.
    over = {"name": "overlap/all_reduce/world/65536/fp32/64x64x64/nn/equal/comm_first",
            "run_type": "iteration", "label": "prio=equal order=comm_first scenario=gemm_coll",
            "t_compute_us": 10.0, "t_comm_us": 20.0, "t_overlap_us": 25.0,
            "overlap_efficiency": 0.5, "speedup_vs_serial": 1.2, "compute_slowdown": 0.1,
            "comm_slowdown": 0.2}
    wait = {"name": "overlap/blocking_wait/all_reduce/world/65536/fp32/64x64x64/nn/equal/sequence",
            "run_type": "iteration", "label": "order=sequence scenario=blocking_wait",
            "t_compute_us": 10.0, "t_comm_us": 20.0, "t_sequence_us": 40.0, "wait_us": 10.0}
    write(tmp_path / "overlap-host-4.json", {"context": {}, "benchmarks": [over, wait]})
    rc, _, err = cli("summarize", "microbench-gpu", tmp_path)
    assert rc == 0, err
    text = (tmp_path / "summary.md").read_text()
    assert f"`{over['name']}`" in text and "| 25.0 |" in text
    assert "blocking_wait" not in text
