"""Preset `gpt4d-gpu`: gpt4d on one GPU (about 5 minutes on an H100); a CUDA build with the
endtoend part:
  kernels            every CUDA kernel against the host kernel (fp32 and bf16);
  compare_*          the same tiny GPT on the committed text on host (fp32), CUDA fp32 and CUDA
                     bf16 (1 rank, 30 iterations): CUDA fp32 must follow the host's loss curve;
  gpt_1.3B_1gpu      24 layers, hidden 2048, 16 heads, seq 2048, vocab 50304, batch 4, bf16, no
                     recomputation, 23 iterations (20 timed after 3 of warm-up);
  overlap_*          4 ranks sharing the GPU under CUDA MPS (loopback NCCL) on a small GPT, grid
                     1x2x2x1, for every overlap-flag subset;
  parallel_tests     the multi-rank tests on the CUDA backend (4 ranks under MPS): loss
                     equivalence with 1 rank, gradients, collective log and memory against the plan;
  summary            ovb-analysis summarize gpt4d-gpu (fails when CUDA fp32 leaves the host's loss
                     curve or every overlap flag together does not lower exposed communication).
"""

from .. import util  # noqa: F401 (puts the analysis part on the path)

from ovb_analysis.overlap_flags import subsets  # noqa: E402

NAME = "gpt4d-gpu"
DESCRIPTION = "gpt4d kernels, loss against the host, the 1.3B shape, overlap flags on 4 ranks"
BACKENDS = ("cuda",)
BUDGET_S = None
MPS = True
PARAMS = {}
FLAG_SETS = subsets()  # "none", "oar", ..., "oar,ors,oag"


def plan(b):
    gpt4d, g = b.exe("gpt4d"), "gpt4d"
    text = b.script("endtoend/data/declaration.txt")[0]
    b.add("kernels", [b.exe("ovb-gpt4d-cuda-kernel-tests"),
                      "--gtest_output=json:{tmp}/kernel_tests.json"],
          group=g, outputs=["kernel_tests.json"], timeout=180)
    tiny = ["--preset", "tiny", "--seq", "64", "--batch", "8", "--iters", "30", "--warmup", "2",
            "--lr", "3e-3", "--warmup-iters", "5", "--data", f"text:{text}", "--quiet"]
    for name, backend in (("compare_host", ["--backend", "host"]),
                          ("compare_cuda_fp32", ["--backend", "cuda", "--dtype", "fp32"]),
                          ("compare_cuda_bf16", ["--backend", "cuda", "--dtype", "bf16"])):
        b.add(name, [gpt4d, *backend, *tiny, "--out", f"{{tmp}}/{name}.json"], group=g,
              outputs=[f"{name}.json"], timeout=120)
    b.add("gpt_1.3B_1gpu", [gpt4d, "--backend", "cuda", "--preset", "1.3B", "--seq", "2048",
                            "--vocab", "50304", "--batch", "4", "--iters", "23",
                            "--data", "synthetic", "--out", "{tmp}/gpt4d_1.3B_1gpu.json"],
          group=g, outputs=["gpt4d_1.3B_1gpu.json"], timeout=300)
    small = ["--backend", "cuda", "--ranks-per-gpu", "4", "--gx", "1", "--gy", "2", "--gz", "2",
             "--gdata", "1", "--layers", "4", "--hidden", "1024", "--heads", "16", "--seq", "512",
             "--vocab", "8192", "--batch", "8", "--iters", "8", "--warmup", "3", "--data",
             "synthetic", "--quiet"]
    for flags in FLAG_SETS:
        tag = flags.replace(",", "_")
        b.add(f"overlap_{tag}", [gpt4d, *small, "--overlap", flags,
                                 "--out", f"{{tmp}}/overlap_{tag}.json"],
              group=g, ranks=4, outputs=[f"overlap_{tag}.json"], timeout=120)
    b.add("parallel_tests", [b.exe("ovb-gpt4d-parallel-tests"), "--backend=cuda",
                             "--ranks-per-gpu=4"], group=g, ranks=4, timeout=240)
    b.summary("gpt4d-gpu")
