"""Preset `multirank`: gpt4d with 4 and 8 ranks sharing one GPU (CUDA MPS, NCCL over loopback:
communication bandwidth is emulated, ~2-3 GB/s, so these runs show overlap behaviour, never network
speed); on the host backend the same sweep on the CPU (tests, demos). Parts (step groups; select
with --only PART,...):
  grids4      4 ranks, every grid of `grids4`, overlap none and oar,ors,oag
  grids8      8 ranks, every grid of `grids8`, overlap none and oar,ors,oag
  flags8      8 ranks, grid 2x2x2x1, each overlap flag alone (oar, ors, oag)
  priorities  4 ranks 1x2x2x1 and 8 ranks 2x2x2x1 with every overlap flag, under each stream
              priority setting: comm high / compute normal (gpt4d's default), both normal,
              comm normal / compute high
Each run writes PART/gGRID-SUFFIX.json; each part's plot is plots/PART/iteration_breakdown.*; the
summary (ovb-analysis summarize multirank) writes summary.md and summary.json. A call stops starting
runs when its budget is spent; the next call with the same --out goes on where it stopped.
"""

from ..plan import report_python
from ..util import SuiteError

from ovb_analysis.overlap_flags import ALL, FLAGS, NONE  # noqa: E402 (the path is set by .util)

NAME = "multirank"
DESCRIPTION = "gpt4d with 4 and 8 ranks on one GPU: grids, overlap flags, stream priorities"
BACKENDS = ("cuda", "host")
BUDGET_S = 540.0
MPS = True
PARAMS = {
    "model": ("--layers 4 --hidden 1024 --heads 16 --seq 512 --vocab 8192 --batch 8 --iters 8 "
              "--warmup 3", "gpt4d model options of every run"),
    "grids4": ("1x1x1x4,1x1x4x1,1x2x1x2,1x2x2x1,2x2x1x1,1x4x1x1,1x1x2x2,4x1x1x1",
               "GxxGyxGzxGdata grids of the 4-rank part"),
    "grids8": ("2x2x2x1,1x2x2x2,2x2x1x2,1x2x4x1,1x1x4x2,1x1x1x8",
               "GxxGyxGzxGdata grids of the 8-rank part"),
    "run_limit_s": ("150", "watchdog limit of one run, seconds"),
}
PRIORITIES = (("high", "normal"), ("normal", "normal"), ("normal", "high"))


def _grid(text):
    dims = text.split("x")
    if len(dims) != 4 or not all(d.isdigit() and int(d) > 0 for d in dims):
        raise SuiteError(f"grid '{text}': expected GXxGYxGZxGDATA, e.g. 1x2x2x1")
    return dims


def _run(b, part, suffix, ranks, grid, overlap, extra=()):
    gx, gy, gz, gd = _grid(grid)
    out = f"{part}/g{grid}-{suffix}.json"
    args = ["--backend", b.backend, "--gx", gx, "--gy", gy, "--gz", gz, "--gdata", gd,
            *b.words("model"), "--data", "synthetic", "--quiet", "--overlap", overlap, *extra,
            "--out", "{tmp}/" + out]
    if b.backend == "cuda":
        args += ["--ranks-per-gpu", str(ranks)]
    b.add(f"{part}-g{grid}-{suffix}", [b.exe("gpt4d"), *args], group=part, ranks=ranks,
          outputs=[out], timeout=b.number("run_limit_s"),
          description=f"{ranks} ranks, grid {grid}, overlap {overlap} {' '.join(extra)}".strip())


def plan(b):
    for part, ranks in (("grids4", 4), ("grids8", 8)):
        for grid in b.items(part):
            _run(b, part, NONE, ranks, grid, NONE)
            _run(b, part, "all", ranks, grid, ALL)
    for flag in FLAGS:
        _run(b, "flags8", flag, 8, "2x2x2x1", flag)
    for ranks, grid in ((4, "1x2x2x1"), (8, "2x2x2x1")):
        for comm, compute in PRIORITIES:
            _run(b, "priorities", f"comm_{comm}-compute_{compute}", ranks, grid, ALL,
                 ("--comm-priority", comm, "--compute-priority", compute))
    script = b.script("analysis/ovb-analysis")
    for part in ("grids4", "grids8", "flags8", "priorities"):
        # The exposed communication per grid dimension of the part's runs.
        b.add(f"{part}-plot", [report_python(b.t.repo), script, "plot", "breakdown",
                               "{out}/" + part, "-o", "{tmp}/plots/" + part],
              group=part, outputs=[f"plots/{part}"], timeout=300, after=b.names(part),
              description=f"iteration breakdown plot of {part}")
    b.summary("multirank")
