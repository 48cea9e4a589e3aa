"""What the model scripts of this folder share about the model itself: the H100 preset edited into
a temporary machine file, ovb-model explain's JSON, and a layer's memory-bound time read from it.
"""

import json
import subprocess
from pathlib import Path

import committed_output

MACHINE = committed_output.ROOT / "analysis" / "machines" / "dgx-h100.json"


def edited_machine(tmp, name, edit):
    """The H100 preset after `edit(machine_json)`, as a file named `name` in tmp."""
    m = json.loads(MACHINE.read_text(encoding="utf-8"))
    edit(m)
    path = Path(tmp) / name
    path.write_text(json.dumps(m), encoding="utf-8")
    return str(path)


def table_as_measured(tmp):
    """The H100 preset without gpu.gemm_max_efficiency and gpu.gemm_training_factor: its GEMM
    table as ovb-gemm measured it."""
    def edit(m):
        m["gpu"].pop("gemm_max_efficiency")
        m["gpu"].pop("gemm_training_factor")
    return edited_machine(tmp, "dgx-h100-as-measured.json", edit)


def shape_args(shape):
    """ovb-model's shape options for a validation entry's `model` (layers, hidden, heads, seq,
    vocab)."""
    return [a for k in ("layers", "hidden", "heads", "seq", "vocab") for a in (f"--{k}", str(shape[k]))]


def validate(model, doc, tmp, name):
    """ovb-model validate on the runs file `doc` (written to tmp/NAME.json), its JSON read back."""
    runs, out = Path(tmp) / f"{name}.json", Path(tmp) / f"{name}-out.json"
    runs.write_text(json.dumps(doc), encoding="utf-8")
    subprocess.run([model, "validate", "--runs", str(runs), "--json", str(out)], check=True,
                   capture_output=True, text=True)
    return json.loads(out.read_text(encoding="utf-8"))


def explain(model, args, tmp, name):
    """ovb-model explain ARGS --json, read back (written to tmp/NAME.json)."""
    out = Path(tmp) / f"{name}.json"
    subprocess.run([model, "explain", *args, "--json", str(out)], check=True,
                   capture_output=True, text=True)
    return json.loads(out.read_text(encoding="utf-8"))


def layer_memory_bound_us(compute):
    """One block's memory-bound passes, forward and backward, in explain's JSON `compute`: the
    two norms, attention's input and output, and the four linears' epilogues."""
    mb = compute["memory_bound"]
    us = sum(mb[k]["fwd_us"] + mb[k]["bwd_us"] for k in ("ln1", "ln2", "attention_io"))
    return us + sum(L["epilogue"]["fwd_us"] + L["epilogue"]["bwd_us"]
                    for L in compute["linears"] if L["layer"] != "lm_head")


def memory_bound_ms(e):
    """An iteration's memory-bound passes in explain's JSON `e`: every block's and the head's
    (embedding, final norm, cross-entropy), forward and backward, in ms."""
    c = e["compute"]
    mb = c["memory_bound"]
    head = sum(mb[k]["fwd_us"] + mb[k]["bwd_us"] for k in ("embedding", "ln_f", "cross_entropy"))
    return (e["inputs"]["model"]["layers"] * layer_memory_bound_us(c) + head) / 1e3


def attention_ms(e):
    """An iteration's fused attention in explain's JSON `e`: every layer's, forward and
    backward, in ms."""
    a = e["compute"]["attention"]
    return e["inputs"]["model"]["layers"] * (a["fwd_us"] + a["bwd_us"]) / 1e3


def replicated_under_sp(compute):
    """What of one block's memory-bound passes (explain's JSON `compute`) sequence parallelism
    runs on 1/tp of the sequence: the two norms and the bias-dropout-adds after attention-out and
    MLP-down. The model charges them on the whole sequence (docs/validation.md)."""
    mb = compute["memory_bound"]
    us = sum(mb[k]["fwd_us"] + mb[k]["bwd_us"] for k in ("ln1", "ln2"))
    return us + sum(L["epilogue"]["fwd_us"] + L["epilogue"]["bwd_us"]
                    for L in compute["linears"] if L["layer"] in ("attn_out", "mlp_down"))


def miss_per_element(model, run, pick, tmp):
    """The time the model's pick for `run` (validate's row) misses per token, layer and hidden
    element of a GPU (h / tp), what the model itself charges per the same for a layer's
    attention and its memory-bound passes (explain of the layer on grid 1 x tp x 1 x 1 at the
    pick's micro-batch, the Megatron strategy's layer, its epilogues as separate passes), and how
    much of that memory-bound charge sequence parallelism would take off (1 - 1/tp of
    replicated_under_sp; 0 without it or at tp 1), in picoseconds. The layers are a stage's
    (L / pp), the work on a pipeline's critical path; for a pipelined run the miss also holds its
    bubble and exposed data-parallel time, so it is read where those are small."""
    m, b = run["model"], pick["best"]
    tp = b["tp"]
    published_ms = b["predicted_ms"] * (1 + pick["error_pct"] / 100)
    tokens = run["batch"] // b["dp"] * m["seq"]
    per = tokens * (m["layers"] // b["pp"]) * m["hidden"] / tp
    # Megatron's layer runs its epilogues as kernels of their own, whatever the preset says of
    # gpt4d's (gpu.fused_epilogues).
    c = explain(model, [f"1x{tp}x1x1", "--machine", run["machine"], "--epilogues", "separate",
                        *shape_args(m), "--batch", str(b["micro_batch"])], tmp, "layer")["compute"]
    layer = c["tokens_per_rank"] * m["hidden"] / tp
    attn = c["attention"]["fwd_us"] + c["attention"]["bwd_us"]
    mem = layer_memory_bound_us(c)
    sharded = b["sequence_parallel"] and tp > 1
    excess = (1 - 1 / tp) * replicated_under_sp(c) if sharded else 0.0
    return ((published_ms - b["predicted_ms"]) * 1e9 / per, attn * 1e6 / layer,
            mem * 1e6 / layer, excess * 1e6 / layer)
