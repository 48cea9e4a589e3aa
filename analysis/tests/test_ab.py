"""`ovb-analysis ab`: interleaved A/B runs of two commands of known different cost."""

import json

import pytest

from conftest import run_executable
from ovb_analysis import ab
from ovb_analysis.errors import AnalysisError


def test_two_sleeps_of_known_cost_give_their_ratio(tmp_path):
    # B sleeps 0.2 s, A 0.1 s: B/A is 2, moved by the shell's start-up (a few ms each, tens on a
    # loaded machine: one run read 2.014, p10 1.938, p90 2.036). A swapped ratio (0.5) or a
    # difference (100 ms) falls far outside (1.6, 2.4).
    out = tmp_path / "ab.json"
    r = run_executable("ab", "--a", "sleep 0.1", "--b", "sleep 0.2", "--pairs", "5",
                       "--json", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["pairs"] == 5 and doc["warmup_pairs"] == 1 and doc["measure"] == "wall_ms"
    assert [x["variant"] for x in doc["runs"]] == ["A", "B"] * 6  # interleaved, warm-up first
    assert [x["warmup"] for x in doc["runs"]] == [True, True] + [False] * 10
    assert 1.6 < doc["ratio_p50"] < 2.4
    assert doc["ratio_p10"] <= doc["ratio_p50"] <= doc["ratio_p90"]
    assert 100 <= doc["a_p50"] < doc["b_p50"]
    assert "B/A per pair: median" in r.stdout


def test_field_of_each_result_exact_ratios(tmp_path):
    # Each run writes its cost; A writes 4 ms, B writes 5, 6, 7, 8, 9 ms on pairs 1..5 (pair 0 is
    # warm-up): ratios 1.25 1.5 1.75 2 2.25, median 1.75, p10 at 0.4 -> 1.35, p90 at 3.6 -> 2.15.
    counter = tmp_path / "n"
    counter.write_text("3")
    b_cmd = (f"n=$(( $(cat {counter}) + 1 )); echo $n > {counter}; "
             "echo '{\"summary\": {\"p50_ms\": '$n'}}' > {out}")
    doc = ab.interleaved("echo '{\"summary\": {\"p50_ms\": 4}}' > {out}", b_cmd, pairs=5,
                         field="summary.p50_ms")
    assert doc["ratios"] == pytest.approx([1.25, 1.5, 1.75, 2.0, 2.25])
    assert doc["ratio_p50"] == pytest.approx(1.75)
    assert doc["ratio_p10"] == pytest.approx(1.35)
    assert doc["ratio_p90"] == pytest.approx(2.15)
    assert doc["overhead_pct_p50"] == pytest.approx(75.0)
    # Speed-ups A/B per pair 0.8 0.667 0.571 0.5 0.444: median 4/7, p10 0.4 of the way from 4/9
    # to 1/2, p90 0.6 of the way from 2/3 to 4/5.
    assert doc["speedup_p50"] == pytest.approx(4 / 7)
    assert doc["speedup_p10"] == pytest.approx(4 / 9 + 0.4 * (1 / 2 - 4 / 9))
    assert doc["speedup_p90"] == pytest.approx(2 / 3 + 0.6 * (4 / 5 - 2 / 3))


@pytest.mark.parametrize("kwargs,message", [
    ({"pairs": 4}, "at least 5 pairs"),
    ({"field": "summary.p50_ms"}, "needs {out} in both commands"),
])
def test_bad_usage_is_named(kwargs, message):
    with pytest.raises(AnalysisError, match=message):
        ab.interleaved("true", "true", **kwargs)


def test_a_failing_run_or_missing_field_is_one_error_line():
    r = run_executable("ab", "--a", "true", "--b", "echo boom >&2; exit 3")
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0
    assert "run B0" in r.stderr and "status 3" in r.stderr and "boom" in r.stderr
    r = run_executable("ab", "--a", "echo '{}' > {out}", "--b", "echo '{}' > {out}",
                       "--field", "summary.p50_ms")
    assert r.returncode == 1 and "no field 'summary.p50_ms'" in r.stderr


def _result_cmd(p50, losses):
    doc = json.dumps({"summary": {"p50_ms": p50},
                      "iterations": [{"loss": x} for x in losses]})
    return f"echo '{doc}' > {{out}}"


def test_loss_curves_compared_and_runs_kept(tmp_path):
    # B's losses differ from A's by 1e-3 relatively at the second iteration (2.002 vs 2.0): within
    # a tolerance of 2e-3, outside one of 5e-4. Every run's result stays in the kept folder, with
    # the per-variant spread of the measure (A always 10 ms, B always 8 ms: ratio 0.8 exactly).
    a = _result_cmd(10, [3.0, 2.0])
    b = _result_cmd(8, [3.0, 2.002])
    keep = tmp_path / "runs"
    doc = ab.interleaved(a, b, pairs=5, field="summary.p50_ms", keep=str(keep), loss_rtol=2e-3)
    assert doc["loss_same"] and doc["loss_max_rel_diff"] == pytest.approx(1e-3)
    assert sorted(p.name for p in keep.iterdir()) == sorted(
        f"{v}{i}.json" for v in "AB" for i in range(6))
    assert (doc["a_p10"], doc["a_p50"], doc["a_p90"]) == (10, 10, 10)
    assert doc["b_p10"] == doc["b_p90"] == 8 and doc["ratio_p50"] == pytest.approx(0.8)
    assert "speed-up A/B 1.2500 (p10 1.2500, p90 1.2500)" in ab.markdown(doc)
    out = tmp_path / "ab.json"
    r = run_executable("ab", "--a", a, "--b", b, "--field", "summary.p50_ms",
                       "--loss-rtol", "5e-4", "--json", out)
    assert r.returncode == 1, r.stderr
    assert json.loads(out.read_text())["loss_same"] is False
    assert "DIFFERENT" in r.stdout


@pytest.mark.parametrize("b_losses,message", [
    (None, "no iterations"),
    ([3.0], "2 iterations in A, 1 in B"),
])
def test_loss_curves_that_cannot_be_compared_are_named(b_losses, message):
    a = _result_cmd(10, [3.0, 2.0])
    b = ("echo '{\"summary\": {\"p50_ms\": 8}}' > {out}" if b_losses is None
         else _result_cmd(8, b_losses))
    with pytest.raises(AnalysisError, match=message):
        ab.interleaved(a, b, pairs=5, loss_rtol=1e-3)
    with pytest.raises(AnalysisError, match="--loss-rtol needs {out}"):
        ab.interleaved("true", "true", loss_rtol=1e-3)
