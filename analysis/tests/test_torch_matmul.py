"""microbench/torch_matmul.py, the outside GEMM reference: its percentiles are the suite's
(stats.py), it skips cleanly where torch or a GPU is missing, and bad shapes are one error line."""

import json
import random
import subprocess
import sys

import pytest

from conftest import ANALYSIS, load_script
from ovb_analysis import stats

SCRIPT = ANALYSIS.parent / "microbench" / "torch_matmul.py"


def load():
    return load_script(SCRIPT, "torch_matmul")


def test_percentiles_and_sample_rule_are_the_suites():
    mod = load()
    assert mod.MIN_TIMED_SAMPLES == stats.MIN_TIMED_SAMPLES
    assert mod.WARMUP == stats.default_warmup(stats.default_runs())
    rng = random.Random(5)
    for _ in range(100):
        v = [rng.random() for _ in range(rng.randint(1, 40))]
        q = rng.choice([10.0, 50.0, 90.0, rng.uniform(0, 100)])
        assert mod.percentile(v, q) == pytest.approx(stats.percentile(v, q), rel=1e-14)


def test_skips_cleanly_without_torch_or_gpu(tmp_path):
    out = tmp_path / "t.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--shapes", "64x64x64", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    doc = json.loads(out.read_text())
    if "results" in doc:
        pytest.skip("torch with a GPU is here: the skip path does not apply")
    assert r.returncode == 0, r.stderr
    assert doc["skipped"] in ("torch is not installed in this Python",
                              "no CUDA device visible to torch")
    assert "skipped:" in r.stdout


def test_bad_shape_is_one_error_line():
    r = subprocess.run([sys.executable, str(SCRIPT), "--shapes", "64x6"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert r.stderr.strip() == "torch_matmul.py: error: shape '64x6' is not MxNxK"
