"""The figures results/h100/gpu-check/README.md quotes, against the folder's data: summary.md written
again by `ovb-analysis summarize gpu-check` from the committed files, and the loss files read
directly. A figure edited without its data, or data replaced without its figure, fails.

Run: pytest analysis/tests/test_claims_gpu_check.py
"""

import json
import re
import shutil

from conftest import ANALYSIS

FOLDER = ANALYSIS.parent / "results" / "h100" / "gpu-check"
README = re.sub(r"\s+", " ", (FOLDER / "README.md").read_text(encoding="utf-8"))


def losses(name):
    doc = json.loads((FOLDER / name).read_text(encoding="utf-8"))
    return [i["loss"] for i in doc["iterations"]]


def summary(cli, tmp_path):
    folder = tmp_path / "gpu-check"
    shutil.copytree(FOLDER, folder)
    rc, _, _ = cli("summarize", "gpu-check", folder, "-o", tmp_path / "out")
    assert rc == 1  # the two failed ctests are the summary's failed checks
    return (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")


def rows(text, first_cell):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith(f"| {first_cell}")]


def test_readme_figures_follow_the_data(cli, tmp_path):
    s = summary(cli, tmp_path)
    assert "Llama kernel tests (CUDA against host): 12 run, 0 failed" in s
    assert "12 run, 0 failed" in README
    dev = re.search(r"Largest relative deviation cuda fp32 vs host: (\S+) ", s).group(1)
    assert f"relative loss deviation of {dev}" in README
    host, bf16 = losses("compare_host.json"), losses("compare_cuda_bf16.json")
    worst = max(abs(a - b) / abs(a) for a, b in zip(host, bf16))
    assert f"CUDA bf16 within {worst:.1e} of the host's" in README
    diffs = {r[0]: float(r[3]) for r in rows(s, "") if len(r) == 5 and r[4] in ("ok", "exceeds")}
    lo, hi = min(diffs, key=diffs.get), max(diffs, key=diffs.get)
    assert f"{diffs[lo]:.2e} ({lo}" in README and f"{diffs[hi]:.2e} ({hi}" in README
    ratios = [float(r[5]) for r in rows(s, "") if len(r) == 7 and r[6] in ("met", "missed")]
    assert len(ratios) == 8 and all(r <= 1.10 for r in ratios)
    assert f"peak / plan {min(ratios):.3f} to {max(ratios):.3f}" in README
    (head,) = [r for r in rows(s, "seq 2048, batch 4 ")]
    _, n, median, spread, tflops, mfu, clock, power, _, throttled = head
    assert (f"{n} timed iterations after 5): {median} ms median, p10-p90 {spread}, {tflops} "
            f"TFLOP/s, {mfu} MFU") in README
    assert f"median {power} W" in README and f"in {throttled} samples" in README
    assert f"SM clock {clock} MHz" in README
    passed = re.search(r"(\d+) tests: (\d+) passed, (\d+) failed", s)
    assert f"{passed.group(2)} of the {passed.group(1)} GPU-labelled ctests" in README
