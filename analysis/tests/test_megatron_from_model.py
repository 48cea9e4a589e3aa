"""megatron-cmd --from-model: the performance model's best Megatron configuration becomes the
launch (model, batch, GPUs, TP, PP, micro batch, virtual stages, recomputation, SP, optimizer)."""

import json

from ovb_analysis import megatron_launch as ml


def search_doc(configs):
    return {"context": {}, "strategy": "all",
            "inputs": {"model": {"layers": 48, "hidden": 4096, "heads": 32, "seq": 2048,
                                 "vocab": 51200, "preset": None}, "batch": 512, "gpus": 64},
            "configs": configs}


MEG = {"strategy": "megatron", "tp": 4, "pp": 4, "dp": 4, "micro_batch": 2, "virtual_stages": 3,
       "recompute": "selective", "sequence_parallel": True, "distributed_optimizer": True,
       "predicted_ms": 1234.5, "fits": True}


def write(tmp_path, configs):
    path = tmp_path / "search.json"
    path.write_text(json.dumps(search_doc(configs)))
    return path


def test_best_fitting_megatron_configuration_becomes_the_launch(cli, tmp_path):
    unfit = dict(MEG, tp=8, fits=False)
    four_d = {"strategy": "4d", "gx": 1, "gy": 8, "gz": 8, "gdata": 1, "fits": True}
    path = write(tmp_path, [four_d, unfit, MEG])
    rc, out, err = cli("megatron-cmd", "--from-model", path)
    assert rc == 0, err
    assert "TP=4 PP=4 micro batch 2, 3 virtual stage(s), predicted 1234.5 ms" in out
    cmd = out.splitlines()[-1]
    for piece in ("--num-layers 48 ", "--hidden-size 4096 ", "--global-batch-size 512 ",
                  "--micro-batch-size 2 ", "--tensor-model-parallel-size 4 ",
                  "--pipeline-model-parallel-size 4 ", "--sequence-parallel",
                  "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
                  "--recompute-granularity selective", "--num-layers-per-virtual-pipeline-stage 4",
                  "--vocab-size 51200"):
        assert piece in cmd, piece
    assert "--recompute-method" not in cmd  # selective, not full


def test_full_recompute_and_no_interleaving(cli, tmp_path):
    path = write(tmp_path, [dict(MEG, recompute="full", virtual_stages=1,
                                 distributed_optimizer=False)])
    rc, out, err = cli("megatron-cmd", "--from-model", path)
    assert rc == 0, err
    cmd = out.splitlines()[-1]
    assert "--recompute-granularity full --recompute-method uniform" in cmd
    assert "virtual-pipeline" not in cmd and "--use-distributed-optimizer" not in cmd


def test_block_recompute_passes_its_layer_count(cli, tmp_path):
    path = write(tmp_path, [dict(MEG, recompute="full", recompute_layers=3)])
    rc, out, err = cli("megatron-cmd", "--from-model", path)
    assert rc == 0, err
    cmd = out.splitlines()[-1]
    assert "--recompute-granularity full --recompute-method block --recompute-num-layers 3" in cmd
    assert "uniform" not in cmd


def test_without_a_fitting_megatron_configuration_it_says_so(cli, tmp_path):
    rc, _, err = cli("megatron-cmd", "--from-model", write(tmp_path, [dict(MEG, fits=False)]))
    assert rc == 1 and "no fitting Megatron configuration" in err
    bad = tmp_path / "other.json"
    bad.write_text("{}")
    rc, _, err = cli("megatron-cmd", "--from-model", bad)
    assert rc == 1 and "not an ovb-model search or versus JSON" in err


def test_virtual_stage_rules():
    base = ml.MegatronConfig(layers=24, hidden=2048, heads=16, seq=2048, vocab=50304,
                             global_batch=16, micro_batch=2, gpus=8, tp=2, pp=2, virtual_stages=4)
    cfg, _ = ml.validate(base)
    assert "--num-layers-per-virtual-pipeline-stage" in ml.pretrain_args(cfg)
    import pytest
    from dataclasses import replace
    from ovb_analysis.errors import AnalysisError
    with pytest.raises(AnalysisError, match="5 virtual stages need PP >= 2"):
        ml.validate(replace(base, virtual_stages=5))


def test_uneven_pipeline_stages_are_refused_by_name(cli, tmp_path):
    path = write(tmp_path, [dict(MEG, first_stage_layers=11, last_stage_layers=11)])
    rc, out, err = cli("megatron-cmd", "--from-model", path)
    assert rc == 1 and "uneven pipeline stages" in err and out == ""
