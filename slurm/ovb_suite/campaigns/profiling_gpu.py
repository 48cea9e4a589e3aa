"""Preset `profiling-gpu`: the tracer on one GPU (about 3 minutes on an H100); a CUDA build with
the profiling part (gpt4d too for its overhead runs):
  ctest-gpu          the GPU tests of profiling/ (ctest -L gpu -R '^profiling\\.')
  inject, inject-analyze   the injected tracer on ovb-inject-sample, analysed (inject/)
  demo-2ranks, demo-analyze, demo-merge   a linked trace of ovb-trace-demo, 2 ranks under CUDA
                     MPS, analysed and merged for Perfetto (demo/)
  overhead-*         the same run untraced and traced, interleaved in 5 pairs (A B A B ...) -
                     ovb-trace-demo (1 rank, GEMMs 4096^3) and gpt4d (8 layers x 2048, seq 2048,
                     batch 4, 20 timed iterations) - into overhead/
  summary            ovb-analysis summarize profiling-gpu: summary.md and overhead.json (per-pair
                     ratio traced / untraced of the median iteration time: median, p10, p90;
                     target < 3 %)
"""

from ..launch import find_binary

NAME = "profiling-gpu"
DESCRIPTION = "tracer GPU tests, injection, a 2-rank linked trace, tracer overhead"
BACKENDS = ("cuda",)
BUDGET_S = None
MPS = True
PARAMS = {}
PAIRS = 5  # interleaved untraced/traced pairs: docs/metrics.md, "Overheads"


def plan(b):
    g, trace, demo = "profiling", b.exe("ovb-trace"), b.exe("ovb-trace-demo")
    b.add("gpu_info", ["nvidia-smi", "-L"], group=g, timeout=60)
    b.add("ctest-gpu", ["ctest", "--test-dir", b.t.build, "-L", "gpu", "-R", r"^profiling\.",
                        "--output-on-failure"], group=g, timeout=150)
    inject_lib = b.exe("libovb-inject.so")
    b.add("inject", ["env", ("CUDA_INJECTION64_PATH=" + inject_lib[0], inject_lib[1]),
                     "OVB_TRACE_DIR={tmp}/inject", b.exe("ovb-inject-sample"), "16"],
          group=g, outputs=["inject"], timeout=60)
    b.add("inject-analyze", [trace, "analyze", "{out}/inject", "--json",
                             "{tmp}/inject/analysis.json", "--top", "10"],
          group=g, outputs=["inject/analysis.json"], needs=["inject"], timeout=30)
    b.add("demo-2ranks", [demo, "--backend", "cuda", "--ranks-per-gpu", "2", "--gx", "2",
                          "--layers", "4", "--hidden", "256", "--heads", "8", "--seq", "128",
                          "--vocab", "1024", "--gemm", "2048", "--iters", "5",
                          "--trace", "{tmp}/demo/traces"],
          group=g, ranks=2, outputs=["demo/traces"], timeout=90)
    b.add("demo-analyze", [trace, "analyze", "{out}/demo/traces", "--json",
                           "{tmp}/demo/analysis.json", "--top", "10"],
          group=g, outputs=["demo/analysis.json"], needs=["demo-2ranks"], timeout=30)
    b.add("demo-merge", [trace, "merge", "{out}/demo/traces", "-o",
                         "{tmp}/demo/merged.trace.json"],
          group=g, outputs=["demo/merged.trace.json"], needs=["demo-2ranks"], timeout=30)
    # gpt4d's overhead runs only where it is built (an extra, not a requirement of the preset).
    gpt4d = (find_binary(b.t.build, "gpt4d"), "")
    for rep in range(1, PAIRS + 1):
        for mode in ("untraced", "traced"):
            name = f"demo-{mode}-{rep}"
            traces = [f"overhead/traces-demo-{rep}"] if mode == "traced" else []
            tr = ["--trace", "{tmp}/" + traces[0]] if traces else []
            b.add(f"overhead-{name}", [demo, "--backend", "cuda", "--gemm", "4096", "--iters",
                                       "40", "--warmup", "5", "--out",
                                       f"{{tmp}}/overhead/{name}.json", *tr],
                  group=g, outputs=[f"overhead/{name}.json", *traces], timeout=60)
            if gpt4d[0]:
                name = f"gpt4d-{mode}-{rep}"
                traces = [f"overhead/traces-gpt4d-{rep}"] if mode == "traced" else []
                tr = ["--trace", "{tmp}/" + traces[0]] if traces else []
                b.add(f"overhead-{name}", [gpt4d, "--backend", "cuda", "--layers", "8", "--hidden",
                                           "2048", "--heads", "16", "--seq", "2048", "--vocab",
                                           "50304", "--batch", "4", "--out",
                                           f"{{tmp}}/overhead/{name}.json", *tr],
                      group=g, outputs=[f"overhead/{name}.json", *traces], timeout=120)
    b.summary("profiling-gpu")
