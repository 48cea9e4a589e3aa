"""Finding result files by shape; Google Benchmark aggregates; unreadable files listed."""

from conftest import RESULTS
from ovb_analysis import results


def test_every_fixture_recognised():
    rs = results.load_inputs([RESULTS])
    kinds = {f.rel: f.kind for f in rs.files}
    assert kinds == {
        "gpt4d/gpt4d_1.3B_g1_none.json": "gpt4d", "gpt4d/gpt4d_1.3B_g2_oar.json": "gpt4d",
        "gpt4d/gpt4d_1.3B_g8_all.json": "gpt4d", "gpt4d/gpt4d_1.3B_g8_none.json": "gpt4d",
        "gpt4d/gpt4d_2.7B_g8_all.json": "gpt4d",
        "gpt4d/gpt4d_1.3B_g8_all.trace-analysis.json": "trace",
        "trace/megatron_tp2.analysis.json": "trace",
        "megatron/tp1_g1/megatron-10001.log": "megatron",
        "megatron/tp2_g2/megatron-10002.log": "megatron",
        "megatron/tp2_g8/megatron-10008.log": "megatron",
        "microbench/collective.json": "gbench", "microbench/gemm.json": "gbench",
        "microbench/overlap.json": "gbench",
        "model/compare.json": "model_compare", "model/search.json": "model_search"}
    assert [f.rel for f in rs.files] == sorted(kinds)  # sorted, deterministic order
    failed = dict(rs.failed)
    assert set(failed) == {"broken/gpt4d_killed.json", "broken/megatron-oom.log"}
    assert failed["broken/gpt4d_killed.json"].startswith("malformed JSON")
    assert failed["broken/megatron-oom.log"].startswith("no Megatron-LM iteration lines")


def test_megatron_run_folder_carries_its_config():
    rs = results.load_inputs([RESULTS / "megatron" / "tp2_g8"])
    (f,) = rs.files
    cfg = f.doc["config"]
    assert (cfg["gpus"], cfg["tp"], cfg["pp"], cfg["dp"], cfg["global_batch"]) == (8, 2, 1, 4, 16)
    assert cfg["peak_tflops"] == 989.0 and len(f.doc["records"]) == 6


def test_benchmark_rows_prefer_the_median_aggregate():
    kind, doc = results.load_file(RESULTS / "microbench" / "collective.json")
    rows = results.benchmark_rows(doc, "all_reduce")
    world = [r for r in rows if r["label_fields"]["group"] == "world"]
    assert [int(r["bytes"]) for r in world] == [2**20, 2**24, 2**28]
    repeated = world[1]
    assert repeated["aggregate_name"] == "median" and repeated["time_max_us"] == 90.0
    assert repeated["label_fields"] == {"dtype": "bf16", "group": "world", "inplace": "0"}
    assert len(results.benchmark_rows(doc, "all_gather")) == 3
    assert results.benchmark_rows(doc, "gemm") == []


def test_classify_shapes_and_unknown(tmp_path):
    assert results.classify([{"iteration": 1, "elapsed_ms": 2.0}]) == "megatron"
    assert results.classify({"traceEvents": []}) == "raw_trace"
    assert results.classify({"configs": [{"predicted_ms": 1.0}]}) == "model_search"
    assert results.classify({"hello": 1}) is None
    (tmp_path / "a.json").write_text('{"hello": 1}')
    (tmp_path / "t.json").write_text('{"traceEvents": []}')
    (tmp_path / "parsed.json").write_text('[{"iteration": 1, "elapsed_ms": 2.0}]')
    (tmp_path / "slurm-1.out").write_text("gpt4d: done\n")
    (tmp_path / "slurm-2.out").write_text("Traceback\n  File pretrain_gpt.py\nOOM\n")
    rs = results.load_inputs([tmp_path])
    assert rs.failed == [("a.json", "not a result file of a known shape (see results/SCHEMA.md)"),
                         ("slurm-2.out", "no Megatron-LM iteration lines found (expected lines "
                          "like ' iteration 1/ 30 | consumed samples: ... |')")]
    assert rs.ignored == [("slurm-1.out", "log without Megatron-LM iteration lines"),
                          ("t.json", "raw trace (analyse it with ovb-trace analyze)")]
    assert [f.kind for f in rs.files] == ["megatron"]


def test_gpt4d_without_model_is_rejected(tmp_path):
    (tmp_path / "g.json").write_text('{"config": {"batch": 4}, "iterations": [], "summary": {}}')
    rs = results.load_inputs([tmp_path])
    assert rs.files == [] and "config.model" in rs.failed[0][1]
