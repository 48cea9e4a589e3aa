"""Preset `overlap-matters`: the overlap flags where communication and compute are comparable, in
one GPU call of at most 10 minutes, build included (slurm/gpu-overlap.sh builds and runs it).
4 ranks share one GPU (CUDA MPS, NCCL over loopback sockets: emulated bandwidth), on grids whose
communication is the data-parallel gradient all-reduce (1x1x1x4: only ORS can hide it) and the Z
weight all-gathers and reduce-scatters (1x1x4x1: OAG and ORS), with a model and batch chosen with
ovb-model (the loopback machine file calibrated on the H100, results/h100/model/model/machine.json)
so that communication alone and compute alone are predicted within 2x of each other
(docs/gpu-campaigns.md gives the numbers). The mixed grid 1x1x2x2 (`--param configs=...`) is left
out by default: its collectives are the two pure grids' on groups of 2, so it answers less.
A CUDA build with gpt4d, ovb-collective and ovb-model (and ovb-gpu-probe for the driver):
  gpu_info            nvidia-smi -L
  rREP-GRID-COND      gpt4d on each grid under each condition - no overlap, each flag alone
                      (OAR has nothing to hide on these grids: a control that must equal none),
                      all three, and all three under the other two stream-priority settings.
                      Repeats outermost; inside a repeat the conditions in turn, each on the
                      grids one after the other (A B A B ...); every second repeat takes the
                      conditions in reverse order, so that over a pair of repeats every condition
                      of a grid has the same mean position in the call and a linear drift of the
                      machine adds the same to each instead of faking an effect
  sockets-SETTING     ovb-collective 64 MiB all-reduce on the 4 ranks with NCCL's default socket
                      threading and with the runs' setting (--param socket: NCCL_SOCKET_NTHREADS x
                      NCCL_NSOCKS_PERTHREAD, set in every run's environment and so recorded in its
                      result's context.environment)
  predict-GRID-FLAGS  ovb-model explain of every grid and overlap setting (model/; no GPU needed)
  plot                ovb-analysis plot breakdown of runs/ (exposed communication per dimension)
  summary             ovb-analysis summarize overlap-matters (at every call, with what finished)
The runs come first: what a call leaves (steps past the budget) is the least needed.

The budget of one call (the estimate each step carries, printed by `ovb-suite list`):
  build     BUILD_S = 180 s: configure + gpt4d, ovb-collective, ovb-model, ovb-gpu-probe for sm_90
            on 16 cores. Measured once on a 2-core CPU machine (no compiler cache): 796 CPU-s in
            145 build steps, configure 6 s, longest chain cudnn_attention.cpp (61 CPU-s) + links
            (2 s): on 16 cores at most 796/16 + 15/16 x 63 + 6 = 115 s, 142 s on cores slower by
            the GPU machine's clock (2.1 against 2.6 GHz)
  runs      2 grids x 7 conditions x 2 repeats = 28 gpt4d runs, each RUN_SETUP_S + 11 x ITER_S
            = 5 + 11 x 0.46 = 10.06 s: 281.7 s. RUN_SETUP_S: start-up, NCCL set-up, exit and the
            launch of the next run - consecutive committed 4-rank runs end 2.5-4.2 s later than
            their iterations account for (12 runs, dates to 1 s: slurm/lib/run-overhead.py on
            results/h100/overlap-4ranks and model/gpt4d) - and iteration 0's one-time work
            (0.26-0.61 s above the median); ITER_S: the slowest predicted no-overlap iteration
            of the three grids (1x1x2x2, 385 ms; 1x1x1x4 330, 1x1x4x1 369) + 20 % (the model's
            largest error against the committed 4-rank runs, 18.6 %)
  the rest  2 socket probes x 8 s, 10 predictions x 1 s, gpu_info 1 s, plot 15 s: 42 s
  BUDGET_S  560 s from the start of the call (--budget-start: the build counts); a step is not
            started with less than 20 s of it left. The summary (exempt from the budget, ~3 s)
            and copying the folder use the 40 s to the call's 600 s.
With BUILD_S = 180: 180 + 281.7 + 42 = 503.7 s of 560; a build or runs 56 s slower than
estimated still fit, and what does not is left for a next call with the same --out.
"""

from ..plan import report_python
from ..util import SuiteError
from .multirank import _grid

NAME = "overlap-matters"
DESCRIPTION = "overlap flags and stream priorities where communication and compute are comparable"
BACKENDS = ("cuda",)
BUDGET_S = 560.0
MPS = True
RANKS = 4
# Estimates of the budget above (seconds); slurm/tests/test_gpu_overlap.py holds the plan to them.
BUILD_S = 180.0
RUN_SETUP_S = 5.0
ITER_S = 0.46
PROBE_S = 8.0
PREDICT_S = 1.0
PLOT_S = 15.0
PARAMS = {
    "model": ("--layers 4 --hidden 1024 --heads 16 --seq 512 --vocab 8192 --batch 256",
              "gpt4d/ovb-model model and global batch of every run"),
    "configs": ("1x1x1x4,1x1x4x1", "GxxGyxGzxGdata grids (4 ranks)"),
    "iters": ("--iters 11 --warmup 3", "gpt4d iterations of each run (8 timed)"),
    "repeats": ("2", "runs of every grid and condition (even: drift cancels over pairs)"),
    "socket": ("4x4", "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD of the runs, or default"),
    "machine": ("results/h100/model/model/machine.json", "ovb-model machine file (relative to "
                "the repository root, or a preset name) for the predictions"),
    "run_limit_s": ("45", "watchdog limit of one run, seconds (about 4x its estimate)"),
}
ALL = "oar,ors,oag"
# (name, --overlap, (comm priority, compute priority) or None for gpt4d's default high/normal)
CONDITIONS = (("none", "none", None), ("oar", "oar", None), ("ors", "ors", None),
              ("oag", "oag", None), ("all", ALL, None),
              ("all-prio-equal", ALL, ("normal", "normal")),
              ("all-compute-high", ALL, ("normal", "high")))
PREDICTED = (("none", "none"), ("oar", "oar"), ("ors", "ors"), ("oag", "oag"), ("all", "all"))


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


def run_order(repeats, grids):
    """[(repeat, grid, condition name)] in the order the runs start: see the module comment."""
    order = []
    for rep in range(1, repeats + 1):
        conds = CONDITIONS if rep % 2 else tuple(reversed(CONDITIONS))
        order += [(rep, grid, c[0]) for c in conds for grid in grids]
    return order


def _iterations(words):
    """gpt4d's --iters of the `iters` parameter (for the estimate)."""
    if "--iters" in words and words.index("--iters") + 1 < len(words) and \
            words[words.index("--iters") + 1].isdigit():
        return int(words[words.index("--iters") + 1])
    raise SuiteError(f"--param iters={' '.join(words)}: expected --iters N (and --warmup W)")


def plan(b):
    g, gpt4d, model = "overlap", b.exe("gpt4d"), b.words("model")
    configs = b.items("configs")
    grids = {grid: _grid(grid) for grid in configs}
    repeats = b.number("repeats")
    if repeats != int(repeats):
        raise SuiteError(f"--param repeats={b.param('repeats')}: expected a whole number")
    env = socket_env(b.param("socket"))
    conditions = {c[0]: c for c in CONDITIONS}
    run_s = RUN_SETUP_S + _iterations(b.words("iters")) * ITER_S
    b.add("gpu_info", ["nvidia-smi", "-L"], group=g, timeout=60, estimate=1.0)
    for rep, grid, name in run_order(int(repeats), configs):
        gx, gy, gz, gd = grids[grid]
        _, flags, prio = conditions[name]
        out = f"runs/g{grid}-{name}-r{rep}.json"
        extra = ["--comm-priority", prio[0], "--compute-priority", prio[1]] if prio else []
        b.add(f"r{rep}-{grid}-{name}",
              [gpt4d, "--backend", "cuda", "--ranks-per-gpu", str(RANKS), "--gx", gx,
               "--gy", gy, "--gz", gz, "--gdata", gd, *model, *b.words("iters"),
               "--data", "synthetic", "--quiet", "--overlap", flags, *extra,
               "--out", "{tmp}/" + out],
              group=g, ranks=RANKS, outputs=[out], env=env, timeout=b.number("run_limit_s"),
              estimate=run_s, description=f"grid {grid}, {name}, repeat {rep}")
    for s in dict.fromkeys(("default", b.param("socket"))):
        out = f"sockets/{s}.json"
        b.add(f"sockets-{s}", [b.exe("ovb-collective"), "--backend", "cuda", "--ranks-per-gpu",
                               str(RANKS), "--colls", "all_reduce", "--dtypes", "bf16", "-b",
                               "64M", "-e", "64M", "--benchmark_out={tmp}/" + out],
              group=g, ranks=RANKS, outputs=[out], env=socket_env(s), timeout=120,
              estimate=PROBE_S, description=f"64 MiB all-reduce, 4 ranks, NCCL socket setting {s}")
    machine = b.param("machine")
    if machine.endswith(".json"):
        machine = b.script(machine)[0]
    for grid in configs:
        for name, flags in PREDICTED:
            out = f"model/g{grid}-{name}.json"
            b.add(f"predict-{grid}-{name}", [b.exe("ovb-model"), "explain", grid, "--machine",
                                             machine, *model, "--overlap", flags,
                                             "--ranks-per-device", str(RANKS),
                                             "--json", "{tmp}/" + out],
                  group="model", outputs=[out], timeout=60, estimate=PREDICT_S)
    b.add("plot", [report_python(b.t.repo), b.script("analysis/ovb-analysis"), "plot",
                   "breakdown", "{out}/runs", "-o", "{tmp}/plots"],
          group="report", outputs=["plots"], timeout=120, after=b.names(g), estimate=PLOT_S)
    b.summary("overlap-matters")
