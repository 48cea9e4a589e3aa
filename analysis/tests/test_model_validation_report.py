"""ovb-model validate JSON in the report: recognised as its own kind, drawn (published vs predicted
with the tolerance band) and tabled row by row; a search holding both strategies still plots its
4D configurations."""

import json

from ovb_analysis import report, results

DOC = {"context": {}, "runs_file": "published_runs.json", "tolerance_pct": 25,
       "rows": [{"id": "a", "strategy": "megatron", "machine": "dgx-a100-80gb", "gpus": 512,
                 "config": "tp=8 pp=2", "convention": "hardware", "published_tflops_per_gpu": 140.0,
                 "predicted_tflops_per_gpu": 150.0, "error_pct": 7.142857, "fits": True,
                 "within_tolerance": True, "known_miss": None, "verified": True},
                {"id": "b", "strategy": "4d", "machine": "perlmutter-a100", "gpus": 1024,
                 "config": "8x4x16x2", "convention": "hardware", "published_tflops_per_gpu": 177.7,
                 "predicted_tflops_per_gpu": 70.7, "error_pct": -60.2, "fits": True,
                 "within_tolerance": False, "known_miss": "memory plan", "verified": False}]}


def test_validation_is_its_own_kind_plotted_and_tabled(tmp_path):
    (tmp_path / "validation.json").write_text(json.dumps(DOC))
    assert results.classify(DOC) == "model_validation"
    rep, written = report.build(tmp_path, tmp_path / "out")
    assert any(str(p).endswith("model_validation.png") for p in written)
    table = next(t for t in rep.tables if t.title == "Model validation")
    assert [r[0] for r in table.rows] == ["a", "b"]
    assert table.rows[0][8] == "+7.1" and table.rows[0][9].startswith("yes")
    assert table.rows[1][9].startswith("known miss")
    assert table.rows[0][10] == "yes" and table.rows[1][10].startswith("not all")


def test_search_with_both_strategies_plots_the_4d_ones(tmp_path):
    doc = {"context": {}, "strategy": "all", "inputs": {}, "configs": [
        {"strategy": "4d", "gx": 1, "gy": 2, "gz": 2, "gdata": 1, "order": "x,y,z", "rank": 1,
         "predicted_ms": 10.0, "compute_ms": 8.0, "exposed_comm_ms": 2.0, "fits": True},
        {"strategy": "megatron", "tp": 2, "pp": 2, "dp": 1, "micro_batch": 1, "virtual_stages": 1,
         "predicted_ms": 9.0, "memory_bytes": 1e9, "fits": True}]}
    (tmp_path / "search.json").write_text(json.dumps(doc))
    rep, written = report.build(tmp_path, tmp_path / "out")
    assert any(str(p).endswith("model_search.png") for p in written)
    assert not rep.failed


def test_a_megatron_configuration_without_its_keys_is_named(tmp_path):
    doc = {"context": {}, "configs": [{"strategy": "megatron", "tp": 2, "predicted_ms": 9.0,
                                       "fits": True}]}
    (tmp_path / "search.json").write_text(json.dumps(doc))
    rep, _ = report.build(tmp_path, tmp_path / "out")
    assert rep.failed == [("search.json", "missing key 'configs[0].pp'")]
