#!/usr/bin/env python3
"""How fast the H100's GEMMs run inside a training step against the dgx-h100 preset's GEMM table
(ovb-gemm: each shape on its own, the fastest of cuBLASLt's candidate algorithms, exact inputs),
measured on the suite's own trainer: the dgx-h100 preset's `gpu.gemm_training_factor`.

The measurement: the CUPTI trace of gpt4d's 1.3B run on one H100 SXM (batch 4, sequence 2048,
bf16; results/h100/single-gpu/summary.json, `top_kernels`: each kernel's ms per iteration and calls
per iteration). The GEMMs without an epilogue are two kernels there: the input gradients (dX) of
QKV, attention-out and MLP-up in every block plus the LM head's, 3 L + 1 calls, and the weight
gradients (dW) of the four linears of every block plus the LM head's, 4 L + 1 calls (MLP-down's dX
carries the GELU backward and every forward GEMM a bias: other kernels, left out). The reference:
the same GEMMs at the rates the preset's table gives them (ovb-model explain on the preset with
neither the ceiling nor the factor). The factor is the table's time over the trained time, per
kernel and for both together (the preset's value). Then, for the same run, the memory-bound work
as the preset costs it (gpu.fused_epilogues: gpt4d fuses bias, GELU and GELU's backward into
cuBLASLt's epilogues) against what the trace shows (elementwise kernels, the bias-gradient
kernel, and what the GEMMs with a fused epilogue took beyond their plain time at training's
rate), and the model's attention and optimizer against the trace's kernels and categories of
those names.

Usage: results/model/h100-gemm-training-rate.py [--write | --check] [OVB_MODEL]
(default OVB_MODEL: build/host/analysis/model/ovb-model). Prints the figures; --write also writes
them beside this script as h100-gemm-training-rate.txt; --check exits 1 when that file is not
today's output (ctest model.h100_gemm_training_rate).
"""

import json
import sys
import tempfile

import committed_output  # this folder's: the scripts' --write / --check
from model_terms import MACHINE, attention_ms, explain, memory_bound_ms, table_as_measured

RUN = committed_output.ROOT / "results" / "h100" / "single-gpu"
SUMMARY = RUN / "summary.json"            # the trace's kernels (top_kernels, kernel_breakdown)
TRACED = RUN / "gpt4d_1.3B_traced.json"   # the traced run itself (its iterations)
TRACE = RUN / "trace" / "analysis.json"   # ovb-trace analyze of it (its phases per iteration)
EPILOGUE_WORDS = ("bias", "gelu", "aux")


def gemm_us(lin, layer, pass_):
    """One GEMM's time at the rate explain gives it, without the kernel overhead."""
    g = lin[layer][pass_]
    return g["flop"] / (g["tflops"] * 1e6)


def traced_iterations():
    """(iterations, of which warm-up) of the traced run: the trace's forward phases, and the run's
    own count (the kernel times per iteration are over all of them)."""
    ranges = json.loads(TRACE.read_text(encoding="utf-8"))["ranks"][0]["ranges"]
    forward, = [r["count"] for r in ranges if r["category"] == "phase" and r["name"] == "forward"]
    run = json.loads(TRACED.read_text(encoding="utf-8"))["summary"]
    if forward != run["warmup_iters"] + run["measured_iters"]:
        sys.exit(f"h100-gemm-training-rate: {TRACE} has {forward} forward phases, {TRACED} "
                 f"{run['warmup_iters']} + {run['measured_iters']} iterations")
    return forward, run["warmup_iters"]


def memory_bound(model_e, separate_e, summary, plain_ms, iters):
    """The run's memory-bound work: the model's passes (block memory terms and epilogues of every
    layer, the head's) against the trace's (elementwise and memory kernels, the bias-gradient
    kernel, and what the GEMMs with a fused epilogue took beyond their plain time at training's
    rate). Lines of text."""
    c = model_e["compute"]
    layers = model_e["inputs"]["model"]["layers"]
    lin = {L["layer"]: L for L in c["linears"]}
    model_ms = memory_bound_ms(model_e)
    kb = summary["kernel_breakdown"]
    eltwise_ms = (kb["elementwise"]["total_us"] + kb["memory"]["total_us"]) / 1e3 / iters
    gemm_ms = kb["gemm"]["total_us"] / 1e3 / iters
    fused = [k for k in summary["top_kernels"]
             if any(w in k["name"].lower() for w in EPILOGUE_WORDS) and "bgrad" not in k["name"].lower()]
    bgrad = [k for k in summary["top_kernels"] if "bgrad" in k["name"].lower()]
    fused_ms = sum(k["ms_per_iter"] for k in fused)
    bgrad_ms = sum(k["ms_per_iter"] for k in bgrad)
    head_fwd = [k for k in summary["top_kernels"] if round(k["calls_per_iter"]) == 1]
    head_fwd_ms = sum(k["ms_per_iter"] for k in head_fwd)
    # Every GEMM kernel of the trace is one of: the two plain ones, the fused ones, the bias
    # gradient's, the LM head's forward (its one call, no bias); they add up to the category.
    listed = plain_ms + fused_ms + bgrad_ms + head_fwd_ms
    fused_plain_ms = (layers * sum(gemm_us(lin, b, "fwd") for b in ("qkv", "attn_out", "mlp_up",
                                                                    "mlp_down"))
                      + layers * gemm_us(lin, "mlp_down", "dx")) / 1e3
    extra_ms = fused_ms - fused_plain_ms
    trace_ms = eltwise_ms + bgrad_ms + extra_ms
    return [f"memory-bound work of the same run: the model's passes {model_ms:.1f} ms an iteration "
            f"(gpt4d's fused epilogues; {memory_bound_ms(separate_e):.1f} as separate "
            f"passes); "
            f"the trace's {trace_ms:.1f} ms (elementwise and memory kernels {eltwise_ms:.2f}, "
            f"bias gradients {bgrad_ms:.2f}, the {len(fused)} GEMM kernels with a fused epilogue "
            f"{fused_ms:.2f} against {fused_plain_ms:.2f} at training's rate without it: "
            f"{extra_ms:+.2f}); the trace's GEMM kernels {listed:.2f} of its gemm category "
            f"{gemm_ms:.2f} ms"]


def attention_and_optimizer(model_e, summary, iters):
    """The trace's attention and optimizer categories per iteration against the model's fused
    attention (every layer, forward and backward) and AdamW step. Lines of text."""
    c = model_e["compute"]
    kb = summary["kernel_breakdown"]
    attn = attention_ms(model_e)
    sdpa = sum(k["ms_per_iter"] for k in summary["top_kernels"] if "sdpa" in k["name"])
    return [f"the same run's attention: the model's {attn:.1f} ms an iteration, the trace's cuDNN "
            f"flash kernels {sdpa:.1f} ms (what gpu.attention_efficiency was measured on) in an "
            f"attention category of {kb['attention']['total_us'] / 1e3 / iters:.1f} ms; its "
            f"optimizer: the model's {c['optimizer']['time_us'] / 1e3:.1f} ms, the trace's "
            f"optimizer category {kb['optimizer']['total_us'] / 1e3 / iters:.1f} ms"]


def plain_kernel(kernels, calls):
    """The one kernel of `calls` calls per iteration; it must carry no epilogue."""
    found = [k for k in kernels if round(k["calls_per_iter"]) == calls]
    if len(found) != 1:
        sys.exit(f"h100-gemm-training-rate: {len(found)} kernels of {calls} calls per iteration "
                 f"in {SUMMARY}, expected one")
    k = found[0]
    if any(w in k["name"].lower() for w in EPILOGUE_WORDS):
        sys.exit(f"h100-gemm-training-rate: {k['name']} has an epilogue")
    return k


def main():
    write, check, model = committed_output.parse_args(sys.argv[1:])
    summary = json.loads(SUMMARY.read_text(encoding="utf-8"))
    config = json.loads(TRACED.read_text(encoding="utf-8"))["config"]
    run = {"preset": config["model"]["preset"], "batch": config["batch"]}
    if config["grid"] != {"gx": 1, "gy": 1, "gz": 1, "gdata": 1, "order": "x,y,z"}:
        sys.exit(f"h100-gemm-training-rate: {TRACED} is not a one-GPU run")
    run_args = ["1x1x1x1", "--preset", run["preset"], "--batch", str(run["batch"])]
    with tempfile.TemporaryDirectory() as tmp:
        e = explain(model, [*run_args, "--machine", table_as_measured(tmp)], tmp, "table")
        preset = explain(model, [*run_args, "--machine", str(MACHINE)], tmp, "preset")
        separate = explain(model, [*run_args, "--machine", str(MACHINE), "--epilogues", "separate"],
                           tmp, "separate")
    lin = {L["layer"]: L for L in e["compute"]["linears"]}
    layers = e["inputs"]["model"]["layers"]
    iters, warmup = traced_iterations()

    def us(layer, pass_):
        return gemm_us(lin, layer, pass_)

    block = ("qkv", "attn_out", "mlp_up", "mlp_down")
    rows = [("dX", 3 * layers + 1, layers * sum(us(b, "dx") for b in block[:3]) + us("lm_head", "dx"),
             layers * sum(lin[b]["dx"]["flop"] for b in block[:3]) + lin["lm_head"]["dx"]["flop"]),
            ("dW", 4 * layers + 1, layers * sum(us(b, "dw") for b in block) + us("lm_head", "dw"),
             layers * sum(lin[b]["dw"]["flop"] for b in block) + lin["lm_head"]["dw"]["flop"])]
    lines = [f"gpt4d {run['preset']} on one H100 SXM (batch {run['batch']}, seq "
             f"{e['inputs']['model']['seq']}, bf16; traced, {iters} iterations incl. {warmup} of "
             "warm-up): GEMMs without an epilogue",
             "pass  calls/iter  TFLOP/iter  traced ms  TFLOP/s  table ms  table TFLOP/s  "
             "table/traced time  kernel"]
    table_total = traced_total = 0.0
    for name, calls, table_us, flop in rows:
        k = plain_kernel(summary["top_kernels"], calls)
        traced_ms, table_ms = k["ms_per_iter"], table_us / 1e3
        table_total += table_ms
        traced_total += traced_ms
        lines.append(f"{name:4s}  {calls:10d}  {flop / 1e12:10.2f}  {traced_ms:9.2f}  "
                     f"{flop / traced_ms / 1e9:7.1f}  {table_ms:8.2f}  {flop / table_ms / 1e9:13.1f}  "
                     f"{table_ms / traced_ms:17.3f}  {k['name']}")
    factor = round(table_total / traced_total, 3)
    lines.append(f"both: table {table_total:.2f} ms, traced {traced_total:.2f} ms: "
                 f"gpu.gemm_training_factor = {factor:.3f}")
    given = json.loads(MACHINE.read_text(encoding="utf-8"))["gpu"].get("gemm_training_factor")
    if check and given != factor:
        sys.exit(f"h100-gemm-training-rate: {MACHINE} has gpu.gemm_training_factor {given}, "
                 f"the measurement gives {factor:.3f}")
    lines += memory_bound(preset, separate, summary, traced_total, iters)
    lines += attention_and_optimizer(preset, summary, iters)
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
