"""Megatron-LM launch: the rules Megatron enforces, the generated arguments, sbatch, CLI."""

import json
import shutil
import subprocess
from dataclasses import replace

import pytest

from ovb_analysis import megatron_launch as ml
from ovb_analysis import megatron_script as ms
from ovb_analysis.errors import AnalysisError

BASE = ml.MegatronConfig(layers=24, hidden=2048, heads=16, seq=2048, vocab=50304, global_batch=16,
                         micro_batch=2, gpus=8, tp=2, pp=1)


def check(**changes):
    return ml.validate(replace(BASE, **changes))


def rejected(match, **changes):
    with pytest.raises(AnalysisError, match=match):
        check(**changes)


def test_valid_configuration_and_grid_mapping():
    cfg, warnings = check()
    assert warnings == [] and cfg.dp == 4
    assert ml.suite_grid(cfg) == {"gx": 1, "gy": 2, "gz": 1, "gdata": 4, "pp": 1}
    assert ml.environment(cfg) == {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    assert ml.environment(replace(cfg, tp=1)) == {}


def test_rules_megatron_enforces():
    rejected("TP\\*PP = 6 does not divide the GPU count 8", tp=3, pp=2, heads=24, layers=24)
    rejected("attention heads 16 not divisible by TP=3", tp=3, gpus=9, global_batch=6,
             micro_batch=2)
    rejected("layers 24 not divisible by PP=5", pp=5, tp=1, gpus=5, global_batch=2, micro_batch=2)
    rejected("global batch 16 not divisible by micro batch \\* DP = 8 \\* 4", micro_batch=8)
    rejected("--overlap-param-gather needs --distributed-optimizer and --overlap-grad-reduce",
             overlap_param_gather=True, overlap_grad_reduce=True)
    rejected("--overlap-param-gather needs", overlap_param_gather=True, distributed_optimizer=True)
    rejected("--tp-comm-overlap needs --sequence-parallel", tp_comm_overlap=True)
    rejected("cannot be used with --local", tp_comm_overlap=True, sequence_parallel=True,
             local=True)
    rejected("--gpus must be positive", gpus=0)


def test_all_errors_reported_in_one_line():
    with pytest.raises(AnalysisError) as e:
        check(heads=15, micro_batch=3)
    msg = str(e.value)
    assert "\n" not in msg and "heads 15 not divisible by TP=2" in msg and "micro batch" in msg


def test_sequence_parallel_dropped_at_tp1_then_tp_comm_overlap_rejected():
    cfg, warnings = check(tp=1, sequence_parallel=True, global_batch=16, micro_batch=2)
    assert cfg.sequence_parallel is False and "drops it" in warnings[0]
    rejected("--tp-comm-overlap needs --sequence-parallel", tp=1, sequence_parallel=True,
             tp_comm_overlap=True)


def test_overlap_flags_accepted_together_and_pp_warns():
    cfg, warnings = check(sequence_parallel=True, distributed_optimizer=True,
                          overlap_grad_reduce=True, overlap_param_gather=True, tp_comm_overlap=True)
    args = ml.pretrain_args(cfg)
    for flag in ("--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce",
                 "--overlap-param-gather", "--tp-comm-overlap"):
        assert flag in args
    _, warnings = check(pp=2, gpus=8, global_batch=16, micro_batch=2)
    assert "PP=2 has no counterpart" in warnings[0]


def test_pretrain_args_match_the_spec():
    args = ml.pretrain_args(replace(BASE, local=True, iters=30))
    text = " ".join(args)
    assert text.startswith("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 "
                           "--seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 2 "
                           "--global-batch-size 16 --train-iters 30 --bf16 "
                           "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1")
    for part in ("--log-interval 1 --log-throughput --mock-data --tokenizer-type NullTokenizer "
                 "--vocab-size 50304", "--transformer-impl local --no-persist-layer-norm "
                 "--no-masked-softmax-fusion --no-gradient-accumulation-fusion"):
        assert part in text
    assert "--sequence-parallel" not in args and "--transformer-impl" not in ml.pretrain_args(BASE)


def test_presets():
    assert ml.preset("1.3B") == (24, 2048, 16)
    assert ml.preset("gpt-1.3b") == (24, 2048, 16)
    assert ml.preset("125m") == (12, 768, 12)
    assert ml.preset("175B") == (96, 12288, 96)
    for name, (layers, hidden, heads) in ml.PRESETS.items():
        assert hidden % heads == 0, name
    with pytest.raises(AnalysisError, match="unknown preset"):
        ml.preset("7B")


def test_node_layout():
    assert ms.node_layout(8) == (1, 8)
    assert ms.node_layout(32) == (4, 8)
    assert ms.node_layout(16, nodes=4) == (4, 4)
    assert ms.node_layout(16, gpus_per_node=4) == (4, 4)
    with pytest.raises(AnalysisError, match="does not divide"):
        ms.node_layout(12, nodes=5)
    with pytest.raises(AnalysisError, match="!="):
        ms.node_layout(16, nodes=2, gpus_per_node=4)


def test_commands_text():
    one = ms.local_command(BASE)
    assert one.startswith("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --standalone --nproc_per_node 8 "
                          '"$MEGATRON_PATH/pretrain_gpt.py" --num-layers 24')
    multi = ms.local_command(replace(BASE, gpus=16, global_batch=32), nodes=2, gpus_per_node=8)
    assert "--nnodes 2 --nproc_per_node 8" in multi and '"$MASTER_ADDR:29500"' in multi


def test_sbatch_script(tmp_path):
    text = ms.sbatch_script(BASE, 1, 8, None, tmp_path)
    assert text.startswith("#!/bin/bash\n#SBATCH --job-name=megatron-L24h2048-tp2pp1dp4\n")
    assert "#SBATCH --nodes=1\n" in text and "#SBATCH --gpus-per-node=8\n" in text
    assert f"#SBATCH --output={tmp_path}/megatron-%j.log" in text
    assert "${MEGATRON_PATH:?set MEGATRON_PATH" in text
    assert "export CUDA_DEVICE_MAX_CONNECTIONS=1" in text
    assert "--nproc_per_node 8" in text and "--tensor-model-parallel-size 2" in text
    assert 'MEGATRON_PATH="${MEGATRON_PATH:-/opt/mlm}"' in ms.sbatch_script(BASE, 1, 8, "/opt/mlm")
    if shutil.which("bash"):
        script = tmp_path / "s.sbatch"
        script.write_text(text)
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0


def test_cli_prints_command_and_needs_no_megatron_path(cli, monkeypatch):
    monkeypatch.delenv("MEGATRON_PATH", raising=False)
    rc, out, err = cli("megatron-cmd", "--layers", 24, "--hidden", 2048, "--heads", 16, "--seq",
                       2048, "--vocab", 50304, "--global-batch", 4, "--micro-batch", 4, "--gpus", 1,
                       "--tp", 1, "--local", "--iters", 30)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "# suite grid: Gx=1 Gy=1 Gz=1 Gdata=1 (Megatron TP=1 PP=1 DP=1)"
    assert lines[1].startswith("torchrun --standalone --nproc_per_node 1")
    assert "MEGATRON_PATH" in err and "error" not in err


def test_cli_rejects_before_writing(cli, tmp_path):
    out_file = tmp_path / "run.sbatch"
    rc, out, err = cli("megatron-cmd", "--preset", "1.3B", "--global-batch", 4, "--gpus", 8,
                       "--tp", 2, "--overlap-param-gather", "--sbatch", out_file)
    assert rc == 1 and out == "" and not out_file.exists()
    assert err.count("\n") == 1 and "--overlap-param-gather needs" in err


def test_cli_sbatch_writes_script_and_run_config(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("MEGATRON_PATH", raising=False)
    script = tmp_path / "run" / "job.sbatch"
    rc, out, err = cli("megatron-cmd", "--preset", "1.3B", "--global-batch", 16, "--micro-batch", 2,
                       "--gpus", 16, "--gpus-per-node", 8, "--tp", 2, "--sequence-parallel",
                       "--peak", 989, "--sbatch", script)
    assert rc == 0 and script.exists() and script.stat().st_mode & 0o111
    assert "#SBATCH --nodes=2" in script.read_text()
    record = json.loads((tmp_path / "run" / "megatron_config.json").read_text())
    assert record["kind"] == "megatron_run" and record["dp"] == 8
    assert record["config"]["preset"] == "1.3B" and record["peak_tflops"] == 989.0
    assert record["suite_grid"] == {"gx": 1, "gy": 2, "gz": 1, "gdata": 8, "pp": 1}


def test_cli_run_and_submit_need_megatron_path(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("MEGATRON_PATH", raising=False)
    common = ("megatron-cmd", "--preset", "125M", "--global-batch", 8, "--gpus", 1)
    rc, _, err = cli(*common, "--run")
    assert rc == 1 and "MEGATRON_PATH is not set" in err
    rc, _, err = cli(*common, "--run", "--megatron-path", tmp_path)
    assert rc == 1 and "pretrain_gpt.py not found" in err
    rc, _, err = cli(*common, "--submit")
    assert rc == 1 and "--submit needs --sbatch" in err
    rc, _, err = cli(*common, "--gpus", 16, "--global-batch", 16, "--run")
    assert rc == 1 and "use --sbatch and --submit" in err


def test_cli_list_presets_and_missing_model(cli):
    rc, out, _ = cli("megatron-cmd", "--list-presets")
    assert rc == 0 and " 1.3B: --layers 24 --hidden 2048 --heads 16" in out
    rc, _, err = cli("megatron-cmd", "--gpus", 8, "--global-batch", 8)
    assert rc == 1 and "--layers, --hidden, --heads" in err


def test_cli_matched_to_a_gpt4d_result(cli, tmp_path, monkeypatch):
    from conftest import RESULTS
    monkeypatch.delenv("MEGATRON_PATH", raising=False)
    gpt4d = RESULTS / "gpt4d" / "gpt4d_1.3B_g8_all.json"
    script = tmp_path / "job.sbatch"
    rc, out, err = cli("megatron-cmd", "--gpt4d", gpt4d, "--tp", 2, "--micro-batch", 2,
                       "--sbatch", script)
    assert rc == 0 and "warning" not in err
    assert out.splitlines()[0] == "# suite grid: Gx=1 Gy=2 Gz=1 Gdata=4 (Megatron TP=2 PP=1 DP=4)"
    assert ("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
            "--max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 16") in out
    assert "--nproc_per_node 8" in out and "--vocab-size 50304" in out
    record = json.loads((tmp_path / "megatron_config.json").read_text())
    assert record["peak_tflops"] == 989.0 and record["config"]["preset"] == "1.3B"
    assert record["config"]["gpus"] == 8 and record["config"]["global_batch"] == 16
    # an explicit option wins, with a warning that the runs are no longer matched
    rc, out, err = cli("megatron-cmd", "--gpt4d", gpt4d, "--global-batch", 32)
    assert rc == 0 and "--global-batch-size 32" in out
    assert "warning: --global-batch 32 differs from the gpt4d run (16)" in err
    rc, _, err = cli("megatron-cmd", "--gpt4d", RESULTS / "model" / "search.json")
    assert rc == 1 and "not a gpt4d result (found model_search)" in err


def test_full_command_with_every_overlap_flag_in_the_spec_order():
    cfg, _ = check(sequence_parallel=True, distributed_optimizer=True, overlap_grad_reduce=True,
                   overlap_param_gather=True, tp_comm_overlap=True)
    assert " ".join(ml.pretrain_args(cfg)) == (
        "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
        "--max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 16 "
        "--train-iters 30 --bf16 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 "
        "--sequence-parallel --use-distributed-optimizer --overlap-grad-reduce "
        "--overlap-param-gather --tp-comm-overlap --untie-embeddings-and-output-weights "
        "--log-interval 1 --log-throughput --mock-data "
        "--tokenizer-type NullTokenizer --vocab-size 50304 --lr 1.0e-5 --lr-decay-style constant "
        "--clip-grad 1.0 --eval-iters 0 --distributed-backend nccl")
    rec = replace(cfg, recompute=True)
    assert "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1" in \
        " ".join(ml.pretrain_args(rec))


LLAMA8 = replace(BASE, layers=32, hidden=4096, heads=32, vocab=128256, arch="llama", kv_heads=8,
                 ffn_hidden=14336, rope_theta=500000.0)


def test_llama_arguments_are_megatrons():
    cfg, _ = ml.validate(LLAMA8)
    args = ml.pretrain_args(cfg)
    text = " ".join(args)
    assert ("--swiglu --ffn-hidden-size 14336 --normalization RMSNorm --position-embedding-type rope "
            "--rotary-base 500000 --disable-bias-linear --group-query-attention "
            "--num-query-groups 8") in text
    # untied, as gpt4d's head, once for every architecture
    assert text.count("--untie-embeddings-and-output-weights") == 1
    assert "--untie-embeddings-and-output-weights" in ml.pretrain_args(BASE)
    assert "--vocab-size 128256" in text and "--num-attention-heads 32" in text
    # multi-head Llama: no query groups; GPT: none of the Llama arguments
    mha = " ".join(ml.pretrain_args(replace(LLAMA8, kv_heads=32)))
    assert "--swiglu" in mha and "--group-query-attention" not in mha
    for flag in ("--swiglu", "--normalization", "--rotary-base", "--group-query-attention"):
        assert flag not in ml.pretrain_args(BASE)


def test_llama_rules_megatron_enforces():
    with pytest.raises(AnalysisError, match=r"query groups \(kv heads\) 8 not divisible by TP=16"):
        ml.validate(replace(LLAMA8, tp=16, gpus=16))
    with pytest.raises(AnalysisError, match="attention heads 32 not divisible by the query groups 6"):
        ml.validate(replace(LLAMA8, kv_heads=6, tp=1))
    with pytest.raises(AnalysisError, match="needs --ffn-hidden"):
        ml.validate(replace(LLAMA8, ffn_hidden=0))
    with pytest.raises(AnalysisError, match="need --arch llama"):
        ml.validate(replace(BASE, kv_heads=4))


def test_cli_llama_preset(cli, monkeypatch):
    monkeypatch.delenv("MEGATRON_PATH", raising=False)
    rc, out, err = cli("megatron-cmd", "--preset", "llama3-70B", "--global-batch", 16, "--gpus", 16,
                       "--tp", 8)
    assert rc == 0, err
    assert "--num-layers 80 --hidden-size 8192 --num-attention-heads 64" in out
    assert "--ffn-hidden-size 28672" in out and "--num-query-groups 8" in out
    assert "--vocab-size 128256" in out and "--rotary-base 500000" in out
    rc, _, err = cli("megatron-cmd", "--preset", "llama3-8B", "--arch", "gpt", "--global-batch", 8,
                     "--gpus", 8)
    assert rc == 1 and "--arch gpt contradicts --preset llama3-8B" in err
    rc, out, _ = cli("megatron-cmd", "--list-presets")
    assert "llama3-405B: --arch llama --layers 126 --hidden 16384 --heads 128 --kv-heads 8" in out
