"""results/model/torch-kernels-compare.py: a PyTorch run's kernel categories per iteration beside
the model's terms, on hand-made inputs whose sums are worked out here by hand."""

from pathlib import Path

import pytest
from conftest import FIXTURES, load_script

SCRIPT = Path(__file__).resolve().parents[2] / "results" / "model" / "torch-kernels-compare.py"


@pytest.fixture(scope="module")
def tk():
    return load_script(SCRIPT, "torch_kernels_compare")


def explain_doc():
    """explain's JSON reduced to what the script reads, in round numbers: every block GEMM 10 us,
    the LM head's 30, each block norm/attention-i/o pass 1 us forward and 2 backward, each
    epilogue the same, the head's passes 3 and 4, attention 20 + 50 us of 1 GFLOP forward."""
    gemm = {p: {"time_us": 10.0} for p in ("fwd", "dx", "dw")}
    linears = [{"layer": b, **gemm, "epilogue": {"fwd_us": 1.0, "bwd_us": 2.0}}
               for b in ("qkv", "attn_out", "mlp_up", "mlp_down")]
    linears.append({"layer": "lm_head", **{p: {"time_us": 30.0} for p in ("fwd", "dx", "dw")},
                    "epilogue": {"fwd_us": 0.0, "bwd_us": 0.0}})
    mb = {k: {"fwd_us": 1.0, "bwd_us": 2.0} for k in ("ln1", "ln2", "attention_io")}
    mb.update({k: {"fwd_us": 3.0, "bwd_us": 4.0} for k in ("embedding", "ln_f", "cross_entropy")})
    return {"inputs": {"machine": "dgx-h100",
                       "model": {"layers": 2, "hidden": 256, "heads": 4, "seq": 128, "vocab": 512}},
            "config": {"predicted_ms": 1.25},
            "compute": {"linears": linears, "memory_bound": mb,
                        "attention": {"fwd_us": 20.0, "bwd_us": 50.0, "flop": 1e9},
                        "optimizer": {"time_us": 100.0}}}


def analysis_doc(idle_us=0.0, **totals):
    """ovb-trace analyze's summary reduced to the categories (one kernel of each, 10 of
    elementwise) and the idle time."""
    kb = {c: {"total_us": totals.get(c, 0.0), "count": 10.0 if c == "elementwise" else 1.0}
          for c in ("gemm", "attention", "optimizer", "elementwise", "memory", "communication")}
    return {"summary": {"ranks": 1, "kernel_breakdown": kb, "idle_us": idle_us}}


def run_doc():
    import json
    return json.loads((FIXTURES / "torch_kernels" / "run.json").read_text(encoding="utf-8"))


def test_model_terms_per_category(tk):
    got = tk.predicted_ms(explain_doc())
    # GEMMs: 2 layers x 4 linears x 3 passes x 10 us + the head's 3 x 30 = 330 us
    # attention: 2 x (20 + 50) = 140 us; passes: 2 x (3 x 3 + 4 x 3) + 3 x 7 = 63 us
    assert got == pytest.approx({"gemm": 0.33, "attention": 0.14, "memory_bound": 0.063,
                                 "optimizer": 0.1}, rel=1e-12)


def test_trace_per_iteration_and_the_ratios(tk):
    lines, doc = tk.compare(run_doc(), analysis_doc(gemm=1320, attention=560, optimizer=400,
                                                    elementwise=100, memory=20, idle_us=60),
                            explain_doc(), {"gpu": {"attention_efficiency": 0.54}})
    # two traced iterations (the fixture run's trace)
    assert doc["measured_ms"] == pytest.approx({"gemm": 0.66, "attention": 0.28, "optimizer": 0.2,
                                                "elementwise": 0.05, "memory": 0.01,
                                                "communication": 0.0}, rel=1e-12)
    assert doc["gemm_model_over_measured"] == pytest.approx(0.5, rel=1e-12)
    assert doc["attention_model_over_measured"] == pytest.approx(0.5, rel=1e-12)
    # the trace's attention takes twice the model's time: half the preset's efficiency
    assert doc["attention_efficiency_measured"] == pytest.approx(0.27, rel=1e-12)
    # 3.5 x 2 layers x 1 GFLOP in 0.28 ms
    assert doc["attention_tflops_measured"] == pytest.approx(25.0, rel=1e-12)
    assert ["elementwise", "0.06", "-", "-"] in [line.split() for line in lines]
    # 15 kernels over 2 iterations, 60 us idle: 7.5 kernels and 0.03 ms an iteration, 4 us each
    assert (doc["kernels_per_iteration"], doc["idle_ms"], doc["idle_us_per_kernel"]) == \
        pytest.approx((7.5, 0.03, 4.0), rel=1e-12)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("trace"), "with a trace (--trace)"),
    (lambda r: r["config"]["model"].update(arch="llama"), "only GPT runs"),
])
def test_bad_runs_are_refused(tk, edit, message, capsys):
    run = run_doc()
    edit(run)
    with pytest.raises(SystemExit) as e:
        tk.run_facts(run)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_machine_by_the_gpus_name(tk, capsys):
    assert tk.machine_for("NVIDIA H200", None) == "generic-h200-8nic"
    assert tk.machine_for("NVIDIA H100 80GB HBM3", None) == "dgx-h100"
    assert tk.machine_for("NVIDIA A100-SXM4-80GB", "dgx-a100-80gb") == "dgx-a100-80gb"
    with pytest.raises(SystemExit) as e:
        tk.machine_for("NVIDIA A100-SXM4-80GB", None)
    assert e.value.code == 2 and "give --machine" in capsys.readouterr().err


def test_an_analysis_without_categories_is_refused(tk, capsys):
    with pytest.raises(SystemExit) as e:
        tk.measured_ms({"summary": {"ranks": 1}}, 2)
    assert e.value.code == 2 and "not an ovb-trace analyze JSON" in capsys.readouterr().err


def test_a_bf16_run_compares_its_elementwise_kernels(tk):
    run = run_doc()
    run["config"]["precision"] = "bf16"
    lines, doc = tk.compare(run, analysis_doc(gemm=660, attention=280, elementwise=240, memory=12),
                            explain_doc(), {"gpu": {"attention_efficiency": 0.54}})
    # (240 + 12) us over 2 iterations = 0.126 ms against the model's 0.063 ms of passes
    assert doc["memory_bound_model_over_measured"] == pytest.approx(0.5, rel=1e-12)
    assert ["elementwise", "0.13", "0.06", "0.500"] in [line.split() for line in lines]
    autocast = tk.compare(run_doc(), analysis_doc(gemm=660, elementwise=240), explain_doc(),
                          {"gpu": {}})[1]
    assert autocast["precision"] == "autocast"
    assert "memory_bound_model_over_measured" not in autocast


def test_the_table_puts_runs_side_by_side(tk, tmp_path, capsys):
    import json
    _, bf16 = tk.compare({**run_doc(), "config": {**run_doc()["config"], "precision": "bf16"}},
                         analysis_doc(gemm=660, attention=280, elementwise=240, memory=12),
                         explain_doc(), {"gpu": {"attention_efficiency": 0.54}})
    _, autocast = tk.compare(run_doc(), analysis_doc(gemm=1320), explain_doc(), {"gpu": {}})
    files = []
    for name, doc in (("mc1.7b-cudnn-bf16", bf16), ("gpt1.3b", autocast)):
        files.append(tmp_path / f"{name}.compare.json")
        files[-1].write_text(json.dumps(doc), encoding="utf-8")
    assert tk.main(["--table", *map(str, files)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    # the bf16 run: every ratio; the autocast run without attention: its GEMMs at half the model's
    assert rows == [["mc1.7b-cudnn-bf16", "bf16", "2.6", "1.2", "1.000", "1.000", "0.540",
                     "0.500", "0.00"],
                    ["gpt1.3b", "autocast", "2.6", "1.2", "0.500", "-", "-", "-", "0.00"]]
    with pytest.raises(SystemExit) as e:
        tk.main(["--table"])
    assert e.value.code == 2
