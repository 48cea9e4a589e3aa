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
kernel and for both together (the preset's value).

Usage: results/model/h100-gemm-training-rate.py [--write | --check] [OVB_MODEL]
(default OVB_MODEL: build/host/analysis/model/ovb-model). Prints the figures; --write also writes
them beside this script as h100-gemm-training-rate.txt; --check exits 1 when that file is not
today's output (ctest model.h100_gemm_training_rate).
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import committed_output  # this folder's: the scripts' --write / --check

ROOT = committed_output.ROOT
MACHINE = ROOT / "analysis" / "machines" / "dgx-h100.json"
SUMMARY = ROOT / "results" / "h100" / "single-gpu" / "summary.json"
LAYERS = 24  # the 1.3B preset's blocks
EPILOGUE_WORDS = ("bias", "gelu", "aux")


def table_rates(model, tmp):
    """explain's JSON for the traced run on the preset without its ceiling and factor."""
    m = json.loads(MACHINE.read_text(encoding="utf-8"))
    m["gpu"].pop("gemm_max_efficiency", None)
    m["gpu"].pop("gemm_training_factor", None)
    machine, out = Path(tmp) / "dgx-h100-table.json", Path(tmp) / "explain.json"
    machine.write_text(json.dumps(m), encoding="utf-8")
    subprocess.run([model, "explain", "1x1x1x1", "--machine", str(machine), "--preset", "1.3B",
                    "--batch", "4", "--json", str(out)], check=True, capture_output=True, text=True)
    return json.loads(out.read_text(encoding="utf-8"))


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
    run = summary["headline"][0]
    if (run["preset"], run["batch"]) != ("1.3B", 4):
        sys.exit(f"h100-gemm-training-rate: {SUMMARY} is not the 1.3B batch-4 run")
    with tempfile.TemporaryDirectory() as tmp:
        e = table_rates(model, tmp)
    lin = {L["layer"]: L for L in e["compute"]["linears"]}

    def us(layer, pass_):
        g = lin[layer][pass_]
        return g["flop"] / (g["tflops"] * 1e6)

    block = ("qkv", "attn_out", "mlp_up", "mlp_down")
    rows = [("dX", 3 * LAYERS + 1, LAYERS * sum(us(b, "dx") for b in block[:3]) + us("lm_head", "dx"),
             LAYERS * sum(lin[b]["dx"]["flop"] for b in block[:3]) + lin["lm_head"]["dx"]["flop"]),
            ("dW", 4 * LAYERS + 1, LAYERS * sum(us(b, "dw") for b in block) + us("lm_head", "dw"),
             LAYERS * sum(lin[b]["dw"]["flop"] for b in block) + lin["lm_head"]["dw"]["flop"])]
    lines = ["gpt4d 1.3B on one H100 SXM (batch 4, seq 2048, bf16; traced, 8 iterations incl. 3 of "
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
    preset = json.loads(MACHINE.read_text(encoding="utf-8"))["gpu"].get("gemm_training_factor")
    if check and preset != factor:
        sys.exit(f"h100-gemm-training-rate: {MACHINE} has gpu.gemm_training_factor {preset}, "
                 f"the measurement gives {factor:.3f}")
    committed_output.finish(__file__, "\n".join(lines) + "\n", write, check)


if __name__ == "__main__":
    main()
