"""Preset `microbench-gpu`: the microbenchmarks on one GPU (about 3-4 minutes on an H100):
  1 rank:  ovb-gemm (bf16 8192^3 autotuned: the "within 5% of the best algorithm" target, with
           torch.matmul on the same shapes right after it as an outside reference; all
           precisions; GPT-13B layer GEMMs on a 2x2x2 grid; a cold-L2 variant), ovb-collective,
           ovb-overlap (sweep incl. CUDA_DEVICE_MAX_CONNECTIONS 1 and default, one process per
           value: microbench/overlap-cdmc-sweep.sh);
  2 and 4 ranks sharing the GPU under CUDA MPS (NCCL over loopback sockets: emulated bandwidth):
           ovb-collective and ovb-overlap;
then ovb-analysis summarize microbench-gpu (summary.md). Writes NAME.json (Google Benchmark JSON
with the run context) per step.
"""

from ..plan import report_python

NAME = "microbench-gpu"
DESCRIPTION = "GEMM, collectives and overlap on one GPU (1, 2 and 4 ranks under MPS)"
BACKENDS = ("cuda",)
BUDGET_S = None
MPS = True
PARAMS = {}
CDMC = ("1", "default")


def _overlap(b, name, ranks, args, timeout):
    """ovb-overlap once per CUDA_DEVICE_MAX_CONNECTIONS value (the sweep script starts them)."""
    sweep = b.script("microbench/overlap-cdmc-sweep.sh")
    launch = []
    if ranks > 1:
        # The sweep script starts one launch per value, so it gets the launcher words itself.
        launch = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    b.add(name, [sweep, "{tmp}/" + name, *launch, b.exe("ovb-overlap"), "--backend", "cuda",
                 *args, "--cdmc", ",".join(CDMC)],
          group="microbench", outputs=[f"{name}.cdmc-{v}.json" for v in CDMC], timeout=timeout,
          env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})


def plan(b):
    gemm, coll = b.exe("ovb-gemm"), b.exe("ovb-collective")
    g = "microbench"
    b.add("gpu_info", ["nvidia-smi", "-L"], group=g, timeout=60)
    b.add("gemm-target", [gemm, "--backend", "cuda", "--shapes", "8192x8192x8192,8192x8192x8192:nt",
                          "--dtypes", "bf16", "--autotune", "16", "--repetitions", "3",
                          "--min-time", "0.3", "--benchmark_out={tmp}/gemm-target.json"],
          group=g, outputs=["gemm-target.json"], timeout=120)
    # Skips by itself (exit 0, {"skipped": why}) where this Python has no torch.
    b.add("gemm-torch", [report_python(b.t.repo), b.script("microbench/torch_matmul.py"),
                         "--shapes", "8192x8192x8192", "--dtype", "bf16", "--min-time", "0.3",
                         "--out", "{tmp}/gemm-torch.json"],
          group=g, outputs=["gemm-torch.json"], timeout=120)
    b.add("gemm-types", [gemm, "--backend", "cuda", "--shapes",
                         "4096x4096x4096:nt,8192x8192x8192:nt",
                         "--dtypes", "fp32,tf32,fp16,bf16,fp8", "--autotune", "4", "--min-time",
                         "0.1", "--benchmark_out={tmp}/gemm-types.json"],
          group=g, outputs=["gemm-types.json"], timeout=150)
    b.add("gemm-gpt13b", [gemm, "--backend", "cuda", "--preset", "13B", "--gx", "2", "--gy", "2",
                          "--gz", "2", "--batch", "16", "--dtypes", "bf16,fp8", "--min-time",
                          "0.05", "--benchmark_out={tmp}/gemm-gpt13b.json"],
          group=g, outputs=["gemm-gpt13b.json"], timeout=120)
    b.add("gemm-coldl2", [gemm, "--backend", "cuda", "--shapes", "8192x8192x8192,2048x2048x2048",
                          "--dtypes", "bf16", "--l2-flush", "--min-time", "0.1",
                          "--benchmark_out={tmp}/gemm-coldl2.json"],
          group=g, outputs=["gemm-coldl2.json"], timeout=60)
    b.add("collective-1", [coll, "--backend", "cuda", "-b", "64K", "-e", "64M", "-f", "8",
                           "--dtypes", "bf16", "--inner", "5", "--min-time", "0.05",
                           "--benchmark_out={tmp}/collective-1.json"],
          group=g, outputs=["collective-1.json"], timeout=90)
    _overlap(b, "overlap-1", 1, ["--shapes", "8192x8192x8192:nt,4096x4096x4096:nt", "--sizes",
                                 "64M", "--colls", "all_reduce", "--priorities",
                                 "equal,comm_high,compute_high", "--orders",
                                 "comm_first,gemm_first", "--max-ctas", "default,8",
                                 "--min-time", "0.05"], 150)
    for n in (2, 4):
        grid = ["--gx", "2", "--gy", "2"] if n == 4 else []
        b.add(f"collective-{n}", [coll, "--backend", "cuda", "--ranks-per-gpu", str(n), "-b", "4K",
                                  "-e", "16M", "-f", "4", "--dtypes", "bf16", "--groups",
                                  "world,x" if n == 4 else "world", *grid, "--min-time", "0.05",
                                  f"--benchmark_out={{tmp}}/collective-{n}.json"],
              group=g, ranks=n, outputs=[f"collective-{n}.json"], timeout=150)
        _overlap(b, f"overlap-{n}", n, ["--ranks-per-gpu", str(n), "--shapes", "4096x4096x4096:nt",
                                        "--sizes", "4M,16M", "--colls", "all_reduce,reduce_scatter",
                                        "--priorities", "equal,comm_high", "--orders",
                                        "comm_first", "--min-time", "0.05"], 150)
    b.summary("microbench-gpu")
