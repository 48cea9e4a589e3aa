#!/usr/bin/env python3
"""A PyTorch training run's GPU kernels, per category, beside the model's terms for the same shape.

The run: endtoend/reference/pytorch_gpt.py with --out RUN.json --trace TRACE (a Kineto trace of
--trace-iters iterations after the timed ones), its trace analysed by `ovb-trace analyze TRACE
--json ANALYSIS.json` (kernel time per category: gemm, attention, optimizer, elementwise, memory,
communication; profiling/README.md). The model: `ovb-model explain 1x1x1x1` of the run's shape and
batch in one micro-step, its bias and GELU as passes of their own (`--epilogues separate`, as
PyTorch runs them), on the machine the run's GPU names (H100: dgx-h100, H200:
generic-h200-8nic; --machine to choose).

Per iteration, for each category: the trace's kernel time (the category's total over the traced
iterations) and the model's (GEMMs: every linear's forward, input and weight gradient in every
block and the LM head's; attention: every layer's fused attention, forward and backward; the
memory-bound passes; the AdamW step). For GEMMs and attention it also prints the model's time
over the trace's, which is the factor the model's rate would need at this shape (for attention,
times the machine's gpu.attention_efficiency: the efficiency this run measures). The elementwise
category is PyTorch's program: under autocast (the default) the residual stream and the norms
run in fp32, each linear casts its weight and input to bf16 and the weight gradients back to
fp32, so it is printed, not compared; a run with --precision bf16 keeps them in bf16 as
Megatron-LM's layers do, and its elementwise kernels are compared with the model's memory-bound
passes (PyTorch's residual adds, bias gradients and gradient clipping are kernels of their own,
Megatron's bias-dropout-add and bias-GELU fused passes: the bytes differ by the program, the
classes do not).

Usage: results/model/torch-kernels-compare.py RUN.json ANALYSIS.json [--machine M]
       [--json OUT] [OVB_MODEL]
       results/model/torch-kernels-compare.py --table COMPARE.json...   (one line per run from
       the --json files: the model/trace ratios side by side)
(default OVB_MODEL: build/host/analysis/model/ovb-model). Exit status 2 for bad input.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import committed_output
from model_terms import attention_ms, explain, memory_bound_ms

sys.path.insert(0, str(committed_output.ROOT / "analysis"))
from ovb_analysis.errors import AnalysisError  # noqa: E402
from ovb_analysis.io_util import atomic_write_json, load_json  # noqa: E402  (the repository's)

MACHINES = (("H200", "generic-h200-8nic"), ("H100", "dgx-h100"))  # by the GPU's name
BLOCK = ("qkv", "attn_out", "mlp_up", "mlp_down")


def fail(message):
    print(f"torch-kernels-compare: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_json(path, what):
    try:
        return load_json(path)
    except AnalysisError as e:
        fail(f"cannot read {what}: {e}")


def run_facts(run):
    """(shape options, batch, traced iterations, device name) of a pytorch_gpt.py result."""
    try:
        cfg, trace = run["config"], run["trace"]
        m = cfg["model"]
        if m.get("arch", "gpt") != "gpt":
            fail("only GPT runs are compared (the model's Llama terms differ by name)")
        shape = ["--layers", str(m["layers"]), "--hidden", str(m["hidden"]), "--heads",
                 str(m["heads"]), "--seq", str(m["seq"]), "--vocab", str(m["vocab"])]
        return shape, int(cfg["batch"]), int(trace["iterations"]), run["context"]["device"]
    except (KeyError, TypeError, ValueError) as e:
        fail(f"not a pytorch_gpt.py result with a trace (--trace): missing {e}")


def machine_for(device, given):
    if given:
        return given
    for word, preset in MACHINES:
        if word in device:
            return preset
    fail(f"no machine preset for {device!r}: give --machine")


def kernel_gaps(analysis, iterations):
    """(kernels per iteration, idle ms per iteration, mean idle us per kernel) of the analysis:
    what the device spent between kernels, the host's synchronisation at each iteration's end
    included (an upper bound on the fixed cost per kernel)."""
    try:
        kb = analysis["summary"]["kernel_breakdown"]
        count = sum(kb[c]["count"] for c in ("gemm", "attention", "optimizer", "elementwise",
                                            "memory", "communication"))
        idle = analysis["summary"]["idle_us"]
    except (KeyError, TypeError) as e:
        fail(f"not an ovb-trace analyze JSON: missing {e}")
    return count / iterations, idle / 1e3 / iterations, idle / count if count else None


def measured_ms(analysis, iterations):
    """Kernel time per category and iteration: the category totals of the (one-rank) analysis
    over the traced iterations."""
    try:
        kb = analysis["summary"]["kernel_breakdown"]
        if analysis["summary"].get("ranks", 1) != 1:
            fail("the analysis has more than one rank")
        return {c: kb[c]["total_us"] / 1e3 / iterations
                for c in ("gemm", "attention", "optimizer", "elementwise", "memory",
                          "communication")}
    except (KeyError, TypeError) as e:
        fail(f"not an ovb-trace analyze JSON: missing {e}")


def predicted_ms(e):
    """The model's time per category and iteration from explain's JSON (one micro-step)."""
    c = e["compute"]
    layers = e["inputs"]["model"]["layers"]
    lin = {L["layer"]: L for L in c["linears"]}
    passes = ("fwd", "dx", "dw")
    gemm = layers * sum(lin[b][p]["time_us"] for b in BLOCK for p in passes) + \
        sum(lin["lm_head"][p]["time_us"] for p in passes)
    return {"gemm": gemm / 1e3, "attention": attention_ms(e), "memory_bound": memory_bound_ms(e),
            "optimizer": c["optimizer"]["time_us"] / 1e3}


def attention_flop(e):
    """The attention FLOP of an iteration in the model's convention (the causal half of the two
    products forward, 2.5 times that backward)."""
    return 3.5 * e["inputs"]["model"]["layers"] * e["compute"]["attention"]["flop"]


def compare(run, analysis, e, machine_doc):
    """The table's rows and the JSON document."""
    _, batch, iterations, device = run_facts(run)
    got = measured_ms(analysis, iterations)
    model = predicted_ms(e)
    eff = machine_doc["gpu"].get("attention_efficiency", 1.0)
    doc = {"device": device, "machine": e["inputs"]["machine"], "batch": batch,
           "traced_iterations": iterations, "measured_ms": got, "model_ms": model,
           "run_median_ms": run["summary"]["median_time_ms"],
           "model_predicted_ms": e["config"]["predicted_ms"]}
    doc["gemm_model_over_measured"] = model["gemm"] / got["gemm"] if got["gemm"] else None
    precision = run["config"].get("precision", "autocast")
    doc["precision"] = precision
    eltwise = got["elementwise"] + got["memory"]
    if precision == "bf16" and eltwise:
        doc["memory_bound_model_over_measured"] = model["memory_bound"] / eltwise
    if got["attention"]:
        doc["attention_model_over_measured"] = model["attention"] / got["attention"]
        doc["attention_tflops_measured"] = attention_flop(e) / got["attention"] / 1e9
        doc["attention_efficiency_measured"] = eff * model["attention"] / got["attention"]
    m = e["inputs"]["model"]
    lines = [f"pytorch_gpt.py on {device}: GPT {m['layers']}x{m['hidden']} (heads {m['heads']}, "
             f"seq {m['seq']}, vocab {m['vocab']}), batch {batch}, {precision}; {iterations} "
             f"traced iterations; model: ovb-model explain 1x1x1x1 --epilogues separate on "
             f"{doc['machine']}",
             f"iteration: run median {doc['run_median_ms']:.1f} ms, model "
             f"{doc['model_predicted_ms']:.1f} ms",
             "category      trace ms/iter  model ms/iter  model/trace"]

    def row(name, a, b):
        ratio = f"{b / a:11.3f}" if a and b is not None else f"{'-':>11}"
        model_text = f"{b:13.2f}" if b is not None else f"{'-':>13}"
        lines.append(f"{name:12s}  {a:13.2f}  {model_text}  {ratio}")

    row("gemm", got["gemm"], model["gemm"])
    row("attention", got["attention"], model["attention"])
    row("optimizer", got["optimizer"], model["optimizer"])
    if precision == "bf16":
        row("elementwise", eltwise, model["memory_bound"])
        lines.append("  (against the model's memory-bound passes; PyTorch's residual adds, bias "
                     "gradients and clipping are kernels of their own)")
    else:
        row("elementwise", eltwise, None)
        lines.append(f"  (the model's memory-bound passes: {model['memory_bound']:.2f} ms; "
                     "PyTorch's fp32 residual stream under autocast, casts and clipping are its "
                     "own)")
    if got["communication"]:
        row("communication", got["communication"], None)
    per_iter, idle_ms, gap_us = kernel_gaps(analysis, iterations)
    doc.update(kernels_per_iteration=per_iter, idle_ms=idle_ms, idle_us_per_kernel=gap_us)
    if gap_us is not None:
        lines.append(f"between kernels: {idle_ms:.2f} ms an iteration idle over {per_iter:.0f} "
                     f"kernels, {gap_us:.2f} us each (the iteration's host synchronisation "
                     f"included: an upper bound on gpu.kernel_overhead_us, "
                     f"{machine_doc['gpu'].get('kernel_overhead_us', 0)} in the preset)")
    if got["attention"]:
        lines.append(f"attention: {doc['attention_tflops_measured']:.1f} TFLOP/s in the model's "
                     f"convention; gpu.attention_efficiency {eff} gives the model's time, the "
                     f"trace's is {doc['attention_efficiency_measured']:.3f}")
    return lines, doc


def table(named_docs):
    """One line per run (name, its --json document): the figures that say where the model's time
    and the trace's part, side by side."""
    def num(x, fmt):
        return format("-", ">" + fmt.split(".")[0]) if x is None else format(x, fmt)

    lines = ["run                     precision  median ms  model ms  gemm m/t  attention m/t  "
             "attention eff  elementwise m/t  us/kernel"]
    for name, d in named_docs:
        lines.append(f"{name:22s}  {d.get('precision', 'autocast'):9s}  "
                     f"{d['run_median_ms']:9.1f}  {d['model_predicted_ms']:8.1f}  "
                     f"{num(d.get('gemm_model_over_measured'), '8.3f')}  "
                     f"{num(d.get('attention_model_over_measured'), '13.3f')}  "
                     f"{num(d.get('attention_efficiency_measured'), '13.3f')}  "
                     f"{num(d.get('memory_bound_model_over_measured'), '15.3f')}  "
                     f"{num(d.get('idle_us_per_kernel'), '9.2f')}")
    return lines


def main(argv):
    if argv[:1] == ["--table"]:
        if len(argv) < 2:
            fail("--table needs the --json files of one or more runs")
        docs = [(Path(f).name.removesuffix(".json").removesuffix(".compare"),
                 read_json(f, "a comparison")) for f in argv[1:]]
        try:
            print("\n".join(table(docs)))
        except (KeyError, TypeError) as e:
            fail(f"not a torch-kernels-compare.py --json file: missing {e}")
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="pytorch_gpt.py --out JSON of a run with --trace")
    p.add_argument("analysis", help="ovb-trace analyze --json of its trace")
    p.add_argument("model", nargs="?",
                   default=str(committed_output.ROOT / "build/host/analysis/model/ovb-model"))
    p.add_argument("--machine", help="machine preset or file (default: by the GPU's name)")
    p.add_argument("--json", help="write the figures as JSON")
    a = p.parse_args(argv)
    run = read_json(a.run, "the run")
    analysis = read_json(a.analysis, "the analysis")
    shape, batch, _, device = run_facts(run)
    machine = machine_for(device, a.machine)
    machine_path = Path(machine)
    if not machine_path.is_file():
        machine_path = committed_output.ROOT / "analysis" / "machines" / f"{machine}.json"
    if not machine_path.is_file():
        fail(f"no machine file or preset {machine!r}")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            e = explain(a.model, ["1x1x1x1", *shape, "--batch", str(batch), "--machine",
                                  str(machine_path), "--epilogues", "separate"], tmp, "explain")
        except (OSError, subprocess.CalledProcessError) as err:
            detail = getattr(err, "stderr", "") or str(err)
            fail(f"{a.model} explain: {detail.strip().splitlines()[-1] if detail.strip() else err}")
    lines, doc = compare(run, analysis, e, read_json(machine_path, "the machine"))
    print("\n".join(lines))
    if a.json:
        atomic_write_json(a.json, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
