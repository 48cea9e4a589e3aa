"""The Python formulas (ovb_analysis/metrics.py) agree with the C++ ones (core/src/metrics.cpp).

1. Both are pinned to the same hand-computed numbers: the cases below are those of
   core/tests/test_metrics.cpp (GoogleTest), with the same tolerances.
2. The C++ file itself is compiled (with mpicxx: metrics.hpp includes backend.hpp, which includes
   mpi.h) together with a tiny driver, and both implementations are evaluated on the same inputs;
   a formula changed on one side only fails here. Run: pytest analysis/tests/test_metrics_parity.py
"""

import itertools
import shutil
import subprocess

import pytest

from conftest import ANALYSIS
from ovb_analysis import metrics

CORE = ANALYSIS.parent / "core"

# (python call, expected, absolute tolerance or None for exact): core/tests/test_metrics.cpp
HAND_COMPUTED = [
    (lambda: metrics.bus_factor("all_reduce", 8), 1.75, None),        # 2*7/8
    (lambda: metrics.bus_factor("reduce_scatter", 8), 0.875, None),   # 7/8
    (lambda: metrics.bus_factor("all_gather", 4), 0.75, None),
    (lambda: metrics.bus_factor("all_reduce", 1), 0.0, None),
    # 1 GiB all-reduce on 8 ranks in 5 ms: algbw = 1073741824/0.005/1e9 = 214.7483648 GB/s
    (lambda: metrics.algbw_gbps(1073741824.0, 0.005), 214.7483648, 1e-9),
    (lambda: metrics.busbw_gbps("all_reduce", 8, 1073741824.0, 0.005), 375.8096384, 1e-9),
    (lambda: metrics.busbw_gbps("all_gather", 2, 1e9, 1.0), 0.5, 1e-12),
    (lambda: metrics.gemm_flop(8192, 8192, 8192), 1099511627776.0, None),  # 2*8192^3
    # 2*8192^3 FLOP in 1.375 ms = 799.6448 TFLOP/s
    (lambda: metrics.tflops(metrics.gemm_flop(8192, 8192, 8192), 1.375e-3), 799.6448202, 1e-6),
    (lambda: metrics.percent_of_peak(494.5, 989.0), 50.0, None),
    # docs/megatron.md run: L=24, h=2048, s=2048, V=50304, B=4, 395.4 ms on 1 GPU -> 175.5 TFLOP/s
    (lambda: metrics.gpt_model_flop(4, 2048, 24, 2048, 50304), 6.938520e13, 0.000001e13),
    (lambda: metrics.tflops_per_gpu(metrics.gpt_model_flop(4, 2048, 24, 2048, 50304), 0.3954, 1),
     175.5, 0.1),
    (lambda: metrics.tflops_per_gpu(8e15, 2.0, 4), 1000.0, None),
    (lambda: metrics.narayanan_flop(2, 4, 3, 5, 7), 66960.0, None),  # 57600 * (1 + 4/30 + 7/240)
    (lambda: metrics.mfu(494.5, 989.0), 0.5, None),
]


@pytest.mark.parametrize("i", range(len(HAND_COMPUTED)))
def test_same_hand_computed_numbers_as_the_cpp_test(i):
    call, expected, tol = HAND_COMPUTED[i]
    if tol is None:
        assert call() == pytest.approx(expected, rel=1e-15, abs=0)
    else:
        assert call() == pytest.approx(expected, abs=tol)


def test_cases_are_those_of_the_cpp_test():
    """The numbers above still appear in core/tests/test_metrics.cpp (else update both)."""
    text = (CORE / "tests" / "test_metrics.cpp").read_text()
    for needle in ("214.7483648", "375.8096384", "1099511627776.0", "799.6448202", "6.938520e13",
                   "175.5", "m::bus_factor(CollKind::all_gather, 4), 0.75",
                   "m::tflops_per_gpu(8e15, 2.0, 4), 1000.0",
                   "m::narayanan_flop(2, 4, 3, 5, 7), 66960.0", "m::mfu(494.5, 989.0), 0.5"):
        assert needle in text, needle


DRIVER = r"""
// Test driver: evaluates ovb::metrics functions named on stdin, one call per line.
#include <cstdio>
#include <iostream>
#include <string>
#include "ovb/metrics.hpp"
using namespace ovb::metrics;
static ovb::CollKind kind(const std::string& s) {
  return s == "all_reduce" ? ovb::CollKind::all_reduce
       : s == "reduce_scatter" ? ovb::CollKind::reduce_scatter : ovb::CollKind::all_gather;
}
int main() {
  std::string fn;
  while (std::cin >> fn) {
    double r = 0, a, b, c, d, e; std::string k; int n; int f;
    if (fn == "gpt_model_flop") {
      std::cin >> a >> b >> c >> d >> e; r = gpt_model_flop(a, b, c, d, e);
    }
    else if (fn == "transformer_model_flop") {
      double p; std::cin >> a >> b >> c >> d >> e >> p; r = transformer_model_flop(a, b, c, d, e, p);
    }
    else if (fn == "narayanan_flop") {
      std::cin >> a >> b >> c >> d >> e; r = narayanan_flop(a, b, c, d, e);
    }
    else if (fn == "gpt_hardware_flop") { std::cin >> a >> f; r = gpt_hardware_flop(a, f != 0); }
    else if (fn == "gpt_selective_recompute_flop") {
      std::cin >> a >> b >> c >> d; r = gpt_selective_recompute_flop(a, b, c, d);
    }
    else if (fn == "tflops_per_gpu") { std::cin >> a >> b >> n; r = tflops_per_gpu(a, b, n); }
    else if (fn == "mfu") { std::cin >> a >> b; r = mfu(a, b); }
    else if (fn == "gemm_flop") { std::cin >> a >> b >> c; r = gemm_flop(a, b, c); }
    else if (fn == "tflops") { std::cin >> a >> b; r = tflops(a, b); }
    else if (fn == "percent_of_peak") { std::cin >> a >> b; r = percent_of_peak(a, b); }
    else if (fn == "bus_factor") { std::cin >> k >> n; r = bus_factor(kind(k), n); }
    else if (fn == "algbw_gbps") { std::cin >> a >> b; r = algbw_gbps(a, b); }
    else if (fn == "busbw_gbps") { std::cin >> k >> n >> a >> b; r = busbw_gbps(kind(k), n, a, b); }
    else { std::fprintf(stderr, "unknown %s\n", fn.c_str()); return 1; }
    std::printf("%.17g\n", r);
  }
}
"""


def _calls():
    """(C++ input line, Python value) over a grid of inputs."""
    out = []
    for b, s, layers, h, v in itertools.product((1, 4, 512), (1024, 2048, 8192), (24, 96),
                                                (2048, 12288), (50257, 50304)):
        out.append((f"gpt_model_flop {b} {s} {layers} {h} {v}",
                    metrics.gpt_model_flop(b, s, layers, h, v)))
        out.append((f"narayanan_flop {b} {s} {layers} {h} {v}",
                    metrics.narayanan_flop(b, s, layers, h, v)))
    # Llama 3 8B's block (QKV 4096 x 6144, out 4096^2, SwiGLU 3 x 4096 x 14336) and a GPT's 12h^2.
    for b, s, (layers, h, p), v in itertools.product((1, 512), (2048, 8192),
                                                     ((32, 4096, 218103808), (24, 2048, 50331648)),
                                                     (50304, 128256)):
        out.append((f"transformer_model_flop {b} {s} {layers} {h} {v} {p}",
                    metrics.transformer_model_flop(b, s, layers, h, v, p)))
    for b, s, layers, h in itertools.product((1, 512), (2048, 8192), (24, 96), (2048, 12288)):
        out.append((f"gpt_selective_recompute_flop {b} {s} {layers} {h}",
                    metrics.gpt_selective_recompute_flop(b, s, layers, h)))
    for flop, full in itertools.product((6.9385e13, 1.23e18), (0, 1)):
        out.append((f"gpt_hardware_flop {flop!r} {full}", metrics.gpt_hardware_flop(flop, full)))
    for flop, t, n in itertools.product((6.9385e13, 1.23e18), (0.3954, 12.5), (1, 8, 1024)):
        out.append((f"tflops_per_gpu {flop!r} {t!r} {n}", metrics.tflops_per_gpu(flop, t, n)))
    for tf, peak in itertools.product((175.5, 260.0), (312.0, 989.0)):
        out.append((f"mfu {tf!r} {peak!r}", metrics.mfu(tf, peak)))
        out.append((f"percent_of_peak {tf!r} {peak!r}", metrics.percent_of_peak(tf, peak)))
    for m, n, k in itertools.product((1, 2048, 8192), (4096, 50304), (2048, 12288)):
        out.append((f"gemm_flop {m} {n} {k}", metrics.gemm_flop(m, n, k)))
        out.append((f"tflops {metrics.gemm_flop(m, n, k)!r} 0.00137",
                    metrics.tflops(metrics.gemm_flop(m, n, k), 0.00137)))
    for kind, n in itertools.product(("all_reduce", "reduce_scatter", "all_gather"), (1, 2, 8, 96)):
        out.append((f"bus_factor {kind} {n}", metrics.bus_factor(kind, n)))
        for nbytes, t in ((1048576.0, 4e-5), (1073741824.0, 0.005)):
            out.append((f"busbw_gbps {kind} {n} {nbytes!r} {t!r}",
                        metrics.busbw_gbps(kind, n, nbytes, t)))
    out.append(("algbw_gbps 1073741824.0 0.005", metrics.algbw_gbps(1073741824.0, 0.005)))
    return out


@pytest.fixture(scope="module")
def cpp_driver(tmp_path_factory):
    cxx = shutil.which("mpicxx") or shutil.which("mpic++")
    if cxx is None:
        pytest.skip("no MPI C++ compiler (mpicxx) to build core/src/metrics.cpp")
    d = tmp_path_factory.mktemp("metrics_cpp")
    (d / "driver.cpp").write_text(DRIVER)
    exe = d / "driver"
    res = subprocess.run([cxx, "-std=c++20", "-O2", f"-I{CORE / 'include'}",
                          str(CORE / "src" / "metrics.cpp"), str(d / "driver.cpp"), "-o", str(exe)],
                         capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    return exe


def test_python_and_cpp_agree_on_the_same_inputs(cpp_driver):
    calls = _calls()
    res = subprocess.run([str(cpp_driver)], input="\n".join(c for c, _ in calls) + "\n",
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    values = [float(x) for x in res.stdout.split()]
    assert len(values) == len(calls)
    for (call, py), cpp in zip(calls, values):
        assert py == pytest.approx(cpp, rel=1e-13, abs=0), call


# ---- Timed figures: ovb_analysis/stats.py against core/src/timing_stats.cpp ----

from ovb_analysis import stats  # noqa: E402


def test_timed_figures_same_hand_computed_numbers_as_the_cpp_test():
    """The cases of core/tests/test_timing_stats.cpp."""
    assert [stats.default_warmup(n) for n in (0, 1, 2, 3, 4, 23, 30, 31, 100, 101)] == \
        [0, 0, 1, 2, 3, 3, 3, 4, 10, 11]
    assert stats.default_runs() == 23 and stats.MIN_TIMED_SAMPLES == 20
    v = [7, 3, 10, 1, 5, 9, 2, 8, 6, 4]
    assert stats.percentile(v, 10) == pytest.approx(1.9, rel=1e-15)
    assert stats.percentile(v, 50) == 5.5
    assert stats.percentile(v, 90) == pytest.approx(9.1, rel=1e-15)
    t = [325, 50, 40] + list(range(1, 21))
    s = stats.timing_summary(t)
    assert (s["warmup"], s["iterations_timed"], s["enough_samples"]) == (3, 20, True)
    assert (s["p10_ms"], s["p50_ms"], s["p90_ms"]) == pytest.approx((2.9, 10.5, 18.1), rel=1e-15)
    e = stats.timing_summary(t, 1)
    assert (e["iterations_timed"], e["p50_ms"]) == (22, 11.5)
    assert e["p90_ms"] == pytest.approx(19.9, rel=1e-15)
    assert stats.timing_summary([5, 1, 2, 3])["enough_samples"] is False
    with pytest.raises(ValueError):
        stats.timing_summary([1, 2], 2)
    with pytest.raises(ValueError):
        stats.percentile(v, 101)
    text = (CORE / "tests" / "test_timing_stats.cpp").read_text()
    for needle in ("s::default_warmup(101), 11", "s::default_runs(), 23", "1.9", "9.1", "2.9",
                   "10.5", "18.1", "11.5", "19.9"):
        assert needle in text, needle


STATS_DRIVER = r"""
// Test driver: "w N" prints default_warmup(N); "p Q n v1 .. vn" prints percentile(v, Q).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>
#include "ovb/timing_stats.hpp"
int main() {
  std::string fn;
  while (std::cin >> fn) {
    if (fn == "w") { int n; std::cin >> n; std::printf("%d\n", ovb::stats::default_warmup(n)); }
    else { double q; int n; std::cin >> q >> n; std::vector<double> v(n);
           for (double& x : v) std::cin >> x;
           std::printf("%.17g\n", ovb::stats::percentile(v, q)); }
  }
}
"""


@pytest.fixture(scope="module")
def stats_driver(tmp_path_factory):
    cxx = shutil.which("mpicxx") or shutil.which("mpic++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler to build core/src/timing_stats.cpp")
    d = tmp_path_factory.mktemp("stats_cpp")
    (d / "driver.cpp").write_text(STATS_DRIVER)
    exe = d / "driver"
    res = subprocess.run([cxx, "-std=c++20", "-O2", f"-I{CORE / 'include'}",
                          str(CORE / "src" / "timing_stats.cpp"), str(d / "driver.cpp"), "-o",
                          str(exe)], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    return exe


def test_warmup_rule_and_percentiles_agree_with_cpp(stats_driver):
    import random
    rng = random.Random(17)
    lines, want = [], []
    for n in range(0, 260):
        lines.append(f"w {n}")
        want.append(stats.default_warmup(n))
    for _ in range(200):
        v = [rng.lognormvariate(0, 1) for _ in range(rng.randint(1, 60))]
        q = rng.choice([0.0, 10.0, 50.0, 90.0, 100.0, rng.uniform(0, 100)])
        lines.append(f"p {q!r} {len(v)} " + " ".join(repr(x) for x in v))
        want.append(stats.percentile(v, q))
    res = subprocess.run([str(stats_driver)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    got = res.stdout.split()
    assert len(got) == len(want)
    for line, g, w in zip(lines, got, want):
        assert float(g) == pytest.approx(w, rel=1e-14, abs=0), line[:60]
