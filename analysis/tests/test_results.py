"""Finding result files by shape; Google Benchmark aggregates; unreadable files listed."""

import json
import shutil

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
    assert results.classify({"configs": [], "spearman": None}) == "model_compare"
    assert results.classify({"iterations": []}) == "gpt4d"
    assert results.classify({"ranks": []}) == "trace"
    assert results.classify({"hello": 1}) is None
    assert results.classify([1, 2]) is None
    (tmp_path / "a.json").write_text('{"hello": 1}')
    (tmp_path / "t.json").write_text('{"traceEvents": []}')
    (tmp_path / "parsed.json").write_text('[{"iteration": 1, "elapsed_ms": 2.0}]')
    (tmp_path / "slurm-1.out").write_text("gpt4d: done\n")
    # a step that printed the Megatron command is no Megatron run; a traceback through it is
    (tmp_path / "step-megatron-cmd.log").write_text('torchrun "$MEGATRON_PATH/pretrain_gpt.py" '
                                                    "--num-layers 24\n")
    (tmp_path / "slurm-2.out").write_text('Traceback (most recent call last):\n  File '
                                          '"/opt/Megatron-LM/pretrain_gpt.py", line 288\nOOM\n')
    rs = results.load_inputs([tmp_path])
    assert rs.failed == [("slurm-2.out", "no Megatron-LM iteration lines found (expected lines "
                          "like ' iteration 1/ 30 | consumed samples: ... |')")]
    assert rs.ignored == [("a.json", "not a result file of a known shape (see results/SCHEMA.md)"),
                          ("slurm-1.out", "log without Megatron-LM iteration lines"),
                          ("step-megatron-cmd.log", "log without Megatron-LM iteration lines"),
                          ("t.json", "raw trace (analyse it with ovb-trace analyze)")]
    assert [f.kind for f in rs.files] == ["megatron"]


def test_log_in_a_megatron_run_folder_without_iterations_is_a_failed_run(tmp_path):
    shutil.copy(RESULTS / "megatron" / "tp2_g8" / "megatron_config.json", tmp_path)
    (tmp_path / "megatron-77.log").write_text("srun: error: node7: task 3: Killed\n")
    rs = results.load_inputs([tmp_path])
    assert [rel for rel, _ in rs.failed] == ["megatron-77.log"] and rs.files == []


def test_run_config_without_a_log_is_listed(tmp_path):
    (tmp_path / "mlm").mkdir()
    shutil.copy(RESULTS / "megatron" / "tp2_g8" / "megatron_config.json", tmp_path / "mlm")
    rs = results.load_inputs([tmp_path])
    assert rs.files == [] and rs.failed == []
    assert rs.ignored == [("mlm/megatron_config.json", "Megatron-LM run configuration without a "
                           "log (not run yet, or the job failed before starting)")]


def test_big_raw_trace_is_not_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "SNIFF_ABOVE_BYTES", 100)
    # not valid JSON after the head: proves the file is never parsed
    (tmp_path / "rank0.json").write_text('{"schemaVersion": 1, "traceEvents": [' + " " * 200)
    (tmp_path / "small.json").write_text('{"traceEvents": [')
    rs = results.load_inputs([tmp_path])
    assert rs.ignored == [("rank0.json", "raw trace (analyse it with ovb-trace analyze)")]
    assert [rel for rel, _ in rs.failed] == ["small.json"]  # small files are parsed: malformed


def test_big_merged_trace_is_known_by_its_header(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "SNIFF_ABOVE_BYTES", 100)
    # The writer's layout: header keys, then the events on a line of its own; the events are cut
    # off (invalid JSON), so only the header can have been parsed.
    header = '{\n  "distributedInfo": {"rank": -1},\n  "mergedFrom": [{"rank": 0, "file": "a"}]'
    (tmp_path / "merged.trace.json").write_text(header + ',\n  "traceEvents": [' + " " * 200)
    (tmp_path / "rank0.trace.json").write_text('{\n  "distributedInfo": {"rank": 0},\n  '
                                               '"traceEvents": [' + " " * 200)
    rs = results.load_inputs([tmp_path])
    assert [(f.rel, f.kind) for f in rs.files] == [("merged.trace.json", "merged_trace")]
    assert rs.files[0].doc["mergedFrom"] == [{"rank": 0, "file": "a"}]
    assert rs.ignored == [("rank0.trace.json", "raw trace (analyse it with ovb-trace analyze)")]
    assert rs.failed == []


def test_relative_paths_and_excluded_output_folder(tmp_path, monkeypatch):
    shutil.copytree(RESULTS / "model", tmp_path / "res" / "model")
    shutil.copytree(RESULTS / "model", tmp_path / "res" / "report")
    monkeypatch.chdir(tmp_path)
    rs = results.load_inputs(["res"], exclude=["res/report"])
    assert [f.rel for f in rs.files] == ["model/compare.json", "model/search.json"]


def test_gpt4d_without_model_is_rejected(tmp_path):
    (tmp_path / "g.json").write_text('{"config": {"batch": 4}, "iterations": [], "summary": {}}')
    rs = results.load_inputs([tmp_path])
    assert rs.files == [] and "config.model" in rs.failed[0][1]


def test_log_and_its_parsed_json_count_once(tmp_path, cli):
    run = tmp_path / "mlm"
    shutil.copytree(RESULTS / "megatron" / "tp2_g8", run)
    rc, out, _ = cli("megatron-log", run / "megatron-10008.log", "--json")
    assert rc == 0
    (run / "iters.json").write_text(out)
    rs = results.load_inputs([tmp_path])
    assert [f.rel for f in rs.files] == ["mlm/iters.json"]
    assert rs.ignored == [("mlm/megatron-10008.log", "same Megatron-LM iterations as "
                           "mlm/iters.json")]
    assert rs.files[0].doc["config"]["tp"] == 2  # the run folder's config applies to both


def test_machine_description_is_listed_not_failed(tmp_path):
    machine = {"name": "calibrated", "gpu": {"peak_tflops": 989}, "comm": {}, "interference": {},
               "sources": {}}
    (tmp_path / "machine.json").write_text(json.dumps(machine))
    rs = results.load_inputs([tmp_path])
    assert rs.ignored == [("machine.json", "machine description (input of ovb-model)")]
    assert rs.failed == [] and rs.files == []


def test_pytorch_reference_is_listed_not_failed(tmp_path):
    ref = {"config": {"model": {"layers": 2}}, "context": {"torch": "2.11.0", "device": "H100"},
           "iterations": [{"iter": 1, "loss": 5.0, "time_ms": 10.0}], "summary": {}}
    (tmp_path / "torch.json").write_text(json.dumps(ref))
    rs = results.load_inputs([tmp_path])
    assert rs.ignored == [("torch.json", "PyTorch reference run (endtoend/reference/pytorch_gpt.py)")]
    assert rs.failed == [] and rs.files == []
