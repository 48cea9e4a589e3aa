"""Preset `llama-gpu`: every GPU check of gpt4d's Llama in one call (a CUDA build with the
endtoend part and its tests; PyTorch in the report Python, OVB_PYTHON, for the reference):
  kernels            the Llama CUDA kernels against their host kernels, fp32 and bf16: RMSNorm,
                     SwiGLU, RoPE, grouped-query attention (simt and cuDNN) and cuDNN attention
                     (--param kernel_filter, a GoogleTest filter of gpt4d.cuda.kernels)
  compare_*          llama-tiny on the committed text on host (fp32), CUDA fp32 and CUDA bf16
                     (1 rank, 30 iterations): CUDA fp32 must follow the host's loss curve
  same_model         gpt4d's host backend against the PyTorch reference on the CPU, tiny Llama
                     (GQA, RoPE) and GPT from the same weights: the loss of every iteration within
                     fp32 tolerance (endtoend/reference/check_same_model.py; PyTorch is on the GPU
                     machine, not on the CPU-only one)
  parallel_tests     the Llama multi-rank tests on the CUDA backend (4 ranks sharing the GPU under
                     CUDA MPS): every grid and overlap flag set gives the 1-rank loss
  gpt4d-SHAPE        llama3-8B's block (hidden 4096, 32 heads, 8 K/V heads, SwiGLU 14336, vocab
                     128256, RoPE base 500000) with --param layers blocks, seq 2048, batch 2,
                     bf16, one GPU; 30 iterations of which 25 timed
  torch-eager-SHAPE  the PyTorch reference (endtoend/reference/pytorch_gpt.py) on the same shape,
  torch-compile-SHAPE  batch, iterations and warm-up, eager and torch.compile (compiling takes a
                     minute or two: last); a reference that does not fit is "unfit"
  summary            ovb-analysis summarize llama-gpu: kernel tests, the loss curves, gpt4d beside
                     the reference (n, median, p10-p90, TFLOP/s, MFU, peak memory)

Why 8 layers at batch 2 (docs/gpu-campaigns.md): `ovb-model explain 1x1x1x1 --machine dgx-h100
--preset llama3-8B --layers 8 --seq 2048 --batch 2` puts gpt4d at 56.5 of 77.3 GB (10 layers:
65.5, 12 layers: 74.5; batch 4 at 8 layers: 62.6). The reference is the tighter one: it keeps fp32
weights, gradients and AdamW moments (16 B per parameter x 2.80e9 = 44.7 GB), bf16 copies of the
linear weights (4.5 GB), logits of 128256 words in bf16 and fp32 with their gradient (about 6 GB)
and every block's activations unrecomputed (0.25 MB per token and block, measured on the CPU under
bf16 autocast: 8.1 GB): about 63 GB at batch 2 of the H100's 85.5 GB (79.6 GiB), about 73 GB with
10 layers and 77 GB at batch 4, too close with the allocator's fragmentation. Each layer has
llama3-8B's exact shape; with 8 of 32 blocks the LM head's share of the model FLOPs is 23 %
instead of 7 %.
"""

from ..plan import report_python
from ..util import SuiteError
from .common import UNFIT_MEMORY, UNFIT_TORCH

NAME = "llama-gpu"
DESCRIPTION = "gpt4d's Llama on one GPU: kernels vs host, loss vs host, llama3-8B's block " \
              "beside PyTorch (TFLOP/s, MFU)"
BACKENDS = ("cuda",)
BUDGET_S = 540.0
MPS = True  # the parallel tests' 4 ranks share the GPU
MIN_TIMED = 20  # the suite's timing statistics: at least 20 timed samples
PARAMS = {
    "layers": ("8", "blocks of the llama3-8B-shaped run (the published model has 32)"),
    "seq": ("2048", "sequence length of the llama3-8B-shaped run"),
    "batch": ("2", "batch of gpt4d and the PyTorch reference"),
    "iters": ("30", "iterations of each gpt4d and PyTorch run"),
    "warmup": ("5", "of which warm-up (not timed)"),
    "kernel_filter": ("*RmsNorm*:*SwiGlu*:*Rotary*:*GroupedQuery*:*Cudnn*",
                      "GoogleTest filter of the CUDA kernel tests (the Llama kernels)"),
}


def shape_name(b):
    return f"llama3-8B-L{int(b.number('layers'))}"


def kernel_check(b, g):
    """The Llama CUDA kernels against the host kernels (also a step of gpu-check)."""
    b.add("kernels", [b.exe("ovb-gpt4d-cuda-kernel-tests"),
                      f"--gtest_filter={b.param('kernel_filter')}",
                      "--gtest_output=json:{tmp}/kernel_tests.json"],
          group=g, outputs=["kernel_tests.json"], timeout=180,
          description="the Llama CUDA kernels against the host kernels")


def tiny_compare(b, g):
    """llama-tiny on host, CUDA fp32 and CUDA bf16 (also steps of gpu-check)."""
    gpt4d = b.exe("gpt4d")
    text = b.script("endtoend/data/declaration.txt")[0]
    tiny = ["--preset", "llama-tiny", "--seq", "64", "--batch", "8", "--iters", "30", "--warmup",
            "2", "--lr", "3e-3", "--warmup-iters", "5", "--data", f"text:{text}", "--quiet"]
    for name, backend in (("compare_host", ["--backend", "host"]),
                          ("compare_cuda_fp32", ["--backend", "cuda", "--dtype", "fp32"]),
                          ("compare_cuda_bf16", ["--backend", "cuda", "--dtype", "bf16"])):
        b.add(name, [gpt4d, *backend, *tiny, "--out", f"{{tmp}}/{name}.json"], group=g,
              outputs=[f"{name}.json"], timeout=120)


def _checks(b, g):
    gpt4d = b.exe("gpt4d")
    kernel_check(b, g)
    tiny_compare(b, g)
    check = b.script("endtoend/reference/check_same_model.py")
    b.add("same_model", [report_python(b.t.repo), check, "--gpt4d", gpt4d,
                         "--json", "{tmp}/same_model.json"],
          group=g, outputs=["same_model.json"], timeout=300,
          description="gpt4d (host backend) against the PyTorch reference on the CPU, same weights")
    b.add("parallel_tests", [b.exe("ovb-gpt4d-parallel-tests"), "--backend=cuda",
                             "--ranks-per-gpu=4", "--gtest_filter=*Llama*"],
          group=g, ranks=4, timeout=240,
          description="Llama loss equivalence of every grid on the CUDA backend, 4 ranks")


def _training(b, g):
    iters, warm = int(b.number("iters")), int(b.number("warmup"))
    if iters - warm < MIN_TIMED:
        raise SuiteError(f"--param iters={iters}, warmup={warm}: expected at least {MIN_TIMED} "
                         "timed iterations (iters - warmup)")
    shape = shape_name(b)
    model = ["--preset", "llama3-8B", "--layers", str(int(b.number("layers"))), "--seq",
             str(int(b.number("seq"))), "--batch", str(int(b.number("batch")))]
    its = ["--iters", str(iters), "--warmup", str(warm)]
    b.add(f"gpt4d-{shape}", [b.exe("gpt4d"), "--backend", "cuda", *model, "--data", "synthetic",
                             "--attention", "auto", *its,
                             "--out", f"{{tmp}}/training/gpt4d_{shape}.json"],
          group=g, outputs=[f"training/gpt4d_{shape}.json"], timeout=300, unfit=UNFIT_MEMORY)
    torch = [report_python(b.t.repo), b.script("endtoend/reference/pytorch_gpt.py")]
    for mode, extra in (("eager", []), ("compile", ["--compile"])):
        b.add(f"torch-{mode}-{shape}", [*torch, *model, *its, *extra,
                                        "--out", f"{{tmp}}/training/torch_{shape}_{mode}.json"],
              group=g, outputs=[f"training/torch_{shape}_{mode}.json"], timeout=420,
              unfit=UNFIT_TORCH)


def plan(b):
    b.add("gpu_info", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                       "--format=csv"], group="checks", timeout=60)
    _checks(b, "checks")
    _training(b, "training")
    b.summary("llama-gpu")
