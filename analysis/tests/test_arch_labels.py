"""The architecture in the report: a Llama run is labelled Llama with gpt4d's own parameter count,
and never matched with a GPT run of the same width and depth."""

import pytest
from conftest import FIXTURES
from ovb_analysis import report
from ovb_analysis.plots.scaling import size_label
from ovb_analysis.runs import Run
from ovb_analysis.tables import runs_key

GPT_TINY = {"layers": 2, "hidden": 64, "heads": 4, "seq": 32, "vocab": 256, "preset": None}


def run(**model):
    return Run("gpt4d", "x.json", {**GPT_TINY, **model}, 8, 4, "", "", [], [])


def test_size_label_names_the_architecture():
    # 12 L h^2 + V h = 12*2*64^2 + 256*64 = 114688 for a GPT; gpt4d's count for a Llama.
    assert size_label(GPT_TINY) == "0.11M"
    assert size_label({**GPT_TINY, "arch": "gpt", "parameters": 999}) == "0.11M"
    llama = {**GPT_TINY, "arch": "llama", "kv_heads": 2, "ffn_hidden": 176, "parameters": 125248}
    assert size_label(llama) == "Llama 0.13M"
    assert size_label({**llama, "preset": "llama3-8B"}) == "llama3-8B"
    assert size_label({**llama, "preset": "custom"}) == "Llama custom"


def test_runs_key_separates_architectures():
    assert runs_key(run()) == runs_key(run(arch="gpt", kv_heads=4))
    assert runs_key(run()) != runs_key(run(arch="llama", kv_heads=4))
    assert runs_key(run(arch="llama", kv_heads=2)) != runs_key(run(arch="llama", kv_heads=4))


def test_report_shows_a_llama_run_as_llama(tmp_path):
    _, written = report.build(FIXTURES / "llama_results", tmp_path / "rep")
    md = next(p for p in written if p.name == "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| gpt4d | gpt4d/llama-"))
    assert "| Llama 0.13M | 8 | 4 | 1x1x1x4 | oar,ors,oag |" in row


def test_llama_flop_from_its_own_block():
    from ovb_analysis import metrics
    from ovb_analysis.runs import model_flop
    # Hand count, llama-tiny shape: QKV 64 x (4 + 2*2)*16 = 8192, out 4096, SwiGLU 3*64*176 =
    # 33792: P = 46080; F = 6*8*32*(2*46080 + 64*256) + 6*8*32^2*2*64 = 166723584 + 6291456.
    assert metrics.llama_block_linear_params(64, 4, 2, 176) == 46080
    r = run(arch="llama", kv_heads=2, ffn_hidden=176)
    assert model_flop(r) == 166723584 + 6291456
    # A GPT's block of 12 h^2 gives the GPT formula.
    assert metrics.transformer_model_flop(8, 32, 2, 64, 256, 12 * 64 * 64) == \
        pytest.approx(metrics.gpt_model_flop(8, 32, 2, 64, 256), rel=1e-12)
