"""Preset `gpu-check`: what a user with a GPU runs first, in one call of slurm/gpu-check.sh (which
builds TARGETS for the GPU at hand and passes what is left of its time limit as --budget). In
order, each result written into the folder as soon as its step ends:
  gpu_info           nvidia-smi: the GPU, driver, memory, clocks, compute capability
  ctest-NAME         every GPU-labelled ctest of the build (`ctest -N -L gpu`), one step each, in
                     ctest's order (fixtures: a test's set-up is the step before it); multi-rank
                     tests share the GPU (their own --ranks-per-gpu) under CUDA MPS; JUnit XML
                     per test under ctest/
  kernels, compare_* the Llama CUDA kernels against the host kernels; llama-tiny on host, CUDA
                     fp32 (within 1e-3 of the host's loss) and bf16 (the llama-gpu preset's steps)
  options-*          gpt4d's memory options on CUDA with 4 ranks sharing the GPU against the serial
                     CUDA run (fp32, tiny GPT on text): --micro-batch, --shard-optimizer,
                     --shard-gradients, --cache-weights (with --ors-window 1)
  memory-*           the 1.3B shape under each memory option: the driver's view of device memory
                     (device_memory_peak_bytes) against the plan's estimate (gpt_memory)
  headline-1.3B      gpt4d 1.3B, batch 4, bf16, 25 iterations of which 20 timed, with NVML
                     telemetry (the README's headline measured again)
  headline-1.3B-seq4096  the same tokens as sequences of 4096 (batch 2): the attention at the
                     Megatron-Core H100 rows' sequence length, for `ovb-model compare`
  gemm-inputs-*      ovb-gemm bf16 on the 12 GEMMs of a 177B layer at tp 8 (the Megatron-Core H100
                     rows' shape: forward, dX, dW) and 8192^3, on exact inputs (-1, 0, 1: the ones the model's
                     H100 GEMM table was measured with) and then on random ones (sign, exponent and
                     seven significant bits varying, as training data's), 2 s each, with telemetry: what the inputs'
                     switching power costs the rate under the power cap
  nccl-tests-build, nccl-*/ovb-*, nccl-compare-*   nccl-tests beside ovb-collective, 2 and 4
                     ranks, 1 MiB to 256 MiB, back to back (the baselines preset's steps; needs
                     the nccl-tests tarball, --param nccl_tests)
  summary            ovb-analysis summarize gpu-check: pass, fail, skipped per step and per
                     ctest, and the tables of each part
Each step's watchdog limit is its time budget (`ovb-suite list --preset gpu-check` prints it); a
step that would start with less than 20 s of the call's budget left is left for the next call.
"""

import json
import re
import subprocess

from . import baselines, llama_gpu
from .common import UNFIT_MEMORY

NAME = "gpu-check"
DESCRIPTION = "first run on a GPU: GPU ctests, Llama kernels, memory options, memory vs plan, " \
              "1.3B headline, nccl-tests"
BACKENDS = ("cuda",)
BUDGET_S = 540.0  # slurm/gpu-check.sh passes what its limit leaves after the build
MPS = True
SIZES = "-b 1M -e 256M -f 2"
PARAMS = {
    **{k: baselines.PARAMS[k] for k in ("nccl_tests", "nccl_tests_make", "ranks", "tolerance")},
    "sizes": (SIZES, "size words given to both nccl-tests and ovb-collective"),
    "kernel_filter": llama_gpu.PARAMS["kernel_filter"],
}

# What slurm/gpu-check.sh builds: the executables of every GPU-labelled ctest (the ctest
# tree.gpu_check_dry_run checks this against the build's label list) and of the steps below.
TARGETS = ("ovb-gpu-probe", "gpt4d", "ovb-gpt4d-cuda-kernel-tests", "ovb-gpt4d-parallel-tests",
           "ovb-core-collective-tests", "ovb-core-watchdog-hang", "ovb-gemm", "ovb-collective",
           "ovb-overlap", "ovb-membw", "ovb-microbench-cuda-tests", "ovb-trace", "ovb-trace-check",
           "ovb-trace-demo", "ovb-inject", "ovb-inject-sample")

# Seconds each ctest may take (its watchdog); the rest get CTEST_DEFAULT_S.
CTEST_LIMIT_S = {"gpt4d.parallel.cuda.4ranks.equivalence": 240,
                 "gpt4d.parallel.cuda.4ranks.collective_log": 240,
                 "core.collectives.cuda.2x2x2": 150, "gpt4d.cuda.kernels": 120}
CTEST_DEFAULT_S = 90

# The tiny GPT of the CUDA-versus-host comparisons (gpt4d-gpu), fp32: the serial CUDA run and
# every option run on 4 ranks sharing the GPU train the same model on the same batches.
OPTION_RUNS = (
    ("micro-batch", ["--gdata", "4", "--micro-batch", "1"]),
    ("shard-optimizer", ["--gz", "2", "--gdata", "2", "--shard-optimizer", "--overlap", "all"]),
    ("shard-gradients", ["--gdata", "4", "--shard-optimizer", "--shard-gradients",
                         "--micro-batch", "1"]),
    ("cache-weights", ["--gz", "4", "--cache-weights", "--overlap", "all", "--ors-window", "1"]),
)
OPTION_RANKS = 4

# The 1.3B shape under each memory option: (tag, ranks sharing the GPU, options). With ranks
# sharing one GPU the driver's view is the whole device's, so the summary compares it with ranks x
# the plan's per-rank estimate.
MEMORY_RUNS = (
    ("default", 1, []),
    ("recompute", 1, ["--recompute"]),
    ("micro-batch", 1, ["--micro-batch", "1"]),
    ("z4", 4, ["--gz", "4"]),
    ("z4-cache-weights", 4, ["--gz", "4", "--cache-weights"]),
    ("z4-ors-window1", 4, ["--gz", "4", "--overlap", "ors", "--ors-window", "1"]),
    ("data4-shard-optimizer", 4, ["--gdata", "4", "--shard-optimizer"]),
    ("data4-shard-gradients", 4, ["--gdata", "4", "--shard-optimizer", "--shard-gradients"]),
)
SHAPE_13B = ["--preset", "1.3B", "--seq", "2048", "--vocab", "50304", "--batch", "4",
             "--data", "synthetic", "--attention", "auto"]
# The same tokens per step in sequences of 4096, the Megatron-Core H100 rows' length: the
# attention doubles per token; the model's error on it against the headline's tells whether the
# attention efficiency measured at 2048 holds there (`ovb-model compare`, no GPU needed).
SHAPE_13B_SEQ4096 = [{"2048": "4096", "4": "2"}.get(w, w) if i in (3, 7) else w
                     for i, w in enumerate(SHAPE_13B)]


def gpu_tests(build):
    """(names of the build's GPU-labelled ctests in ctest's order, "") or (None, why not)."""
    if not build:
        return None, "no build folder"
    try:
        r = subprocess.run(["ctest", "--test-dir", build, "-N", "-L", "gpu",
                            "--show-only=json-v1"], capture_output=True, text=True, timeout=120)
        doc = json.loads(r.stdout) if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        return None, f"ctest -N -L gpu failed: {e}"
    if doc is None:
        return None, f"ctest -N -L gpu failed in {build}: {(r.stderr or r.stdout).strip()[:200]}"
    return [t["name"] for t in doc.get("tests", [])], ""


def _ctests(b, g):
    names, why = gpu_tests(b.t.build)
    # -V: the test's output reaches the step's log as it is written, so a test the watchdog stops
    # shows how far it got (--output-on-failure prints it only when the test ends).
    base = ["ctest", "--test-dir", b.t.build or "BUILD", "-V", "--no-tests=error"]
    if names is None:
        # Not configured here (a plan listed without a CUDA build): the whole label in one step.
        b.add("ctest-gpu", [*base, "-L", "gpu", "--output-junit", "{tmp}/ctest/gpu.xml"],
              group=g, outputs=["ctest/gpu.xml"], timeout=600,
              description=f"every GPU-labelled ctest ({why}: one step)")
        return
    for name in names:
        rx = "^" + re.sub(r"([.+*?()\[\]^$])", r"\\\1", name) + "$"
        # -FA: the fixture's set-up is its own earlier step, not run again here.
        # The step's watchdog is the test's limit (ctest's --timeout would not override the
        # tests' own TIMEOUT property).
        b.add(f"ctest-{name}", [*base, "-R", rx, "-FA", ".*",
                                "--output-junit", f"{{tmp}}/ctest/{name}.xml"],
              group=g, outputs=[f"ctest/{name}.xml"],
              timeout=CTEST_LIMIT_S.get(name, CTEST_DEFAULT_S),
              description=f"ctest {name} (label gpu)")


def _options(b, g):
    gpt4d = b.exe("gpt4d")
    text = b.script("endtoend/data/declaration.txt")[0]
    tiny = ["--backend", "cuda", "--dtype", "fp32", "--preset", "tiny", "--seq", "64", "--batch",
            "8", "--iters", "30", "--warmup", "2", "--lr", "3e-3", "--warmup-iters", "5",
            "--data", f"text:{text}", "--quiet"]
    b.add("options-serial", [gpt4d, *tiny, "--out", "{tmp}/options/serial.json"], group=g,
          outputs=["options/serial.json"], timeout=60,
          description="the serial CUDA run the option runs are compared with")
    for tag, opts in OPTION_RUNS:
        b.add(f"options-{tag}", [gpt4d, *tiny, "--ranks-per-gpu", str(OPTION_RANKS), *opts,
                                 "--out", f"{{tmp}}/options/{tag}.json"],
              group=g, ranks=OPTION_RANKS, outputs=[f"options/{tag}.json"], timeout=90,
              description=f"{' '.join(opts)} on {OPTION_RANKS} ranks sharing the GPU")


def _memory(b, g):
    gpt4d = b.exe("gpt4d")
    for tag, ranks, opts in MEMORY_RUNS:
        shared = ["--ranks-per-gpu", str(ranks)] if ranks > 1 else []
        b.add(f"memory-{tag}", [gpt4d, "--backend", "cuda", *SHAPE_13B, *shared, *opts,
                                "--iters", "2", "--warmup", "1", "--quiet",
                                "--out", f"{{tmp}}/memory/{tag}.json"],
              group=g, ranks=ranks if ranks > 1 else 0, outputs=[f"memory/{tag}.json"],
              timeout=90 if ranks > 1 else 60, unfit=UNFIT_MEMORY,
              description=f"1.3B {' '.join(opts) or 'default'}: device peak against the plan")


# The twelve GEMMs of one 177B layer (GPT-3 175B's hidden 12288 and 96 heads, tp 8 as the grid's
# Y, one sequence of 4096 tokens: forward, dX and dW of QKV, attention-out, MLP-up and MLP-down,
# each in its own layout, as `ovb-model explain 1x8x1x1` prices them), and the square 8192^3.
GEMM_INPUT_LAYER = ["--preset", "175B", "--seq", "4096", "--batch", "1", "--gy", "8"]
GEMM_INPUT_SHAPES = "8192x8192x8192"


def _gemm_inputs(b, g):
    for inputs in ("exact", "random"):
        b.add(f"gemm-inputs-{inputs}",
              [b.exe("ovb-gemm"), "--backend", "cuda", *GEMM_INPUT_LAYER,
               "--shapes", GEMM_INPUT_SHAPES,
               "--dtypes", "bf16", "--inputs", inputs, "--min-time", "2",
               "--benchmark_out={tmp}/gemm-inputs/" + inputs + ".json"],
              group=g, outputs=[f"gemm-inputs/{inputs}.json"], timeout=90,
              description=f"GEMM rates on {inputs} inputs (the model's table against training data)")


def plan(b):
    b.add("gpu_info", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                       "clocks.max.sm,compute_cap", "--format=csv"], group="info", timeout=30)
    _ctests(b, "ctest")
    llama_gpu.kernel_check(b, "llama")
    llama_gpu.tiny_compare(b, "llama")
    _options(b, "options")
    _memory(b, "memory")
    b.add("headline-1.3B", [b.exe("gpt4d"), "--backend", "cuda", *SHAPE_13B, "--iters", "25",
                            "--warmup", "5", "--out", "{tmp}/headline/gpt4d_1.3B.json"],
          group="headline", outputs=["headline/gpt4d_1.3B.json"], timeout=90,
          unfit=UNFIT_MEMORY, description="the README's 1.3B figure, 20 timed, telemetry")
    b.add("headline-1.3B-seq4096", [b.exe("gpt4d"), "--backend", "cuda", *SHAPE_13B_SEQ4096,
                                    "--iters", "25", "--warmup", "5",
                                    "--out", "{tmp}/headline/gpt4d_1.3B_seq4096.json"],
          group="headline", outputs=["headline/gpt4d_1.3B_seq4096.json"], timeout=90,
          unfit=UNFIT_MEMORY,
          description="the 1.3B shape at sequence 4096, batch 2: attention at the H100 rows' length")
    _gemm_inputs(b, "gemm-inputs")
    baselines.collectives(b, "collectives")
    b.summary("gpu-check")
