"""The figures docs/validation.md quotes for the model against gpt4d's 1.3B headline run on one
H100 (in its finding on the smallest Megatron-Core run) are those of the committed comparison
(results/model/h100-headline-compare.sh, .json) and of the measured run it reads: the prediction,
the median, the sample count and the p10-p90 spread. An edited figure in either place fails.

Run: pytest analysis/tests/test_claims_h100_headline_compare.py
"""

import json

from conftest import ANALYSIS

ROOT = ANALYSIS.parent
COMPARE = ROOT / "results" / "model" / "h100-headline-compare.json"
RUN = ROOT / "results" / "h100" / "gpu-check" / "headline" / "gpt4d_1.3B.json"
DOC = ROOT / "docs" / "validation.md"


def test_quoted_figures_are_the_comparisons_and_the_runs():
    row, = json.loads(COMPARE.read_text())["configs"]
    summary = json.loads(RUN.read_text())["summary"]
    assert row["measured_ms"] == summary["median_time_ms"]
    assert (row["gx"], row["gy"], row["gz"], row["gdata"]) == (1, 1, 1, 1)
    quoted = (f"at {row['predicted_ms']:.1f} ms against the measured {summary['median_time_ms']:.1f} ms "
              f"median, {summary['iterations_timed']} iterations, p10-p90 {summary['p10_ms']:.1f}-"
              f"{summary['p90_ms']:.1f}")
    doc = " ".join(DOC.read_text().split())
    assert doc.count(quoted) == 1, quoted
