"""Preset `model-pipeline`: the performance model's end-to-end check on one machine -
microbenchmarks -> ovb-model calibrate -> search -> gpt4d on several configurations -> ovb-model
compare. On the host backend (CI) a tiny GPT on 4 ranks: the numbers mean little, the plumbing is
what is tested. On the cuda backend the ranks share one GPU (CUDA MPS, NCCL over loopback: the
bandwidth is emulated) and the `small` shape is the default.
  collective, gemm-GRID, overlap, membw   the collectives over the world and the x, y groups of
                a 2 x N/2 grid; the GEMM shapes of every grid the plan accepts (`ovb-model
                explain` decides, when the steps are planned); the quick overlap sweep; the quick
                memory-bound kernel sweep on N ranks (microbench/)
  search-speed  ovb-model-bench: how fast the configuration search is (where built)
  calibrate, search   the machine file fitted to this folder, every configuration ranked (model/)
  picks         the `configs` - 1 best predicted configurations that fit, and the worst
                (ovb-analysis pick-configs: model/picks.json)
  gpt4d-pick-I  gpt4d on each pick (gpt4d/pick-I.json; the first also traced, and analysed into
                gpt4d/pick-1.trace-analysis.json, so that compare checks the plan against the
                collectives in gpt4d's own trace)
  compare       model vs measurement (model/compare.json)
  summary       ovb-analysis summarize model-pipeline: the fit, predicted vs measured, the rank
                correlation; fails when gpt4d's collectives differ from the plan's or the traced
                run was not paired
"""

import subprocess

from ..plan import mem_calibration_args, model_base, report_python
from ..util import SuiteError

from ovb_analysis.overlap_flags import ALL  # noqa: E402 (the path is set by .util)

NAME = "model-pipeline"
DESCRIPTION = "microbenchmarks -> calibrate -> search -> gpt4d on the picks -> compare"
BACKENDS = ("cuda", "host")
BUDGET_S = {"cuda": 540.0, "host": None}  # on a GPU machine: within a 9-minute batch slot
MPS = True
PARAMS = {
    "ranks": ("4", "ranks of the multi-rank steps (an even number)"),
    "configs": ("6", "gpt4d runs: the best predicted configurations but one, and the worst"),
    "shape": ("", "tiny (2 x 64, seq 32) or small (4 x 1024, seq 512); default: tiny on the "
                  "host backend, small on cuda"),
}
SHAPES = {  # layers hidden heads seq vocab batch iters warmup
    "tiny": (2, 64, 4, 32, 256, 8, 6, 2),
    "small": (4, 1024, 16, 512, 8192, 16, 12, 4),
}


def _whole(b, name):
    v = b.param(name)
    if not v.isdigit() or int(v) < 1:
        raise SuiteError(f"--param {name}={v}: expected a whole number >= 1")
    return int(v)


def _grids(n):
    """Every (gx, gy, gz, gdata) with gx*gy*gz*gdata = n."""
    return [(gx, gy, gz, n // (gx * gy * gz)) for gx in range(1, n + 1)
            for gy in range(1, n + 1) for gz in range(1, n + 1) if n % (gx * gy * gz) == 0]


def _accepted(model, tag, base, shape_args):
    """Whether the plan accepts the grid (ovb-model explain exits 0): the binary's rules, not a
    copy of them here."""
    try:
        r = subprocess.run([model, "explain", tag, "--machine", base, *shape_args],
                           capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise SuiteError(f"{model} explain {tag}: {e}") from None
    return r.returncode == 0


def plan(b):
    ranks, nconfigs = _whole(b, "ranks"), _whole(b, "configs")
    if ranks % 2:
        raise SuiteError(f"--param ranks={ranks}: expected an even number (a 2 x N/2 grid)")
    shape = b.param("shape") or ("tiny" if b.backend == "host" else "small")
    if shape not in SHAPES:
        raise SuiteError(f"--param shape={shape}: expected tiny or small")
    layers, hidden, heads, seq, vocab, batch, iters, warmup = SHAPES[shape]
    shape_args = ["--layers", layers, "--hidden", hidden, "--heads", heads, "--seq", seq,
                  "--vocab", vocab, "--batch", batch]
    shape_args = [str(w) for w in shape_args]
    base = model_base(b.backend)
    # On cuda all ranks share the GPU under MPS. On the host a device is a CPU core: calibrate
    # takes the ranks per core from the collective run's context, and each GEMM step measures one
    # core (one BLAS thread, as every gpt4d rank runs), the rate the model divides among them.
    rpd = ranks
    env = {"OVB_RANKS_PER_GPU": str(rpd)} if b.backend == "cuda" else {}
    gemm_env = env if b.backend == "cuda" else {"OPENBLAS_NUM_THREADS": "1",
                                                 "OMP_NUM_THREADS": "1"}
    placement = ["--gpus-per-node", str(ranks // rpd), "--ranks-per-device", str(rpd)] \
        if b.backend == "cuda" else []
    gb = ["--benchmark_out_format=json", "--min-time", "0.02"]
    g = "microbench"
    b.add("collective", [b.exe("ovb-collective"), "--backend", b.backend, "--groups", "world,x,y",
                         "--gx", "2", "--gy", str(ranks // 2), "--colls",
                         "all_reduce,reduce_scatter,all_gather", "-b", "4K", "-e", "4M", "-f", "4",
                         "--in-place", "0", "--no-table",
                         "--benchmark_out={tmp}/microbench/collective.json", *gb],
          group=g, ranks=ranks, outputs=["microbench/collective.json"], timeout=600, env=env)
    model = b.exe("ovb-model")
    gemm_files = []
    for gx, gy, gz, gd in _grids(ranks):
        tag = f"{gx}x{gy}x{gz}x{gd}"
        if model[1]:
            break  # no ovb-model to ask: the calibrate step says what is missing
        if not _accepted(model[0], tag, base, shape_args):
            continue
        nseq, hl, hd = batch // (gd * gz), heads // gy, hidden // heads
        rows = nseq * hl * seq
        out = f"microbench/gemm-{tag}.json"
        b.add(f"gemm-{tag}", [b.exe("ovb-gemm"), "--backend", b.backend, "--preset", "tiny",
                              "--hidden", hidden, "--heads", heads, "--seq", seq, "--vocab",
                              vocab, "--batch", batch, "--gx", gx, "--gy", gy, "--gz", gz,
                              "--gdata", gd, "--shapes", f"{rows}x{seq}x{hd},{rows}x{hd}x{seq}",
                              f"--benchmark_out={{tmp}}/{out}", *gb],
              group=g, outputs=[out], timeout=600, env=gemm_env)
        gemm_files += ["--gemm", "{out}/" + out]
    b.add("overlap", [b.exe("ovb-overlap"), "--backend", b.backend, "--sweep", "quick",
                      "--benchmark_out={tmp}/microbench/overlap.json", *gb],
          group=g, ranks=ranks, outputs=["microbench/overlap.json"], timeout=600, env=env)
    b.add("membw", [b.exe("ovb-membw"), "--backend", b.backend, "--sweep", "quick",
                    "--benchmark_out={tmp}/microbench/membw.json", *gb],
          group=g, ranks=ranks, outputs=["microbench/membw.json"], timeout=600, env=env)
    if b.backend == "cuda":
        bench = b.exe("ovb-model-bench")
        b.add("search-speed", [bench, "--benchmark_out={tmp}/search-speed.json",
                               "--benchmark_out_format=json"],
              group="model", outputs=["search-speed.json"], timeout=300)
    m = "model"
    cal = b.add("calibrate", [model, "calibrate", "--base", base, "--name",
                              f"pipeline-{b.backend}", "--collective",
                              f"{{out}}/microbench/collective.json@2x{ranks // 2}x1x1",
                              *gemm_files, "--overlap", "{out}/microbench/overlap.json",
                              *mem_calibration_args(b.backend, "{out}/microbench/membw.json"),
                              *placement, "--out", "{tmp}/model/machine.json"],
                group=m, outputs=["model/machine.json"], needs=b.names(g), timeout=300)
    search = b.add("search", [model, "search", "--machine", "{out}/model/machine.json",
                              *shape_args, "--gpus", str(ranks), "--overlap", "all", "--top", "0",
                              "--json", "{tmp}/model/search.json"],
                   group=m, outputs=["model/search.json"], needs=[cal], timeout=300)
    script = b.script("analysis/ovb-analysis")
    picks = b.add("picks", [report_python(b.t.repo), script, "pick-configs",
                            "{out}/model/search.json", "--count", str(nconfigs), "-o",
                            "{tmp}/model/picks.json"],
                  group=m, outputs=["model/picks.json"], needs=[search], timeout=120)
    trace = b.exe("ovb-trace")
    runs = []
    for i in range(nconfigs):
        res = f"gpt4d/pick-{i + 1}.json"
        traced = i == 0 and not trace[1]
        tr = ["--trace", f"{{tmp}}/traces/pick-{i + 1}"] if traced else []
        runs.append(b.add(f"gpt4d-pick-{i + 1}", [
            b.exe("gpt4d"), "--backend", b.backend, f"{{args:{{out}}/model/picks.json:{i}}}",
            *shape_args, "--iters", str(iters), "--warmup", str(warmup), "--seed", "1234", "--lr",
            "1e-3", "--data", "synthetic", "--overlap", ALL, "--quiet", *tr,
            "--out", "{tmp}/" + res],
            group="gpt4d", ranks=ranks, outputs=[res] + ([f"traces/pick-{i + 1}"] if tr else []),
            needs=[picks], timeout=600, env=env))
        if traced:
            runs.append(b.add("trace-pick-1", [trace, "analyze", "{out}/traces/pick-1", "--json",
                                               "{tmp}/gpt4d/pick-1.trace-analysis.json"],
                              group="gpt4d", outputs=["gpt4d/pick-1.trace-analysis.json"],
                              needs=[runs[0]], timeout=300))
    b.add("compare", [model, "compare", "{out}/gpt4d", "--machine", "{out}/model/machine.json",
                      "--top-k", "3", "--json", "{tmp}/model/compare.json"],
          group=m, outputs=["model/compare.json"], needs=[cal], after=runs, timeout=300)
    b.summary("model-pipeline")
