"""The PyTorch reference script's options and FLOP count (no PyTorch needed): the Llama presets
are core's shapes, its model FLOPs are the suite's formula, and bad combinations are refused."""

from pathlib import Path

import pytest
from conftest import load_script

from ovb_analysis import metrics

SCRIPT = Path(__file__).resolve().parents[2] / "endtoend" / "reference" / "pytorch_gpt.py"


@pytest.fixture(scope="module")
def ref():
    return load_script(SCRIPT, "pytorch_gpt")


def test_llama_preset_shapes_and_flop(ref):
    a = ref.parse_args(["--preset", "llama3-8B", "--batch", "2", "--seq", "4096"])
    assert (a.arch, a.layers, a.hidden, a.heads, a.kv_heads, a.ffn_hidden, a.vocab,
            a.rope_theta) == ("llama", 32, 4096, 32, 8, 14336, 128256, 500000.0)
    # q, o: h^2 each; k, v: h * 8 heads * 128; gate, up, down: h * 14336 each
    block = 2 * 4096 * 4096 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336
    assert ref.block_linear_params(a) == block
    assert ref.model_flop(a) == 6.0 * 2 * 4096 * (32 * block + 4096 * 128256) \
        + 6.0 * 2 * 4096 * 4096 * 32 * 4096


def test_gpt_flop_is_the_suites_formula(ref):
    a = ref.parse_args(["--preset", "1.3B", "--batch", "4"])
    assert a.arch == "gpt" and a.vocab == 50304
    assert ref.model_flop(a) == pytest.approx(metrics.gpt_model_flop(4, 2048, 24, 2048, 50304),
                                              rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--preset", "llama3-8B", "--arch", "gpt"], "contradicts"),
    (["--arch", "llama", "--layers", "2", "--hidden", "64", "--heads", "4"], "--ffn-hidden"),
    (["--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2"], "need --arch llama"),
    (["--arch", "llama", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "3",
      "--ffn-hidden", "128"], "not divisible by kv-heads"),
])
def test_bad_combinations_are_refused(ref, argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        ref.parse_args(argv + ["--batch", "1"])
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--trace-iters", "3"], "--trace-iters needs --trace"),
    (["--trace", "t.json.gz", "--trace-iters", "0"], "at least 1"),
    (["--trace", "-"], "--trace needs a file name"),
    (["--sdpa", "fastest"], "invalid choice"),
])
def test_trace_and_sdpa_options_are_checked(ref, argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        ref.parse_args(["--preset", "1.3B", "--batch", "4"] + argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_trace_defaults(ref):
    a = ref.parse_args(["--preset", "1.3B", "--batch", "4", "--trace", "t.json.gz"])
    assert (a.trace, a.trace_iters, a.sdpa) == ("t.json.gz", 2, "auto")
    assert set(ref.SDPA_BACKENDS) == {"cudnn", "flash", "efficient", "math"}


def test_precision_option(ref, capsys):
    assert ref.parse_args(["--preset", "1.3B", "--batch", "4"]).precision == "autocast"
    assert ref.parse_args(["--preset", "1.3B", "--batch", "4", "--precision", "bf16"]).precision \
        == "bf16"
    with pytest.raises(SystemExit) as e:
        ref.parse_args(["--preset", "1.3B", "--batch", "4", "--precision", "fp16"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
