"""Preset `baselines`: the suite beside the tools it is compared with, back to back on one
machine (a CUDA build with the microbench and endtoend parts; nvcc and MPI headers for
nccl-tests; PyTorch in the report Python, OVB_PYTHON, for the reference and Megatron-LM):
  nccl-tests-build     unpacks and builds nccl-tests from its tarball (--param nccl_tests) into
                       tools/nccl-tests (a build, not a result: not for committing)
  RANKS x COLL         for 2 and 4 ranks sharing the GPU (CUDA MPS, loopback sockets) and each of
                       all_reduce, reduce_scatter, all_gather: nccl-COLL-Nr (nccl-tests) then
                       ovb-COLL-Nr (ovb-collective), same sizes and bf16, one right after the other
  nccl-compare-Nr      ovb-analysis nccl-compare: busbw size by size, in and out of place,
                       judged within --param tolerance (3 %) from 1 MiB up
  SHAPE x SYSTEM       for 125M, 350M, 1.3B, 2.7B at batch 4: gpt4d, then the PyTorch reference
                       (endtoend/reference/pytorch_gpt.py) eager and torch.compile, each 30
                       iterations of which 25 timed; a reference that does not fit is "unfit"
  megatron-*           unpacks Megatron-LM (--param megatron), runs the launch `ovb-analysis
                       megatron-cmd --gpt4d` matches to gpt4d's 1.3B run (--local: without
                       Transformer Engine Megatron-LM runs its local implementation) and compares
                       it with gpt4d (compare-megatron)
  max-autotune-SHAPE   the reference under torch.compile(mode="max-autotune"): last, as its
                       compilation takes minutes; a call whose budget is spent leaves the rest for
                       the next call with the same --out
  summary              ovb-analysis summarize baselines
"""

import os

from ..plan import report_python
from .common import BASELINES, UNFIT_MEMORY, UNFIT_TORCH

NAME = "baselines"
DESCRIPTION = "ovb-collective vs nccl-tests, gpt4d vs PyTorch (eager, compile, max-autotune) " \
              "and Megatron-LM, back to back"
BACKENDS = ("cuda",)
BUDGET_S = 540.0
MPS = True
COLLS = ("all_reduce", "reduce_scatter", "all_gather")
PARAMS = {
    "nccl_tests": (os.path.join(BASELINES, "nccl-tests-2.19.6.tar.gz"),
                   "nccl-tests source tarball (relative to the repository root or absolute)"),
    "nccl_tests_make": ("MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/usr "
                        "CUDA_HOME=/usr/local/cuda NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90",
                        "make variables of the nccl-tests build"),
    "megatron": (os.path.join(BASELINES, "Megatron-LM-d98e8a64dd.tar.gz"),
                 "Megatron-LM source tarball (relative to the repository root or absolute)"),
    "ranks": ("2,4", "rank counts sharing the GPU for the collectives"),
    "sizes": ("-b 64K -e 256M -f 4", "size words given to both nccl-tests and ovb-collective"),
    "tolerance": ("3", "largest |ovb/nccl - 1| busbw difference in percent judged as agreement"),
    "shapes": ("125M,350M,1.3B,2.7B", "GPT shapes of gpt4d vs PyTorch"),
    "batch": ("4", "batch of gpt4d vs PyTorch"),
    "iters": ("30", "iterations of each gpt4d and PyTorch run"),
    "warmup": ("5", "of which warm-up (not timed)"),
    "megatron_iters": ("30", "Megatron-LM training iterations"),
}


def _path(b, name):
    p = b.param(name)
    return p if os.path.isabs(p) else os.path.join(b.t.repo, p)


def collectives(b, g):
    """nccl-tests beside ovb-collective, back to back (also steps of gpu-check)."""
    tools = "{out}/tools/nccl-tests"
    b.add("nccl-tests-build", [b.script("slurm/lib/build-nccl-tests.sh"), _path(b, "nccl_tests"),
                               "{tmp}/tools/nccl-tests", *b.words("nccl_tests_make")],
          group=g, outputs=["tools/nccl-tests"], timeout=600,
          description="nccl-tests from its tarball (a build for comparison, not a result)")
    wrapper, sizes = b.script("slurm/lib/nccl-tests-rank.sh"), b.words("sizes")
    for n in b.items("ranks"):
        for coll in COLLS:
            log = f"collectives/nccl-{coll}-{n}r.txt"
            b.add(f"nccl-{coll}-{n}r", [wrapper, "{tmp}/" + log, f"{tools}/build/{coll}_perf",
                                        *sizes, "-d", "bfloat16", "-w", "5", "-n", "20", "-g", "1"],
                  group=g, ranks=int(n), outputs=[log], timeout=300, needs=["nccl-tests-build"],
                  description=f"nccl-tests {coll}, {n} ranks sharing the GPU")
            out = f"collectives/ovb-{coll}-{n}r.json"
            b.add(f"ovb-{coll}-{n}r", [b.exe("ovb-collective"), "--backend", "cuda",
                                       "--ranks-per-gpu", n, "--colls", coll, "--dtypes", "bf16",
                                       *sizes, "--benchmark_out={tmp}/" + out],
                  group=g, ranks=int(n), outputs=[out], timeout=300,
                  description=f"ovb-collective {coll}, {n} ranks, right after nccl-tests")
        py, script = report_python(b.t.repo), b.script("analysis/ovb-analysis")
        logs = [f"{{out}}/collectives/nccl-{c}-{n}r.txt" for c in COLLS]
        jsons = [f"{{out}}/collectives/ovb-{c}-{n}r.json" for c in COLLS]
        out = f"collectives/compare-{n}r.json"
        b.add(f"nccl-compare-{n}r", [py, script, "nccl-compare", "--nccl-tests", *logs, "--ovb",
                                     *jsons, "--tolerance", b.param("tolerance"),
                                     "--json", "{tmp}/" + out],
              group=g, outputs=[out], timeout=120,
              needs=[f"{k}-{c}-{n}r" for c in COLLS for k in ("nccl", "ovb")],
              description=f"busbw of ovb-collective against nccl-tests, {n} ranks")


def _training(b, g):
    gpt4d, batch = b.exe("gpt4d"), b.param("batch")
    torch = [report_python(b.t.repo), b.script("endtoend/reference/pytorch_gpt.py")]
    its = ["--iters", b.param("iters"), "--warmup", b.param("warmup")]
    for shape in b.items("shapes"):
        b.add(f"gpt4d-{shape}", [gpt4d, "--backend", "cuda", "--preset", shape, "--seq", "2048",
                                 "--vocab", "50304", "--batch", batch, "--data", "synthetic",
                                 "--attention", "auto", *its,
                                 "--out", f"{{tmp}}/training/gpt4d_{shape}.json"],
              group=g, outputs=[f"training/gpt4d_{shape}.json"], timeout=300, unfit=UNFIT_MEMORY)
        for mode, extra in (("eager", []), ("compile", ["--compile"])):
            b.add(f"torch-{mode}-{shape}", [*torch, "--preset", shape, "--batch", batch, *its,
                                            *extra, "--out",
                                            f"{{tmp}}/training/torch_{shape}_{mode}.json"],
                  group=g, outputs=[f"training/torch_{shape}_{mode}.json"], timeout=400,
                  unfit=UNFIT_TORCH)


def _megatron(b, g):
    py, script = report_python(b.t.repo), b.script("analysis/ovb-analysis")
    src = "{out}/tools/megatron"
    b.add("megatron-unpack", ["tar", "xzf", _path(b, "megatron"), "--one-top-level={tmp}/"
                              "tools/megatron", "--strip-components=1"],
          group=g, outputs=["tools/megatron"], timeout=120,
          description="Megatron-LM from its tarball (a copy for comparison, not a result)")
    b.add("megatron-1.3B", [py, script, "megatron-cmd", "--gpt4d",
                            "{out}/training/gpt4d_1.3B.json", "--local", "--micro-batch",
                            b.param("batch"), "--iters",
                            b.param("megatron_iters"), "--run", "--run-dir",
                            "{tmp}/megatron/1.3B", "--megatron-path", src],
          group=g, outputs=["megatron/1.3B"], timeout=600,
          needs=["gpt4d-1.3B", "megatron-unpack"],
          description="Megatron-LM (local implementation) matched to gpt4d's 1.3B run")
    b.add("megatron-compare", [py, script, "compare-megatron", "--gpt4d",
                               "{out}/training/gpt4d_1.3B.json", "--megatron",
                               "{out}/megatron/1.3B", "--json", "{tmp}/megatron/compare.json"],
          group=g, outputs=["megatron/compare.json"], timeout=120, needs=["megatron-1.3B"])


def plan(b):
    b.add("gpu_info", ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                       "--format=csv"], group="collectives", timeout=60)
    collectives(b, "collectives")
    _training(b, "training")
    if "1.3B" in b.items("shapes"):
        _megatron(b, "megatron")
    torch = [report_python(b.t.repo), b.script("endtoend/reference/pytorch_gpt.py")]
    for shape in b.items("shapes"):
        b.add(f"max-autotune-{shape}", [*torch, "--preset", shape, "--batch", b.param("batch"),
                                        "--iters", b.param("iters"), "--warmup",
                                        b.param("warmup"), "--compile-mode", "max-autotune",
                                        "--out",
                                        f"{{tmp}}/training/torch_{shape}_max-autotune.json"],
              group="training", outputs=[f"training/torch_{shape}_max-autotune.json"],
              timeout=600, unfit=UNFIT_TORCH)
    b.summary("baselines")
