"""Preset `profile-1.3B`: where the time of gpt4d's 1.3B shape (24 x 2048, seq 2048, vocab 50304,
batch 4, bf16, one GPU) goes in steady state. The tracer records every iteration, warm-up
included, so the steady-state cost is taken as a difference: a short and a long traced run with
the same warm-up differ only by steady-state iterations, and (long - short) / (their difference
in iterations) is the cost of one steady-state iteration, per kernel category and kernel, idle
included. A CUDA build with the profiling and endtoend parts:
  untraced-N, traced-N   gpt4d untraced and traced, alternating, for N = the short and the long
                         iteration counts (--param short, long), --param repeats pairs each
  analyze-N-REP          ovb-trace analyze of each trace (--top 60)
  summary                ovb-analysis summarize profile-1.3B: the steady-state breakdown, the
                         tracer's overhead (untraced vs traced of the same length, with spread)
The trace folders are large and not for committing; the analyses and summary are.
"""

from ..util import SuiteError

NAME = "profile-1.3B"
DESCRIPTION = "steady-state cost breakdown of gpt4d 1.3B batch 4 on one GPU"
BACKENDS = ("cuda",)
BUDGET_S = 540.0
MPS = False
PARAMS = {
    "model": ("--preset 1.3B --seq 2048 --vocab 50304 --batch 4",
              "gpt4d model options of every run"),
    "short": ("10", "iterations of the short runs (warm-up included)"),
    "long": ("30", "iterations of the long runs (warm-up included)"),
    "warmup": ("5", "warm-up iterations (not timed) of every run"),
    "repeats": ("2", "traced/untraced pairs of each length"),
}


def plan(b):
    g, gpt4d, trace = "profile", b.exe("gpt4d"), b.exe("ovb-trace")
    short, long_, warm = (int(b.number(n)) for n in ("short", "long", "warmup"))
    if not warm < short < long_:
        raise SuiteError(f"--param warmup={warm}, short={short}, long={long_}: expected "
                         "warmup < short < long")
    b.add("gpu_info", ["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                       "--format=csv"], group=g, timeout=60)
    common = [gpt4d, "--backend", "cuda", *b.words("model"), "--data", "synthetic",
              "--attention", "auto", "--warmup", str(warm)]
    for rep in range(1, int(b.number("repeats")) + 1):
        for n in (short, long_):
            b.add(f"untraced-{n}-{rep}", [*common, "--iters", str(n), "--out",
                                          f"{{tmp}}/runs/untraced-{n}-{rep}.json"],
                  group=g, outputs=[f"runs/untraced-{n}-{rep}.json"], timeout=240)
            b.add(f"traced-{n}-{rep}", [*common, "--iters", str(n), "--trace",
                                        f"{{tmp}}/traces/{n}-{rep}", "--out",
                                        f"{{tmp}}/runs/traced-{n}-{rep}.json"],
                  group=g, outputs=[f"runs/traced-{n}-{rep}.json", f"traces/{n}-{rep}"],
                  timeout=300)
            b.add(f"analyze-{n}-{rep}", [trace, "analyze", f"{{out}}/traces/{n}-{rep}", "--json",
                                         f"{{tmp}}/analysis/{n}-{rep}.json", "--top", "60"],
                  group=g, outputs=[f"analysis/{n}-{rep}.json"], needs=[f"traced-{n}-{rep}"],
                  timeout=180)
    b.summary("profile-1.3B")
