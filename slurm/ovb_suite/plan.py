"""The suite's steps for the presets quick and full, a backend and a rank count, in the order they
run (the campaign presets have theirs in campaigns/).

Groups (select with `ovb-suite run --only GROUP,...`):
  microbench  ovb-gemm (1 rank), ovb-collective, ovb-overlap and ovb-membw (N ranks, as gpt4d
              runs) with the preset's sweep; on the host the GEMM rank runs one BLAS thread, as
              each gpt4d rank does: one core's rate, which the model shares among the ranks per
              core (the collective run's context says how many); on the host also ovb-overlap's
              blocking_wait scenario (sweep blocking-wait: the wait of a blocking collective
              after compute, on N ranks)
  gpt4d       gpt4d on every grid of the preset x every overlap flag set (the preset's GPT model, or
              its Llama model with --arch llama; the GPT quick host preset adds one llama-tiny step)
  trace       traced gpt4d runs (--trace) and `ovb-trace analyze` of each
  model       ovb-model calibrate (from this folder's microbench JSON), search, compare, and for
              each traced run its predicted iteration as a trace (explain --timeline) drawn
              beside the measured one (ovb-analysis timeline: model/timeline-TAG.png) and merged
              with the measured ranks into one trace for Perfetto (ovb-trace merge:
              model/timeline-vs-measured-TAG.trace.json)
  report      analysis/ovb-analysis report
A step whose executable is not in the build is still listed, with the reason ("gpt4d not built"),
and is recorded as failed when its turn comes; the rest of the suite goes on.
"""

import json
import os
import re
import sys
from dataclasses import dataclass, replace

from . import presets
from .launch import find_binary, gpu_list
from .step import Step, check_steps

from ovb_analysis.overlap_flags import ALL as ALL_OVERLAP_FLAGS  # noqa: E402 (path set by .presets)

GROUPS = ("microbench", "gpt4d", "trace", "model", "report")
# The host's blocking-wait measurement: its sweep file and its result (ovb-model calibrate's
# --overlap, beside the preset's ovb-overlap result).
BLOCKING_WAIT_SWEEP = "blocking-wait"
BLOCKING_WAIT_RESULT = "microbench/overlap-wait.json"


@dataclass
class Target:
    repo: str
    build: str
    backend: str
    ranks: int
    preset: str
    python: str = ""
    arch: str = "gpt"
    rounds: int = 0  # gpt4d rounds of the quick/full presets; 0: the preset's


def report_python(repo):
    """The interpreter for analysis/ovb-analysis: $OVB_PYTHON, else the repository's .venv, else
    this one."""
    if os.environ.get("OVB_PYTHON"):
        return os.environ["OVB_PYTHON"]
    venv = os.path.join(repo, ".venv", "bin", "python")
    return venv if os.path.exists(venv) else sys.executable


class _Builder:
    def __init__(self, t):
        self.t = t
        self.p = presets.preset(t.preset, t.backend, t.arch)
        if t.rounds:
            self.p = replace(self.p, rounds=t.rounds)
        self.steps = []

    def binary(self, name):
        """(path, "") when built, else (name, why not)."""
        path = find_binary(self.t.build, name)
        return (path, "") if path else (name, f"{name} not built (not found in {self.t.build})")

    def add(self, name, group, exe, args, ranks, outputs, needs=(), after=(), stall=None,
            description=""):
        path, missing = self.binary(exe) if exe else ("", "")
        self.steps.append(Step(
            name=name, group=group, command=([path] if path else []) + list(args), ranks=ranks,
            outputs=list(outputs), timeout_s=self.p.timeout_s,
            stall_s=self.p.stall_s if stall is None else stall, needs=list(needs),
            after=list(after), missing=missing, description=description, binary=exe or ""))
        return name

    def names(self, group):
        return [s.name for s in self.steps if s.group == group]


def _grid_args(g):
    return ["--gx", str(g[0]), "--gy", str(g[1]), "--gz", str(g[2]), "--gdata", str(g[3])]


def _tag(g, overlap):
    return "g{}x{}x{}x{}-{}".format(*g, overlap.replace(",", "-"))


def _collective_grid(ranks):
    """The grid ovb-collective runs its x/y/z/data groups on (the preset's own assumes 4 ranks);
    calibration needs it to know each group's size and stride."""
    return presets.grid_for("xy", ranks)


def cdmc_values(repo, preset, backend):
    """The CUDA_DEVICE_MAX_CONNECTIONS values ovb-overlap's sweep file lists for this backend
    ([] when it lists none or one): the driver reads the variable once per process, so each value
    is a step of its own (--cdmc-run), as microbench/overlap-cdmc-sweep.sh does by hand."""
    folder = os.environ.get("OVB_SWEEP_DIR") or os.path.join(repo, "microbench", "sweeps")
    try:
        with open(os.path.join(folder, preset + ".json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return []  # the program itself reports an unreadable sweep file, in its step's log
    for section in (f"ovb-overlap@{backend}", "ovb-overlap"):
        values = (doc.get(section) or {}).get("cdmc")
        if values is not None:
            values = [str(v) for v in (values if isinstance(values, list) else [values])]
            return values if len(values) > 1 else []
    return []


def _microbench(b):
    t = b.t
    for prog, ranks in (("gemm", 1), ("collective", t.ranks), ("overlap", t.ranks),
                        ("membw", t.ranks)):
        grid = _grid_args(_collective_grid(t.ranks)) if prog == "collective" else []
        # ovb-model calibrate reads microbench/overlap.json: the first --cdmc value writes it.
        runs = [("", "", [])]
        if prog == "overlap":
            runs = [("" if i == 0 else f"-cdmc-{v}", "" if i == 0 else f".cdmc-{v}",
                     ["--cdmc-run", v])
                    for i, v in enumerate(cdmc_values(t.repo, t.preset, t.backend))] or runs
        for suffix, file_suffix, extra in runs:
            out = f"microbench/{prog}{file_suffix}.json"
            b.add(f"microbench-{prog}{suffix}", "microbench", f"ovb-{prog}",
                  ["--backend", t.backend, "--sweep", t.preset, *grid, *extra,
                   f"--benchmark_out={{tmp}}/{out}", "--benchmark_out_format=json"], ranks, [out],
                  description=f"ovb-{prog}, {t.preset} sweep"
                              f"{' ' + ' '.join(extra) if extra else ''}, {ranks} rank(s)")
    if t.backend == "host":  # ranks sharing cores: the CUDA backend refuses the scenario
        b.add("microbench-overlap-wait", "microbench", "ovb-overlap",
              ["--backend", t.backend, "--sweep", BLOCKING_WAIT_SWEEP,
               f"--benchmark_out={{tmp}}/{BLOCKING_WAIT_RESULT}", "--benchmark_out_format=json"],
              t.ranks, [BLOCKING_WAIT_RESULT],
              description=f"ovb-overlap blocking_wait scenario, {t.ranks} rank(s)")


def _gpt4d_args(b, grid, overlap, result, trace=None, model=None):
    m, t = model or b.p.model, b.t
    args = ["--backend", t.backend, *_grid_args(grid),
            *presets.model_args(m, presets.global_batch(m, t.ranks)),
            "--iters", str(m.iters), "--seed", "1234", "--lr", "1e-3", "--data", "synthetic",
            "--overlap", overlap, "--out", "{tmp}/" + result]
    return args + (["--trace", "{tmp}/" + trace] if trace else [])


def _round_suffix(r):
    """Round 1's step and result keep the plain names; round r > 1 adds "-round-r" / ".round-r"
    (ovb-model compare takes results of one configuration as its repetitions)."""
    return ("", "") if r == 1 else (f"-round-{r}", f".round-{r}")


def _gpt4d(b):
    """Every configuration once per round, round after round: a slow spell of the machine then
    touches one run of each configuration instead of all runs of a few."""
    for r in range(1, b.p.rounds + 1):
        step_sfx, file_sfx = _round_suffix(r)
        of_round = f", round {r} of {b.p.rounds}" if b.p.rounds > 1 else ""
        for g in presets.grids(b.p, b.t.ranks):
            for ov in b.p.overlaps:
                out = f"gpt4d/{_tag(g, ov)}{file_sfx}.json"
                b.add(f"gpt4d-{_tag(g, ov)}{step_sfx}", "gpt4d", "gpt4d",
                      _gpt4d_args(b, g, ov, out), b.t.ranks, [out],
                      description=f"gpt4d ({b.p.model.arch}) on grid {g}, overlap {ov}{of_round}")
        _arch_check(b, step_sfx, file_sfx, of_round)


def _arch_check(b, step_sfx, file_sfx, of_round):
    """One short run of the other architecture on the first grid it fits, every overlap on."""
    m = b.p.arch_check
    if m is None:
        return
    batch = presets.global_batch(m, b.t.ranks)
    for pat in b.p.grid_patterns:
        g = presets.grid_for(pat, b.t.ranks)
        if presets.fits(m, g, batch):
            ov = b.p.overlaps[-1]
            tag = f"{m.arch}-{_tag(g, ov)}"
            out = f"gpt4d/{tag}{file_sfx}.json"
            b.add(f"gpt4d-{tag}{step_sfx}", "gpt4d", "gpt4d", _gpt4d_args(b, g, ov, out, model=m),
                  b.t.ranks, [out], description=f"gpt4d ({m.arch}, {m.iters} iterations) on grid "
                                                f"{g}, overlap {ov}{of_round}")
            return


def _traced(b):
    """(grid, overlap, tag) of each traced run the preset's model fits."""
    for pattern, ov in b.p.traced:
        g = presets.grid_for(pattern, b.t.ranks)
        if presets.fits(b.p.model, g, presets.global_batch(b.p.model, b.t.ranks)):
            # "traced-" first: no untraced run's name is a prefix of this one's trace analysis,
            # which ovb-model compare and the report pair with a run by that prefix.
            yield g, ov, "traced-" + _tag(g, ov)


def _trace(b):
    for g, ov, tag in _traced(b):
        result, traces = f"gpt4d/{tag}.json", f"traces/{tag}"
        run = b.add(tag, "trace", "gpt4d", _gpt4d_args(b, g, ov, result, traces),
                    b.t.ranks, [result, traces], description=f"traced gpt4d, grid {g}, {ov}")
        # The report pairs RUN.json with RUN.trace-analysis.json in the same folder.
        analysis = f"gpt4d/{tag}.trace-analysis.json"
        b.add(f"analyze-{_tag(g, ov)}", "trace", "ovb-trace",
              ["analyze", "{glob:{out}/" + traces + "/*.json}", "--json", "{tmp}/" + analysis], 0,
              [analysis], needs=[run], stall=0, description="ovb-trace analyze of " + run)


def model_base(backend, gpus=None):
    """The machine file that supplies what no microbenchmark measures (memory, efficiencies):
    $OVB_MODEL_BASE, else analysis/machines/host-cpu on the host, generic-h200-8nic where
    nvidia-smi lists an H200 (`gpus`: its lines, launch.gpu_list() when not given), else
    generic-h100-8nic."""
    if os.environ.get("OVB_MODEL_BASE"):
        return os.environ["OVB_MODEL_BASE"]
    if backend == "host":
        return "host-cpu"
    names = gpu_list() if gpus is None else gpus
    h200 = any(re.search(r"\bH200\b", n) for n in names)  # not GH200
    return "generic-h200-8nic" if h200 else "generic-h100-8nic"


def mem_calibration_args(backend, path):
    """calibrate's memory-bound kernel inputs: the ovb-membw result; on the host, whose bandwidth
    has no datasheet, also the bandwidth itself from its copy class."""
    return ["--mem", path] + (["--mem-bandwidth-from-copy"] if backend == "host" else [])


def _model(b):
    m, t = b.p.model, b.t
    machine = "{out}/model/machine.json"
    cal = b.add("model-calibrate", "model", "ovb-model",
                ["calibrate", "--base", model_base(t.backend), "--gemm",
                 "{out}/microbench/gemm.json", "--collective",
                 "{out}/microbench/collective.json@" + "x".join(
                     str(d) for d in _collective_grid(t.ranks)),
                 "--overlap", "{out}/microbench/overlap.json",
                 *mem_calibration_args(t.backend, "{out}/microbench/membw.json"),
                 "--out", "{tmp}/model/machine.json"],
                0, ["model/machine.json"], stall=0,
                # The blocking wait is measured (microbench/overlap-wait.json), not charged: in
                # quiet runs it made the model over-predict (results/host/quick-suite-model).
                needs=[n for n in b.names("microbench") if n != "microbench-overlap-wait"],
                description="machine description fitted to this folder's microbenchmarks")
    shape = presets.model_args(m, presets.global_batch(m, t.ranks))
    b.add("model-search", "model", "ovb-model",
          ["search", "--machine", machine, *shape, "--overlap", ALL_OVERLAP_FLAGS,
           "--gpus", str(t.ranks), "--top", "0", "--json", "{tmp}/model/search.json"], 0,
          ["model/search.json"], needs=[cal], stall=0,
          description="predicted ranking of every grid for this model and rank count")
    b.add("model-compare", "model", "ovb-model",
          ["compare", "{out}/gpt4d", "--machine", machine, "--top-k", str(b.p.top_k),
           "--json", "{tmp}/model/compare.json"], 0,
          ["model/compare.json"], needs=[cal], after=b.names("gpt4d") + b.names("trace"), stall=0,
          description="model vs measurement over this folder's gpt4d runs")
    _timelines(b, cal, shape)


def _timelines(b, cal, shape):
    """Each traced run's predicted iteration as a trace, both drawn on one time axis, and both
    merged into one trace (predicted and measured ranks as processes of their own)."""
    py = b.t.python or report_python(b.t.repo)
    script = os.path.join(b.t.repo, "analysis", "ovb-analysis")
    for g, ov, tag in _traced(b):
        predicted = f"model/timeline-{tag}.trace.json"
        step = b.add(f"model-timeline-{_tag(g, ov)}", "model", "ovb-model",
                     ["explain", "x".join(str(d) for d in g), "--machine",
                      "{out}/model/machine.json", *shape, "--overlap", ov,
                      "--timeline", "{tmp}/" + predicted], 0, [predicted], needs=[cal], stall=0,
                     description=f"predicted iteration of {tag} as a trace")
        png = f"model/timeline-{tag}.png"
        b.add(f"model-timeline-plot-{_tag(g, ov)}", "model", None,
              [py, script, "timeline", "{out}/" + predicted, "{out}/traces/" + tag, "-o",
               "{tmp}/" + png], 0, [png], needs=[step, tag], stall=0,
              description=f"predicted and measured iteration of {tag}, per rank and stream")
        merged = f"model/timeline-vs-measured-{tag}.trace.json"
        b.add(f"model-timeline-merge-{_tag(g, ov)}", "model", "ovb-trace",
              ["merge", "{glob:{out}/traces/" + tag + "/*.json}", "{out}/" + predicted, "-o",
               "{tmp}/" + merged], 0, [merged], needs=[step, tag], stall=0,
              description=f"predicted and measured ranks of {tag} in one trace for Perfetto")


def _report(b):
    script = os.path.join(b.t.repo, "analysis", "ovb-analysis")
    py = b.t.python or report_python(b.t.repo)
    step = b.add("report", "report", None, [py, script, "report", "{out}", "-o", "{tmp}/report"],
                 0, ["report"], after=[s.name for s in b.steps], stall=0,
                 description="HTML + Markdown report of the folder")
    if not os.path.exists(script):
        b.steps[-1].missing = f"{script} not found"
    return step


def build_plan(target, groups=GROUPS):
    """The steps of the suite, only those of `groups`, in the fixed order. A step keeps its hard
    dependencies on left-out steps (their records in the folder must say finished); soft ones go."""
    b = _Builder(target)
    for fn in (_microbench, _gpt4d, _trace, _model, _report):
        fn(b)
    check_steps(b.steps)
    steps = [s for s in b.steps if s.group in groups]
    keep = {s.name for s in steps}
    for s in steps:
        s.after = [d for d in s.after if d in keep]
    return steps
