"""Preset `overlap-matters`: the overlap flags where communication and compute are comparable.
4 ranks share one GPU (CUDA MPS, NCCL over loopback sockets: emulated bandwidth), on grids whose
communication is the data-parallel gradient all-reduce and the Z weight all-gathers and
reduce-scatters, with a model and batch chosen with ovb-model (the loopback machine file
calibrated on the H100, results/h100/model/model/machine.json) so that communication alone and
compute alone are predicted within 2x of each other (docs/gpu-campaigns.md gives the numbers).
A CUDA build with the microbench, endtoend and analysis parts:
  sockets-SETTING     ovb-collective all-reduce of 64 MiB on the 4 ranks under each NCCL socket
                      threading setting (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, "default":
                      unset), recorded beside the runs (--param socket picks the runs' setting)
  predict-GRID-FLAGS  ovb-model explain of every grid and overlap setting (model/)
  rREP-GRID-COND      gpt4d on each grid under each condition - no overlap, each flag alone, all
                      three, and all three under the other two stream-priority settings -
                      repeated --param repeats times, the repeats outermost so that a drift of the
                      machine spreads over every condition instead of biasing one
  plot                ovb-analysis plot breakdown of runs/ (exposed communication per dimension)
  summary             ovb-analysis summarize overlap-matters: per grid and condition, the median
                      over repeats of iteration, communication and exposed communication per
                      dimension, overlap efficiency, and the model's prediction beside them
A call stops starting runs when its budget is spent; the next call with the same --out goes on.
"""

from ..plan import report_python
from ..util import SuiteError
from .multirank import _grid

from ovb_analysis.overlap_flags import ALL, FLAGS, NONE  # noqa: E402 (the path is set by .util)

NAME = "overlap-matters"
DESCRIPTION = "overlap flags and stream priorities where communication and compute are comparable"
BACKENDS = ("cuda",)
BUDGET_S = 540.0
MPS = True
RANKS = 4
PARAMS = {
    "model": ("--layers 4 --hidden 1024 --heads 16 --seq 512 --vocab 8192 --batch 256",
              "gpt4d/ovb-model model and global batch of every run"),
    "configs": ("1x1x1x4,1x1x4x1,1x1x2x2", "GxxGyxGzxGdata grids (4 ranks)"),
    "iters": ("--iters 15 --warmup 3", "gpt4d iterations of each run"),
    "repeats": ("3", "runs of every grid and condition"),
    "socket": ("4x4", "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD of the runs, or default"),
    "socket_probe": ("default,2x2,4x4,8x8", "socket settings measured by the sockets-* steps"),
    "machine": ("results/h100/model/model/machine.json", "ovb-model machine file (relative to "
                "the repository root, or a preset name) for the predictions"),
    "run_limit_s": ("150", "watchdog limit of one run, seconds"),
}
# (name, --overlap, (comm priority, compute priority) or None for gpt4d's default high/normal)
CONDITIONS = ((NONE, NONE, None), *((f, f, None) for f in FLAGS), ("all", ALL, None),
              ("all-prio-equal", ALL, ("normal", "normal")),
              ("all-compute-high", ALL, ("normal", "high")))
PREDICTED = ((NONE, NONE), *((f, f) for f in FLAGS), ("all", "all"))


def socket_env(setting):
    """The environment of a socket setting "TxS" ("default": none)."""
    if setting == "default":
        return {}
    parts = setting.split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SuiteError(f"socket setting '{setting}': expected default or THREADSxSOCKETS, "
                         "e.g. 4x4")
    threads, socks = map(int, parts)
    if threads > 16 or threads * socks > 64:
        raise SuiteError(f"socket setting '{setting}': NCCL allows at most 16 threads and 64 "
                         "sockets in all (threads x sockets per thread)")
    return {"NCCL_SOCKET_NTHREADS": str(threads), "NCCL_NSOCKS_PERTHREAD": str(socks)}


def plan(b):
    g, gpt4d, model = "overlap", b.exe("gpt4d"), b.words("model")
    b.add("gpu_info", ["nvidia-smi", "-L"], group=g, timeout=60)
    for s in b.items("socket_probe"):
        out = f"sockets/{s}.json"
        b.add(f"sockets-{s}", [b.exe("ovb-collective"), "--backend", "cuda", "--ranks-per-gpu",
                               str(RANKS), "--colls", "all_reduce", "--dtypes", "bf16", "-b",
                               "64M", "-e", "64M", "--benchmark_out={tmp}/" + out],
              group=g, ranks=RANKS, outputs=[out], env=socket_env(s), timeout=120,
              description=f"64 MiB all-reduce, 4 ranks, NCCL socket setting {s}")
    machine = b.param("machine")
    if machine.endswith(".json"):
        machine = b.script(machine)[0]
    configs = b.items("configs")
    for grid in configs:
        _grid(grid)
        for name, flags in PREDICTED:
            out = f"model/g{grid}-{name}.json"
            b.add(f"predict-{grid}-{name}", [b.exe("ovb-model"), "explain", grid, "--machine",
                                             machine, *model, "--overlap", flags,
                                             "--ranks-per-device", str(RANKS),
                                             "--json", "{tmp}/" + out],
                  group="model", outputs=[out], timeout=60)
    env = socket_env(b.param("socket"))
    for rep in range(1, int(b.number("repeats")) + 1):
        for grid in configs:
            gx, gy, gz, gd = _grid(grid)
            for name, flags, prio in CONDITIONS:
                out = f"runs/g{grid}-{name}-r{rep}.json"
                extra = ["--comm-priority", prio[0], "--compute-priority", prio[1]] if prio else []
                b.add(f"r{rep}-{grid}-{name}",
                      [gpt4d, "--backend", "cuda", "--ranks-per-gpu", str(RANKS), "--gx", gx,
                       "--gy", gy, "--gz", gz, "--gdata", gd, *model, *b.words("iters"),
                       "--data", "synthetic", "--quiet", "--overlap", flags, *extra,
                       "--out", "{tmp}/" + out],
                      group=g, ranks=RANKS, outputs=[out], env=env,
                      timeout=b.number("run_limit_s"),
                      description=f"grid {grid}, {name}, repeat {rep}")
    b.add("plot", [report_python(b.t.repo), b.script("analysis/ovb-analysis"), "plot",
                   "breakdown", "{out}/runs", "-o", "{tmp}/plots"],
          group="report", outputs=["plots"], timeout=300, after=b.names(g))
    b.summary("overlap-matters")
