"""gpt4d vs Megatron-LM: recomputed TFLOP/s (hand-computed), warm-up, spread, speedup, CLI."""

import json
import shutil

import pytest

from conftest import LOGS, RESULTS
from ovb_analysis import megatron_compare, results, runs
from ovb_analysis.errors import AnalysisError

GPT4D = RESULTS / "gpt4d" / "gpt4d_1.3B_g8_all.json"
MEGATRON_DIR = RESULTS / "megatron" / "tp2_g8"
# 1.3B (24 x 2048, s 2048, V 50304), global batch 16: 4 x 8077.5 * 2^33 FLOP per iteration
F_1_3B_B16 = 277_540_786_667_520.0


def load(path):
    kind, doc = results.load_file(path)
    return results.ResultFile(path, path.name, kind, doc)


def test_gpt4d_stats_by_hand():
    run = runs.from_gpt4d(load(GPT4D))
    assert run.gpus == 8 and run.layout == "2x2x1x2" and run.flags == "oar,ors,oag"
    assert run.peak == 989.0
    st = runs.run_stats(run)
    # 8 iterations: warm-up max(3, 10%) = 3; kept 133.43 133.57 133.03 133.70 133.30
    assert st["warmup"] == 3 and st["iterations_used"] == 5
    assert st["median_ms"] == 133.43
    assert st["p10_ms"] == pytest.approx(133.03 + 0.4 * 0.27)
    assert st["p90_ms"] == pytest.approx(133.57 + 0.6 * 0.13)
    assert st["model_flop"] == pytest.approx(F_1_3B_B16, rel=1e-12)
    assert st["tflops_per_gpu"] == pytest.approx(277.54078666752 / (0.13343 * 8), rel=1e-9)
    assert st["pct_peak"] == pytest.approx(100 * st["tflops_per_gpu"] / 989.0)


def test_compare_matched_runs():
    grun = runs.from_gpt4d(load(GPT4D))
    log = sorted(MEGATRON_DIR.glob("*.log"))[0]
    mrun = runs.from_megatron(load(log))
    res = megatron_compare.compare(grun, mrun)
    g, m = res["rows"]
    assert (g["system"], m["system"]) == ("gpt4d", "Megatron-LM")
    assert m["layout"] == "TP2 PP1 DP4" and m["gpus"] == 8 and m["batch"] == 16
    # Megatron: iterations 4..6 kept: 150.8 151.1 150.7
    assert m["median_ms"] == 150.8 and m["iterations_used"] == 3
    assert m["p10_ms"] == pytest.approx(150.72) and m["p90_ms"] == pytest.approx(151.04)
    assert m["tflops_per_gpu"] == pytest.approx(277.54078666752 / (0.1508 * 8), rel=1e-9)
    assert m["own_tflops_per_gpu"] == 232.8  # Megatron's own figure, shown beside
    assert res["speedup"] == pytest.approx(150.8 / 133.43)
    assert res["mismatches"] == []


def test_explicit_warmup_counts_iteration_numbers():
    grun = runs.from_gpt4d(load(GPT4D))
    mrun = runs.from_megatron(load(LOGS / "current.log"))  # iterations 1 2 3 4 30
    st = runs.run_stats(mrun, warmup=2)
    assert st["iterations_used"] == 3 and st["median_ms"] == 395.4
    assert mrun.gpus == 1 and mrun.batch == 4  # from the log's arguments block
    res = megatron_compare.compare(grun, mrun, warmup=2)
    assert res["mismatches"] == ["global batch: gpt4d 16 vs Megatron-LM 4",
                                 "GPUs: gpt4d 8 vs Megatron-LM 1"]
    # Megatron recomputed: F(B=4) / 0.3954 s / 1 GPU = 175.48 (its own figure: 175.5)
    assert res["rows"][1]["tflops_per_gpu"] == pytest.approx(69.38519666688 / 0.3954, rel=1e-9)


def test_cli_compare_table_and_json(cli, tmp_path):
    out_json = tmp_path / "cmp.json"
    rc, out, err = cli("compare-megatron", "--gpt4d", GPT4D, "--megatron", MEGATRON_DIR,
                       "--json", out_json)
    assert rc == 0 and err == ""
    assert "speedup of gpt4d over Megatron-LM (median time ratio): 1.130x" in out
    assert out.splitlines()[0].split()[:3] == ["system", "layout", "overlap"]
    doc = json.loads(out_json.read_text())
    assert doc["rows"][0]["median_ms"] == 133.43 and doc["rows"][1]["median_ms"] == 150.8


def test_cli_compare_without_megatron_config_assumes_gpt4d_model(cli, tmp_path):
    log = tmp_path / "m.log"
    log.write_text((LOGS / "moe.log").read_text())
    rc, out, err = cli("compare-megatron", "--gpt4d", GPT4D, "--megatron", log, "--warmup", 0)
    assert rc == 0 and "assuming the gpt4d run's model" in err
    assert "runs are not matched: global batch: gpt4d 16 vs Megatron-LM 256" in err


def test_cli_compare_errors(cli, tmp_path):
    rc, _, err = cli("compare-megatron", "--gpt4d", tmp_path / "none.json", "--megatron", MEGATRON_DIR)
    assert rc == 1 and "no such file" in err
    rc, _, err = cli("compare-megatron", "--gpt4d", RESULTS / "model" / "compare.json",
                     "--megatron", MEGATRON_DIR)
    assert rc == 1 and "not a gpt4d result" in err
    rc, _, err = cli("compare-megatron", "--gpt4d", GPT4D, "--megatron", LOGS / "no_iterations.log")
    assert rc == 1 and "no Megatron-LM iteration lines" in err
    rc, _, err = cli("compare-megatron", "--gpt4d", GPT4D, "--megatron", MEGATRON_DIR,
                     "--warmup", 50)
    assert rc == 1 and "no iterations left" in err


def test_recompute_mismatch_and_bad_times_are_reported():
    grun = runs.from_gpt4d(load(GPT4D))
    mrun = runs.from_megatron(load(sorted(MEGATRON_DIR.glob("*.log"))[0]))
    mrun.extra["recompute"] = True
    res = megatron_compare.compare(grun, mrun)
    assert res["mismatches"] == ["full recomputation: gpt4d off vs Megatron-LM on (the model FLOP "
                                 "count is the same; the work is not)"]
    # same FLOP formula on both sides: model FLOP, not hardware FLOP
    assert res["rows"][0]["model_flop"] == res["rows"][1]["model_flop"]
    assert res["rows"][1]["model_flop"] == pytest.approx(F_1_3B_B16, rel=1e-12)
    grun.times_ms = [0.0] * len(grun.times_ms)
    with pytest.raises(AnalysisError, match="non-positive iteration time"):
        runs.run_stats(grun)


def test_megatron_run_without_batch_is_an_error(tmp_path):
    (tmp_path / "p.json").write_text('[{"iteration": 1, "elapsed_ms": 100.0}]')
    rf = load(tmp_path / "p.json")
    grun = runs.from_gpt4d(load(GPT4D))
    with pytest.raises(AnalysisError, match="global batch of this Megatron-LM run is unknown"):
        runs.from_megatron(rf, fallback=grun)


def test_cli_compare_accepts_parsed_json_of_megatron_log(cli, tmp_path):
    rc, out, _ = cli("megatron-log", MEGATRON_DIR / "megatron-10008.log", "--json")
    parsed = tmp_path / "run" / "iters.json"
    parsed.parent.mkdir()
    parsed.write_text(out)
    shutil.copy(MEGATRON_DIR / "megatron_config.json", parsed.parent)
    rc, out, err = cli("compare-megatron", "--gpt4d", GPT4D, "--megatron", parsed)
    assert rc == 0 and err == ""
    assert "speedup of gpt4d over Megatron-LM (median time ratio): 1.130x" in out


def test_gpus_of_a_gpt4d_run_with_ranks_sharing_a_gpu(tmp_path):
    doc = json.loads(GPT4D.read_text())
    assert runs.gpu_count(doc) == 8
    doc["context"]["ranks_per_gpu"] = 4  # 8 ranks on 2 GPUs (--ranks-per-gpu 4)
    assert runs.gpu_count(doc) == 2
    doc["config"]["devices"] = 2  # what gpt4d writes when it knows
    doc["context"]["ranks_per_gpu"] = 1
    assert runs.gpu_count(doc) == 2
    doc["config"]["grid"]["order"] = "z,y,x"
    (tmp_path / "g.json").write_text(json.dumps(doc))
    run = runs.from_gpt4d(load(tmp_path / "g.json"))
    assert run.gpus == 2 and run.layout == "2x2x1x2 (z,y,x)"
    st = runs.run_stats(run)
    assert st["tflops_per_gpu"] == pytest.approx(277.54078666752 / (0.13343 * 2), rel=1e-9)
