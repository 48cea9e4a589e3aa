"""The summaries of the baselines, overlap-matters and profile-1.3B campaign folders, on
folders written here with exact, hand-computed expectations (no GPU; the campaigns' own steps are
planned and tested in slurm/tests/test_campaigns.py).

Run: pytest analysis/tests/test_summaries_gpu_campaigns.py
"""

import json

import pytest

from ovb_analysis import metrics, nccl_tests
from ovb_analysis.summaries import baselines, overlap_matters, profile_13b


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def run(times, warmup, **summary):
    """A gpt4d/pytorch_gpt-like result: iterations and the summary keys the summaries read."""
    return {"iterations": [{"iter": i, "time_ms": t} for i, t in enumerate(times)],
            "summary": {"warmup_iters": warmup, **summary}}


def test_overlap_efficiency_hand_computed():
    assert metrics.overlap_efficiency(2.0, 1.0, 2.5) == 0.5     # (3 - 2.5) / 1
    assert metrics.overlap_efficiency(2.0, 1.0, 2.0) == 1.0     # the shorter fully hidden
    assert metrics.overlap_efficiency(2.0, 1.0, 3.5) == -0.5    # worse than serial
    with pytest.raises(ValueError):
        metrics.overlap_efficiency(0.0, 1.0, 1.0)


def test_profile_steady_state_is_the_long_minus_short_difference(tmp_path):
    def analysis(gemm_us, idle_us, span_us):
        kb = {c: {"total_us": 0.0} for c in profile_13b.CATEGORIES}
        kb["gemm"]["total_us"] = gemm_us
        return {"summary": {"kernel_breakdown": kb, "idle_us": idle_us, "span_us": span_us}}
    # 10 and 30 iterations, same warm-up: 20 steady-state iterations between them.
    write(tmp_path / "analysis" / "10-1.json", analysis(1_200_000, 200_000, 1_600_000))
    write(tmp_path / "analysis" / "30-1.json", analysis(3_100_000, 260_000, 4_400_000))
    write(tmp_path / "runs" / "untraced-10-1.json", run([300, 100, 102, 98, 100], 1))
    write(tmp_path / "runs" / "traced-10-1.json", run([300, 101, 103, 99, 101], 1))
    s = profile_13b.summarize(str(tmp_path))
    med = s.doc["median_per_iter_ms"]
    assert med["gemm"] == pytest.approx(95.0)    # (3.1e6 - 1.2e6) / 20 us
    assert med["idle"] == pytest.approx(3.0)     # (260e3 - 200e3) / 20 us
    assert med["span"] == pytest.approx(140.0)   # (4.4e6 - 1.6e6) / 20 us
    assert "| gemm | 95.00 | 95.00 | 100.0 | 67.9 |" in s.markdown
    assert "| idle | 3.00 | 3.00 |  | 2.1 |" in s.markdown
    # medians 100 (untraced) and 101 (traced) of the 4 timed iterations each: +1.00 %
    assert s.doc["tracer_overhead"]["overhead_pct"] == pytest.approx(1.0)
    assert "difference +1.00 % of the median" in s.markdown


def test_profile_uses_the_analysed_iteration_counts_when_the_trace_marks_them(tmp_path):
    """ovb-trace keeps the iterations after its warm-up rule: 7 of 10 and 27 of 30 here, so the
    difference still spans 20 iterations, and the long run's own window is a cross-check."""
    def analysis(gemm_us, span_us, analysed):
        kb = {c: {"total_us": 0.0} for c in profile_13b.CATEGORIES}
        kb["gemm"]["total_us"] = gemm_us
        return {"summary": {"kernel_breakdown": kb, "idle_us": 0.0, "span_us": span_us,
                            "steady_state": {"iterations_marked": analysed + 3,
                                             "warmup_excluded": 3,
                                             "iterations_analyzed": analysed}}}
    write(tmp_path / "analysis" / "10-1.json", analysis(7 * 95_000, 7 * 140_000, 7))
    write(tmp_path / "analysis" / "30-1.json", analysis(27 * 95_000, 27 * 140_000, 27))
    s = profile_13b.summarize(str(tmp_path))
    assert s.doc["repeats"][0]["iterations_between"] == 20
    assert s.doc["median_per_iter_ms"]["gemm"] == pytest.approx(95.0)
    assert s.doc["repeats"][0]["long_run_window_ms"]["gemm"] == pytest.approx(95.0)
    assert "Cross-check, ovb-trace's own steady-state window" in s.markdown


def test_overlap_matters_pools_repeats_and_compares_with_none(tmp_path):
    def gpt4d(times, comm, exposed, data_exposed):
        return run(times, 1, median_time_ms=sorted(times[1:])[len(times[1:]) // 2],
                   comm_time_ms=comm, exposed_comm_ms=exposed,
                   collectives=[{"group": "data", "kind": "all_reduce", "exposed_ms": data_exposed},
                                {"group": "world", "kind": "all_reduce", "exposed_ms": 0.5}])
    runs = tmp_path / "runs"
    write(runs / "g1x1x1x4-none-r1.json", gpt4d([900, 298, 300, 302], 160, 150, 149.5))
    write(runs / "g1x1x1x4-none-r2.json", gpt4d([900, 299, 300, 301], 160, 150, 149.5))
    write(runs / "g1x1x1x4-all-r1.json", gpt4d([900, 224, 225, 226], 162, 74, 73.5))
    write(runs / "g1x1x1x4-all-r2.json", gpt4d([900, 225, 225, 225], 162, 74, 73.5))
    write(runs / "g1x1x1x4-oar-r1.json", gpt4d([900, 296, 301, 310], 160, 150, 149.5))
    write(tmp_path / "model" / "g1x1x1x4-all.json",
          {"config": {"predicted_ms": 257.7, "exposed_comm_ms": 69.9}})
    s = overlap_matters.summarize(str(tmp_path))
    grid = s.doc["grids"]["1x1x1x4"]
    assert (grid["none"]["n"], grid["none"]["median_ms"]) == (6, 300.0)
    assert grid["all"]["median_ms"] == 225.0
    assert grid["all"]["exposed_by_dim_ms"] == {"x": 0.0, "y": 0.0, "z": 0.0, "data": 73.5}
    # t_c = 300 - 150 = 150, t_m = 160, t_o = 225: (310 - 225) / 150
    assert grid["all"]["efficiency"] == pytest.approx(85 / 150)
    assert grid["all"]["outside_none_range"] is True
    assert grid["oar"]["outside_none_range"] is False
    assert "| all | 2 | 6 | 225.0 | 224.5-225.5 | 162.0 | 74.0 | 0.0 / 0.0 / 0.0 / 73.5 | 0.57 " \
           "| yes | 257.7 (69.9) |" in s.markdown
    # compute alone 300 - 150 = 150 ms against 160 ms of communication
    assert s.doc["balance"]["1x1x1x4"]["ratio"] == pytest.approx(150 / 160)
    assert "ratio 0.94: within the 2x window" in s.markdown
    assert s.doc["run_sockets"] == {"default": 5}  # no NCCL socket variable in any context
    assert "default in all 5 runs" in s.markdown
    assert s.ok


def test_overlap_matters_reads_the_runs_socket_setting_from_their_context(tmp_path):
    def gpt4d(env):
        doc = run([900, 300, 300], 1, median_time_ms=300.0, comm_time_ms=160.0,
                  exposed_comm_ms=150.0, collectives=[])
        doc["context"] = {"environment": {"NCCL_SOCKET_IFNAME": "lo", **env}}
        return doc
    four = {"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "4"}
    write(tmp_path / "runs" / "g1x1x4x1-none-r1.json", gpt4d(four))
    write(tmp_path / "runs" / "g1x1x4x1-all-r1.json", gpt4d(four))
    s = overlap_matters.summarize(str(tmp_path))
    assert s.ok and s.doc["run_sockets"] == {"4x4": 2}
    assert "4x4 in all 2 runs" in s.markdown
    write(tmp_path / "runs" / "g1x1x4x1-all-r2.json", gpt4d({"NCCL_SOCKET_NTHREADS": "2"}))
    s = overlap_matters.summarize(str(tmp_path))
    assert not s.ok
    assert s.problems == ["runs under different NCCL socket settings: 2xdefault in 1, 4x4 in 2"]


def test_baselines_tables_and_failed_collective_check(tmp_path):
    sample = nccl_tests.parse_text(
        "1048576 524288 bfloat16 sum -1 700.0 1.50 1.50 0 690.0 1.52 1.52 0\n"
        "# Collective test concluded: all_reduce_perf\n")
    bench = [{"name": f"all_reduce/bf16/world/{p}/1048576/m", "bytes": 1048576.0, "busbw": v,
              "ranks": 2.0} for p, v in (("oop", 1.53), ("ip", 1.40))]
    write(tmp_path / "collectives" / "compare-2r.json", nccl_tests.compare([sample], bench))
    flop = 1e12  # 1 TFLOP per iteration: TFLOP/s = 1000 / median ms
    write(tmp_path / "training" / "gpt4d_1.3B.json",
          run([500, 100, 100, 104, 96], 1, model_flop_per_iter=flop))
    write(tmp_path / "training" / "torch_1.3B_eager.json",
          run([900, 125, 125, 125, 125], 1, model_flop_per_iter=flop))
    s = baselines.summarize(str(tmp_path))
    assert not s.ok and s.problems == ["2r: 1 of 2 sizes outside 3 % of nccl-tests' busbw"]
    assert "| 2r | all_reduce | oop | 1048576 | 1.50 | 1.53 | 1.020 | within 3 % |" in s.markdown
    assert "| 2r | all_reduce | ip | 1048576 | 1.52 | 1.40 | 0.921 | **outside** 3 % |" \
        in s.markdown
    assert "| 1.3B | gpt4d | 4 | 100.0 | 97.2-102.8 | 10.0 |  |" in s.markdown
    assert "| 1.3B | PyTorch eager | 4 | 125.0 | 125.0-125.0 | 8.0 | 1.25x |" in s.markdown
    assert "No Megatron-LM comparison yet" in s.markdown


def llama_run(times, warmup, flop, peak=None, **model):
    """A gpt4d/pytorch_gpt result of the llama-gpu preset: config as both write it."""
    m = {"layers": 8, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
         "seq": 2048, "vocab": 128256, "rope_theta": 500000.0, **model}
    doc = run(times, warmup, model_flop_per_iter=flop, peak_tflops=peak,
              peak_memory_bytes=3 * 2**30)
    doc["config"] = {"model": m, "batch": 2, "iters": len(times), "kernels": "cuda test"}
    return doc


def write_llama_folder(tmp_path, torch_model=None, kernel_failures=0, cuda_loss=4.0,
                       same_model_gpt_ok=True):
    case = {"status": "RUN", "result": "COMPLETED", "name": "RmsNorm/0"}
    cases = [case, {**case, "name": "Gqa/0"}, {**case, "result": "SKIPPED", "name": "Cudnn/0"}]
    for c in cases[:kernel_failures]:
        c["failures"] = [{"failure": "expected"}]
    write(tmp_path / "kernel_tests.json", {"testsuites": [{"testsuite": cases}]})
    for name, loss in (("host", 4.0), ("cuda_fp32", cuda_loss), ("cuda_bf16", 4.01)):
        write(tmp_path / f"compare_{name}.json",
              {"iterations": [{"loss": loss - 0.1 * i} for i in range(30)]})
    write(tmp_path / "same_model.json",
          {"tolerance": 1e-5, "runs": {
              "llama": {"gpt4d": [5.5] * 8, "pytorch": [5.5] * 8, "worst_relative": 3e-7,
                        "passed": True},
              "gpt": {"gpt4d": [5.6] * 8, "pytorch": [5.6] * 8, "worst_relative": 2e-5,
                      "passed": same_model_gpt_ok}}})
    # 25 iterations: 5 warm-up (1000 ms) then 20 timed, 100..119 ms; median 109.5 ms.
    times = [1000.0] * 5 + [100.0 + i for i in range(20)]
    flop = 1.095e14  # 1000 TFLOP/s at the median
    write(tmp_path / "training" / "gpt4d_llama3-8B-L8.json", llama_run(times, 5, flop, peak=989.0))
    write(tmp_path / "training" / "torch_llama3-8B-L8_eager.json",
          llama_run([2 * t for t in times], 5, flop, peak=989.0, **(torch_model or {})))


def test_llama_gpu_rows_mfu_and_checks(tmp_path):
    from ovb_analysis.summaries import llama_gpu
    write_llama_folder(tmp_path)
    s = llama_gpu.summarize(str(tmp_path))
    assert s.ok, s.problems
    assert s.doc["kernel_tests"] == {"run": 2, "failed": 0, "skipped": 1}
    assert s.doc["loss_deviation_cuda_fp32"] == 0.0
    g, t = s.doc["training"]
    assert (g["system"], g["n"], g["median_ms"]) == ("gpt4d", 20, pytest.approx(109.5))
    assert g["tflops"] == pytest.approx(1000.0)
    assert g["mfu"] == pytest.approx(1000.0 / 989.0)
    assert (t["system"], t["median_ms"], t["tflops"]) == ("PyTorch eager", pytest.approx(219.0),
                                                          pytest.approx(500.0))
    assert "| llama3-8B-L8 | PyTorch eager | 20 | 219.0 |" in s.markdown
    assert "| 50.6 % | 3.0 | 2.00x |" in s.markdown
    assert "| llama | 8 | 3.00e-07 | ok (<= 1e-05) |" in s.markdown


def test_llama_gpu_refuses_a_reference_of_another_shape_and_failed_checks(tmp_path):
    from ovb_analysis.summaries import llama_gpu
    write_llama_folder(tmp_path, torch_model={"kv_heads": 32}, kernel_failures=1,
                       cuda_loss=4.01, same_model_gpt_ok=False)
    s = llama_gpu.summarize(str(tmp_path))
    assert not s.ok
    text = "\n".join(s.problems)
    assert "PyTorch eager llama3-8B-L8: not the run of gpt4d (kv_heads 32 vs 8)" in text
    assert "1 of 2 kernel tests failed" in text
    assert "CUDA fp32 left the host's loss curve" in text
    assert "gpt: gpt4d's loss left the PyTorch reference's (2.00e-05 relative)" in text
    # Every case skipped: no kernel was checked, which is no pass either.
    skipped = {"status": "RUN", "result": "SKIPPED", "name": "x"}
    write(tmp_path / "kernel_tests.json", {"testsuites": [{"testsuite": [skipped]}]})
    assert "no kernel test ran" in "\n".join(llama_gpu.summarize(str(tmp_path)).problems)
    # A reference with 10 timed iterations: too few samples, and not gpt4d's iteration count.
    write(tmp_path / "training" / "torch_llama3-8B-L8_compile.json",
          llama_run([100.0] * 15, 5, 1.095e14, peak=989.0))
    text = "\n".join(llama_gpu.summarize(str(tmp_path)).problems)
    assert "torch.compile llama3-8B-L8: 10 timed iterations, fewer than 20" in text
    assert "torch.compile llama3-8B-L8: not the run of gpt4d (iters 15 vs 25)" in text
