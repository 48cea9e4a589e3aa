"""Preset `h100-single`: gpt4d on one GPU against the PyTorch reference - where its time goes, the
tracer's overhead, memory, the GEMM table - within a 530 s budget (9 minutes with start-up). Needs a
CUDA build with the profiling, microbench and endtoend parts (cuDNN attention built in:
-DOVB_ENABLE_CUDNN=ON) and, for the PyTorch steps, torch in the Python that runs the driver's
report (OVB_PYTHON). Steps, highest priority first (a step that would start after the budget is
spent is left for the next call):
  kernels        every CUDA kernel against the host kernel, cuDNN attention included
  gpt4d_1.3B     24 layers x 2048, 16 heads, seq 2048, vocab 50304, batch 4, bf16, 23 iterations
                 (20 timed after 3 of warm-up): the headline number
  torch_eager    endtoend/reference/pytorch_gpt.py, the same GPT in plain PyTorch (SDPA flash
                 attention, bf16 autocast, fused AdamW), side by side
  untraced, traced, trace_analyze   the 1.3B run for 8 iterations without and with --trace: the
                 kernel breakdown (ovb-trace analyze) and the tracer overhead
  gemm_*         ovb-gemm bf16: the GPT-1.3B/2.7B/6.7B layer GEMMs (batch 4, --autotune 8) and
                 8192^3 (--autotune 16), on random inputs (--inputs random: the bits training
                 data switches, so the clock under the power cap is training's; the table
                 committed under results/h100/single-gpu/ was measured on exact -1/0/1)
  gpt4d_125M, gpt4d_350M, gpt4d_2.7B   the other shapes at batch 4; a shape that does not fit
                 ("unfit", gpt4d's memory check) is retried at batch 2 (gpt4d_SHAPE_b2)
  batch_N        1.3B at batch 8, 12, 14, 16, each only while the smaller ones fit
  torch_compile  the PyTorch reference under torch.compile
  summary        ovb-analysis summarize h100-single: summary.md and summary.json
"""

from ..plan import report_python
from .common import UNFIT_MEMORY

NAME = "h100-single"
DESCRIPTION = "gpt4d on one GPU vs PyTorch, time breakdown, tracer overhead, memory, GEMMs"
BACKENDS = ("cuda",)
BUDGET_S = 530.0
MPS = False
PARAMS = {}


def plan(b):
    gpt4d, gemm, trace = b.exe("gpt4d"), b.exe("ovb-gemm"), b.exe("ovb-trace")
    torch = [report_python(b.t.repo), b.script("endtoend/reference/pytorch_gpt.py")]
    gpt = ["--backend", "cuda", "--seq", "2048", "--vocab", "50304", "--data", "synthetic",
           "--attention", "auto"]
    g = "single"
    b.add("gpu_info", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                       "--format=csv"], group=g, timeout=60, description="the GPU, for the summary")
    b.add("kernels", [b.exe("ovb-gpt4d-cuda-kernel-tests"),
                      "--gtest_output=json:{tmp}/kernel_tests.json"],
          group=g, outputs=["kernel_tests.json"], timeout=120)
    # Headline runs: 23 iterations, 20 timed after the warm-up rule (docs/metrics.md).
    b.add("gpt4d_1.3B", [gpt4d, *gpt, "--preset", "1.3B", "--batch", "4", "--iters", "23",
                         "--out", "{tmp}/gpt4d_1.3B.json"],
          group=g, outputs=["gpt4d_1.3B.json"], timeout=120)
    b.add("torch_eager", [*torch, "--preset", "1.3B", "--batch", "4", "--iters", "23",
                          "--out", "{tmp}/torch_1.3B_eager.json"],
          group=g, outputs=["torch_1.3B_eager.json"], timeout=120)
    b.add("untraced", [gpt4d, *gpt, "--preset", "1.3B", "--batch", "4", "--iters", "8",
                       "--warmup", "3", "--out", "{tmp}/gpt4d_1.3B_untraced.json"],
          group=g, outputs=["gpt4d_1.3B_untraced.json"], timeout=90)
    b.add("traced", [gpt4d, *gpt, "--preset", "1.3B", "--batch", "4", "--iters", "8",
                     "--warmup", "3", "--trace", "{tmp}/trace",
                     "--out", "{tmp}/gpt4d_1.3B_traced.json"],
          group=g, outputs=["gpt4d_1.3B_traced.json", "trace"], timeout=120)
    b.add("trace_analyze", [trace, "analyze", "{out}/trace", "--json",
                            "{tmp}/trace/analysis.json", "--top", "30"],
          group=g, outputs=["trace/analysis.json"], needs=["traced"], timeout=60)
    for shape in ("1.3B", "2.7B", "6.7B"):
        b.add(f"gemm_{shape}", [gemm, "--backend", "cuda", "--preset", shape, "--batch", "4",
                                "--seq", "2048", "--dtypes", "bf16", "--autotune", "8",
                                "--inputs", "random", "--min-time", "0.05",
                                f"--benchmark_out={{tmp}}/gemm_{shape}.json"],
              group=g, outputs=[f"gemm_{shape}.json"], timeout=60)
    b.add("gemm_8192", [gemm, "--backend", "cuda", "--shapes", "8192x8192x8192,8192x8192x8192:nt",
                        "--dtypes", "bf16", "--autotune", "16", "--repetitions", "3", "--inputs", "random",
                        "--min-time", "0.2", "--benchmark_out={tmp}/gemm_8192.json"],
          group=g, outputs=["gemm_8192.json"], timeout=60)
    for shape in ("125M", "350M", "2.7B"):
        first = b.add(f"gpt4d_{shape}", [gpt4d, *gpt, "--preset", shape, "--batch", "4",
                                          "--iters", "13", "--warmup", "3",
                                          "--out", f"{{tmp}}/gpt4d_{shape}.json"],
                      group=g, outputs=[f"gpt4d_{shape}.json"], timeout=90, unfit=UNFIT_MEMORY)
        b.add(f"gpt4d_{shape}_b2", [gpt4d, *gpt, "--preset", shape, "--batch", "2",
                                    "--iters", "13", "--warmup", "3",
                                    "--out", f"{{tmp}}/gpt4d_{shape}_b2.json"],
              group=g, outputs=[f"gpt4d_{shape}_b2.json"], timeout=90, unfit=UNFIT_MEMORY,
              if_unfit=first, description=f"{shape} at batch 2, when batch 4 does not fit")
    # The largest batch of the 1.3B model that fits: ascending until gpt4d's memory check refuses.
    smaller = []
    for batch in (8, 12, 14, 16):
        smaller.append(b.add(f"batch_{batch}", [gpt4d, *gpt, "--preset", "1.3B", "--batch",
                                                str(batch), "--iters", "5", "--warmup", "2",
                                                "--out", f"{{tmp}}/gpt4d_1.3B_batch{batch}.json"],
                             group=g, outputs=[f"gpt4d_1.3B_batch{batch}.json"], timeout=60,
                             unfit=UNFIT_MEMORY, unless_unfit=list(smaller)))
    b.add("torch_compile", [*torch, "--preset", "1.3B", "--batch", "4", "--iters", "23",
                            "--compile", "--out", "{tmp}/torch_1.3B_compile.json"],
          group=g, outputs=["torch_1.3B_compile.json"], timeout=240)
    b.summary("h100-single")
