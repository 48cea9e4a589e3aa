"""The summary of a gpu-check folder (slurm/gpu-check.sh), on a folder written here with
hand-computed expectations: ctest's JUnit files read as passed, failed or skipped (a test whose
step failed has none), the option runs judged against the serial run's losses, the memory ratio
against ranks sharing the GPU x the plan, the headline's timing and telemetry. No GPU.

Run: pytest analysis/tests/test_summary_gpu_check.py
"""

import json

from ovb_analysis.summaries import gpu_check

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="1" failures="0" disabled="0" skipped="{skipped}">
  <testcase name="{name}" classname="{name}" time="0.1" status="{status}">{inner}</testcase>
</testsuite>
"""


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))


def junit(path, name, result):
    inner = {"passed": "", "skipped": '<skipped message="SKIP_RETURN_CODE=77"/>',
             "failed": '<failure message=""/>'}[result]
    status = {"passed": "run", "skipped": "notrun", "failed": "fail"}[result]
    write(path, JUNIT.format(name=name, status=status, inner=inner,
                             skipped=int(result == "skipped")))


def gpt4d(losses=(), times=(), grid=(1, 1, 1, 1), ranks_per_gpu=1, world=1, estimate=None,
          peak=None, telemetry=None, warmup=0, flop=None, mfu=None):
    gx, gy, gz, gd = grid
    losses, times = losses or [1.0] * len(times), times or [1.0] * len(losses)
    return {"context": {"ranks_per_gpu": ranks_per_gpu, "world_size": world,
                        "gpu_telemetry": telemetry or {"available": False}},
            "config": {"grid": {"gx": gx, "gy": gy, "gz": gz, "gdata": gd}},
            "iterations": [{"iter": i, "loss": l, "time_ms": t}
                           for i, (l, t) in enumerate(zip(losses, times))],
            "summary": {"warmup_iters": warmup, "memory_estimate_bytes": estimate,
                        "device_memory_peak_bytes": peak, "model_flop_per_iter": flop,
                        "mfu": mfu}}


def folder(tmp_path, shard_loss=4.001, ctests=(("a.run", "passed"), ("a.check", "skipped"))):
    steps = [{"step": "gpu_info", "status": "finished", "group": "info"}]
    for name, result in ctests:
        steps.append({"step": f"ctest-{name}", "group": "ctest",
                      "status": "failed" if result == "failed" else "finished"})
        if result != "failed":  # a failed step's outputs are not moved into the folder
            junit(tmp_path / "ctest" / f"{name}.xml", name, result)
    steps.append({"step": "ctest-b.never", "group": "ctest", "status": "pending"})
    write(tmp_path / ".suite" / "status.json", {"steps": steps})
    write(tmp_path / "options" / "serial.json", gpt4d(losses=[5.0, 4.0]))
    write(tmp_path / "options" / "micro-batch.json",
          gpt4d(losses=[5.0, 4.0 * (1 + 2e-7)], grid=(1, 1, 1, 4), ranks_per_gpu=4, world=4))
    write(tmp_path / "options" / "shard-optimizer.json",
          gpt4d(losses=[5.0, shard_loss], grid=(1, 1, 2, 2), ranks_per_gpu=4, world=4))
    gib = 2 ** 30
    write(tmp_path / "memory" / "default.json", gpt4d(losses=[1.0], estimate=36 * gib,
                                                       peak=38 * gib))
    write(tmp_path / "memory" / "z4.json", gpt4d(losses=[1.0], grid=(1, 1, 4, 1), ranks_per_gpu=4,
                                                  world=4, estimate=11 * gib, peak=50 * gib))
    tel = {"available": True, "samples": 40, "sm_clock_mhz": {"min": 1700, "median": 1980,
                                                              "max": 1980},
           "power_w": {"median": 650.4}, "temperature_c": {"max": 71}, "throttled": True,
           "throttled_samples": 3}
    times = [500.0] * 5 + [140.0 + i for i in range(20)]  # timed: 140..159
    write(tmp_path / "headline" / "gpt4d_1.3B.json",
          gpt4d(times=times, warmup=5, telemetry=tel, flop=7.0e13, mfu=0.5))
    write(tmp_path / "headline" / "gpt4d_1.3B_seq4096.json",
          gpt4d(times=[500.0] * 5 + [150.0 + i for i in range(20)], warmup=5, flop=7.2e13))
    # Two passes of one layer share a shape in other layouts: named rows stay apart. Times: the
    # layer's two named GEMMs 100 + 300 us exact, 110 + 320 us random.
    up, down = "gemm/bf16/{}/4096x6144x12288/{}/min_time:2.000/manual_time", "mlp_{}"
    for inputs, rates, clock, times in (("exact", (800.0, 700.0, 810.0, 790.0), 1980, (100, 300)),
                                        ("random", (720.0, 665.0, 760.0, 700.0), 1755, (110, 320))):
        write(tmp_path / "gemm-inputs" / f"{inputs}.json",
              {"context": {"gpu_telemetry": dict(tel, sm_clock_mhz={"median": clock})},
               "benchmarks": [{"run_type": "iteration", "m": 4096, "n": 4608, "k": 12288,
                               "tflops": rates[0]},
                              {"run_type": "iteration", "m": 8192, "n": 8192, "k": 8192,
                               "tflops": rates[1]},
                              {"run_type": "iteration", "m": 4096, "n": 6144, "k": 12288,
                               "name": up.format(down.format("up") + ".fwd", "nt"),
                               "tflops": rates[2], "time_us": times[0]},
                              {"run_type": "iteration", "m": 4096, "n": 6144, "k": 12288,
                               "name": up.format(down.format("down") + ".dx", "nn"),
                               "tflops": rates[3], "time_us": times[1]},
                              {"run_type": "iteration", "error_occurred": True}]})
    return tmp_path


def test_every_part_and_its_verdict(tmp_path):
    s = gpu_check.summarize(str(folder(tmp_path)))
    md = s.markdown
    # ctest: JUnit decides passed/skipped; a failed step counts failed; a pending one not run.
    assert s.doc["ctest"] == {"a.run": "passed", "a.check": "skipped", "b.never": "pending"}
    assert "3 tests: 1 passed, 0 failed, 1 skipped, 1 not run" in md
    assert "1 GPU ctests skipped (ovb-gpu-probe: no usable GPU)" in s.problems
    # options: |4.001 - 4| / 4 = 2.5e-4 < 1e-3; 2e-7 for the micro-batches.
    opt = s.doc["options"]["shard-optimizer"]
    assert opt["passed"] and abs(opt["worst_relative"] - 2.5e-4) < 1e-12
    assert "| micro-batch | 1x1x1x4 | 2 | 2.00e-07 | ok |" in md
    # memory: 38/36 = 1.056 (met); 50 / (4 x 11) = 1.136 (not met)
    assert "| default | 1x1x1x1 | 1 | 36.00 | 38.00 | 1.056 | met |" in md
    assert "| z4 | 1x1x4x1 | 4 | 11.00 | 50.00 | 1.136 | not met |" in md
    assert s.doc["memory"]["z4"]["goal_met"] is False
    # headline: timed 140..159, median 149.5, 7e13 FLOP / 0.1495 s = 468.2 TFLOP/s
    h = s.doc["headline"]
    assert h["n"] == 20 and abs(h["median_ms"] - 149.5) < 1e-9
    assert "| seq 2048, batch 4 | 20 | 149.5 |" in md
    assert "| 468.2 | 50.0 % | 1700-1980-1980 | 650 | 71 | 3 of 40 |" in md
    # At sequence 4096: timed 150..169, median 159.5, 7.2e13 / 0.1595 s = 451.4 TFLOP/s, no
    # telemetry.
    assert abs(s.doc["headline_seq4096"]["median_ms"] - 159.5) < 1e-9
    assert "| seq 4096, batch 2 | 20 | 159.5 | 151.9-167.1 | 451.4 |" in md
    assert "| - | - | - | no telemetry |" in md
    # GEMM inputs: 720 / 800 = 0.900, 665 / 700 = 0.950; reported, not judged
    assert "| 4096x4608x12288 | 800.0 | 720.0 | 0.900 |" in md
    assert "| 8192x8192x8192 | 700.0 | 665.0 | 0.950 |" in md
    assert "exact 1980 MHz, 650 W, 3 of 40 throttled; random 1755 MHz" in md
    assert abs(s.doc["gemm_inputs"]["shapes"]["8192x8192x8192"]["random_over_exact"] - 0.95) < 1e-12
    assert "| mlp_up.fwd/4096x6144x12288/nt | 810.0 | 760.0 | 0.938 |" in md
    assert "| mlp_down.dx/4096x6144x12288/nn | 790.0 | 700.0 | 0.886 |" in md
    # (110 + 320) / (100 + 300) = 1.075, the unnamed rows left out of the layer
    la = s.doc["gemm_inputs"]["layer"]
    assert la["gemms"] == 2 and abs(la["random_over_exact_time"] - 1.075) < 1e-12
    assert "The layer's 2 GEMMs together: 400.0 us on exact inputs, 430.0 us on random ones " \
           "(time x 1.075)." in md
    assert not s.ok  # the skipped ctest


def test_failures_are_problems(tmp_path):
    s = gpu_check.summarize(str(folder(tmp_path, shard_loss=4.01,
                                       ctests=(("a.run", "failed"),))))
    assert s.doc["ctest"]["a.run"] == "failed"
    assert "1 GPU ctests failed" in s.problems
    # |4.01 - 4| / 4 = 2.5e-3 > 1e-3
    assert any(p.startswith("options shard-optimizer: left the serial CUDA loss (2.50e-03")
               for p in s.problems)
    assert "| shard-optimizer | 1x1x2x2 | 2 | 2.50e-03 | FAILED |" in s.markdown


def test_empty_folder_names_what_is_missing(tmp_path):
    s = gpu_check.summarize(str(tmp_path))
    for missing in ("No GPU ctests yet.", "No option runs", "No memory runs yet",
                    "No 1.3B headline run yet", "No GEMM inputs comparison yet",
                    "No nccl-tests comparison yet"):
        assert missing in s.markdown
    # nothing ran, so no check failed; the step table (ovb-analysis summarize) shows what is left
    assert s.problems == [] and s.ok
