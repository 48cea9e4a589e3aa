"""The H100 figures that README.md and results/h100/README.md quote are recomputed here from the
committed result files they name, formatted as the READMEs print them, and must appear there
(whitespace and line breaks ignored): a figure edited without its data, or data replaced without
its figure, fails. Sample counts and spreads are checked with the figures.

Run: pytest analysis/tests/test_claims.py
"""

import json
import re

import pytest

from conftest import ANALYSIS

ROOT = ANALYSIS.parent
H100 = ROOT / "results" / "h100"
GIB = 2.0**30


def load(rel):
    return json.loads((H100 / rel).read_text(encoding="utf-8"))


def text(path):
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


TEXTS = {"README.md": text(ROOT / "README.md"),
         "results/h100/README.md": text(H100 / "README.md")}
README, RESULTS = "README.md", "results/h100/README.md"


def run_stats(rel):
    """(n, median, p10, p90, TFLOP/s, MFU %) of a gpt4d result as its summary gives them."""
    s = load(rel)["summary"]
    return (s["measured_iters"], s["median_time_ms"], s["p10_time_ms"], s["p90_time_ms"],
            s["tflops_per_gpu"], 100 * s["mfu"])


def torch_times(rel):
    d = load(rel)
    return [i["time_ms"] for i in d["iterations"][d["summary"]["warmup_iters"]:]], d["summary"]


SHAPES = (("125M", 4, "single-gpu/gpt4d_125M.json"), ("350M", 4, "single-gpu/gpt4d_350M.json"),
          ("1.3B", 4, "single-gpu/gpt4d_1.3B.json"), ("2.7B", 4, "single-gpu/gpt4d_2.7B.json"),
          ("1.3B", 8, "single-gpu/gpt4d_1.3B_batch8.json"),
          ("1.3B", 16, "single-gpu/gpt4d_1.3B_batch16.json"))


def memory(rel):
    s = load(rel)["summary"]
    est = s["memory_estimate_bytes"]
    return (s["peak_memory_bytes"] / GIB, s["device_memory_used_bytes"] / GIB, est / GIB,
            100 * (s["peak_memory_bytes"] / est - 1), 100 * (s["device_memory_used_bytes"] / est - 1))


def layer_gemms():
    out = []
    for shape in ("1.3B", "2.7B", "6.7B"):
        out += load(f"single-gpu/gemm_{shape}.json")["benchmarks"]
    return out


def claims():
    """(where, text) pairs: each text is computed from the committed files."""
    found = []
    n, med, p10, p90, tf, mfu = run_stats("side-by-side/gpt4d_1.3B.json")
    found += [(README, f"**{med:.1f} ms, {tf:.0f} TFLOP/s, {mfu:.0f} % MFU** | n = {n}, "
                       f"{p10:.1f}-{p90:.1f} ms"),
              (RESULTS, f"| {n} | **{med:.1f}** | {p10:.1f}-{p90:.1f} | **{tf:.1f}** | "
                        f"**{mfu:.1f} %** |")]
    eager, es = torch_times("side-by-side/torch_1.3B_eager.json")
    comp, cs = torch_times("side-by-side/torch_1.3B_compile.json")
    found.append((README, f"eager {es['tflops_per_gpu']:.0f}, torch.compile "
                          f"{cs['tflops_per_gpu']:.0f} TFLOP/s | n = {len(eager)} each"))
    for times, s in ((eager, es), (comp, cs)):
        found.append((RESULTS, f"| {len(times)} | {s['median_time_ms']:.1f} | {min(times):.1f}-"
                               f"{max(times):.1f} (min-max) | {s['tflops_per_gpu']:.1f} | "
                               f"{100 * s['mfu']:.1f} % |"))
    n, med, p10, p90, tf, mfu = run_stats("single-gpu/gpt4d_1.3B_batch16.json")
    found.append((README, f"{tf:.0f} TFLOP/s, {mfu:.0f} % MFU | n = {n} (median of {n}), "
                          f"{p10:.1f}-{p90:.1f} ms"))
    found.append((RESULTS, f"The batch-16 figure ({tf:.1f} TFLOP/s) is the median of {n} timed "
                           "iterations"))
    for shape, batch, rel in SHAPES:
        n, med, p10, p90, tf, mfu = run_stats(rel)
        found.append((RESULTS, f"| {n} | {med:.1f} | {p10:.1f}-{p90:.1f} | {tf:.1f} | "
                               f"{mfu:.1f} % |"))
        alloc, dev, est, a, d = memory(rel)
        found.append((RESULTS, f"| {shape} | {batch} | {alloc:.2f} / {est:.2f} GiB ({a:+.2f} %) | "
                               f"{dev:.2f} / {est:.2f} GiB ({d:+.2f} %) |"))
    mem = [memory(rel) for _, _, rel in SHAPES]
    a_lo, a_hi = min(m[3] for m in mem), max(m[3] for m in mem)
    d_lo, d_hi = min(m[4] for m in mem), max(m[4] for m in mem)
    found.append((README, f"{a_lo:+.2f} to {a_hi:+.2f} %"))
    found.append((README, f"{d_lo:+.2f} % (2.7B) to {d_hi:+.2f} % (125M)"))
    found.append((RESULTS, f"{a_lo:+.2f} to {a_hi:+.2f} %, the difference being the cuDNN workspace"))
    gemms = layer_gemms()
    tfl = [b["tflops"] for b in gemms]
    big_runs = [b for b in load("single-gpu/gemm_8192.json")["benchmarks"]
                if b.get("run_type") == "iteration"]
    big = [b["tflops"] for b in big_runs]
    found.append((README, f"{min(tfl):.0f}-{max(tfl):.0f} TFLOP/s in 0.05 s runs (boost-clock "
                          f"regime); 8192^3 at {min(big):.0f}-{max(big):.0f} sustained"))
    ratios = [b["over_best"] for b in gemms]
    big_ratio = [b["over_best"] for b in big_runs]
    found.append((RESULTS, f"It is {min(big_ratio):.2f}-{max(big_ratio):.2f} for 8192^3"))
    found.append((RESULTS, f"ranges from {min(ratios):.2f}"))
    found.append((RESULTS, f"to {max(ratios):.2f}; {sum(r < 1 for r in ratios)} of the "
                           f"{len(ratios)} are below 1"))
    tn, tmed, t10, t90, _, _ = run_stats("single-gpu/gpt4d_1.3B_traced.json")
    un, umed, u10, u90, _, _ = run_stats("single-gpu/gpt4d_1.3B_untraced.json")
    spreads = sorted((100 * (t90 - t10) / tmed, 100 * (u90 - u10) / umed))
    found.append((README, f"{100 * (tmed / umed - 1):+.1f} % between medians, inside the runs' "
                          f"{spreads[0]:.0f}-{spreads[1]:.0f} % spread"))
    found.append((RESULTS, f"medians {tmed:.1f} vs {umed:.1f} ms, {100 * (tmed / umed - 1):+.2f} %, "
                           f"with p10-p90 spreads of {t10:.1f}-{t90:.1f} and {u10:.1f}-{u90:.1f} ms"))
    cmp_ = load("model/model/compare.json")
    found.append((README, f"mean error {cmp_['mean_abs_error_pct']:.1f} %, Spearman "
                          f"{cmp_['spearman']:.2f}"))
    return found


def idle_claims():
    """The steady-state idle estimate of results/h100/README.md from the committed totals."""
    traced = load("single-gpu/gpt4d_1.3B_traced.json")
    times = [i["time_ms"] for i in traced["iterations"]]
    a = load("single-gpu/trace/analysis.json")["summary"]
    busy, idle = a["busy_us"] / 1e3, a["idle_us"] / 1e3
    per_iter_busy = busy / len(times)
    steady = sum(times[1:])
    idle_ss = steady - (len(times) - 1) * per_iter_busy
    per_iter = idle_ss / (len(times) - 1)
    return [f"({times[0]:.1f} ms of the {sum(times):.1f} ms", f"{idle:.1f} ms in all",
            f"Kernels ran {busy:.1f} ms in all", f"({busy:.1f} / {len(times)} = "
            f"{per_iter_busy:.1f} ms)", f"iterations 1-{len(times) - 1} ({steady:.1f} ms)",
            f"{per_iter:.1f} ms per steady-state iteration "
            f"({100 * per_iter / (steady / (len(times) - 1)):.1f} %)"]


def four_rank_rows():
    rows = []
    for name, rel in (("none", "overlap_none"), ("oar", "overlap_oar"), ("ors", "overlap_ors"),
                      ("oag", "overlap_oag"), ("oar,ors", "overlap_oar_ors"),
                      ("oar,oag", "overlap_oar_oag"), ("ors,oag", "overlap_ors_oag"),
                      ("oar,ors,oag", "overlap_oar_ors_oag")):
        s = load(f"overlap-4ranks/{rel}.json")["summary"]
        c, e = s["comm_time_ms"], s["exposed_comm_ms"]
        rows.append(f"| {name} | {s['median_time_ms']:.1f} | {s['p10_time_ms']:.1f}-"
                    f"{s['p90_time_ms']:.1f} | {c:.1f} | {e:.1f} | {c - e:.1f} |")
    return rows


@pytest.mark.parametrize("where, claim", claims())
def test_quoted_figure_matches_its_file(where, claim):
    assert claim in TEXTS[where]


@pytest.mark.parametrize("claim", idle_claims())
def test_idle_estimate_matches_the_committed_totals(claim):
    assert claim in TEXTS[RESULTS]


@pytest.mark.parametrize("row", four_rank_rows())
def test_four_rank_table_matches_its_files(row):
    assert row in TEXTS[RESULTS]


def test_withdrawn_claims_are_gone():
    assert "within 0.3 %" not in TEXTS[README]
    assert "capture the iteration in a CUDA graph;" not in TEXTS[RESULTS]
    assert "| tracer overhead (gpt4d 1.3B traced vs untraced) | +0.2 % |" not in TEXTS[README]
